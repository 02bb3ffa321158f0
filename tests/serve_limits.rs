//! `qsim serve` bounded in every dimension a client controls, over raw TCP: stalled and
//! oversized requests are refused without holding the page up, a page's newer run stops its
//! older one whatever that one asked for, and a soak of valid, slow, oversized and malformed
//! clients leaves the page answering, no thread stuck and the memory where it started.
//!
//! The soak runs `QSIM_SOAK_SECS` seconds (default 20; the two-minute run is
//! `QSIM_SOAK_SECS=120 cargo test --test main serve_limits`).

use crate::serve::{http, start_server};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn addr_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// A field of `/proc/PID/status` in its unit (kB for memory, a count for `Threads`).
fn proc_status(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

fn get(addr: &str, path: &str) -> (u16, String) {
    let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    http(addr, req.as_bytes())
}

/// `POST /api/run` for `page` with `sets`.
fn post_run(addr: &str, page: &str, sets: &[&str]) -> (u16, String) {
    let body = serde_json::json!({ "sets": sets, "page": page }).to_string();
    let req = format!(
        "POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    http(addr, req.as_bytes())
}

fn run_id(answer: (u16, String)) -> u64 {
    let (code, body) = answer;
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).expect("json");
    v["id"].as_u64().expect("an id")
}

/// Polls run `id` until it is done, failed or superseded, for at most `secs`.
fn settle(addr: &str, id: u64, secs: u64) -> Value {
    let start = Instant::now();
    loop {
        let (code, body) = get(addr, &format!("/api/status?id={id}"));
        if code == 200 {
            let v: Value = serde_json::from_str(&body).expect("json");
            if ["done", "failed", "superseded"].contains(&v["state"].as_str().unwrap_or("")) {
                return v;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "run {id} did not settle within {secs} s: {body}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `head` and reads the answer's status code; 0 when the server reset the connection
/// before a status line could be read.
fn status_of(addr: &str, head: &[u8]) -> u16 {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let _ = s.write_all(head);
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer)
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn stalled_and_oversized_requests_are_refused_and_the_page_still_answers() {
    let (server, url) = start_server();
    let addr = addr_of(&url);
    let pid = server.0.id();
    // Six clients promise 100 MB bodies and stall: each is refused at once, unread.
    let mut held = Vec::new();
    for _ in 0..6 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(
            b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n0123456789",
        )
        .unwrap();
        held.push(s);
    }
    for s in &mut held {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut first = [0u8; 12];
        s.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"HTTP/1.1 413");
    }
    // Six more promise a body that fits and stall: each holds a connection, not the page.
    for _ in 0..6 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.write_all(b"POST /api/run HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            .unwrap();
        held.push(s);
    }
    let (code, html) = get(&addr, "/");
    assert_eq!(code, 200);
    assert!(html.contains("<title>qsim serve</title>"));
    // A 64 MiB header line is refused after 16 KiB; the server never holds it.
    let mut huge = b"GET / HTTP/1.1\r\nX-Long: ".to_vec();
    huge.resize(64 << 20, b'a');
    assert!(matches!(status_of(&addr, &huge), 431 | 0));
    assert!(
        proc_status(pid, "VmHWM") < 200 << 10,
        "peak RSS {} kB",
        proc_status(pid, "VmHWM")
    );
    assert_eq!(
        status_of(
            &addr,
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        ),
        411
    );
    assert_eq!(status_of(&addr, b"GET / HTTP/2.0\r\n\r\n"), 505);
    assert_eq!(status_of(&addr, b"\x16\x03\x01garbage\r\n\r\n"), 400);
    drop(held);
}

#[test]
fn one_client_gets_sixteen_connections_and_a_stalled_one_times_out() {
    let (_server, url) = start_server();
    let addr = addr_of(&url);
    // Sixteen idle connections from one address; the seventeenth is turned away at once.
    let mut idle: Vec<TcpStream> = (0..16)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let (code, body) = get(&addr, "/");
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("as many connections"), "{body}");
    // Each idle one is answered 408 once the request time (10 s) is up, and the slots free.
    for s in &mut idle {
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    }
    // Closed, they give their places back (after the server's short drain of each).
    drop(idle);
    let start = Instant::now();
    while get(&addr, "/").0 != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "still turned away"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_pages_newer_run_stops_its_heavy_run_and_other_pages_keep_theirs() {
    let (_server, url) = start_server();
    let addr = addr_of(&url);
    // The run: a thousand hours, fifty replications, a work budget of 10^11 events.
    let heavy = [
        "duration=1000h",
        "replications=50",
        "max_events=100000000000",
    ];
    let a1 = run_id(post_run(&addr, "page-a", &heavy));
    let start = Instant::now();
    loop {
        let (_, body) = get(&addr, &format!("/api/status?id={a1}"));
        if body.contains("\"running\"") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{body}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Another page waits behind it; page A's newer request stops it.
    let b1 = run_id(post_run(&addr, "page-b", &["duration=4s"]));
    let a2 = run_id(post_run(&addr, "page-a", &["duration=3s"]));
    assert_eq!(settle(&addr, a2, 30)["state"], "done");
    assert_eq!(settle(&addr, b1, 30)["state"], "done", "another page's run");
    assert_eq!(settle(&addr, a1, 30)["state"], "superseded");
}

/// One soak client's round, by kind.
fn soak_round(addr: &str, kind: usize, client: usize, round: usize) {
    match kind {
        // A page: a run of one of three durations, its status until settled, then its plots.
        0 | 1 => {
            let duration = format!("duration={}s", 3 + (client + round) % 3);
            let (code, body) = post_run(addr, &format!("soak-{client}"), &[&duration]);
            if code == 503 {
                return;
            }
            let id = run_id((code, body));
            if settle(addr, id, 60)["state"] == "done" {
                let (code, _) = get(addr, &format!("/api/plots?id={id}&policy=all"));
                assert!(matches!(code, 200 | 503), "plots: {code}");
            }
        }
        // A slow reader: a byte every 50 ms of the page's script, for a second.
        2 => {
            let mut s = TcpStream::connect(addr).unwrap();
            let _ = s.write_all(b"GET /page.js HTTP/1.1\r\nHost: x\r\n\r\n");
            let mut byte = [0u8; 1];
            for _ in 0..20 {
                if s.read(&mut byte).unwrap_or(0) == 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // Oversized: a 1 MiB header or a 100 MB body.
        3 => {
            let code = if round.is_multiple_of(2) {
                let mut h = b"GET / HTTP/1.1\r\nX: ".to_vec();
                h.resize(1 << 20, b'b');
                status_of(addr, &h)
            } else {
                status_of(
                    addr,
                    b"POST /api/run HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n",
                )
            };
            assert!(matches!(code, 431 | 413 | 503 | 0), "oversized: {code}");
        }
        // Malformed: bytes that are no request, or a body that is no run request.
        4 => {
            let junk: Vec<u8> = (0..200).map(|i| ((i * 37 + round) % 256) as u8).collect();
            let code = status_of(addr, &[&junk[..], b"\r\n\r\n"].concat());
            assert!(matches!(code, 400 | 503 | 505), "junk: {code}");
            let code = status_of(
                addr,
                b"POST /api/run HTTP/1.1\r\nContent-Length: 7\r\n\r\n{\"sets\"",
            );
            assert!(matches!(code, 400 | 503), "bad json: {code}");
        }
        // Stalled: half a request line, then silence for two seconds.
        _ => {
            let mut s = TcpStream::connect(addr).unwrap();
            let _ = s.write_all(b"GET /api/kn");
            std::thread::sleep(Duration::from_secs(2));
        }
    }
}

/// Waits until the server runs no more than its `idle` threads: every connection's thread
/// ends within the request time (10 s) of its last byte.
fn idle_threads(pid: u32, idle: u64) {
    let start = Instant::now();
    while proc_status(pid, "Threads") > idle {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "threads: {} after the soak, {idle} when idle",
            proc_status(pid, "Threads")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Twenty clients, each going round the six kinds of [`soak_round`] for `secs`: the rounds
/// run in all.
fn soak(addr: &str, secs: u64) -> usize {
    let end = Instant::now() + Duration::from_secs(secs);
    std::thread::scope(|s| {
        let clients: Vec<_> = (0..20)
            .map(|client| {
                s.spawn(move || {
                    let mut round = 0;
                    while Instant::now() < end {
                        soak_round(addr, (client + round) % 6, client, round);
                        round += 1;
                    }
                    round
                })
            })
            .collect();
        clients.into_iter().map(|c| c.join().unwrap()).sum()
    })
}

#[test]
fn the_page_survives_a_soak_of_valid_slow_oversized_and_malformed_clients() {
    let secs: u64 = std::env::var("QSIM_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let (server, url) = start_server();
    let addr = addr_of(&url);
    let pid = server.0.id();
    // Warm: each of the soak's three runs once, so the cache holds what the soak will ask.
    for d in 3..6 {
        let id = run_id(post_run(&addr, "warm", &[&format!("duration={d}s")]));
        assert_eq!(settle(&addr, id, 120)["state"], "done");
        assert_eq!(get(&addr, &format!("/api/plots?id={id}&policy=all")).0, 200);
    }
    // And as many requests as the server remembers (cache hits: no runs), so its books are
    // as full before the soak as they can be after it.
    for k in 0..64 {
        let d = format!("duration={}s", 3 + k % 3);
        settle(
            &addr,
            run_id(post_run(&addr, &format!("warm-{k}"), &[&d])),
            30,
        );
    }
    // A few seconds of the soak's own mix first: the allocator's per-thread arenas (glibc
    // keeps up to eight per core once threads have used them) are memory a server holds from
    // its first busy seconds on, not a leak; the soak measures from there.
    std::thread::sleep(Duration::from_millis(600));
    let threads0 = proc_status(pid, "Threads");
    soak(&addr, 3);
    idle_threads(pid, threads0);
    let rss0 = proc_status(pid, "VmRSS");
    let rounds = soak(&addr, secs);
    idle_threads(pid, threads0);
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut first = [0u8; 12];
    s.read_exact(&mut first)
        .expect("the page answers within 1 s after the soak");
    assert_eq!(&first, b"HTTP/1.1 200");
    let rss = proc_status(pid, "VmRSS");
    eprintln!(
        "soak: {secs} s, 20 clients, {rounds} rounds; RSS {rss0} -> {rss} kB (peak {} kB); \
         threads {threads0} before and after",
        proc_status(pid, "VmHWM")
    );
    assert!(
        rss * 10 <= rss0 * 12,
        "RSS {rss} kB after the soak, {rss0} kB before"
    );
}
