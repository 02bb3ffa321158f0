//! A buffered writer's `from:`: the `memory.atomic` stream whose socket it reads, which turns
//! that stream into a TCP receive path (`docs/model/memory.md` §7a): a NIC ring of `ring`
//! descriptors, a socket charged by truesize against `tcp_rmem` as 2.6.32's `tcp_init()` sizes it
//! for the machine's memory, and a sender paced at the stream's `bandwidth`.
//!
//! | field | default | why |
//! |---|---|---|
//! | `atomic[*].ring` | 256 | e1000e's `E1000_DEFAULT_RXD` (2.6.32 `drivers/net/e1000e/param.c`) |
//! | `atomic[*].rtt` | 1 ms | a switched LAN [assumed]; only autotuning's measuring period |
//! | MSS | 1448 B | a 1500-byte Ethernet MTU less 20 B of IP, 20 B of TCP and 12 B of timestamps |
//! | truesize | the buffer's block plus 232 B | [`truesize`] |
//!
//! A receive path is paced by `bandwidth`, and the reader decides how long its buffers live, so
//! `rate`, `hold`, `burst`, `poisson` and `buffer` are refused on it; its `orders` must name one
//! order, the size of every ring buffer.

use super::Error;
use super::atomic::RawAtomic;
use super::check::{Checker, Zero, at, fmt_ns};
use super::describe::{Rows, row};
use super::memory::RawMemory;
use super::schema::{Capped, Field};
use super::types::*;
use super::units::format_bandwidth;
use super::workload::{MAX_WORKLOADS, RawWorkload};
use crate::engine::SimDuration;
use crate::model::net::rx::tcp_rmem;
use serde_saphyr::Spanned;

/// e1000e's default receive ring (`E1000_DEFAULT_RXD`).
pub const DEFAULT_RING: u32 = 256;
/// A TCP segment's payload on Ethernet with timestamps.
pub const MSS: u32 = 1448;
/// `sizeof(struct sk_buff)` on x86-64 in 2.6.32, which truesize adds to the data.
pub const SK_BUFF_BYTES: u32 = 232;

/// A forced buffer's `skb->truesize`: the data area (the whole block of `order`: every kernel of
/// Mel Gorman's tables carried a hack making each receive allocation at least order 2, and we
/// assume it did so by asking for the larger size, which truesize then counts) plus the
/// `struct sk_buff`.
pub fn truesize(order: u32) -> u32 {
    (4096 << order) + SK_BUFF_BYTES
}

/// Links every `from:` writer to its stream. A stream is read by at most one writer; `ring`
/// and `rtt` are refused on a stream nobody reads.
pub(crate) fn link_readers(
    c: &Checker,
    raw_workloads: &Field<Capped<Spanned<RawWorkload>, MAX_WORKLOADS>>,
    workloads: &mut [WorkloadConfig],
    raw_memory: Option<&Spanned<RawMemory>>,
    memory: Option<&mut MemoryConfig>,
) -> Result<(), Error> {
    let raw_atomic: Vec<&Spanned<RawAtomic>> = raw_memory
        .and_then(|m| m.value.atomic.as_ref())
        .map(|a| a.value.iter().collect())
        .unwrap_or_default();
    // (stream index, workload index, writer ordinal)
    let mut links: Vec<(usize, usize, u32)> = Vec::new();
    if let Some(raw) = raw_workloads {
        let mut writer = 0u32;
        for (i, (w, r)) in workloads.iter().zip(raw.value.iter()).enumerate() {
            if !matches!(w.kind, WorkloadKind::BufferedWriter(_)) {
                continue;
            }
            if let Some(from) = &r.value.from {
                let j = find_stream(c, from, i, memory.as_deref(), &links)?;
                links.push((j, i, writer));
            }
            writer += 1;
        }
    }
    let Some(memory) = memory else {
        return Ok(());
    };
    refuse_unread(c, &raw_atomic, &links)?;
    links.sort_by_key(|l| l.0);
    let ram_pages = memory.ram / 4096;
    for (path, &(j, i, writer)) in links.iter().enumerate() {
        let raw = &raw_atomic[j].value;
        let spath = format!("memory.atomic[{j}]");
        let (order, bandwidth) =
            receive_stream(c, raw_atomic[j], &spath, &memory.atomic[j].orders)?;
        memory.atomic[j].rx = Some(RxConfig {
            reader: writer,
            ring: c.int(&raw.ring, &at(&spath, "ring"), DEFAULT_RING)?,
            mss: MSS,
            order,
            truesize: truesize(order),
            rmem: tcp_rmem(ram_pages),
            rtt: c.dur(
                &raw.rtt,
                &at(&spath, "rtt"),
                SimDuration::from_ms(1),
                Zero::Refused,
            )?,
            bandwidth,
        });
        if let WorkloadKind::BufferedWriter(b) = &mut workloads[i].kind {
            b.rate = bandwidth;
            b.source = Some(path as u32);
        }
    }
    Ok(())
}

/// The stream writer `i`'s `from:` names, read by no earlier writer.
fn find_stream(
    c: &Checker,
    from: &Spanned<String>,
    i: usize,
    memory: Option<&MemoryConfig>,
    links: &[(usize, usize, u32)],
) -> Result<usize, Error> {
    let path = format!("workloads[{i}].from");
    let Some(memory) = memory else {
        return Err(c.at(&path, from).conflict(
            "`from` reads a receive path's socket, and there is no `memory:` section",
            "a receive path is a `memory.atomic` stream: add e.g. `memory: { preset: mel-512mb, \
             atomic: [{ name: rsync, preset: rsync, bandwidth: 1MB/s }] }`",
        ));
    };
    let names: Vec<&str> = memory.atomic.iter().map(|a| a.name.as_str()).collect();
    let Some(j) = names.iter().position(|n| *n == from.value) else {
        return Err(c.at(&path, from).unknown(
            format!("no `memory.atomic` stream is named `{}`", from.value),
            if names.is_empty() {
                "`memory.atomic` lists no stream: add the receive stream there".to_string()
            } else {
                format!("the streams are: {}", names.join(", "))
            },
        ));
    };
    if let Some(&(_, other, _)) = links.iter().find(|l| l.0 == j) {
        return Err(c.at(&path, from).conflict(
            format!(
                "stream `{}` is already read by workloads[{other}]",
                from.value
            ),
            "one process reads one socket: give each writer its own stream",
        ));
    }
    Ok(j)
}

/// `ring` and `rtt` only mean something on a stream a writer reads.
fn refuse_unread(
    c: &Checker,
    raw: &[&Spanned<RawAtomic>],
    links: &[(usize, usize, u32)],
) -> Result<(), Error> {
    for (j, a) in raw.iter().enumerate() {
        if links.iter().any(|l| l.0 == j) {
            continue;
        }
        let given = [
            ("ring", a.value.ring.as_ref().map(|s| s.referenced)),
            ("rtt", a.value.rtt.as_ref().map(|s| s.referenced)),
        ];
        if let Some((field, l)) = given.iter().find(|g| g.1.is_some()) {
            return Err(c.at(&format!("memory.atomic[{j}].{field}"), *l).conflict(
                format!("`{field}` belongs to a receive path, and no writer reads this stream"),
                "add a buffered writer with `from: <this stream's name>`, or remove the field",
            ));
        }
    }
    Ok(())
}

/// A read stream's one order and its sender's bandwidth; the fields a plain stream uses to
/// hold its buffers are refused.
fn receive_stream(
    c: &Checker,
    stream: &Spanned<RawAtomic>,
    path: &str,
    orders: &[f64],
) -> Result<(u32, f64), Error> {
    let raw = &stream.value;
    let unused = [
        ("rate", raw.rate.as_ref().map(|s| s.referenced)),
        ("hold", raw.hold.as_ref().map(|s| s.referenced)),
        ("burst", raw.burst.as_ref().map(|s| s.referenced)),
        ("poisson", raw.poisson.as_ref().map(|s| s.referenced)),
        ("buffer", raw.buffer.as_ref().map(|s| s.referenced)),
    ];
    if let Some((field, l)) = unused.iter().find(|u| u.1.is_some()) {
        return Err(c.at(&at(path, field), *l).conflict(
            format!("a receive path (a writer reads it with `from`) takes no `{field}`"),
            "its sender is paced by `bandwidth` and its buffers live until the reader copies \
             them: keep `bandwidth` (and `orders`, `ring`, `rtt`)",
        ));
    }
    let Some(b) = &raw.bandwidth else {
        return Err(c.at(&at(path, "bandwidth"), stream.referenced).missing(
            "a receive path needs the sender's `bandwidth`",
            "the peer's paced throughput, e.g. `bandwidth: 1MB/s` (rsync --bwlimit)",
        ));
    };
    let bandwidth = c.bandwidth(b, &at(path, "bandwidth"))?;
    let used: Vec<usize> = (0..orders.len()).filter(|&k| orders[k] > 0.0).collect();
    let [order] = used[..] else {
        return Err(c
            .at(
                &at(path, "orders"),
                raw.orders.as_ref().map(|s| s.referenced),
            )
            .conflict(
                "a receive path's ring holds buffers of one order",
                "give one order, e.g. `orders: {2: 1}` (the forced order 2 of Mel Gorman's tests)",
            ));
    };
    Ok((order as u32, bandwidth))
}

/// A receive path's rows in `qsim check`: the sender, the ring and what it holds, the socket.
pub(crate) fn describe_rx(o: &mut Rows, a: &AtomicStream, rx: &RxConfig) {
    row(
        o,
        4,
        &a.name,
        &format!(
            "{}: TCP receive, paced at {}, {} B segments",
            a.preset,
            format_bandwidth(rx.bandwidth),
            rx.mss
        ),
    );
    let pages = 1u64 << rx.order;
    row(
        o,
        6,
        "ring",
        &format!(
            "{} of {} descriptors filled, order {} ({} pages)",
            rx.ring - 1,
            rx.ring,
            rx.order,
            u64::from(rx.ring - 1) * pages
        ),
    );
    let most = rx.rmem[2] / u64::from(rx.truesize);
    row(
        o,
        6,
        "socket",
        &format!(
            "truesize {} B: up to {most} buffers ({} pages)",
            rx.truesize,
            most * pages
        ),
    );
    row(
        o,
        6,
        "tcp_rmem",
        &format!(
            "{} {} {} (tcp_init for this ram)",
            rx.rmem[0], rx.rmem[1], rx.rmem[2]
        ),
    );
    row(
        o,
        6,
        "rtt",
        &format!("{} (autotuning's period)", fmt_ns(rx.rtt.as_secs_f64())),
    );
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;

    fn with(stream: &str, writer: &str) -> String {
        format!(
            "device: {{ kind: hdd5400 }}\nmemory:\n  ram: 512MiB\n  atomic:\n    - {stream}\n\
             workloads:\n  - kind: gitk\n  - kind: buffered-writer\n    {writer}\n"
        )
    }

    /// `from:` makes the stream a receive path: its ring, truesize and tcp_rmem for 512 MiB,
    /// and the writer's rate and source from it.
    #[test]
    fn a_writer_reading_a_stream_makes_it_a_receive_path() {
        let s = ok(&with(
            "{ name: rsync, preset: rsync, bandwidth: 1MB/s, ring: 64 }",
            "from: rsync",
        ));
        let rx = s.memory.as_ref().unwrap().atomic[0].rx.clone().expect("rx");
        assert_eq!((rx.reader, rx.ring, rx.order, rx.mss), (0, 64, 2, 1448));
        assert_eq!(rx.truesize, 16_616);
        assert_eq!(rx.rmem, [4096, 87_380, 2_097_152]);
        assert_eq!(rx.bandwidth, 1e6);
        let WorkloadKind::BufferedWriter(b) = &s.workloads[1].kind else {
            panic!("a writer")
        };
        assert_eq!((b.rate, b.source), (1e6, Some(0)));
    }

    /// Each misuse is refused at its field, with a hint.
    #[test]
    fn misused_receive_paths_are_refused_at_the_field() {
        let cases = [
            (
                with(
                    "{ name: rsync, preset: rsync, bandwidth: 1MB/s }",
                    "from: rsnyc",
                ),
                "workloads[1].from",
                "no `memory.atomic` stream is named `rsnyc`",
            ),
            (
                with(
                    "{ name: rsync, preset: rsync, bandwidth: 1MB/s }",
                    "from: rsync\n    rate: 1MB/s",
                ),
                "workloads[1].from",
                "has no `rate` of its own",
            ),
            (
                with(
                    "{ name: rsync, rate: 500/s, orders: {2: 1} }",
                    "from: rsync",
                ),
                "memory.atomic[0].rate",
                "takes no `rate`",
            ),
            (
                with("{ name: rsync, bandwidth: 1MB/s }", "from: rsync"),
                "memory.atomic[0].orders",
                "one order",
            ),
            (
                with(
                    "{ name: rsync, preset: rsync, bandwidth: 1MB/s, ring: 64 }",
                    "rate: 1MB/s",
                ),
                "memory.atomic[0].ring",
                "no writer reads this stream",
            ),
        ];
        for (text, path, message) in cases {
            let e = err(&text);
            assert_eq!(e.path(), Some(path), "{e}");
            assert!(e.to_string().contains(message), "{e}");
            assert!(e.hint().is_some(), "{e}");
        }
    }
}
