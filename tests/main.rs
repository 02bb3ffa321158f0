//! One integration-test binary that drives the real `qsim` executable; one module per topic.

mod blkmq;
mod cli;
mod conventions;
mod determinism;
mod docs;
mod exports;
mod finite;
mod fiojobs;
mod fiotools;
mod golden;
mod invariants;
mod modern;
mod outline;
mod outputs;
mod plots;
mod reproduce;
mod scenarios;
mod serve;
mod shards;
mod sweep;
mod teach;
mod theory;
mod tidy;
mod torture;
mod trace;
mod util;
