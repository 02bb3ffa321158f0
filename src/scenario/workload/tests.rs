//! `workloads:` parsed and checked alone: presets, loops, regions, limits and bounds.

use crate::scenario::testutil::*;

#[test]
fn gitk_preset_and_overrides() {
    let s = ok(
        "device: { kind: nvme }\nworkloads:\n  - kind: gitk\n  - kind: gitk\n    iodepth: 4\n    think: 1ms\n",
    );
    let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
        panic!("fio")
    };
    assert_eq!(f.size, 256 << 20);
    assert!(
        matches!(&f.arrivals, Arrivals::Closed { iodepth: 1, think: Some(Distribution::Exponential { mean }) } if *mean == SimDuration::from_ms(2))
    );
    let WorkloadKind::Fio(g) = &s.workloads[1].kind else {
        panic!("fio")
    };
    assert_eq!(g.offset, 256 << 20, "regions follow one another");
    assert!(matches!(
        &g.arrivals,
        Arrivals::Closed {
            iodepth: 4,
            think: Some(Distribution::Deterministic { .. })
        }
    ));
    assert_eq!(s.workloads[1].name, "gitk1");
}

#[test]
fn open_loop_rates_convert_bandwidth_with_bs() {
    let s = ok(
        "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    bs: 64k\n    rate: 64MiB/s\n    arrivals: constant\n",
    );
    let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
        panic!("fio")
    };
    assert!(
        matches!(f.arrivals, Arrivals::Open { rate, poisson: false, iodepth: 1 } if rate == 1024.0)
    );
}

#[test]
fn cross_field_checks() {
    let e = err(&format!("{BASE}duration: 5s\nwarmup: 5s\n"));
    assert_eq!(e.path(), Some("warmup"));
    let e = err(&format!("{BASE}kernel: {{ hz: 200 }}\n"));
    assert_eq!(e.path(), Some("kernel.hz"));
    let e = err(&format!("{BASE}block: {{ mode: blk-mq, elevator: cfq }}\n"));
    assert_eq!(e.path(), Some("block.elevator"));
    let e = err(&format!(
        "{BASE}block: {{ elevator: fifo, slice_idle: 0 }}\n"
    ));
    assert_eq!(e.path(), Some("block.slice_idle"));
    let e = err(&format!("{BASE}crypt: {{ async_rate: 1GB/s }}\n"));
    assert_eq!(e.path(), Some("crypt.async_rate"));
    let e = err(&format!("{BASE}crypt: {{ encrypt_rate: 500/s }}\n"));
    assert!(e.message().contains("bandwidth"), "{e}");
    let e =
        err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    rate: 10/s\n    think: 1ms\n");
    assert_eq!(e.path(), Some("workloads[0].think"));
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    bs: 1M\n");
    assert!(e.message().contains("512KiB"), "{e}");
    let e =
        err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n  - kind: fio\n    name: fio0\n");
    assert_eq!(e.path(), Some("workloads[1].name"));
    let e = err("device: { kind: hdd5400 }\nworkloads:\n  - kind: fio\n    size: 400GB\n");
    assert!(e.message().contains("past the end of the disk"), "{e}");
    let e = err("device: { kind: generic }\nworkloads:\n  - kind: fio\n");
    assert_eq!(e.path(), Some("device.service"));
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: buffered-writer\n");
    assert_eq!(e.path(), Some("workloads[0].rate"));
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: buffered-writer\n    rate: 10/s\n");
    assert!(e.message().contains("bandwidth"), "{e}");
}

/// Torture seed 3: a 512-byte writeback chunk moved bytes to writeback without moving any
/// page, and the run broke its dirty-page conservation law. Chunks are whole pages now.
#[test]
fn a_writeback_chunk_is_whole_pages() {
    let writer = |chunk: &str| {
        format!(
            "device: {{ kind: nvme }}\nmemory: {{ ram: 256MiB }}\nworkloads:\n  - \
             {{ kind: buffered-writer, rate: 6MB/s, chunk: {chunk}, dirty_limit: 11303 }}\n"
        )
    };
    let e = err(&writer("0.5KiB"));
    assert_eq!(e.kind(), ErrorKind::BadValue);
    assert_eq!(e.path(), Some("workloads[0].chunk"));
    assert!(e.message().contains("whole number of 4KiB pages"), "{e}");
    assert!(e.hint().unwrap_or("").contains("4KiB rounded up"), "{e}");
    let e = err(&writer("6k"));
    assert!(e.hint().unwrap_or("").contains("8KiB rounded up"), "{e}");
    ok(&writer("8k"));
}

#[test]
fn fio_direct_is_fios_option() {
    let s =
        ok("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    direct: true\n  - kind: gitk\n");
    let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
        panic!("fio")
    };
    assert!(f.direct);
    let WorkloadKind::Fio(g) = &s.workloads[1].kind else {
        panic!("fio")
    };
    assert!(!g.direct, "gitk reads through the page cache");
    let e = err(
        "device: { kind: nvme }\nworkloads:\n  - kind: buffered-writer\n    rate: 1MB/s\n    direct: true\n",
    );
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(e.path(), Some("workloads[0].direct"));
}

#[test]
fn finite_jobs_take_fios_io_size_number_ios_and_startdelay() {
    let fio = |s: &Scenario, i: usize| match &s.workloads[i].kind {
        WorkloadKind::Fio(f) => f.clone(),
        WorkloadKind::BufferedWriter(_) | WorkloadKind::FakeGitk(_) | WorkloadKind::CpuIo(_) => {
            panic!("fio")
        }
    };
    // Defaults: unlimited, starting at once; gitk too.
    let s = ok("device: { kind: nvme }\nworkloads:\n  - kind: fio\n  - kind: gitk\n");
    for i in 0..2 {
        let f = fio(&s, i);
        assert_eq!(
            (f.io_size, f.number_ios, f.startdelay),
            (None, None, SimDuration::ZERO)
        );
        assert!(!f.is_finite());
    }
    assert!(!s.has_finite_jobs());
    let s = ok("device: { kind: nvme }\nworkloads:\n  \
         - { kind: gitk, io_size: 64MiB, startdelay: 5s }\n  \
         - { kind: fio, number_ios: 1000 }\n  \
         - { kind: fio, io_limit: 1MiB, number_ios: 10, bs: 64k }\n  \
         - { kind: buffered-writer, rate: 1MB/s }\n");
    let g = fio(&s, 0);
    assert_eq!(g.io_size, Some(64 << 20));
    assert_eq!(g.startdelay, SimDuration::from_secs(5));
    assert!(g.is_finite() && s.has_finite_jobs());
    // The gitk preset is otherwise unchanged.
    assert!(matches!(
        g.arrivals,
        Arrivals::Closed {
            iodepth: 1,
            think: Some(_)
        }
    ));
    assert_eq!(
        (fio(&s, 1).io_size, fio(&s, 1).number_ios),
        (None, Some(1000))
    );
    assert_eq!(fio(&s, 2).io_size, Some(1 << 20), "io_limit is fio's alias");
    assert_eq!(fio(&s, 2).number_ios, Some(10));

    // Errors point at the value, name the field and say what to do.
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    io_size: 2k\n");
    assert_eq!(place(&e), (Some(4), Some(14), Some("workloads[0].io_size")));
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(e.message().contains("less than one block"), "{e}");
    assert!(e.hint().unwrap().contains("at least `bs`"), "{e}");
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    io_size: 4100\n");
    assert_eq!(e.path(), Some("workloads[0].io_size"));
    assert!(e.message().contains("multiple of 512"), "{e}");
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    number_ios: 0\n");
    assert_eq!(
        place(&e),
        (Some(4), Some(17), Some("workloads[0].number_ios"))
    );
    assert!(e.hint().unwrap().contains("leave it out"), "{e}");
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    startdelay: 5 parsecs\n");
    assert_eq!(e.path(), Some("workloads[0].startdelay"));
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    number_ios: -3\n");
    assert_eq!(e.path(), Some("workloads[0].number_ios"));
    // They are fio options: a buffered writer refuses them.
    for field in ["io_size: 1MiB", "number_ios: 5", "startdelay: 1s"] {
        let e = err(&format!(
            "device: {{ kind: nvme }}\nworkloads:\n  - kind: buffered-writer\n    \
             rate: 1MB/s\n    {field}\n"
        ));
        assert_eq!(e.kind(), ErrorKind::Conflict, "{field}");
        let name = field.split(':').next().unwrap();
        assert_eq!(e.path(), Some(format!("workloads[0].{name}").as_str()));
    }
}

#[test]
fn offsets_and_sizes_cannot_overflow() {
    // Issue 11 case 7: `offset 18446744073709551104B, size 1GiB (ends at 1073741312B)`.
    let e = err(
        "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    offset: 18446744073709551104\n",
    );
    assert_eq!(place(&e), (Some(4), Some(13), Some("workloads[0].offset")));
    assert!(
        e.message().starts_with(
            "the region starts at 18446744073709551104B and is 1GiB long: it would end past 1EiB"
        ),
        "{e}"
    );
    // Without an offset, the region that follows the previous one is checked as well.
    // (1048576TiB is 1 EiB: the first region fills the largest disk.)
    let e = err(
        "device: { kind: nvme }\nworkloads:\n  - { kind: fio, size: 1048576TiB }\n  \
         - { kind: fio, size: 4k }\n",
    );
    assert_eq!(e.path(), Some("workloads[1].size"), "{e}");
    ok("device: { kind: nvme }\nworkloads:\n  - { kind: fio, offset: 1048575TiB, size: 1TiB }\n");
    let e = err("device: { kind: hdd5400, capacity: 2000000TB }\nworkloads: [{ kind: fio }]\n");
    assert_eq!(e.path(), Some("device.capacity"));
}

#[test]
fn ios_in_flight_are_bounded() {
    let e = err(
        "device: { kind: nvme }\nworkloads:\n  - { kind: fio, iodepth: 65536, numjobs: 4 }\n  - { kind: fio, numjobs: 2 }\n",
    );
    assert_eq!(e.path(), Some("workloads[1].numjobs"));
    assert!(
        e.message()
            .starts_with("the fio jobs keep 262146 I/Os in flight in all"),
        "{e}"
    );
    ok(
        "device: { kind: nvme }\nworkloads:\n  - { kind: fio, iodepth: 65536, numjobs: 4 }\n  - { kind: buffered-writer, rate: 1MB/s }\n",
    );
    let e =
        err("device: { kind: nvme }\nworkloads:\n  - { kind: fio, iodepth: 65536, numjobs: 5 }\n");
    assert_eq!(e.path(), Some("workloads[0].iodepth"));
}

#[test]
fn arrival_rates_and_bandwidths_are_bounded() {
    let nvme = "device: { kind: nvme }\n";
    for (text, path, says) in [
        (
            "workloads: [{ kind: fio, rate: 20000000/s }]",
            "workloads[0].rate",
            "more than 10000000",
        ),
        (
            "workloads: [{ kind: fio, rate: 100GB/s, bs: 512 }]",
            "workloads[0].rate",
            "100GB/s in 512B blocks",
        ),
        (
            "workloads: [{ kind: fio, rate: 0.00001/s }]",
            "workloads[0].rate",
            "fewer than one arrival",
        ),
        (
            "workloads: [{ kind: buffered-writer, rate: 20GB/s }]",
            "workloads[0].rate",
            "10GB/s",
        ),
        (
            "workloads: [{ kind: buffered-writer, rate: 0.5B/s }]",
            "workloads[0].rate",
            "below 1 B/s",
        ),
        (
            "workloads: [{ kind: fio }]\ncrypt: { encrypt_rate: 0.001B/s }",
            "crypt.encrypt_rate",
            "below 1 B/s",
        ),
        (
            "workloads: [{ kind: fio }]\nmemory: { ram: 1GiB, atomic: [{ rate: 1e12 }] }",
            "memory.atomic[0].rate",
            "more than 10000000",
        ),
        (
            "workloads: [{ kind: fio }]\nmemory: { ram: 1GiB, atomic: [{ bandwidth: 1B/s, buffer: 1GiB }] }",
            "memory.atomic[0].bandwidth",
            "1B/s over 1GiB buffers",
        ),
    ] {
        let e = err(&format!("{nvme}{text}\n"));
        assert_eq!(e.path(), Some(path), "{text}: {e}");
        assert!(e.message().contains(says), "{text}: {e}");
    }
    ok(&format!(
        "{nvme}workloads: [{{ kind: fio, rate: 10000000/s }}, {{ kind: fio, rate: 0.0001/s }}]\n"
    ));
}

#[test]
fn one_workload_alone_takes_its_kinds_fields_and_moves_the_cursor() {
    use super::{RawWorkload, workload};
    let mut cursor = 4096u64;
    let w = section::<RawWorkload, _>("kind: fio\nsize: 1MiB\n", |c, r, here| {
        workload(
            c,
            r,
            here,
            "workloads[1]",
            1,
            &mut cursor,
            bounds(Some(1 << 30)),
        )
    })
    .unwrap();
    assert_eq!(w.name, "fio1");
    let WorkloadKind::Fio(f) = &w.kind else {
        panic!("fio")
    };
    assert_eq!(
        f.offset, 4096,
        "the region starts where the previous one ended"
    );
    assert_eq!(cursor, 4096 + (1 << 20));
    let e = section::<RawWorkload, _>(
        "kind: buffered-writer\nrate: 1MB/s\nbs: 4k\n",
        |c, r, here| workload(c, r, here, "workloads[1]", 1, &mut 0, bounds(None)),
    )
    .unwrap_err();
    assert_eq!((e.line(), e.path()), (Some(3), Some("workloads[1].bs")));
    assert_eq!(
        e.hint(),
        Some(
            "workload kind `buffered-writer` takes: rate, from, chunk, background, dirty_limit, \
             size, offset"
        )
    );
}

#[test]
fn fake_gitk_takes_its_fields_and_needs_memory() {
    let s = ok(
        "device: { kind: hdd7200 }\nmemory: { preset: mel-512mb }\nworkloads:\n  \
                - { kind: fake-gitk, numjobs: 4, size: 108MiB, loops: 2 }\n",
    );
    let WorkloadKind::FakeGitk(g) = &s.workloads[0].kind else {
        panic!("fake-gitk")
    };
    assert_eq!(
        (g.size, g.bs, g.loops, g.numjobs),
        (108 << 20, 64 << 10, 2, 4)
    );
    assert_eq!(
        (g.progress_every, g.hash_cost.as_ns()),
        (1 << 20, 5_000_000)
    );
    assert!(s.has_finite_jobs());
    let m = s.memory.as_ref().unwrap();
    assert_eq!(
        (m.ram, m.swap, m.swap_offset, m.min_free_kbytes),
        (512 << 20, 2 << 30, 5 << 30, 2896)
    );
    // Without memory: refused at the workload's kind.
    let e = err("device: { kind: hdd7200 }\nworkloads:\n  - { kind: fake-gitk }\n");
    assert_eq!(e.path(), Some("workloads[0].kind"));
    // Fields of other kinds are refused; pages only.
    let e = err(
        "device: { kind: hdd7200 }\nmemory: { ram: 1GiB }\nworkloads:\n  \
                 - { kind: fake-gitk, iodepth: 2 }\n",
    );
    assert_eq!(e.path(), Some("workloads[0].iodepth"));
    let e = err(
        "device: { kind: hdd7200 }\nmemory: { ram: 1GiB }\nworkloads:\n  \
                 - { kind: fake-gitk, size: 1000 }\n",
    );
    assert_eq!(e.path(), Some("workloads[0].size"));
    // Commits: a map to insert them into, and at least 64 B of logs each.
    let gitk = |fields: &str| {
        format!(
            "device: {{ kind: hdd7200 }}\nmemory: {{ ram: 1GiB }}\nworkloads:\n  \
             - {{ kind: fake-gitk, size: 64KiB, {fields} }}\n"
        )
    };
    let s = ok(&gitk("map: 4KiB, commits: 1024"));
    let WorkloadKind::FakeGitk(g) = &s.workloads[0].kind else {
        panic!("fake-gitk")
    };
    assert_eq!((g.map, g.commits), (4096, 1024));
    for fields in ["commits: 10", "map: 4KiB, commits: 1025"] {
        assert_eq!(err(&gitk(fields)).path(), Some("workloads[0].commits"));
    }
    // A swap offset without swap.
    let e = err(
        "device: { kind: hdd7200 }\nmemory: { ram: 1GiB, swap_offset: 1GiB }\n\
                 workloads:\n  - { kind: fio }\n",
    );
    assert_eq!(e.path(), Some("memory.swap_offset"));
}

#[test]
fn fio_think_time_and_start_ranges_resolve_in_fio_units() {
    let s = ok(
        "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    iodepth: 8\n    \
         thinktime: 500\n    thinktime_blocks: 32\n    thinktime_blocks_type: issue\n    \
         thinktime_spin: 2ms\n    startdelay: 100ms-2s\n  - kind: gitk\n    thinktime: \"250\"\n",
    );
    let fio = |i: usize| match &s.workloads[i].kind {
        WorkloadKind::Fio(f) => f.clone(),
        _ => panic!("fio"),
    };
    let f = fio(0);
    assert_eq!(
        f.thinktime,
        Some(crate::model::base::config::ThinkTime {
            time: SimDuration::from_us(500),
            spin: SimDuration::from_ms(2),
            blocks: 32,
            on_issue: true,
        })
    );
    assert_eq!(
        (f.startdelay, f.startdelay_high),
        (SimDuration::from_ms(100), Some(SimDuration::from_secs(2)))
    );
    // gitk's preset think time gives way to fio's; a bare string of digits is µs too.
    let g = fio(1);
    assert!(matches!(g.arrivals, Arrivals::Closed { think: None, .. }));
    let tt = g.thinktime.expect("thinktime");
    assert_eq!(
        (tt.time, tt.blocks, tt.on_issue),
        (SimDuration::from_us(250), 1, false)
    );
    // thinktime 0 is none, as in fio.
    let s = ok("device: { kind: nvme }\nworkloads:\n  - { kind: fio, thinktime: 0 }\n");
    let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
        panic!("fio")
    };
    assert!(f.thinktime.is_none() && f.startdelay_high.is_none());
}

#[test]
fn cpuio_resolves_with_fio_defaults_and_takes_no_region() {
    let s = ok(
        "device: { kind: nvme }\nworkloads:\n  - { kind: fio, size: 1GiB }\n  - { kind: cpuio, \
         cpuload: 85, numjobs: 3 }\n  - { kind: fio }\n",
    );
    let WorkloadKind::CpuIo(c) = &s.workloads[1].kind else {
        panic!("cpuio")
    };
    assert_eq!(s.workloads[1].name, "cpuio1");
    assert_eq!(
        (c.cpuload, c.cpuchunks, c.numjobs),
        (85, SimDuration::from_ms(50), 3)
    );
    // fio: 50000 × 15 / 85 = 8823 µs (integer microseconds).
    assert_eq!(c.sleep(), SimDuration::from_us(8823));
    let WorkloadKind::Fio(f) = &s.workloads[2].kind else {
        panic!("fio")
    };
    assert_eq!(f.offset, 1 << 30, "the cpuio workload has no region");
}

#[test]
fn think_time_and_cpuio_errors_name_the_field() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "  - { kind: fio, thinktime_spin: 100 }\n",
            "workloads[0].thinktime_spin",
            "applies only with a `thinktime`",
        ),
        (
            "  - { kind: fio, rate: 100/s, thinktime: 1ms }\n",
            "workloads[0].thinktime",
            "`rate`",
        ),
        (
            "  - { kind: fio, think: 1ms, thinktime: 1ms }\n",
            "workloads[0].thinktime",
            "`think`",
        ),
        (
            "  - { kind: fio, thinktime: 1ms, thinktime_blocks: 0 }\n",
            "workloads[0].thinktime_blocks",
            "",
        ),
        (
            "  - { kind: fio, thinktime: 1.5 }\n",
            "workloads[0].thinktime",
            "whole microseconds",
        ),
        (
            "  - { kind: fio, thinktime: 1ms, thinktime_blocks_type: done }\n",
            "workloads[0].thinktime_blocks_type",
            "",
        ),
        (
            "  - { kind: fio, startdelay: 2s-1s }\n",
            "workloads[0].startdelay",
            "ends before it starts",
        ),
        (
            "  - { kind: fio }\n  - { kind: cpuio }\n",
            "workloads[1].cpuload",
            "needs a `cpuload`",
        ),
        (
            "  - { kind: fio }\n  - { kind: cpuio, cpuload: 101 }\n",
            "workloads[1].cpuload",
            "",
        ),
        (
            "  - { kind: fio }\n  - { kind: cpuio, cpuload: 10, cpuchunks: 1500ns }\n",
            "workloads[1].cpuchunks",
            "whole number of microseconds",
        ),
        (
            "  - { kind: fio }\n  - { kind: cpuio, cpuload: 10, bs: 4k }\n",
            "workloads[1].bs",
            "",
        ),
        (
            "  - { kind: cpuio, cpuload: 10 }\n",
            "workloads[0].kind",
            "nothing issues I/O",
        ),
    ];
    for (list, path, words) in cases {
        let e = err(&format!("device: {{ kind: nvme }}\nworkloads:\n{list}"));
        assert_eq!(e.path(), Some(*path), "{list}: {e}");
        assert!(e.line().is_some(), "{list}: {e}");
        assert!(e.to_string().contains(words), "{list}: {e}");
    }
}

#[test]
fn check_rows_show_think_time_and_cpuio() {
    let s = ok(
        "device: { kind: nvme }\nworkloads:\n  - { kind: fio, iodepth: 4, thinktime: 200ms, \
         thinktime_blocks: 16, thinktime_spin: 1ms, startdelay: 0s-300ms }\n  - { name: app, \
         kind: cpuio, cpuload: 60, cpuchunks: 10000 }\n",
    );
    let text = crate::scenario::describe::describe(&s);
    for want in [
        "200ms after every 16 I/Os completed, once none is in flight",
        "1ms of CPU at the start of each pause",
        "uniform in 0ns..300ms, drawn per copy",
        "cpuio: 60% of one CPU per copy, no I/O",
        "10ms of CPU, then 6.666ms asleep",
    ] {
        assert!(
            crate::scenario::describe::has(&text, want),
            "{want}: {text}"
        );
    }
}

/// 2.6.x's bounds with a disk of `capacity`.
fn bounds(capacity: Option<u64>) -> super::Bounds {
    super::Bounds {
        capacity,
        max_request: super::MAX_REQUEST_BYTES,
    }
}

#[test]
fn serve_resolves_its_request_and_refuses_what_a_serving_thread_cannot_do() {
    const HEAD: &str = "device: { kind: nvme }\nkernel: { version: \"6.12\" }\n";
    let job = |extra: &str| {
        format!(
            "{HEAD}workloads:\n  - kind: fio\n    rw: randwrite\n    bs: 1MiB\n    iodepth: 4\n{extra}"
        )
    };
    let s = ok(&job("    serve: { replicas: 1 }\n"));
    let WorkloadKind::Fio(f) = &s.workloads[0].kind else {
        panic!("fio")
    };
    // A request defaults to bs × iodepth, issued as one think-time burst.
    let sv = f.serve.expect("serve");
    assert_eq!((sv.bytes, sv.replicas, sv.link), (4 << 20, 1, 25e9 / 8.0));
    let t = f.thinktime.expect("the request's writes");
    assert_eq!((t.blocks, t.on_issue, t.time), (4, true, SimDuration::ZERO));
    let e = err(&job("    thinktime: 1ms\n    serve: {}\n"));
    assert_eq!(
        (e.path(), e.line()),
        (Some("workloads[0].thinktime"), Some(8))
    );
    let e = err(&job("    serve: { bytes: 1536KiB }\n"));
    assert_eq!(e.path(), Some("workloads[0].serve.bytes"));
    let e = err(&job("    serve: { replicas: 65 }\n"));
    assert_eq!(e.path(), Some("workloads[0].serve.replicas"));
    let e = err(&format!(
        "{HEAD}workloads:\n  - kind: fio\n    rw: randread\n    serve: {{}}\n"
    ));
    assert_eq!(e.path(), Some("workloads[0].serve"));
    // One link per node.
    let two = "device: { kind: nvme }\nkernel: { version: \"6.12\" }\nworkloads:\n  - kind: fio\n    rw: write\n    serve: { link: 1GB/s }\n  \
               - kind: fio\n    rw: write\n    serve: { link: 2GB/s }\n";
    let e = err(two);
    assert_eq!(
        (e.path(), e.line()),
        (Some("workloads[1].serve.link"), Some(9))
    );
}
