//! Tests of the job-file reader.
