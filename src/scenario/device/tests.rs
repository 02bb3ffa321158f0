//! `device:`'s loader tests: presets, overrides, arrays, the request floor.

use super::*;
use crate::scenario::testutil::*;

#[test]
fn hdd_presets_hit_their_mean_seek() {
    let s = ok(BASE);
    let DeviceConfig::Hdd(h) = &s.device else {
        panic!("hdd")
    };
    assert_eq!(h.seek_full, SimDuration::from_us(20_750));
    assert_eq!(mean_random_seek(h), SimDuration::from_ms(12));
    assert_eq!(h.revolution, SimDuration::from_ns(11_111_111));
    assert_eq!((h.capacity, h.queue_depth), (320_000_000_000, 1));
    let s = ok("device: { kind: hdd7200 }\nworkloads:\n  - kind: fio\n");
    let DeviceConfig::Hdd(h) = &s.device else {
        panic!("hdd")
    };
    assert_eq!(mean_random_seek(h), SimDuration::from_us(8_500));
    assert_eq!((h.transfer_rate, h.queue_depth), (105e6, 31));
    // 12ms + 11.111ms/2 + 4096/60MB/s = 17.624ms
    let t = mean_service(&ok(BASE).device, 4096, true);
    assert!((t.as_secs_f64() - 0.017_624).abs() < 1e-6, "{t}");
}

#[test]
fn nvme_preset_gives_193k_iops() {
    let s = ok("device: { kind: nvme }\nworkloads:\n  - kind: fio\n");
    let DeviceConfig::Nvme(n) = &s.device else {
        panic!("nvme")
    };
    let per = n.overhead.as_secs_f64() + 4096.0 / n.transfer_rate;
    assert!((1.0 / per - 193_000.0).abs() < 100.0, "{}", 1.0 / per);
    assert_eq!(n.queue_depth, 1023);
    assert_eq!(
        (n.stall.interval, n.stall.length),
        (SimDuration::from_ms(1370), SimDuration::from_ms(12))
    );
    let s = ok("device: { kind: nvme, stall_length: 0 }\nworkloads:\n  - kind: fio\n");
    let DeviceConfig::Nvme(n) = &s.device else {
        panic!("nvme")
    };
    assert!(!n.stall.is_on());
    let e = err("device: { kind: nvme, stall_interval: 0s }\nworkloads:\n  - kind: fio\n");
    assert_eq!(e.path(), Some("device.stall_interval"));
    let e = err("device: { kind: hdd5400, stall_length: 1ms }\nworkloads:\n  - kind: fio\n");
    assert_eq!(e.path(), Some("device.stall_length"));
}

#[test]
fn fields_of_another_kind_are_refused_where_they_stand() {
    let e = err("device:\n  kind: hdd5400\n  latency: 45us\nworkloads:\n  - kind: fio\n");
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!((e.line(), e.path()), (Some(3), Some("device.latency")));
    assert!(e.hint().unwrap().contains("seek_min"), "{e}");
    let e = err("device: { kind: nvme }\nworkloads:\n  - kind: fio\n    chunk: 64k\n");
    assert_eq!(e.path(), Some("workloads[0].chunk"));
    let e = err(
        "device: { kind: nvme }\nworkloads:\n  - kind: fio\n    think: { kind: exponential, value: 1ms }\n",
    );
    assert_eq!(e.path(), Some("workloads[0].think.value"));
    assert_eq!(e.line(), Some(4));
}

#[test]
fn a_request_must_take_at_least_min_service() {
    // Issue 11 case 6: a zero service time ran 65 s and printed IOPS=500G.
    let w = "workloads: [{ kind: fio }]\n";
    let free_crypt = "crypt: { cipher: null, hop_cost: 0ns }\n";
    for (device, path) in [
        ("{ kind: generic, service: 0 }", "device.service"),
        ("{ kind: generic, service: 99ns }", "device.service"),
        (
            "{ kind: generic, service: { kind: exponential, mean: 50ns } }",
            "device.service",
        ),
        (
            "{ kind: generic, service: { kind: empirical, values: [0, 0, 1ns] } }",
            "device.service",
        ),
        (
            "{ kind: nvme, overhead: 0, transfer_rate: 100GB/s }",
            "device.overhead",
        ),
        (
            "{ kind: nvme, transfer_rate: 10TB/s, overhead: 1ns }",
            "device.overhead",
        ),
        (
            "{ kind: hdd5400, transfer_rate: 10GB/s }",
            "device.transfer_rate",
        ),
    ] {
        // Without dm-crypt (policy none), and with a dm-crypt that costs nothing.
        for extra in ["policies: [fifo, none]\n", free_crypt] {
            let e = err(&format!("device: {device}\n{w}{extra}"));
            assert_eq!(
                (e.kind(), e.path()),
                (ErrorKind::BadValue, Some(path)),
                "{device}: {e}"
            );
            assert!(
                e.message()
                    .ends_with("; a request must take at least 100ns"),
                "{e}"
            );
            assert!(e.hint().unwrap().contains("100ns"), "{e}");
        }
    }
    let e = err(&format!(
        "device: {{ kind: generic, service: 0 }}\n{w}policies: [none]\n"
    ));
    assert_eq!(
        e.message(),
        "the mean service time is 0ns and policy `none` adds no dm-crypt work; a request \
         must take at least 100ns"
    );
    assert_eq!((e.line(), e.column()), (Some(1), Some(35)));
    let e = err(&format!(
        "device: {{ kind: generic, service: 0 }}\n{w}{free_crypt}"
    ));
    assert!(
        e.message()
            .contains("dm-crypt adds 0ns under policy `fifo`"),
        "{e}"
    );
    // At the floor, the presets, and a free device behind a dm-crypt that does the serving
    // (as `qsim validate`'s priority queue does) load.
    for text in [
        "device: { kind: generic, service: 100ns }\npolicies: [none]\n",
        "device: { kind: generic, service: { kind: uniform, low: 0, high: 200ns } }\n\
         policies: [none]\n",
        "device: { kind: nvme, transfer_rate: 1TB/s }\npolicies: [none]\n",
        "device: { kind: nvme, overhead: 0 }\npolicies: [none]\n",
        "device: { kind: hdd7200, transfer_rate: 5.12GB/s }\npolicies: [none]\n",
        "device: { kind: generic, service: 0 }\npolicies: [fifo]\n",
        "device: { kind: generic, service: 0ns }\npolicies: [prio]\n\
         crypt: { cipher: null, hop_cost: 0ns, cost: { kind: exponential, mean: 1ms } }\n",
    ] {
        ok(&format!("{text}{w}"));
    }
}

#[test]
fn the_section_alone_resolves_presets_and_refuses_other_kinds_fields() {
    let dev = |yaml: &str| section::<RawDevice, _>(yaml, device);
    let DeviceConfig::Hdd(h) = dev("kind: hdd7200\n").unwrap() else {
        panic!("hdd")
    };
    assert_eq!((h.preset.as_str(), h.queue_depth), ("hdd7200", 31));
    assert_eq!(h.revolution, revolution(7200));
    let DeviceConfig::Nvme(n) = dev("kind: nvme\ntransfer_rate: 7GB/s\n").unwrap() else {
        panic!("nvme")
    };
    assert_eq!(
        n.overhead,
        nvme_overhead(7e9),
        "the overhead follows the rate"
    );
    let e = dev("kind: generic\nseek_min: 1ms\nservice: 1ms\n").unwrap_err();
    assert_eq!((e.line(), e.path()), (Some(2), Some("device.seek_min")));
    assert_eq!(
        e.hint(),
        Some("device kind `generic` takes: service, channels, queue_depth")
    );
    let e = dev("seek_min: 1ms\n").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Missing);
    assert_eq!(
        e.hint(),
        Some(
            "add `kind:` with one of hdd5400, hdd7200, nvme, generic, ramdisk, sata-ssd, \
             nvme-gen4, nvme-gen5"
        )
    );
}

#[test]
fn the_ramdisk_is_an_nvme_without_latency_and_takes_its_overrides() {
    let dev = |yaml: &str| section::<RawDevice, _>(yaml, device);
    let DeviceConfig::Nvme(n) = dev("kind: ramdisk
")
    .unwrap() else {
        panic!("ramdisk")
    };
    assert_eq!(n.latency, SimDuration::ZERO);
    assert_eq!((n.overhead, n.transfer_rate), (RAMDISK.overhead, 10e9));
    assert_eq!((n.channels, n.queue_depth), (64, 1_000_000));
    // 1 µs + 4096 B at 10 GB/s.
    assert_eq!(
        mean_service(&DeviceConfig::Nvme(n), 4096, true),
        SimDuration::from_ns(1_410)
    );
    let DeviceConfig::Nvme(n) = dev("kind: ramdisk
transfer_rate: 5GB/s
channels: 4
")
    .unwrap() else {
        panic!("ramdisk")
    };
    assert_eq!((n.transfer_rate, n.channels), (5e9, 4));
    let e = dev("kind: ramdisk
latency: 1us
")
    .unwrap_err();
    assert_eq!((e.line(), e.path()), (Some(2), Some("device.latency")));
}

#[test]
fn the_sata_ssd_preset_gives_its_data_sheet_iops() {
    let s = ok("device: { kind: sata-ssd }\nworkloads:\n  - kind: fio\n");
    let DeviceConfig::Nvme(n) = &s.device else {
        panic!("sata-ssd")
    };
    assert_eq!(
        (n.preset.as_str(), n.channels, n.queue_depth),
        ("sata-ssd", 1, 32)
    );
    assert!(!n.stall.is_on());
    // QD32: the bottleneck alone, ~98k IOPS; QD1: the whole service, ~13k IOPS.
    let per = nvme_bottleneck_secs(n.overhead, n.transfer_rate, 4096);
    assert!((1.0 / per - 98_000.0).abs() < 100.0, "{}", 1.0 / per);
    let qd1 = mean_service(&s.device, 4096, true).as_secs_f64();
    assert!((1.0 / qd1 - 13_000.0).abs() < 20.0, "{}", 1.0 / qd1);
    let e = err("device: { kind: sata-ssd, stall_length: 1ms }\nworkloads:\n  - kind: fio\n");
    assert_eq!(e.path(), Some("device.stall_length"));
}

#[test]
fn the_nvme_generation_presets_give_their_data_sheet_iops() {
    // (kind, bottleneck IOPS at a deep queue, QD1 IOPS, transfer rate)
    for (kind, deep, qd1, rate) in [
        ("nvme-gen4", 1_400_000.0, 19_654.0, 7.45e9),
        ("nvme-gen5", 1_850_000.0, 19_721.0, 14.7e9), // gen4's latency, assumed
    ] {
        let s = ok(&format!(
            "device: {{ kind: {kind} }}\nworkloads:\n  - kind: fio\n"
        ));
        let DeviceConfig::Nvme(n) = &s.device else {
            panic!("{kind}")
        };
        assert_eq!(
            (n.preset.as_str(), n.channels, n.queue_depth),
            (kind, 1, 1023)
        );
        assert_eq!(n.transfer_rate, rate);
        assert!(!n.stall.is_on(), "{kind}: no pauses unless cited");
        let per = nvme_bottleneck_secs(n.overhead, n.transfer_rate, 4096);
        assert!(
            (1.0 / per / deep - 1.0).abs() < 0.002,
            "{kind}: {}",
            1.0 / per
        );
        let one = mean_service(&s.device, 4096, true).as_secs_f64();
        assert!(
            (1.0 / one / qd1 - 1.0).abs() < 0.001,
            "{kind}: {}",
            1.0 / one
        );
        // A 512-byte request still clears the floor without dm-crypt.
        ok(&format!(
            "device: {{ kind: {kind} }}\npolicies: [none]\nworkloads: [{{ kind: fio }}]\n"
        ));
        // The overhead follows an overridden rate; pauses are not among its fields.
        let DeviceConfig::Nvme(m) =
            section::<RawDevice, _>(&format!("kind: {kind}\ntransfer_rate: 10GB/s\n"), device)
                .unwrap()
        else {
            panic!("{kind}")
        };
        let per = nvme_bottleneck_secs(m.overhead, m.transfer_rate, 4096);
        assert!(
            (1.0 / per / deep - 1.0).abs() < 0.002,
            "{kind}: {}",
            1.0 / per
        );
        let e = err(&format!(
            "device: {{ kind: {kind}, stall_length: 1ms }}\nworkloads:\n  - kind: fio\n"
        ));
        assert_eq!(e.path(), Some("device.stall_length"));
    }
}

#[test]
fn an_hdd_array_takes_disks_and_a_chunk() {
    let s = ok("device: { kind: hdd7200, disks: 4 }\nworkloads:\n  - kind: fio\n");
    let DeviceConfig::Hdd(h) = &s.device else {
        panic!("hdd")
    };
    assert_eq!(
        (h.preset.as_str(), h.disks, h.chunk),
        ("hdd7200", 4, MD_CHUNK)
    );
    assert_eq!(capacity(&s.device), Some(4_000_000_000_000));
    let h1 = ok(BASE);
    let DeviceConfig::Hdd(h1) = &h1.device else {
        panic!("hdd")
    };
    assert_eq!((h1.disks, h1.chunk), (1, 0));
    for (dev, path, hint) in [
        (
            "{ kind: hdd7200, chunk: 64KiB }",
            "device.chunk",
            "add `disks:`",
        ),
        (
            "{ kind: hdd7200, disks: 2, chunk: 6000 }",
            "device.chunk",
            "4KiB pages",
        ),
        ("{ kind: hdd7200, disks: 65 }", "device.disks", "1 to 64"),
        ("{ kind: sata-ssd, disks: 2 }", "device.disks", "latency"),
    ] {
        let e = err(&format!("device: {dev}\nworkloads:\n  - kind: fio\n"));
        assert_eq!((e.line(), e.path()), (Some(1), Some(path)), "{dev}: {e}");
        assert!(e.hint().unwrap().contains(hint), "{dev}: {e}");
    }
    // The array's capacity bounds the workload's region.
    let text = "device: { kind: hdd5400, disks: 2 }\nworkloads:\n  - kind: fio\n    \
                offset: 500GB\n    size: 100GB\n";
    ok(text);
}

#[test]
fn an_nvme_array_takes_disks_and_a_chunk_on_every_nvme_preset() {
    let load = |dev: &str| ok(&format!("device: {dev}\nworkloads:\n  - kind: fio\n"));
    for kind in ["nvme", "nvme-gen4", "nvme-gen5"] {
        let s = load(&format!("{{ kind: {kind}, disks: 4 }}"));
        let DeviceConfig::Nvme(n) = &s.device else {
            panic!("{kind}")
        };
        assert_eq!((n.preset.as_str(), n.disks, n.chunk), (kind, 4, MD_CHUNK));
        // The members keep the preset's numbers, each its own depth; no capacity bound.
        assert_eq!(n.queue_depth, 1023);
        assert_eq!(capacity(&s.device), None);
        let text = crate::scenario::describe(&s);
        assert!(
            crate::scenario::describe::has(
                &text,
                "array                 4 drives, md RAID0 of 512KiB chunks, queue_depth 1023 \
                 each (4092 in all)"
            ),
            "{text}"
        );
        assert!(
            crate::scenario::describe::has(&text, " x1 channels x4 drives)"),
            "{text}"
        );
        let DeviceConfig::Nvme(one) = &load(&format!("{{ kind: {kind} }}")).device else {
            panic!("{kind}")
        };
        assert_eq!((one.disks, one.chunk), (1, 0));
    }
    let s = load("{ kind: nvme, disks: 2, chunk: 64KiB }");
    let DeviceConfig::Nvme(n) = &s.device else {
        panic!("nvme")
    };
    assert_eq!((n.disks, n.chunk), (2, 65_536));
    assert!(
        crate::scenario::describe::has(
            &crate::scenario::describe(&s),
            "12ms pauses of the controller of each drive"
        ),
        "each member pauses on its own"
    );
    for (dev, path, hint) in [
        ("{ kind: nvme, disks: 0 }", "device.disks", "1 to 64"),
        ("{ kind: nvme-gen4, disks: 65 }", "device.disks", "1 to 64"),
        (
            "{ kind: nvme, chunk: 64KiB }",
            "device.chunk",
            "add `disks:`",
        ),
        (
            "{ kind: nvme-gen5, disks: 2, chunk: 1000 }",
            "device.chunk",
            "4KiB pages",
        ),
        ("{ kind: ramdisk, disks: 2 }", "device.disks", "overhead"),
    ] {
        let e = err(&format!("device: {dev}\nworkloads:\n  - kind: fio\n"));
        assert_eq!((e.line(), e.path()), (Some(1), Some(path)), "{dev}: {e}");
        assert!(e.hint().unwrap().contains(hint), "{dev}: {e}");
    }
    let e = err("device: { kind: nvme, disks: two }\nworkloads:\n  - kind: fio\n");
    assert_eq!((e.line(), e.path()), (Some(1), Some("device.disks")), "{e}");
}
