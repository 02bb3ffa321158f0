//! The device's unit tests: scripted service times, pauses, arrays.

use super::*;
use crate::model::base::bio::{Dir, Origin};
use crate::model::base::config::{Distribution, GenericDeviceConfig, NvmeConfig, NvmeStall};
use std::collections::VecDeque;

fn hdd() -> DeviceConfig {
    DeviceConfig::Hdd(HddConfig {
        preset: "test".into(),
        seek_min: SimDuration::from_ms(2),
        seek_full: SimDuration::from_ms(20),
        revolution: SimDuration::from_ms(10),
        transfer_rate: 100e6,
        capacity: 100_000_000_000,
        queue_depth: 1,
        disks: 1,
        chunk: 0,
    })
}

#[test]
fn hdd_sequential_requests_pay_only_transfer() {
    let mut d = Device::new(&hdd());
    let mut bios = BioSlab::default();
    let t = SimTime::ZERO;
    let mut b = Bio::new(Dir::Write, false, 1_000_000, 0, Origin::Job(0), t);
    b.service_u = 0.5;
    let id = bios.insert(b);
    // Head starts at 0 and the request starts at 0: sequential.
    assert_eq!(
        d.accept(id, &bios, t).next(),
        Some(DeviceWake::ChannelDone(SimTime::from_ns(10_000_000), 0))
    );
    assert!(!d.can_accept());
}

#[test]
fn hdd_full_stroke_pays_seek_rotation_transfer() {
    let mut d = Device::new(&hdd());
    let mut bios = BioSlab::default();
    let t = SimTime::ZERO;
    let mut b = Bio::new(Dir::Read, true, 100_000, 100_000_000_000, Origin::Job(0), t);
    b.service_u = 0.5;
    let id = bios.insert(b);
    // 20 ms seek + 5 ms rotation + 1 ms transfer.
    assert_eq!(
        d.accept(id, &bios, t).next(),
        Some(DeviceWake::ChannelDone(SimTime::from_ns(26_000_000), 0))
    );
}

/// A scripted pause schedule: pauses at [10, 22) µs and [50, 62) µs.
fn paused() -> Pauses {
    let mut p = Pauses::new(
        NvmeStall {
            interval: SimDuration::from_secs(1000),
            length: SimDuration::from_us(12),
        },
        RngStreams::new(1, 0).stream("device.stall"),
    );
    let us = |x| SimTime::ZERO + SimDuration::from_us(x);
    p.ahead = VecDeque::from([(us(10), us(22)), (us(50), us(62))]);
    p.drawn_to = us(62);
    p
}

#[test]
fn a_pause_stops_the_work_in_service_and_delays_what_starts_in_it() {
    let us = |x| SimTime::ZERO + SimDuration::from_us(x);
    let mut p = paused();
    // Done before the pause: untouched; ending exactly at its start: untouched.
    assert_eq!(p.finish(us(0), SimDuration::from_us(5)), us(5));
    assert_eq!(p.finish(us(5), SimDuration::from_us(5)), us(10));
    // Spanning it: 4 µs before, 12 µs paused, 3 µs after.
    assert_eq!(p.finish(us(6), SimDuration::from_us(7)), us(25));
    // Starting inside it: waits for its end.
    assert_eq!(p.finish(us(15), SimDuration::from_us(5)), us(27));
    // Spanning both pauses: 28 µs of work from 22 µs ends after the second.
    assert_eq!(p.finish(us(22), SimDuration::from_us(30)), us(64));
    // Past pauses are dropped; later ones are drawn from the stream.
    assert!(p.finish(us(70), SimDuration::from_us(1)) >= us(71));
    assert!(p.ahead.front().is_some_and(|&(a, _)| a > us(62)));
}

#[test]
fn pauses_come_at_the_configured_rate_and_length() {
    let stall = NvmeStall {
        interval: SimDuration::from_ms(100),
        length: SimDuration::from_ms(5),
    };
    let mut p = Pauses::new(stall, RngStreams::new(7, 3).stream("device.stall"));
    for _ in 0..2000 {
        p.draw();
    }
    let (first, last) = (p.ahead[0], p.ahead[1999]);
    assert!(p.ahead.iter().all(|&(a, b)| b.since(a) == stall.length));
    // 1999 gaps of 100 ms mean (plus 5 ms pauses): within 10 %.
    let mean = last.0.since(first.0).as_secs_f64() / 1999.0;
    assert!((mean - 0.105).abs() < 0.0105, "{mean}");
    // The device draws its schedule from its own stream: same seed, same pauses.
    let mut q = Pauses::new(stall, RngStreams::new(7, 3).stream("device.stall"));
    q.draw();
    assert_eq!(q.ahead[0], first);
}

#[test]
fn generic_channels_serve_in_parallel_then_queue() {
    let cfg = DeviceConfig::Generic(GenericDeviceConfig {
        service: Distribution::Deterministic {
            value: SimDuration::from_us(10),
        },
        channels: 2,
        queue_depth: 8,
    });
    let mut d = Device::new(&cfg);
    let mut bios = BioSlab::default();
    let t = SimTime::ZERO;
    let ids: Vec<_> = (0..3)
        .map(|_| bios.insert(Bio::new(Dir::Read, true, 4096, 0, Origin::Job(0), t)))
        .collect();
    assert!(d.accept(ids[0], &bios, t).next().is_some());
    assert!(d.accept(ids[1], &bios, t).next().is_some());
    assert_eq!(d.accept(ids[2], &bios, t).next(), None);
    let t1 = SimTime::from_ns(10_000);
    let (done, next) = d.channel_done(0, &bios, t1);
    assert_eq!(done, Some(ids[0]));
    assert_eq!(
        next,
        Some(DeviceWake::ChannelDone(SimTime::from_ns(20_000), 0))
    );
    assert_eq!(d.inflight(), 2);
    assert_eq!(d.busy_time(t1).as_ns(), 10_000);
}

fn array(disks: u32, chunk: u64) -> DeviceConfig {
    let DeviceConfig::Hdd(mut h) = hdd() else {
        unreachable!()
    };
    h.disks = disks;
    h.chunk = chunk;
    h.queue_depth = 4;
    DeviceConfig::Hdd(h)
}

#[test]
fn raid0_cuts_at_chunks_and_joins_what_is_contiguous_on_a_member() {
    let k = 1024;
    // 512 KiB from 0 over 4 disks of 128 KiB chunks: one chunk each.
    assert_eq!(
        raid0_pieces(0, 512 * k, 4, 128 * k),
        [
            (0, 0, 128 * k),
            (1, 0, 128 * k),
            (2, 0, 128 * k),
            (3, 0, 128 * k)
        ]
    );
    // From 64 KiB into chunk 1: the rest of disk 1's chunk, then disk 2's.
    assert_eq!(
        raid0_pieces(192 * k, 128 * k, 4, 128 * k),
        [(1, 64 * k, 64 * k), (2, 0, 64 * k)]
    );
    // Two disks, 1 MiB of 256 KiB chunks: chunks 0 and 2 are contiguous on disk 0.
    assert_eq!(
        raid0_pieces(0, 1024 * k, 2, 256 * k),
        [(0, 0, 512 * k), (1, 0, 512 * k)]
    );
    // Stripe row 3 of 4 disks lies at 3 chunks into each member.
    assert_eq!(
        raid0_pieces(13 * 64 * k, 4096, 4, 64 * k),
        [(1, 3 * 64 * k, 4096)]
    );
}

#[test]
fn an_array_serves_the_pieces_of_one_bio_on_its_members_at_once() {
    let k = 1024;
    let mut d = Device::new(&array(4, 128 * k));
    assert_eq!((d.disks(), d.queue_depth), (4, 16));
    let mut bios = BioSlab::default();
    let t = SimTime::ZERO;
    // Sequential from every head (all at 0): transfer only, 128 KiB at 100 MB/s each.
    let big = bios.insert(Bio::new(Dir::Read, true, 512 * 1024, 0, Origin::Job(0), t));
    let wakes: Vec<_> = d.accept(big, &bios, t).collect();
    let each = SimTime::from_ns(1_310_720);
    let want: Vec<_> = (0..4).map(|m| DeviceWake::ChannelDone(each, m)).collect();
    assert_eq!(wakes, want);
    // A second bio on member 2 waits behind the first's piece there.
    let small = bios.insert(Bio::new(Dir::Read, true, 4096, 768 * k, Origin::Job(0), t));
    assert_eq!(d.accept(small, &bios, t).next(), None);
    assert_eq!(d.inflight(), 2);
    // Members 0, 1 and 3 finish: the big bio is still out.
    for m in [0, 1, 3] {
        assert_eq!(d.channel_done(m, &bios, each), (None, None));
    }
    // Member 2 finishes the last piece, then starts the small bio (its head is just past
    // 128 KiB on member 2, the small one starts at 128 KiB: sequential).
    let (done, next) = d.channel_done(2, &bios, each);
    assert_eq!(done, Some(big));
    let after = SimTime::from_ns(1_310_720 + 40_960);
    assert_eq!(next, Some(DeviceWake::ChannelDone(after, 2)));
    assert_eq!(d.channel_done(2, &bios, after), (Some(small), None));
    assert_eq!(d.inflight(), 0);
    assert_eq!(d.busy_time(after), after.since(t));
}

/// Runs bios through `d` as the world does: each arrives at its time and waits in FIFO order
/// until the device takes it; every wake-up is served in time order (ties in the order they
/// were scheduled). Returns each bio's completion time, in completion order.
fn drive(d: &mut Device, bios: &BioSlab, arrivals: &[(BioId, SimTime)]) -> Vec<(BioId, SimTime)> {
    use std::collections::BTreeMap;
    enum Ev {
        Arrive(BioId),
        Wake(DeviceWake),
    }
    let mut events: BTreeMap<(SimTime, u64), Ev> = BTreeMap::new();
    let mut seq = 0;
    let mut push = |events: &mut BTreeMap<(SimTime, u64), Ev>, t, ev| {
        events.insert((t, seq), ev);
        seq += 1;
    };
    for &(id, t) in arrivals {
        push(&mut events, t, Ev::Arrive(id));
    }
    let (mut waiting, mut done) = (VecDeque::new(), Vec::new());
    while let Some(((now, _), ev)) = events.pop_first() {
        let mut wakes: Vec<DeviceWake> = Vec::new();
        match ev {
            Ev::Arrive(id) => waiting.push_back(id),
            Ev::Wake(DeviceWake::DelayDone(_, id)) => wakes.extend(d.delay_done(id, bios, now)),
            Ev::Wake(DeviceWake::ChannelDone(_, chan)) => {
                let (finished, next) = d.channel_done(chan, bios, now);
                done.extend(finished.map(|id| (id, now)));
                wakes.extend(next);
            }
        }
        while d.can_accept() {
            let Some(id) = waiting.pop_front() else { break };
            wakes.extend(d.accept(id, bios, now));
        }
        for w in wakes {
            let (t, _) = w.event();
            push(&mut events, t, Ev::Wake(w));
        }
    }
    done
}

/// The NVMe of the scripted runs: 45 µs latency, 2 channels, 4 µs mean overhead, 3.5 GB/s,
/// depth 4, a 12 µs pause every 200 µs on average.
fn nvme() -> NvmeConfig {
    NvmeConfig {
        latency: SimDuration::from_us(45),
        channels: 2,
        overhead: SimDuration::from_us(4),
        transfer_rate: 3.5e9,
        queue_depth: 4,
        stall: NvmeStall {
            interval: SimDuration::from_us(200),
            length: SimDuration::from_us(12),
        },
        disks: 1,
        chunk: 0,
        preset: "custom".into(),
    }
}

/// Ten bios of mixed sizes and draws, one every 20 µs.
fn ten_bios(bios: &mut BioSlab) -> Vec<(BioId, SimTime)> {
    let sizes = [
        4096, 131_072, 524_288, 4096, 65_536, 4096, 262_144, 8192, 4096, 524_288,
    ];
    (0..10u32)
        .map(|i| {
            let t = SimTime::from_ns(u64::from(i) * 20_000);
            let mut b = Bio::new(Dir::Read, true, sizes[i as usize], 0, Origin::Job(0), t);
            b.service_u = (f64::from(i) * 0.37 + 0.11).fract();
            (bios.insert(b), t)
        })
        .collect()
}

/// The completion times of [`ten_bios`] on [`nvme`], seed 7 replication 1, as the model gave
/// them before arrays of NVMe drives existed (commit bf2e248): a single drive must keep its
/// stream of pauses and its service times bit for bit.
#[test]
fn one_nvme_drive_completes_as_it_did_before_arrays() {
    let run = |cfg: &NvmeConfig| {
        let mut d = Device::seeded(&DeviceConfig::Nvme(cfg.clone()), &RngStreams::new(7, 1));
        let mut bios = BioSlab::default();
        let arrivals = ten_bios(&mut bios);
        let done = drive(&mut d, &bios, &arrivals);
        let index = |id| arrivals.iter().position(|a| a.0 == id).unwrap();
        done.iter()
            .map(|&(id, t)| (index(id), t.as_ns()))
            .collect::<Vec<_>>()
    };
    let want = [
        (0, 46_636),
        (1, 117_065),
        (3, 119_229),
        (4, 147_291),
        (5, 176_111),
        (2, 250_920),
        (6, 252_611),
        (8, 254_072),
        (7, 258_076),
        (9, 460_036),
    ];
    assert_eq!(run(&nvme()), want);
    // The pauses are in those times: without them the same bios finish otherwise.
    let calm = NvmeConfig {
        stall: NvmeStall::NONE,
        ..nvme()
    };
    assert_ne!(run(&calm), want);
}

/// An array of `disks` NVMe drives in `chunk`-byte chunks, each drive [`nvme`] with
/// `channels` channels and depth `depth`.
fn nvme_array(disks: u32, chunk: u64, channels: u32, depth: u32) -> NvmeConfig {
    NvmeConfig {
        disks,
        chunk,
        channels,
        queue_depth: depth,
        ..nvme()
    }
}

#[test]
fn a_bio_across_two_nvme_members_completes_with_its_slower_piece() {
    // Two drives of 64 KiB chunks: 10 µs latency, one channel, 2 µs mean overhead, 1 GB/s
    // (a byte a nanosecond), depth 2 each, no pauses.
    let cfg = NvmeConfig {
        latency: SimDuration::from_us(10),
        overhead: SimDuration::from_us(2),
        transfer_rate: 1e9,
        stall: NvmeStall::NONE,
        ..nvme_array(2, 65_536, 1, 2)
    };
    let mut d = Device::new(&DeviceConfig::Nvme(cfg));
    assert_eq!(
        (d.disks(), d.queue_depth, d.channel_bios().len()),
        (2, 4, 2)
    );
    let mut bios = BioSlab::default();
    let t = SimTime::ZERO;
    // A: 64 KiB from 32 KiB, the second half of chunk 0 (member 0 at 32 KiB) and the first
    // half of chunk 1 (member 1 at 0). B: 4 KiB at 64 KiB, on member 1 too.
    let mut a = Bio::new(Dir::Read, true, 65_536, 32_768, Origin::Job(0), t);
    a.service_u = 0.5;
    let mut b = Bio::new(Dir::Read, true, 4096, 65_536, Origin::Job(0), t);
    b.service_u = 0.25;
    let (a, b) = (bios.insert(a), bios.insert(b));
    // Both pay the fixed latency at once: one delay per bio, not per piece.
    let delay = SimTime::from_ns(10_000);
    let wakes: Vec<_> = d.accept(a, &bios, t).chain(d.accept(b, &bios, t)).collect();
    assert_eq!(
        wakes,
        [
            DeviceWake::DelayDone(delay, a),
            DeviceWake::DelayDone(delay, b)
        ]
    );
    // A's pieces start on both members. Piece 0 draws the bio's 0.5: overhead 2 µs × ln 2 =
    // 1386.29 ns, plus 32768 ns of transfer: 34154 ns. Piece 1 draws 0.5 + 0.618034 − 1 =
    // 0.118034: 2 µs × −ln(0.881966) = 251.20 ns, plus 32768: 33019 ns.
    let (end0, end1) = (SimTime::from_ns(44_154), SimTime::from_ns(43_019));
    let wakes: Vec<_> = d.delay_done(a, &bios, delay).collect();
    assert_eq!(
        wakes,
        [
            DeviceWake::ChannelDone(end0, 0),
            DeviceWake::ChannelDone(end1, 1)
        ]
    );
    // B waits behind A's piece on member 1.
    assert_eq!(d.delay_done(b, &bios, delay).next(), None);
    assert_eq!(d.inflight(), 2);
    // Member 1 finishes first: A is still out; B starts, 2 µs × −ln(0.75) = 575.36 ns plus
    // 4096 ns: 4671 ns.
    let end_b = SimTime::from_ns(43_019 + 4_671);
    assert_eq!(
        d.channel_done(1, &bios, end1),
        (None, Some(DeviceWake::ChannelDone(end_b, 1)))
    );
    // Member 0's piece ends A; then B ends; the array was busy from 0 to B's end.
    assert_eq!(d.channel_done(0, &bios, end0), (Some(a), None));
    assert_eq!(d.channel_done(1, &bios, end_b), (Some(b), None));
    assert_eq!(d.inflight(), 0);
    assert_eq!(d.busy_time(end_b), end_b.since(t));
}

#[test]
fn each_nvme_member_pauses_on_its_own_and_member_0_as_a_single_drive() {
    let run = |cfg: NvmeConfig, shift: u64| {
        let mut d = Device::seeded(&DeviceConfig::Nvme(cfg), &RngStreams::new(7, 1));
        let mut bios = BioSlab::default();
        let arrivals = ten_bios(&mut bios);
        for &(id, _) in &arrivals {
            bios[id].offset += shift;
        }
        let done = drive(&mut d, &bios, &arrivals);
        done.iter().map(|&(_, t)| t.as_ns()).collect::<Vec<_>>()
    };
    // Every bio inside chunk 0 of 1 MiB chunks: all on member 0, whose channels, depth (2 of
    // the array's 4, as the single drive's 4) and pauses are the single drive's.
    let single = run(nvme(), 0);
    assert_eq!(run(nvme_array(2, 1 << 20, 2, 2), 0), single);
    // The same bios on member 1 meet member 1's own pauses.
    let other = run(nvme_array(2, 1 << 20, 2, 2), 1 << 20);
    assert_ne!(other, single);
    // Without pauses the members are alike.
    let calm = |c: NvmeConfig| NvmeConfig {
        stall: NvmeStall::NONE,
        ..c
    };
    assert_eq!(
        run(calm(nvme_array(2, 1 << 20, 2, 2)), 1 << 20),
        run(calm(nvme()), 0)
    );
}

#[test]
fn an_nvme_array_spreads_a_large_bio_over_its_members() {
    // 512 KiB on four drives of 128 KiB chunks, two channels each, no overhead: a piece of
    // 128 KiB on each member, 131072 B at 3.5 GB/s = 37449 ns after the 45 µs latency.
    let cfg = NvmeConfig {
        overhead: SimDuration::ZERO,
        stall: NvmeStall::NONE,
        ..nvme_array(4, 128 * 1024, 2, 4)
    };
    let mut d = Device::new(&DeviceConfig::Nvme(cfg));
    let mut bios = BioSlab::default();
    let t = SimTime::ZERO;
    let arrivals: Vec<_> = (0..3)
        .map(|_| {
            let b = Bio::new(Dir::Write, false, 512 * 1024, 0, Origin::Job(0), t);
            (bios.insert(b), t)
        })
        .collect();
    let done = drive(&mut d, &bios, &arrivals);
    // The first two take both channels of every member; the third's pieces wait for them.
    let one = 45_000 + 37_449;
    let want: Vec<_> = [(0, one), (1, one), (2, one + 37_449)]
        .map(|(i, ns)| (arrivals[i].0, SimTime::from_ns(ns)))
        .into();
    assert_eq!(done, want);
    assert_eq!(d.inflight(), 0);
}
