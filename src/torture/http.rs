//! Torture cases for `qsim serve`'s HTTP reader: one seed draws one request (valid, or broken
//! in one of the ways clients break them) and [`check`] feeds its bytes through the server's
//! own reader and every endpoint ([`crate::serve::answer_raw`]), then checks that the
//! answer is one well-formed HTTP/1.1 response whose status is the one the drawn request
//! calls for: 431 past the head limit, 413 past the body limit, 411 for a chunked body, no
//! answer for a request cut short, and for a whole request anything but a server error.

use crate::engine::{RngStreams, SimRng};
use crate::serve::http::LIMITS;
use rand::RngExt;

/// What the drawn request must get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// This status.
    Status(u16),
    /// No answer: the request never arrived whole.
    Nothing,
    /// A client error or success from the endpoints (2xx or 4xx, never 5xx but 505).
    Answered,
}

/// A drawn request: its bytes and what it must get.
struct Drawn {
    bytes: Vec<u8>,
    expect: Expect,
}

fn pick<'a>(rng: &mut SimRng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

/// The request of `seed`.
fn draw(seed: u64) -> Drawn {
    let mut rng = RngStreams::new(seed, 0).stream("torture/http");
    let method = pick(&mut rng, &["GET", "HEAD", "POST", "POST", "PUT", "DELETE"]);
    let path = pick(
        &mut rng,
        &[
            "/",
            "/page.js",
            "/page.css",
            "/api/knobs",
            "/api/run",
            "/api/status?id=1",
            "/api/status?id=x",
            "/api/plots?id=1&policy=all",
            "/api/gantt?id=2&policy=fifo",
            "/api/scenario.yaml?id=1",
            "/nope",
            "/api/status?id=18446744073709551616",
        ],
    );
    let body = draw_body(&mut rng);
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: x\r\n");
    let mut expect = Expect::Answered;
    let mut length = body.len();
    match rng.random_range(0..10u32) {
        // A header past the head limit.
        0 => {
            head.push_str(&format!("X-Pad: {}\r\n", "p".repeat(LIMITS.head_bytes)));
            expect = Expect::Status(431);
        }
        // A body announced past the body limit.
        1 => {
            length = LIMITS.body_bytes + 1 + rng.random_range(0..1_000_000usize);
            expect = Expect::Status(413);
        }
        // Chunked.
        2 => {
            head.push_str("Transfer-Encoding: chunked\r\n");
            expect = Expect::Status(411);
        }
        // A body announced longer than sent: the client stops mid-request.
        3 if !body.is_empty() || rng.random() => {
            length = body.len() + 1;
            expect = Expect::Nothing;
        }
        _ => {}
    }
    head.push_str(&format!("Content-Length: {length}\r\n\r\n"));
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&body);
    Drawn { bytes, expect }
}

/// A body: a run request (valid, with bad sets, or not JSON), or nothing.
fn draw_body(rng: &mut SimRng) -> Vec<u8> {
    let set = pick(
        rng,
        &[
            "duration=2s",
            "crypt.encrypt_rate=fast",
            "replications=51",
            "!variants",
            "kernel.version=6.12",
            "memory.ram=-1",
            "a.b.c=1",
            "",
        ],
    );
    match rng.random_range(0..5u32) {
        0 => Vec::new(),
        1 => format!("{{\"sets\": [\"{set}\"], \"page\": \"t\"}}").into_bytes(),
        2 => format!(
            "{{\"sets\": [\"{set}\"], \"page\": \"{}\"}}",
            "t".repeat(100)
        )
        .into_bytes(),
        3 => b"{\"sets\": ".to_vec(),
        _ => (0..rng.random_range(1..64usize))
            .map(|_| rng.random())
            .collect(),
    }
}

/// Feeds the request of `seed` through the server and checks its answer.
pub fn check(seed: u64) -> Result<(), String> {
    let drawn = draw(seed);
    let answer = crate::serve::answer_raw(&drawn.bytes);
    let shown = || String::from_utf8_lossy(&drawn.bytes[..drawn.bytes.len().min(300)]).into_owned();
    if drawn.expect == Expect::Nothing {
        if answer.is_empty() {
            return Ok(());
        }
        return Err(format!(
            "http: an answer to a request cut short:\n{}",
            shown()
        ));
    }
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("http: no whole answer to\n{}", shown()))?;
    let status: u16 = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3)?.parse().ok())
        .ok_or_else(|| format!("http: no status line in {head:?}"))?;
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: ")?.parse::<usize>().ok());
    let head_only = drawn.bytes.starts_with(b"HEAD ") && drawn.expect == Expect::Answered;
    if !head_only && length != Some(body.len()) {
        return Err(format!(
            "http: Content-Length {length:?} but a body of {} bytes",
            body.len()
        ));
    }
    let right = match drawn.expect {
        Expect::Status(s) => status == s,
        _ => (200..500).contains(&status),
    };
    if right {
        return Ok(());
    }
    Err(format!(
        "http: status {status} where {:?} was due, for\n{}\n(answer: {})",
        drawn.expect,
        shown(),
        body.chars().take(300).collect::<String>()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hundred_drawn_requests_get_the_answers_they_call_for() {
        let mut kinds = std::collections::BTreeSet::new();
        for seed in 0..100 {
            check(seed).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            kinds.insert(format!("{:?}", draw(seed).expect));
        }
        // Every kind of request is drawn in a hundred seeds.
        assert_eq!(kinds.len(), 5, "{kinds:?}");
    }
}
