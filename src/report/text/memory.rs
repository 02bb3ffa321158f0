//! The memory model's lines of a policy block and the memory comparison table: the block
//! reads the model's own observations ([`MemoryReport::obs`]) and the figures the report
//! derives from them. Every line stays within 80 columns.

use super::{ColumnUnit, compact_ns, kv_lines, ms_rounded, table};
use crate::report::{CallerWaitsReport, MemoryReport, Report};
use std::fmt::Write as _;

/// `sync=N (Tms), async=N (Tms), early=E%, skipped=S`: waits and time per queue class, as the
/// `congestion` line has them.
fn cwait_items(w: &CallerWaitsReport) -> Vec<String> {
    let mut items: Vec<String> = w
        .class
        .iter()
        .map(|c| format!("{}={} ({}ms)", c.class, c.waits, ms_rounded(c.total_ns)))
        .collect();
    items.push(format!("early={:.1}%", w.early_pct));
    items.push(format!("skipped={}", w.skipped));
    items
}

/// `n` as a share of `of`, percent (0 when `of` is 0).
fn pct(n: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 * 100.0 / of as f64
    }
}

/// The memory model's lines of a policy block (docs/model/memory.md §11).
pub(super) fn memory_lines(m: &MemoryReport, s: &mut String) {
    zone_lines(m, s);
    atomic_lines(m, s);
    kswapd_lines(m, s);
    direct_lines(m, s);
    bounce_and_pages_lines(m, s);
    swap_lines(m, s);
    failure_log(m, s);
}

/// Anonymous memory and swap, and each fake-gitk process (only when the run modelled them).
fn swap_lines(m: &MemoryReport, s: &mut String) {
    let w = &m.obs.swap;
    if !w.is_active() {
        return;
    }
    let e = &m.obs.end_pages;
    kv_lines(
        "swap",
        &[
            format!("outs={} ({} bios)", w.swap_outs, w.swap_out_bios),
            format!("ins={}", w.swap_ins),
            format!("readahead={}", w.readahead_pages),
            format!("major_faults={}", w.major_faults),
            format!("fault_time={}ms", ms_rounded(w.fault_time.as_ns())),
            format!("minor={}", w.minor_faults),
            format!("dropped_clean={}", w.anon_dropped),
            format!("used_end={}", w.used_end),
            format!("used_peak={}", w.used_peak),
            format!("slots={}", w.total_slots),
            format!("anon_at_end={}", e.anon),
            format!("anon_writeback={}", e.anon_writeback),
        ],
        s,
    );
    if w.out_of_swap > 0 {
        let _ = writeln!(
            s,
            "  out of swap  : {} anonymous pages found no free swap slot",
            w.out_of_swap
        );
    }
    for p in &w.procs {
        let elapsed = p
            .elapsed_ns
            .map_or("unfinished".to_string(), |ns| compact_ns(ns as f64));
        let mut kv = vec![
            format!("{}: elapsed={elapsed}", p.name),
            format!("loops={}", p.loops),
            format!("progress_lines={}", p.progress_lines),
            format!("longest_gap={}", compact_ns(p.max_gap_ns as f64)),
            format!("faults={}", p.major_faults),
            format!("fault_time={}ms", ms_rounded(p.fault_ns)),
        ];
        if p.insert_faults > 0 {
            kv.push(format!("insert_faults={}", p.insert_faults));
        }
        let [cached, waited, read] = p.log_pages;
        kv.push(format!(
            "log_pages={read}/{waited}/{cached} (read/waited/cached)"
        ));
        kv_lines("fake-gitk", &kv, s);
    }
}

/// The zone's marks and its free pages over the run.
fn zone_lines(m: &MemoryReport, s: &mut String) {
    let o = &m.obs;
    kv_lines(
        "memory",
        &[
            format!("pages={}", o.total_pages),
            format!("min={}", o.min),
            format!("low={}", o.low),
            format!("high={}", o.high),
            format!("atomic_floor={}", o.atomic_floor),
        ],
        s,
    );
    kv_lines(
        "free pages",
        &[
            format!("min={}", o.free_min_seen),
            format!("avg={:.0}", o.free_avg),
            format!(
                "below_min={}ms ({:.2}%)",
                ms_rounded(o.below_min.as_ns()),
                m.below_min_pct
            ),
        ],
        s,
    );
}

/// GFP_ATOMIC attempts and failures, in all and by order.
fn atomic_lines(m: &MemoryReport, s: &mut String) {
    let o = &m.obs;
    kv_lines(
        "gfp_atomic",
        &[
            format!("attempts={}", m.atomic_attempts_total),
            format!(
                "failures={} ({:.2}%)",
                m.atomic_failures_total,
                pct(m.atomic_failures_total, m.atomic_attempts_total)
            ),
            format!("fail_rate={:.2}/s", m.atomic_failures_per_s),
        ]
        .into_iter()
        .chain(
            // The kernel log shows fewer when printk's rate limit held messages back.
            (o.atomic_failures_logged < m.atomic_failures_total)
                .then(|| format!("logged={}", o.atomic_failures_logged)),
        )
        .collect::<Vec<_>>(),
        s,
    );
    for rx in &o.rx {
        kv_lines(
            &format!("rx {}", rx.name),
            &[
                format!("segments={}", rx.segments),
                format!("ring_drops={}", rx.ring_drops),
                format!("socket_drops={}", rx.socket_drops),
                format!("refill_failures={}", rx.refill_failures),
                format!(
                    "window_closed={} ({}ms)",
                    rx.window_closed,
                    ms_rounded(rx.window_closed_ns)
                ),
                format!("max_queued={}", rx.max_queued),
                format!("max_held_pages={}", rx.max_held_pages),
                format!("max_rcvbuf={}", rx.max_rcvbuf),
            ],
            s,
        );
    }
    for (order, &attempts) in o.atomic_attempts.iter().enumerate() {
        if attempts == 0 {
            continue;
        }
        let failures = o.atomic_failures.get(order).copied().unwrap_or(0);
        let mut items = vec![
            format!("attempts={attempts}"),
            format!("failures={failures} ({:.2}%)", pct(failures, attempts)),
        ];
        if failures > 0 {
            let avg = m.atomic_fail_free_avg.get(order).copied().unwrap_or(0.0);
            items.push(format!("free_at_fail={avg:.0}"));
        }
        kv_lines(&format!("gfp_atomic o{order}"), &items, s);
    }
}

/// kswapd's work and its congestion waits.
fn kswapd_lines(m: &MemoryReport, s: &mut String) {
    let o = &m.obs;
    kv_lines(
        "kswapd",
        &[
            format!("wakeups={}", o.kswapd_wakeups),
            format!(
                "awake={}ms ({:.2}%)",
                ms_rounded(o.kswapd_awake.as_ns()),
                m.kswapd_awake_pct
            ),
            format!("passes={}", o.kswapd_passes),
            format!("scanned={}", o.kswapd_scanned),
            format!("reclaimed={}", o.kswapd_reclaimed),
            format!("skip_below_min={}", o.kswapd_skips),
            format!("premature_low={}", o.low_wmark_hit_quickly),
            format!("premature_high={}", o.high_wmark_hit_quickly),
            format!("order0_fallbacks={}", o.order0_fallbacks),
        ],
        s,
    );
    kv_lines("kswapd cwait", &cwait_items(&m.kswapd_waits), s);
}

/// Direct-reclaim stalls, their work and their congestion waits.
fn direct_lines(m: &MemoryReport, s: &mut String) {
    let o = &m.obs;
    let st = &m.direct_stall;
    // Stalls with their total time, as `congestion` shows waits, so the percentiles fit too.
    let mut direct = vec![format!(
        "stalls={} ({}ms)",
        o.direct_stalls,
        ms_rounded(st.total_ns)
    )];
    if st.n > 0 {
        direct.push(format!("p50={}", compact_ns(st.p50_ns as f64)));
        direct.push(format!("p99={}", compact_ns(st.p99_ns as f64)));
        direct.push(format!("p99.9={}", compact_ns(st.p99_9_ns as f64)));
    }
    kv_lines("direct", &direct, s);
    kv_lines(
        "direct",
        &[
            format!("scanned={}", o.direct_scanned),
            format!("reclaimed={}", o.direct_reclaimed),
            format!("pageout={}", o.pageout_pages),
        ],
        s,
    );
    kv_lines("direct cwait", &cwait_items(&m.direct_waits), s);
}

/// dm-crypt's bounce pages and the page states at the end.
fn bounce_and_pages_lines(m: &MemoryReport, s: &mut String) {
    let o = &m.obs;
    kv_lines(
        "bounce",
        &[
            format!("from_zone={}", o.bounce_from_zone),
            format!("from_reserve={}", o.bounce_from_reserve),
            format!(
                "mempool_waits={} ({}ms)",
                o.mempool_waits,
                ms_rounded(o.mempool_wait_time.as_ns())
            ),
            format!(
                "partial_clones={} ({}ms)",
                o.partial_clones,
                ms_rounded(o.partial_nap_time.as_ns())
            ),
        ],
        s,
    );
    let e = &o.end_pages;
    kv_lines(
        "pages at end",
        &[
            format!("free={}", m.end_free),
            format!("unreclaimable={}", e.unreclaimable),
            format!("clean={}", e.clean),
            format!("dirty={}", e.dirty),
            format!("writeback={}", e.writeback),
            format!("bounce={}", e.bounce),
            format!("atomic={}", e.atomic),
            format!("filling={}", e.filling),
        ],
        s,
    );
}

/// The first GFP_ATOMIC failures as the kernel would log them.
fn failure_log(m: &MemoryReport, s: &mut String) {
    let log = &m.obs.failure_log;
    if log.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "  alloc log    : first {} of {} failures, free: the zone's free pages at each",
        log.len(),
        m.atomic_failures_total.max(log.len() as u64)
    );
    // A burst fails many allocations at one instant with the same free count: each distinct
    // line once, a repeat said as syslogd says it.
    let mut i = 0;
    while i < log.len() {
        let f = &log[i];
        let same = log[i..]
            .iter()
            .take_while(|g| (g.at, g.order, g.free) == (f.at, f.order, f.free))
            .count();
        let at_ns = f.at.as_ns();
        // printk's "[%5lu.%06lu] " timestamp; GFP_ATOMIC is mode 0x20 (__GFP_HIGH) in 2.6.3x.
        let _ = writeln!(
            s,
            "  [{:5}.{:06}] swapper: page allocation failure. order:{}, mode:0x20 free:{}",
            at_ns / 1_000_000_000,
            at_ns % 1_000_000_000 / 1_000,
            f.order,
            f.free
        );
        if same > 1 {
            let _ = writeln!(s, "  last message repeated {} times", same - 1);
        }
        i += same;
    }
}

/// With a memory model, a second table: GFP_ATOMIC failures, kswapd's congestion-wait time on
/// the SYNC and ASYNC queues, direct-reclaim stalls and the fewest free pages.
pub(super) fn memory_comparison(r: &Report, s: &mut String) {
    if r.policies.iter().all(|p| p.memory.is_none()) {
        return;
    }
    // The blocks pool every replication; this table gives each run's mean per replication,
    // so its counts read like one run's (and like the replication summary's).
    let pooled = r.policies.iter().any(|p| p.replications > 1);
    if pooled {
        s.push_str(
            "\nMemory per replication (means: atomic failures, kswapd cwait SYNC/ASYNC, direct\n\
             stalls; fewest free pages in any replication):\n",
        );
    } else {
        s.push_str(
            "\nMemory (atomic failures, kswapd cwait SYNC/ASYNC, direct stalls, fewest free):\n",
        );
    }
    let cwait = |p: &crate::report::PolicyReport, class: usize| {
        let reps = p.replications.max(1) as f64;
        p.memory
            .as_ref()
            .map(|m| m.kswapd_waits.class[class].total_ns as f64 / reps)
    };
    let units = [0, 1].map(|c| ColumnUnit::of(r.policies.iter().filter_map(|p| cwait(p, c))));
    let mut rows = vec![vec![
        "policy".to_string(),
        "atomic fails".to_string(),
        format!("cwait sync ({})", units[0].label),
        format!("cwait async ({})", units[1].label),
        "stalls".to_string(),
        "free min".to_string(),
    ]];
    for p in &r.policies {
        let reps = u64::from(p.replications.max(1));
        let per = |n: u64| {
            if pooled {
                format!("{:.1}", n as f64 / reps as f64)
            } else {
                n.to_string()
            }
        };
        let row = match &p.memory {
            Some(m) => vec![
                super::shown(&p.policy),
                per(m.atomic_failures_total),
                units[0].show(cwait(p, 0).unwrap_or(f64::NAN)),
                units[1].show(cwait(p, 1).unwrap_or(f64::NAN)),
                per(m.obs.direct_stalls),
                m.obs.free_min_seen.to_string(),
            ],
            None => {
                let mut row = vec![super::shown(&p.policy)];
                row.extend((0..5).map(|_| "-".to_string()));
                row
            }
        };
        rows.push(row);
    }
    table(&rows, "  ", s);
}
