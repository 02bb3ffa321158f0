//! `qsim serve`'s HTTP/1.1 server on `std::net`, bounded in every dimension a client controls.
//!
//! One request per connection (`Connection: close`), one thread per connection, at most
//! [`Limits::connections`] connections at once and [`Limits::per_client`] from one address;
//! past either the connection gets a 503 at once and is closed. A request must arrive whole
//! (head and body) within [`Limits::request_time`] of the connection's accept, or it gets a 408;
//! its head (request line and headers) may be at most [`Limits::head_bytes`] (else 431) and its
//! body at most [`Limits::body_bytes`] (else 413, before a byte of it is read); a body comes
//! with `Content-Length` only (chunked: 411). Each write of the answer must progress within
//! [`Limits::write_time`], so a client that never reads frees its thread. After an answer the
//! server stops writing and drains what the client still sends for a moment (bounded), so an
//! early refusal reaches a client that is still sending instead of being lost to a reset.
//!
//! Why not a crate: `tiny_http`, the server before this one, reads a header line of any length
//! into memory and has no timeouts or connection limits, and its sockets are out of reach, so
//! it could not be guarded; hyper or axum with tower-http would bound it, but with an async
//! runtime that costs minutes of build on two cores for one local page. The parsing here is a
//! request line, headers and a `Content-Length` body, and every limit is a line of code with a
//! test over raw TCP (`tests/serve_limits.rs`).

use super::Reply;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The server's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest request head (request line and headers), bytes.
    pub head_bytes: usize,
    /// Largest request body, bytes.
    pub body_bytes: usize,
    /// Time from accept until the whole request has arrived.
    pub request_time: Duration,
    /// Longest wait for one write of the answer to progress.
    pub write_time: Duration,
    /// Connections served at once, from everyone.
    pub connections: usize,
    /// Connections served at once from one client address.
    pub per_client: usize,
}

/// `qsim serve`'s bounds: a page's requests are a few hundred bytes and browsers open at most
/// six connections to one host, so these leave room for a class of browsers and none for a
/// client that hoards.
pub const LIMITS: Limits = Limits {
    head_bytes: 16 << 10,
    body_bytes: super::MAX_BODY as usize,
    request_time: Duration::from_secs(10),
    write_time: Duration::from_secs(10),
    connections: 64,
    per_client: 16,
};

/// Most bytes drained from a client after its answer, and for how long at most.
const DRAIN_BYTES: u64 = 1 << 20;
const DRAIN_TIME: Duration = Duration::from_millis(500);

/// What answers a request: method, target (path and query) and body in, the reply out.
pub type Handler = dyn Fn(&str, &str, &[u8]) -> Reply + Send + Sync;

/// One request as read off the wire.
#[derive(Debug, PartialEq)]
pub struct Request {
    /// The method, as sent (`GET`, `POST`, ...).
    pub method: String,
    /// The request target: path and query.
    pub target: String,
    /// The body (empty without `Content-Length`).
    pub body: Vec<u8>,
}

/// Why a request was not read: a refusal to answer with, or a client that went away.
#[derive(Debug, PartialEq)]
pub enum ReadError {
    /// Answer with this reply, then close.
    Refuse(Reply),
    /// The client closed or reset the connection before a whole request: nothing to answer.
    Gone,
}

fn refuse(status: u16, message: impl Into<String>) -> ReadError {
    ReadError::Refuse(Reply::error(status, message))
}

/// Accepts connections on `listener` and answers each on its own thread through `handler`,
/// within `limits`, until the listener fails for good.
pub fn serve(listener: TcpListener, limits: Limits, handler: Arc<Handler>) -> io::Result<()> {
    let slots = Arc::new(Slots::default());
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(s) => s,
            // Out of file descriptors or a connection reset before accept: wait and go on.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let accepted = Instant::now();
        let peer = stream.peer_addr().map(|a| a.ip()).ok();
        let Some(slot) = Slots::take(&slots, peer, &limits) else {
            let busy = Reply::error(503, "the server is serving as many connections as it may");
            let _ = answer_and_close(stream, &busy, false, &limits);
            continue;
        };
        let handler = Arc::clone(&handler);
        let spawned = std::thread::Builder::new()
            .name("qsim-http".into())
            .spawn(move || {
                let _slot = slot;
                connection(stream, accepted, &limits, &*handler);
            });
        if spawned.is_err() {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    Ok(())
}

/// Serves one connection: reads its request within the limits and answers it.
fn connection(mut stream: TcpStream, accepted: Instant, limits: &Limits, handler: &Handler) {
    let _ = stream.set_nodelay(true);
    let deadline = accepted + limits.request_time;
    let read = read_request(&mut stream, limits, |s| {
        let left = deadline.saturating_duration_since(Instant::now());
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .map(|()| !left.is_zero())
    });
    match read {
        Ok(req) => {
            let reply = handler(&req.method, &req.target, &req.body);
            let _ = answer_and_close(stream, &reply, req.method == "HEAD", limits);
        }
        Err(ReadError::Refuse(reply)) => {
            let _ = answer_and_close(stream, &reply, false, limits);
        }
        Err(ReadError::Gone) => {}
    }
}

/// Reads one request from `stream`. `arm` is called before every read with the stream, to set
/// its read timeout; it returns false once the time for the request is up (then a 408).
pub fn read_request<S: Read>(
    stream: &mut S,
    limits: &Limits,
    mut arm: impl FnMut(&mut S) -> io::Result<bool>,
) -> Result<Request, ReadError> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = find_head_end(&buf) {
            break end;
        }
        if buf.len() > limits.head_bytes {
            return Err(head_too_large(limits));
        }
        let n = read_some(stream, &mut chunk, limits, &mut arm)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    if head_end > limits.head_bytes {
        return Err(head_too_large(limits));
    }
    let head = parse_head(&buf[..head_end], limits)?;
    let mut body = buf.split_off(head_end + 4);
    if body.len() > head.length {
        return Err(refuse(
            400,
            "more bytes than Content-Length said: one request per connection",
        ));
    }
    while body.len() < head.length {
        let want = (head.length - body.len()).min(chunk.len());
        let n = read_some(stream, &mut chunk[..want], limits, &mut arm)?;
        body.extend_from_slice(&chunk[..n]);
    }
    Ok(Request {
        method: head.method,
        target: head.target,
        body,
    })
}

fn head_too_large(limits: &Limits) -> ReadError {
    refuse(
        431,
        format!(
            "the request line and headers are over {} bytes",
            limits.head_bytes
        ),
    )
}

/// One read of at most `into.len()` bytes; a closed connection is [`ReadError::Gone`], a read
/// past the request's time a 408.
fn read_some<S: Read>(
    stream: &mut S,
    into: &mut [u8],
    limits: &Limits,
    arm: &mut impl FnMut(&mut S) -> io::Result<bool>,
) -> Result<usize, ReadError> {
    loop {
        match arm(stream) {
            Ok(true) => {}
            Ok(false) => return Err(too_slow(limits)),
            Err(_) => return Err(ReadError::Gone),
        }
        match stream.read(into) {
            Ok(0) => return Err(ReadError::Gone),
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(too_slow(limits));
            }
            Err(_) => return Err(ReadError::Gone),
        }
    }
}

fn too_slow(limits: &Limits) -> ReadError {
    refuse(
        408,
        format!(
            "the request did not arrive whole within {} s",
            limits.request_time.as_secs()
        ),
    )
}

/// Where the head ends: the index of its blank line's `\r\n\r\n`.
fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

/// A parsed request head.
struct Head {
    method: String,
    target: String,
    length: usize,
}

/// Parses the request line and headers (without the blank line).
fn parse_head(head: &[u8], limits: &Limits) -> Result<Head, ReadError> {
    let text = std::str::from_utf8(head)
        .map_err(|_| refuse(400, "the request line and headers are not text"))?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(refuse(
            400,
            "the request line is not `METHOD /path HTTP/1.1`",
        ));
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(refuse(400, "the method is not a word in capitals"));
    }
    if !target.starts_with('/') {
        return Err(refuse(
            400,
            "the request target is not a path starting with /",
        ));
    }
    if !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return Err(refuse(505, "only HTTP/1.0 and HTTP/1.1 are spoken here"));
    }
    let mut length: Option<usize> = None;
    for header in lines {
        let Some((name, value)) = header.split_once(':') else {
            return Err(refuse(400, "a header line has no `:`"));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(refuse(
                411,
                "send the body with Content-Length, not chunked",
            ));
        }
        if name.eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .parse()
                .map_err(|_| refuse(400, "Content-Length is not a number of bytes"))?;
            if length.is_some_and(|l| l != n) {
                return Err(refuse(400, "two different Content-Length headers"));
            }
            length = Some(n);
        }
    }
    let length = length.unwrap_or(0);
    if length > limits.body_bytes {
        return Err(refuse(
            413,
            format!("the body is over {} bytes", limits.body_bytes),
        ));
    }
    Ok(Head {
        method: method.to_string(),
        target: target.to_string(),
        length,
    })
}

/// The bytes of an answer: status line, headers, and the body unless `head_only`.
pub fn response_bytes(reply: &Reply, head_only: bool) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         Connection: close\r\n",
        reply.status,
        reason(reply.status),
        reply.content_type,
        reply.body.len()
    );
    for (name, value) in &reply.headers {
        // A value is ours, but a CR or LF in it would split the header: leave such a one out.
        if !value.contains(['\r', '\n']) {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if !head_only {
        bytes.extend_from_slice(&reply.body);
    }
    bytes
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    }
}

/// Writes the answer (each write bounded by the write time), stops writing, drains what the
/// client still sends for a moment, and closes.
fn answer_and_close(
    mut stream: TcpStream,
    reply: &Reply,
    head_only: bool,
    limits: &Limits,
) -> io::Result<()> {
    stream.set_write_timeout(Some(limits.write_time))?;
    stream.write_all(&response_bytes(reply, head_only))?;
    stream.flush()?;
    stream.shutdown(Shutdown::Write)?;
    let until = Instant::now() + DRAIN_TIME;
    let mut sink = [0u8; 4096];
    let mut drained = 0u64;
    while drained < DRAIN_BYTES {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => drained += n as u64,
        }
    }
    Ok(())
}

/// Connections being served: in all and per client address.
#[derive(Default)]
struct Slots {
    taken: Mutex<(usize, HashMap<Option<IpAddr>, usize>)>,
}

/// One connection's place in [`Slots`], given back when dropped.
struct Slot {
    slots: Arc<Slots>,
    peer: Option<IpAddr>,
}

impl Slots {
    fn take(slots: &Arc<Slots>, peer: Option<IpAddr>, limits: &Limits) -> Option<Slot> {
        let mut t = slots
            .taken
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mine = t.1.get(&peer).copied().unwrap_or(0);
        if t.0 >= limits.connections || mine >= limits.per_client {
            return None;
        }
        t.0 += 1;
        t.1.insert(peer, mine + 1);
        Some(Slot {
            slots: Arc::clone(slots),
            peer,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut t = self
            .slots
            .taken
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        t.0 -= 1;
        if let Some(n) = t.1.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                t.1.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Request, ReadError> {
        read_request(&mut io::Cursor::new(bytes.to_vec()), &LIMITS, |_| Ok(true))
    }

    fn status(r: Result<Request, ReadError>) -> u16 {
        match r {
            Ok(_) => 200,
            Err(ReadError::Refuse(reply)) => reply.status,
            Err(ReadError::Gone) => 0,
        }
    }

    #[test]
    fn a_request_with_a_body_is_read_whole() {
        let r = read(b"POST /api/run?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello")
            .unwrap();
        assert_eq!(
            r,
            Request {
                method: "POST".into(),
                target: "/api/run?x=1".into(),
                body: b"hello".to_vec()
            }
        );
        let r = read(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        assert!(r.body.is_empty());
    }

    #[test]
    fn each_limit_and_malformation_has_its_status() {
        let long = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(20 << 10));
        assert_eq!(status(read(long.as_bytes())), 431);
        let endless = vec![b'a'; 100 << 10];
        assert_eq!(status(read(&endless)), 431, "no line end at all");
        let big = "POST / HTTP/1.1\r\nContent-Length: 100000000\r\n\r\n0123456789";
        assert_eq!(status(read(big.as_bytes())), 413);
        let chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(status(read(chunked.as_bytes())), 411);
        assert_eq!(status(read(b"GET /\r\n\r\n")), 400);
        assert_eq!(status(read(b"get / HTTP/1.1\r\n\r\n")), 400);
        assert_eq!(status(read(b"GET x HTTP/1.1\r\n\r\n")), 400);
        assert_eq!(status(read(b"GET / HTTP/2\r\n\r\n")), 505);
        assert_eq!(status(read(b"GET / HTTP/1.1\r\nnocolon\r\n\r\n")), 400);
        let two = "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab";
        assert_eq!(status(read(two.as_bytes())), 400);
        assert_eq!(
            status(read(b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n")),
            400
        );
        assert_eq!(status(read(b"GET / HTTP/1.1\r\n\xff\r\n\r\n")), 400);
        let extra = "POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nab";
        assert_eq!(status(read(extra.as_bytes())), 400);
        // A body promised and not sent: the client went away.
        assert_eq!(
            status(read(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nab")),
            0
        );
        assert_eq!(status(read(b"GET / HT")), 0);
    }

    #[test]
    fn a_request_out_of_time_is_a_408() {
        let mut calls = 0;
        let r = read_request(
            &mut io::Cursor::new(b"GET / HTTP/1.1\r\n".to_vec()),
            &LIMITS,
            |_| {
                calls += 1;
                Ok(calls < 2)
            },
        );
        assert_eq!(status(r), 408);
    }

    #[test]
    fn an_answer_names_its_length_and_closes() {
        let mut reply = Reply::new(404, "application/json", "{}");
        reply.headers.push(("Allow", "GET".into()));
        reply.headers.push(("X-Bad", "a\r\nb".into()));
        let text = String::from_utf8(response_bytes(&reply, false)).unwrap();
        assert_eq!(
            text,
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\
             Cache-Control: no-store\r\nConnection: close\r\nAllow: GET\r\n\r\n{}"
        );
        let head = String::from_utf8(response_bytes(&reply, true)).unwrap();
        assert!(head.ends_with("Allow: GET\r\n\r\n"), "{head}");
    }

    #[test]
    fn slots_are_limited_in_all_and_per_client_and_given_back() {
        let limits = Limits {
            connections: 3,
            per_client: 2,
            ..LIMITS
        };
        let slots = Arc::new(Slots::default());
        let a = Some(IpAddr::from([10, 0, 0, 1]));
        let b = Some(IpAddr::from([10, 0, 0, 2]));
        let a1 = Slots::take(&slots, a, &limits).unwrap();
        let _a2 = Slots::take(&slots, a, &limits).unwrap();
        assert!(Slots::take(&slots, a, &limits).is_none(), "per client");
        let _b1 = Slots::take(&slots, b, &limits).unwrap();
        assert!(Slots::take(&slots, b, &limits).is_none(), "in all");
        drop(a1);
        assert!(Slots::take(&slots, a, &limits).is_some(), "given back");
    }
}
