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
        "variants:",
        "set: {}",
        "iops",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
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
    for c in ["aes-2009", "aes-ni", "vaes", "cipher: null", "\"null\""] {
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
