//! The fio job files of the torture run: one small random job file per seed, valid or hostile
//! (repeated options, many sections, a byte-order mark, `include`, `${VAR}`, `runtime=0`, bad
//! values), read onto the default machine. The reader must accept it or refuse it at a line of
//! the file ([`crate::scenario::fio::read_checked`]); a panic or an unlocated refusal fails the case.
//! Files stay small (at most a few thousand lines), so a case costs milliseconds.

use rand::RngExt;

/// Options with values a job file may give them: fio's usual ones and ones qsim refuses.
const OPTIONS: &[(&str, &[&str])] = &[
    (
        "rw",
        &[
            "read",
            "write",
            "randread",
            "randwrite",
            "rw",
            "randrw",
            "read:4k",
            "trim",
            "x",
        ],
    ),
    (
        "bs",
        &[
            "512", "4k", "64k", "1m", "4KiB", "3k", "0", "4k,8k", ",8k", "2m",
        ],
    ),
    (
        "size",
        &[
            "1m",
            "64m",
            "1g",
            "0",
            "10t",
            "50%",
            "1.5m",
            "99999999999999p",
        ],
    ),
    ("iodepth", &["1", "32", "65536", "0", "4k"]),
    ("numjobs", &["1", "4", "2000"]),
    ("direct", &["0", "1", "true", ""]),
    (
        "ioengine",
        &["psync", "libaio", "io_uring", "cpuio", "splice", ""],
    ),
    ("runtime", &["0", "1", "10s", "1h", "-1", "500ms", "1.5"]),
    ("ramp_time", &["0", "1", "100", "3s"]),
    ("rate_iops", &["100", "0", "1k,2k"]),
    ("rate", &["1m", "0"]),
    ("rate_process", &["poisson", "linear", "x"]),
    ("thinktime", &["10", "0", "1ms"]),
    ("thinktime_blocks", &["4", "0"]),
    ("startdelay", &["0-2", "5-1", "1", "2:3"]),
    ("cpuload", &["50", "150"]),
    ("kb_base", &["1000", "1024", "7"]),
    ("offset", &["4k", "1g", "3"]),
    ("io_size", &["4k", "1m", "100"]),
    ("number_ios", &["0", "10"]),
    ("rwmixread", &["70", "101"]),
    ("name", &["x", "", "\"q\""]),
    ("verify", &["md5", "crc32c"]),
    ("sync", &["1", "dsync", "maybe"]),
    // fio's logs (per-I/O with 0) and their windows, offsets and histogram log.
    ("log_avg_msec", &["0", "500", "250", "-1", "1e9", "x"]),
    ("log_offset", &["0", "1", "2", "yes"]),
    ("write_lat_log", &["lat", ""]),
    ("write_bw_log", &["bw"]),
    ("write_iops_log", &["iops"]),
    ("log_hist_msec", &["0", "100", "-5"]),
    ("log_hist_coarseness", &["0", "6", "9"]),
];

/// Whole lines, hostile or odd, dropped in anywhere.
const ODD_LINES: &[&str] = &[
    "[global]",
    "include common.fio",
    "bs=${BS}",
    "size=${SIZE:-1g}",
    "[",
    "[]",
    "[a] b",
    "=4k",
    "; a comment",
    "# another",
    "time_based",
    "norandommap",
    "log_offset",
    "iodpeth=8",
    "\t[tabbed]\t",
    "[ünïcode]",
    "runtime=0",
    "bs=4k ; trailing comment",
];

/// The job file of `seed`: a few sections of random options and odd lines.
pub fn job_file(seed: u64) -> String {
    let mut rng = crate::engine::RngStreams::new(seed, 0).stream("torture/fio");
    let mut out = String::new();
    if rng.random_bool(0.1) {
        out.push('\u{feff}');
    }
    // Now and then more job sections than a scenario may have workloads.
    let sections = if rng.random_bool(0.05) {
        rng.random_range(60..=80)
    } else {
        rng.random_range(0..=5)
    };
    for s in 0..sections {
        let name = if rng.random_bool(0.2) {
            "global".to_string()
        } else {
            format!("job{s}")
        };
        out.push_str(&format!("[{name}]\n"));
        for _ in 0..rng.random_range(0..=8) {
            line(&mut rng, &mut out);
        }
    }
    out
}

/// One random option line (or an odd line, or a run of one option repeated) into `out`.
fn line(rng: &mut impl rand::Rng, out: &mut String) {
    if rng.random_bool(0.1) {
        out.push_str(ODD_LINES[rng.random_range(0..ODD_LINES.len())]);
        out.push('\n');
        return;
    }
    let (key, values) = OPTIONS[rng.random_range(0..OPTIONS.len())];
    let value = values[rng.random_range(0..values.len())];
    let repeats = if rng.random_bool(0.05) {
        rng.random_range(2..=2000)
    } else {
        1
    };
    for _ in 0..repeats {
        out.push_str(&format!("{key}={value}\n"));
    }
}

/// Reads the job file of `seed` (named `torture-SEED.fio`): `Err` if the reader panicked or
/// refused it without naming a line of it.
pub fn check(seed: u64, text: &str) -> Result<(), String> {
    let name = format!("torture-{seed}.fio");
    match std::panic::catch_unwind(|| crate::scenario::fio::read_checked(&name, text)) {
        Ok(r) => r,
        Err(p) => Err(format!(
            "the fio job-file reader panicked: {}",
            super::panic_text(&*p)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_files_are_small_and_replayable() {
        let mut hostile = 0;
        for seed in 0..300 {
            let text = job_file(seed);
            assert_eq!(text, job_file(seed));
            assert!(text.lines().count() <= 80 * 9 * 2000, "seed {seed}");
            hostile += usize::from(text.contains("include") || text.contains("${"));
            check(seed, &text).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        }
        assert!(hostile > 0);
    }
}
