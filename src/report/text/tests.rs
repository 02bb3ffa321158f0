//! Tests of the text renderer on hand-built reports.

use super::*;
use crate::model::base::obs::RunEnd;
use crate::report::tests::{report, run, run_with_memory, scenario};

fn rendered(r: &Report) -> String {
    let mut buf = Vec::new();
    render(r, &mut buf).unwrap();
    String::from_utf8(buf).unwrap()
}

#[test]
fn adaptive_units() {
    assert_eq!(adaptive_ns(812.0), "812 ns");
    assert_eq!(adaptive_ns(999.6), "1.0 us");
    assert_eq!(adaptive_ns(38_144.0), "38.1 us");
    assert_eq!(adaptive_ns(8_454_144.0), "8.5 ms");
    assert_eq!(adaptive_ns(1_250_000_000.0), "1.250 s");
}

#[test]
fn whole_policy_block() {
    let r = report();
    let mut s = String::new();
    policy_block(&r, &r.policies[0], &TextOptions::default(), &mut s);
    let expected = "\
two-queue: (groupid=0, jobs=1): err= 0: policy=fifo: seed=42: reps=1
  Description  : [reads behind writeback]
  read: IOPS=1, BW=4096B/s (4096B/s)(40.0KiB/10000msec)
    slat (nsec): min=812, max=48213, avg=5942.50, stdev=14856.27
    clat (usec): min=38, max=41870, avg=4514.04, stdev=13147.61
     lat (usec): min=38, max=41918, avg=4519.99, stdev=13162.45
    clat percentiles (usec):
     |  1.00th=[   39],  5.00th=[   39], 10.00th=[   39], 20.00th=[   41],
     | 30.00th=[   52], 40.00th=[   61], 50.00th=[   71], 60.00th=[   90],
     | 70.00th=[  121], 80.00th=[  302], 90.00th=[ 2507], 95.00th=[41681],
     | 99.00th=[41681], 99.50th=[41681], 99.90th=[41681], 99.95th=[41681],
     | 99.99th=[41681]
   bw (  KiB/s): min= 9312, max= 9904, per=100.00%, avg=9622.00, stdev=296.99, samples=3
   iops        : min= 2328, max= 2476, avg=2405.50, stdev=74.25, samples=3
  write: IOPS=0, BW=1638B/s (1638B/s)(16.0KiB/10000msec)
    slat (usec): min=3, max=1650, avg=415.50, stdev=823.00
    clat (msec): min=3, max=212, avg=61.02, stdev=100.89
     lat (msec): min=3, max=213, avg=61.44, stdev=101.71
    clat percentiles (msec):
     |  1.00th=[    4],  5.00th=[    4], 10.00th=[    4], 20.00th=[    4],
     | 30.00th=[    9], 40.00th=[    9], 50.00th=[    9], 60.00th=[   21],
     | 70.00th=[   21], 80.00th=[  213], 90.00th=[  213], 95.00th=[  213],
     | 99.00th=[  213], 99.50th=[  213], 99.90th=[  213], 99.95th=[  213],
     | 99.99th=[  213]
   bw (  KiB/s): min= 4416, max= 5120, per=100.00%, avg=4768.00, stdev=497.80, samples=2
   iops        : min= 1104, max= 1280, avg=1192.00, stdev=124.45, samples=2
  lat (usec)   : 50=14.29%, 100=28.57%, 250=7.14%, 500=7.14%
  lat (msec)   : 4=14.29%, 10=7.14%, 50=14.29%, 250=7.14%
  IO depths    : 1=28.6%, 2=21.4%, 4=35.7%, 8=14.3%, 16=0.0%, 32=0.0%, >=64=0.0%
     issued rwts: total=11,5,0,0 short=0,0,0,0 dropped=0,0,0,0
  congestion   : sync_waits=38 (412ms), async_waits=270 (2911ms), early=13.0%
  block        : congested_ms=12/340, pool_sleeps=3/120, clears=40/210 (sync/async), unplugs=15/230 (timer/threshold), dispatched=36180, util=87.31%
  writeback    : dirtied=300MiB, written=280MiB, throttled=1250ms
  cpu          : util=43.21%
  crypt queue  : avg=3.25, max=41

  where the time went (read: 10 I/Os, share of total latency):
    stage               mean (us)  p99 (ms)   share
    crypt queue wait       4484.0    41.681   99.2%
    crypt service             0.0     0.000    0.0%
    kcryptd_io hop            0.0     0.000    0.0%
    request-pool sleep        0.0     0.000    0.0%
    block queue wait          0.0     0.000    0.0%
    device service           30.0     0.030    0.7%
    other                     5.9     0.048    0.1%
    total (lat)            4520.0    41.681  100.0%

  where the time went (write: 4 I/Os, share of total latency):
    stage               mean (ms)  p99 (ms)   share
    crypt queue wait        60.02     210.8   97.7%
    crypt service            0.00       0.0    0.0%
    kcryptd_io hop           0.00       0.0    0.0%
    request-pool sleep       0.00       0.0    0.0%
    block queue wait         0.00       0.0    0.0%
    device service           1.00       1.0    1.6%
    other                    0.42       1.6    0.7%
    total (lat)             61.44     212.9  100.0%

Run status group 0 (all jobs):
   READ: bw=4096B/s (4096B/s), 4096B/s-4096B/s (4096B/s-4096B/s), io=40.0KiB (40.0kB), run=10000-10000msec
  WRITE: bw=1638B/s (1638B/s), 1638B/s-1638B/s (1638B/s-1638B/s), io=16.0KiB (16.4kB), run=10000-10000msec

Disk stats (read/write):
  nvme0n1: ios=24120/12060, merge=0/0, ticks=15001/230499, in_queue=245500, util=87.31%
";
    assert_eq!(s, expected, "got:\n{s}");
}

#[test]
fn saturated_block_and_comparison() {
    let text = rendered(&report());
    assert!(text.starts_with("qsim "));
    assert!(text.contains("Legend: slat is the time from issue until dm-crypt accepted"));
    // Wider than 80 columns, so wrapped under its value (issue 14).
    assert!(text.contains(
        "  budget       : stopped at the work budget (max_events=1000000) after 10s of\n\
         \x20                the 10s window"
    ));
    let cmp = text
        .split("Comparison (read clat percentiles in ms, read IOPS, write throughput):\n")
        .nth(1)
        .unwrap();
    let lines: Vec<&str> = cmp.lines().take(4).collect();
    assert_eq!(
        lines,
        [
            "                                         read  write",
            "  policy    p50     p99   p99.9  p99.99  IOPS  MiB/s",
            "  fifo    0.070  41.681  41.681  41.681     1   0.00",
            "  split   0.070  41.681  41.681  41.681     1   0.00  budget",
        ]
    );
    assert!(text.contains("Warnings:\n  split: stopped at the work budget (max_events=1000000:"));
}

#[test]
fn direction_without_io_is_omitted() {
    let mut only_reads = run("fifo", RunEnd::Horizon);
    only_reads.dirs[1].ios = 0;
    only_reads.dirs[1].bytes = 0;
    let r = Report::new(&scenario(), &[only_reads.clone(), only_reads]);
    let text = rendered(&r);
    assert!(text.contains("  read: IOPS="));
    assert!(!text.contains("  write: IOPS="));
    assert!(!text.contains("(write: "));
}

#[test]
fn lat_percentiles_option_switches_the_block() {
    let mut buf = Vec::new();
    render_with(
        &report(),
        &TextOptions {
            lat_percentiles: true,
            ..TextOptions::default()
        },
        &mut buf,
    )
    .unwrap();
    let text = String::from_utf8(buf).unwrap();
    assert!(text.contains("    lat percentiles (usec):"));
    assert!(!text.contains("    clat percentiles ("));
}

#[test]
fn memory_lines_fit_80_columns() {
    let r = Report::new(
        &scenario(),
        &[run_with_memory("fifo"), run_with_memory("split")],
    );
    let mut s = String::new();
    policy_block(&r, &r.policies[0], &TextOptions::default(), &mut s);
    let start = s.find("  memory       :").expect("memory lines");
    let end = s.find("\n\n  where the time went").unwrap();
    let block = &s[start..end];
    let expected = "  memory       : pages=524288, min=1448, low=1810, high=2172, atomic_floor=543
  free pages   : min=402, avg=2010, below_min=1230ms (12.30%)
  gfp_atomic   : attempts=110034, failures=37 (0.03%), fail_rate=3.70/s
  gfp_atomic   : logged=10
  gfp_atomic o0: attempts=98000, failures=0 (0.00%)
  gfp_atomic o2: attempts=12034, failures=37 (0.31%), free_at_fail=512
  kswapd       : wakeups=41, awake=4300ms (43.00%), passes=57, scanned=180000
  kswapd       : reclaimed=150000, skip_below_min=0, premature_low=0
  kswapd       : premature_high=2, order0_fallbacks=3
  kswapd cwait : sync=0 (0ms), async=51 (4100ms), early=11.8%, skipped=0
  direct       : stalls=9 (310ms), p50=13.0ms, p99=135.3ms, p99.9=135.3ms
  direct       : scanned=4000, reclaimed=3100, pageout=250
  direct cwait : sync=0 (0ms), async=10 (200ms), early=0.0%, skipped=0
  bounce       : from_zone=20000, from_reserve=120, mempool_waits=3 (12ms)
  bounce       : partial_clones=0 (0ms)
  pages at end : free=8068, unreclaimable=131072, clean=300000, dirty=60000
  pages at end : writeback=25000, bounce=40, atomic=96, filling=12
  alloc log    : first 2 of 37 failures, free: the zone's free pages at each
  [   12.345678] swapper: page allocation failure. order:2, mode:0x20 free:512
  [   12.400000] swapper: page allocation failure. order:2, mode:0x20 free:498";
    assert_eq!(block, expected, "got:\n{block}");
    // Writer throttling is printed whenever the memory model ran.
    assert!(s.contains("  writeback    : dirtied=300MiB, written=280MiB, throttled=1250ms"));
    assert!(s.contains("    direct reclaim "), "{s}");
    let text = rendered(&r);
    // Every line the memory model adds (lines also in a report without it are fio's and
    // may be wider) fits 80 columns.
    let plain = rendered(&report());
    let plain: std::collections::HashSet<&str> = plain.lines().collect();
    for line in text.lines().filter(|l| !plain.contains(l)) {
        assert!(line.chars().count() <= 80, "{} columns: {line}", line.len());
    }
    let cmp = text.split("Memory (atomic failures").nth(1).unwrap();
    let lines: Vec<&str> = cmp.lines().skip(1).take(3).collect();
    assert_eq!(
        lines,
        [
            "  policy  atomic fails  cwait sync (ms)  cwait async (ms)  stalls  free min",
            "  fifo              37              0.0            4100.0       9       402",
            "  split             37              0.0            4100.0       9       402",
        ]
    );
    assert!(text.contains("Memory lines count from the warm-up's end"));
}

#[test]
fn finite_jobs_print_their_elapsed_time_or_unfinished_and_a_warning() {
    use crate::report::tests::run_finite;
    let r = Report::new(
        &scenario(),
        &[run_finite("fifo", false), run_finite("split", true)],
    );
    let text = rendered(&r);
    let elapsed: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  elapsed      :"))
        .collect();
    assert_eq!(
        elapsed,
        [
            "  elapsed      : 23.41s (io=64.0MiB, ios=16384)",
            "  elapsed      : unfinished at 11s (io=12.3MiB of 64.0MiB, ios=3150)",
        ]
    );
    assert!(text.contains("Finite jobs (io_size, number_ios) stop issuing"));
    let warning = text.split("Warnings:\n").nth(1).expect("warnings");
    // Wrapped to 80 columns (issue 14): compared with its line breaks as spaces.
    let warning = warning.split_whitespace().collect::<Vec<_>>().join(" ");
    let warning = format!("  {warning}");
    assert!(
        warning.starts_with(
            "  split: gitk did not finish before the run ended at 11s (it completed \
                 12.3MiB of its io_size 64.0MiB, 3150 I/Os); its elapsed time is unknown"
        ),
        "{warning}"
    );
    // Several finite jobs are named on their lines.
    let mut two = run_finite("fifo", false);
    let mut other = two.finite_jobs[0].clone();
    other.name = "reader.1".to_string();
    other.elapsed_ns = Some(412_500_000);
    two.finite_jobs.push(other);
    let r = Report::new(&scenario(), &[two.clone(), two]);
    let text = rendered(&r);
    assert!(text.contains("  elapsed      : gitk: 23.41s (io=64.0MiB, ios=16384)\n"));
    assert!(text.contains("  elapsed      : reader.1: 412.5ms (io=64.0MiB, ios=16384)\n"));
    // Without finite jobs nothing of this appears.
    let plain = rendered(&report());
    assert!(
        !plain.contains("elapsed") && !plain.contains("Finite jobs"),
        "{plain}"
    );
}

#[test]
fn no_memory_model_no_memory_lines() {
    let text = rendered(&report());
    for word in ["direct reclaim", "memory", "Memory", "gfp_atomic", "kswapd"] {
        assert!(!text.contains(word), "{word} in:\n{text}");
    }
}

#[test]
fn the_header_counts_variants_and_wraps_them() {
    use crate::report::VariantSummary;
    let mut r = report();
    let names = [
        "2.6.30",
        "2.6.31",
        "2.6.32",
        "+kswapd-stay-awake-when-min",
        "+dm-crypt-unplug",
        "+force-highorder",
    ];
    r.variants = names
        .iter()
        .map(|n| VariantSummary {
            name: n.to_string(),
            policies: vec!["fifo".to_string(), "split".to_string()],
        })
        .collect();
    let mut s = String::new();
    legend(&r, &mut s);
    let head: Vec<&str> = s.lines().skip(2).take(4).collect();
    assert_eq!(
        head,
        [
            "seed=42, duration=11s, warm-up=1s (excluded), 6 variants x 2 policies = 2 runs",
            "variants: 2.6.30, 2.6.31, 2.6.32, +kswapd-stay-awake-when-min, +dm-crypt-unplug,",
            "          +force-highorder",
            "policies: fifo, split",
        ]
    );
    r.variants[1].policies.pop();
    let mut s = String::new();
    legend(&r, &mut s);
    let head: Vec<&str> = s.lines().skip(2).take(5).collect();
    assert_eq!(
        head,
        [
            "seed=42, duration=11s, warm-up=1s (excluded), 6 variants, 2 runs",
            "variants (policies): 2.6.30 (fifo, split); 2.6.31 (fifo); 2.6.32 (fifo, split);",
            "                     +kswapd-stay-awake-when-min (fifo, split);",
            "                     +dm-crypt-unplug (fifo, split);",
            "                     +force-highorder (fifo, split)",
        ]
    );
    assert!(head.iter().all(|l| l.chars().count() <= 80), "{s}");
}

/// `qsim run`'s text is the report with the replication summary and the precision line after
/// its comparison tables, before the per-run blocks (summary first), all read from one report.
#[test]
fn a_run_renders_its_summary_and_precision_before_the_per_run_blocks() {
    let r = crate::report::tests::replicated_report();
    let mut whole = Vec::new();
    render_run(&r, &mut whole).unwrap();
    let whole = String::from_utf8(whole).unwrap();
    let mut summary = String::new();
    super::super::replications::render(&r.metrics, &r.pairing(), &mut summary);
    assert!(summary.contains("Across 2 replications"), "{summary}");
    let precision = r.precision.as_ref().unwrap().line();
    let report = rendered(&r);
    let added = fit::fit(&format!("{summary}\n{precision}\n"));
    let at = whole
        .find(&added)
        .expect("the summary and precision, whole");
    let blocks = whole
        .find("\nPer-run reports")
        .expect("a heading before the blocks");
    assert!(
        at < blocks && whole.find("\nComparison").unwrap() < at,
        "{whole}"
    );
    assert_eq!(whole.replacen(&added, "", 1), report, "{whole}");
}

#[test]
fn block_metrics_are_key_value_items_with_a_dash_when_unmeasured() {
    let row = crate::report::metrics::Metric {
        key: "stall_p99_ms",
        label: "stall p99",
        unit: "ms",
        lower_is_better: true,
        headline: None,
        in_block: true,
        plot: false,
        summary: true,
        read: |_| 0.0,
    };
    let items = metric_items([(&row, 12.345_6), (&row, f64::NAN)].into_iter());
    assert_eq!(items, ["stall_p99_ms=12.35", "stall_p99_ms=-"]);
    // No row of the registry asks for the block yet: the line is left out.
    let r = report();
    let mut s = String::new();
    metrics_line(&r.policies[0], &mut s);
    assert!(s.is_empty(), "{s}");
}

#[test]
fn dropped_arrivals_are_saturation_only_when_sustained() {
    let warn = |dropped, issued| {
        warning_text(&Warning::Overloaded {
            policy: "dm-crypt".into(),
            dropped,
            issued,
            sustained: crate::report::warning::sustained_drops(dropped, issued),
        })
    };
    // storage-server's pauses: 56 of 82,467 arrivals.
    let transient = warn(56, 82_411);
    assert!(
        transient.starts_with("dm-crypt: 56 of 82467 open-loop arrivals (0.07%) were dropped"),
        "{transient}"
    );
    assert!(transient.contains("is a transient"), "{transient}");
    assert!(!transient.contains("saturated"), "{transient}");
    // Twice what the device serves: half the arrivals dropped.
    let sustained = warn(2_000, 2_000);
    assert!(
        sustained.starts_with("dm-crypt: saturated: 2000 of 4000 open-loop arrivals (50.00%)"),
        "{sustained}"
    );
}

/// A burst's identical failure lines print once, then how often they repeated, as syslogd
/// says it; a line that differs (another instant or free count) starts a new group.
#[test]
fn a_bursts_identical_failure_lines_are_counted_not_repeated() {
    let mut run = run_with_memory("fifo");
    let m = run.memory.as_mut().unwrap();
    let first = m.failure_log[0];
    m.failure_log.splice(1..1, [first, first]);
    let r = Report::new(&scenario(), &[run.clone(), run]);
    let mut s = String::new();
    policy_block(&r, &r.policies[0], &TextOptions::default(), &mut s);
    let start = s.find("  alloc log").expect("the log");
    let lines: Vec<&str> = s[start..].lines().skip(1).take(3).collect();
    assert_eq!(
        lines,
        [
            "  [   12.345678] swapper: page allocation failure. order:2, mode:0x20 free:512",
            "  last message repeated 2 times",
            "  [   12.400000] swapper: page allocation failure. order:2, mode:0x20 free:498",
        ]
    );
}

#[test]
fn a_column_unit_follows_the_data_and_keeps_small_values_readable() {
    let nvme = ColumnUnit::of([61_200.0, 175_100.0]);
    assert_eq!(
        (nvme.label, nvme.show(61_200.0)),
        ("us", "61.2".to_string())
    );
    let disk = ColumnUnit::of([621_000.0, 18_481_000.0, 0.0]);
    assert_eq!(disk.label, "ms");
    assert_eq!(disk.show(621_000.0), "0.62");
    assert_eq!(disk.show(18_481_000.0), "18.48");
    let slow = ColumnUnit::of([1_505_200_000.0, 8_000_000.0]);
    assert_eq!(
        (slow.label, slow.show(8_000_000.0)),
        ("ms", "8.0".to_string())
    );
    let huge = ColumnUnit::of([12_000_000_000.0]);
    assert_eq!((huge.label, huge.show(12e9)), ("s", "12.000".to_string()));
    assert_eq!(huge.show(f64::NAN), "-");
    assert_eq!(ColumnUnit::of([512.0]).show(512.0), "512");
}
