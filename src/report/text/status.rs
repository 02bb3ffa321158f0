//! fio's closing lines of a run, after its block: `Run status group 0 (all jobs):` with one
//! `READ:` / `WRITE:` line per direction with I/O, and `Disk stats (read/write):` with the
//! disk beneath dm-crypt (fio `stat.c` `show_group_stats`, `diskutil.c` `print_disk_util`).
//!
//! What each value is in the model (`docs/output.md`, "Run status and Disk stats"):
//! - the group is the block's pooled measured window taken as one job, since qsim does not
//!   keep its jobs apart: `bw` is the block's bandwidth, the min-max range repeats it, `io`
//!   the bytes completed and `run` the block's runtime;
//! - `ios` are requests the device completed, `ticks` their summed time from insertion in the
//!   request queue to completion (ms), `in_queue` the sum of both ticks (as Linux reports it
//!   since 5.0), `util` the share of the window with a request on the device; `merge` is 0/0
//!   because the model's request queue never merges requests.

use crate::report::fiofmt::{N2sUnit, num2str};
use crate::report::{PolicyReport, Report};
use std::fmt::Write as _;

/// The `Run status group` and `Disk stats` lines of run `p`, each block after a blank line.
pub(super) fn status_lines(r: &Report, p: &PolicyReport, s: &mut String) {
    s.push_str("\nRun status group 0 (all jobs):\n");
    for d in &p.directions {
        if d.ios == 0 {
            continue;
        }
        let iec = num2str(d.bw_bytes_per_s, 4, 1, true, N2sUnit::BytePerSec);
        let si = num2str(d.bw_bytes_per_s, 4, 1, false, N2sUnit::BytePerSec);
        let _ = writeln!(
            s,
            "{:>7}: bw={iec} ({si}), {iec}-{iec} ({si}-{si}), io={} ({}), run={}-{}msec",
            d.direction.name().to_uppercase(),
            num2str(d.bytes, 4, 1, true, N2sUnit::Byte),
            num2str(d.bytes, 4, 1, false, N2sUnit::Byte),
            d.runtime_ms,
            d.runtime_ms
        );
    }
    let b = &p.block;
    let ms = |ns: u64| ns / 1_000_000;
    let _ = writeln!(
        s,
        "\nDisk stats (read/write):\n  {}: ios={}/{}, merge=0/0, ticks={}/{}, in_queue={}, util={:3.2}%",
        r.disk,
        b.completed[0],
        b.completed[1],
        ms(b.ticks_ns[0]),
        ms(b.ticks_ns[1]),
        ms(b.ticks_ns[0] + b.ticks_ns[1]),
        b.device_util_pct
    );
}
