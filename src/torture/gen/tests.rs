//! The generator's own tests: determinism, reach over the schema, exact spellings.

use super::*;

#[test]
fn the_same_seed_gives_the_same_file() {
    for seed in [0, 1, 42, u64::MAX] {
        assert_eq!(scenario_yaml(seed), scenario_yaml(seed));
    }
    assert_ne!(scenario_yaml(1), scenario_yaml(2));
}

/// Every knob of the schema appears in the first few hundred files.
#[test]
fn the_generator_reaches_every_knob() {
    let all: String = (0..400).map(scenario_yaml).collect();
    let mut wanted: Vec<String> = [
        "name:",
        "description:",
        "seed:",
        "duration:",
        "warmup:",
        "max_events:",
        "replications:",
        "cpus:",
        "hz:",
        "version:",
        "patches:",
        "cwait_class:",
        "kswapd_nap:",
        "skip_below_min:",
        "wait_iff_congested:",
        "force_highorder:",
        "restart_wakes_kswapd:",
        "seek_min:",
        "seek_full:",
        "revolution:",
        "transfer_rate:",
        "capacity:",
        "queue_depth:",
        "latency:",
        "channels:",
        "overhead:",
        "service:",
        "mode: blk-mq",
        "mode: legacy",
        "nr_requests:",
        "elevator: cfq",
        "elevator: fifo",
        "plug:",
        "unplug_threshold:",
        "low_latency:",
        "slice_sync:",
        "slice_async:",
        "slice_idle:",
        "quantum:",
        "encrypt_rate:",
        "decrypt_rate:",
        "per_sector_cost:",
        "hop_cost:",
        "cost:",
        "engine: async",
        "engine: sync",
        "async_queue_limit:",
        "async_rate:",
        "unplug_after_submit:",
        "io_queues: mason-v3",
        "host: vm-2020",
        "host: g9-2020",
        "ram:",
        "min_free_kbytes:",
        "unreclaimable:",
        "mapped:",
        "page_cache:",
        "coalesce:",
        "scan_cost:",
        "page_pool:",
        "min_bio_pages:",
        "atomic:",
        "preset: iwlagn",
        "preset: custom",
        "bandwidth:",
        "buffer:",
        "orders:",
        "poisson:",
        "hold:",
        "burst:",
        "rwmixread:",
        "bs:",
        "size:",
        "offset:",
        "iodepth:",
        "arrivals: poisson",
        "arrivals: constant",
        "think:",
        "numjobs:",
        "sync:",
        "direct:",
        "io_size:",
        "io_limit:",
        "number_ios:",
        "startdelay:",
        "chunk:",
        "background:",
        "dirty_limit:",
        "kind: fake-gitk",
        "loops:",
        "progress_every:",
        "hash_cost:",
        "commits:",
        "swap:",
        "swap_offset:",
        "swappiness:",
        "submit_cost:",
        "clone_submit_cost:",
        "max_read_size:",
        "max_write_size:",
        "dm-crypt+",
        "thinktime:",
        "thinktime_blocks:",
        "thinktime_blocks_type: issue",
        "thinktime_blocks_type: complete",
        "thinktime_spin:",
        "serve:",
        "kind: cpuio",
        "cpuload:",
        "cpuchunks:",
        "variants:",
        "set: {}",
        "iops",
        "hw_queues:",
        "irq_cpus:",
        "rq_affinity:",
        "scheduler: mq-deadline",
        "scheduler: none",
        "read_expire:",
        "write_expire:",
        "fifo_batch:",
        "writes_starved:",
        "disks:",
        "kind: sata-ssd",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Both forms of a flag pattern (modern draws are few, so not every subset in 400 files).
    wanted.extend(["\"dm-crypt+*\"".to_string(), "\"dm-crypt+{".to_string()]);
    for list in [&PATCHES[..], &POLICIES[..]] {
        wanted.extend(list.iter().map(|s| s.to_string()));
    }
    for v in ["2.6.30", "2.6.31", "2.6.32", "2.6.33", "2.6.37"] {
        wanted.push(format!("\"{v}\""));
    }
    for k in [
        "hdd5400",
        "hdd7200",
        "nvme",
        "nvme-gen4",
        "nvme-gen5",
        "generic",
        "fio",
        "gitk",
        "buffered-writer",
    ] {
        wanted.push(format!("kind: {k}"));
    }
    for k in [
        "deterministic",
        "exponential",
        "uniform",
        "lognormal",
        "empirical",
    ] {
        wanted.push(format!("kind: {k}"));
    }
    for c in [
        "aes-2009",
        "aes-ni",
        "vaes",
        "vaes-zen4",
        "vaes-spr",
        "cipher: null",
        "\"null\"",
    ] {
        wanted.push(c.to_string());
    }
    for rw in ["read", "write", "randread", "randwrite", "randrw"] {
        wanted.push(format!("rw: {rw}"));
    }
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|w| !all.contains(w.as_str()))
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}

#[test]
fn durations_and_sizes_are_written_exactly() {
    let mut g = G::new(3);
    for ns in [0u64, 1, 999, 1_000, 1_500_000, 2_000_000, 3_000_000_000] {
        for _ in 0..20 {
            let d = dur(&mut g, ns);
            let parsed = crate::scenario::units::parse_duration(&d.text)
                .unwrap_or_else(|e| panic!("{}: {e:?}", d.text));
            assert_eq!(parsed.as_ns(), ns, "{}", d.text);
        }
    }
    for b in [0u64, 512, 1536, 4096, 1 << 20, 3 << 30, 5_000_000] {
        for _ in 0..20 {
            let s = size(&mut g, b);
            let parsed = crate::scenario::units::parse_size(&s.text)
                .unwrap_or_else(|e| panic!("{}: {e:?}", s.text));
            assert_eq!(parsed, b, "{}", s.text);
        }
    }
}

/// Each section's mirror of a loader rule refuses a base broken in that section alone, and the
/// loader refuses the same file: the mirror and the judge agree on these rules.
#[test]
fn section_mirrors_refuse_what_the_loader_refuses() {
    let mut g = G::new(11);
    let valid = base(&mut g);
    let load = |sc: &Sc, g: &mut G| {
        let yaml = sc.yaml(g, true).document();
        crate::scenario::load_str("t.yaml", &yaml)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    load(&valid, &mut g).unwrap_or_else(|e| panic!("the valid base: {e}"));
    // (what the mirror says, a word the loader's message must hold, the broken base)
    let mut breaks: Vec<(&str, &str, Sc)> = Vec::new();
    let mut sc = valid.clone();
    sc.kernel = Some(Kernel {
        patches: Some(vec!["force-highorder"]),
        force_highorder: Some(false),
        ..Kernel::default()
    });
    breaks.push((
        "force_highorder: false with its patch",
        "force_highorder",
        sc,
    ));
    let mut sc = valid.clone();
    sc.block = Some(Block {
        mode: Some("blk-mq"),
        elevator: Some("cfq"),
        ..Block::default()
    });
    breaks.push(("blk-mq with cfq", "cfq", sc));
    let mut sc = valid.clone();
    sc.block = Some(Block {
        elevator: Some("fifo"),
        quantum: Some(4),
        ..Block::default()
    });
    breaks.push(("cfq fields without cfq", "quantum", sc));
    let mut sc = valid.clone();
    sc.crypt = Some(Crypt {
        engine: Some("sync"),
        async_queue_limit: Some(4),
        ..Crypt::default()
    });
    breaks.push((
        "async fields without engine: async",
        "async_queue_limit",
        sc,
    ));
    let mut sc = valid.clone();
    sc.device = Some(Device {
        kind: Some(DevKind::Nvme),
        seek_min: Some(dur(&mut g, 1_000_000)),
        ..Device::default()
    });
    breaks.push(("device field seek_min of another kind", "seek_min", sc));
    let mut sc = valid.clone();
    sc.memory = Some(Memory {
        ram: Some(size(&mut g, 64 << 20)),
        min_free_kbytes: Some(100_000),
        ..Memory::default()
    });
    breaks.push(("min_free_kbytes out of range", "min_free_kbytes", sc));
    let hdd = |chunk: Option<Q<u64>>| Device {
        kind: Some(DevKind::Hdd7200),
        chunk,
        ..Device::default()
    };
    let mut sc = valid.clone();
    sc.device = Some(hdd(None));
    sc.block = Some(Block {
        mode: Some("blk-mq"),
        hw_queues: Some(1),
        irq_cpus: Some(q(vec![0, 0], "[0, 0]".into())),
        ..Block::default()
    });
    breaks.push(("irq_cpus not one per queue", "irq_cpus", sc));
    let mut sc = valid.clone();
    sc.device = Some(hdd(None));
    sc.block = Some(Block {
        mode: Some("blk-mq"),
        scheduler: Some("none"),
        fifo_batch: Some(4),
        ..Block::default()
    });
    breaks.push(("mq-deadline tunables without mq-deadline", "fifo_batch", sc));
    let mut sc = valid.clone();
    sc.device = Some(hdd(Some(size(&mut g, 64 << 10))));
    breaks.push(("device field chunk of another kind", "chunk", sc));
    let mut sc = valid.clone();
    sc.workloads = Some(vec![Workload {
        kind: Some(WK::Fio),
        thinktime_spin: Some(dur(&mut g, 100_000)),
        ..Workload::default()
    }]);
    breaks.push((
        "a thinktime companion without thinktime",
        "thinktime_spin",
        sc,
    ));
    let mut sc = valid.clone();
    sc.workloads = Some(vec![Workload {
        kind: Some(WK::CpuIo),
        cpuload: Some(10),
        ..Workload::default()
    }]);
    breaks.push(("every workload is cpuio", "nothing issues I/O", sc));
    for (why, field, sc) in breaks {
        assert_eq!(sc.problem().as_deref(), Some(why));
        let e = load(&sc, &mut g).expect_err(why);
        assert!(e.contains(field), "{why}: the loader said {e}");
    }
}
