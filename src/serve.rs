//! `qsim serve [SCENARIO]`: a local web page that runs a scenario and redraws its plots as its
//! knobs move.
//!
//! The server is [`http`] (`std::net`, a thread per connection, bounded in every dimension a
//! client controls); `jobs` runs the simulations on one worker thread. Every asset is
//! embedded in the binary (`serve/page.html`, `page.css`, `page.js`): the page needs no
//! network. Endpoints:
//!
//! | method and path | answer |
//! |---|---|
//! | `GET /` | the page; `/page.css`, `/page.js` its assets |
//! | `GET /api/knobs` | the scenario's knobs and policies (module `knobs`) |
//! | `POST /api/run` | body `{"sets": ["PATH=VALUE", ...], "page": TOKEN}`: resolves the base scenario with those `--set`s; `{"id": N}`, or 422 with the CLI's located error |
//! | `GET /api/status?id=N` | `queued`, `running` (replications done / total), `done` (seed, replications, the command, the report), `failed`, `superseded` |
//! | `GET /api/plots?id=N&policy=P&w=W&h=H` | the finished run's plots as SVG strings, for one policy or `all`, drawn W × H px (`plot_size`; the page asks for its boxes' size) |
//! | `GET /api/gantt?id=N&policy=P&w=W` | the trace's Gantt chart of that run's scenario under one policy (`qsim trace`'s default window, [`crate::experiment::trace::gantt_svg`]), W px wide and as tall as its lanes need, or a note |
//! | `GET /api/scenario.yaml?id=N` | run N's scenario as one file, its overrides written in, for `qsim run FILE` |
//!
//! A body is capped at [`MAX_BODY`] bytes (and the rest of a request by [`http::LIMITS`]);
//! anything else is 404, 405, 400 (bad JSON, with a message) or 413. Handling never panics on input: [`respond`] is a pure function of the
//! request and the state, tested without a socket.

pub mod http;
mod jobs;
mod knobs;
mod run;

use crate::scenario::{self, Scenario};
use anyhow::Context;
use clap::Args;
use jobs::{Jobs, Status};
use serde_json::{Value, json};
use std::io::Write;
use std::sync::Arc;

/// Arguments of `qsim serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A scenario file or a shipped scenario's name (see `qsim list`).
    #[arg(default_value = "two-queue")]
    pub scenario: String,
    /// The address to listen on; the default answers this machine only.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// The port (0: the system picks a free one; the printed URL says which).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,
    /// Worker threads running replications in parallel (0 = all cores).
    #[arg(short = 'j', long, value_name = "N", default_value_t = 0)]
    pub jobs: usize,
}

/// Largest request body read, bytes: a knob state is a few hundred.
pub const MAX_BODY: u64 = 64 << 10;

/// Most `--set`s one request may carry.
pub const MAX_SETS: usize = 64;

/// One HTTP answer.
#[derive(Debug, PartialEq)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// Extra headers (name, value).
    pub headers: Vec<(&'static str, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Reply {
    fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            content_type,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    fn json(status: u16, v: &Value) -> Reply {
        Reply::new(status, "application/json", v.to_string())
    }

    fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply::json(status, &json!({ "error": message.into() }))
    }
}

/// What the server serves: the base scenario's text and the runs.
pub struct App {
    /// How errors name the scenario (`<shipped>/two-queue.yaml` or the path).
    source: String,
    /// Its text.
    text: String,
    /// The file name the YAML download gets.
    file_name: String,
    /// `--set`s every request starts with (removing variants, which the page does not run).
    base_sets: Vec<String>,
    /// The base scenario, resolved.
    base: Scenario,
    /// The page's knobs, each menu entry the base refuses marked with why
    /// ([`knobs::mark_refused`]).
    knobs: Vec<Value>,
    jobs: Jobs,
}

impl App {
    /// Loads `arg` (a file or a shipped name) as `qsim run` would, and starts the worker with
    /// `threads` threads per run (0 = all cores).
    pub fn new(arg: &str, threads: usize) -> anyhow::Result<App> {
        let runner: jobs::Runner = Box::new(move |sc: &Scenario, p: &jobs::Progress| {
            run::run_all_policies(sc, threads, p)
        });
        App::with_runner(arg, runner)
    }

    fn with_runner(arg: &str, runner: jobs::Runner) -> anyhow::Result<App> {
        let path = std::path::Path::new(arg);
        let shipped = scenario::shipped().into_iter().find(|s| {
            [s.name, s.file].contains(&arg) || arg.strip_prefix("scenarios/") == Some(s.file)
        });
        let (source, text) = match shipped {
            Some(s) if !path.exists() => (s.source_name(), s.yaml.to_string()),
            _ => {
                // Read once, with the loader's own errors (a missing file lists the shipped
                // names): a pipe (`qsim serve <(cat x.yaml)`) delivers its bytes only once.
                let text = scenario::read_text(path)?;
                (path.display().to_string(), text)
            }
        };
        let first = scenario::load_str(&source, &text)?;
        let mut base_sets = Vec::new();
        if !first.variants.is_empty() {
            base_sets.extend(["!variants", "!sweep", "!sensitivity"].map(String::from));
        }
        let base = scenario::load_str_with_overrides(&source, &text, &base_sets)?;
        let stem = crate::plot::dir_name(&base.name);
        let mut app = App {
            file_name: format!("{stem}-serve.yaml"),
            source,
            text,
            base_sets,
            knobs: knobs::knobs(&base),
            base,
            jobs: Jobs::new(runner),
        };
        let mut marked = std::mem::take(&mut app.knobs);
        knobs::mark_refused(&mut marked, &|sets| app.resolve(sets).map(|_| ()));
        app.knobs = marked;
        Ok(app)
    }

    /// Resolves the base scenario with `sets` after the base's own, as `qsim run --set` does.
    fn resolve(&self, sets: &[String]) -> Result<(Scenario, String), String> {
        let all: Vec<String> = self.base_sets.iter().chain(sets).cloned().collect();
        let sc = scenario::load_str_with_overrides(&self.source, &self.text, &all)
            .map_err(|e| crate::error::render(&anyhow::Error::from(e)))?;
        if !sc.variants.is_empty() {
            return Err("the page runs no variants: remove `variants:` and `sweep:` sets".into());
        }
        if sc.replications > knobs::MAX_SERVE_REPLICATIONS {
            return Err(format!(
                "replications: {} is more than qsim serve runs ({})\n  hint: use `qsim run -r {}` \
                 for long runs",
                sc.replications,
                knobs::MAX_SERVE_REPLICATIONS,
                sc.replications
            ));
        }
        let key = serde_json::to_string(&sc).map_err(|e| e.to_string())?;
        Ok((sc, key))
    }

    /// Submits the base scenario as the page first shows it, so its runs are warm when the
    /// page loads.
    pub fn warm(&self) {
        if let Ok((sc, key)) = self.resolve(&[]) {
            self.jobs.submit("", sc, key, Vec::new());
        }
    }
}

/// The `--set`s a run request carries, and the page that sends it.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RunRequest {
    sets: Vec<String>,
    /// The sending page's token: its newer request supersedes and stops its older one, never
    /// another page's. Absent: the one page without a token.
    #[serde(default)]
    page: String,
}

/// Longest page token, bytes (the page sends a UUID, 36).
pub const MAX_PAGE_TOKEN: usize = 64;

/// The answer to one request.
pub fn respond(app: &App, method: &str, url: &str, body: &[u8]) -> Reply {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let get = method == "GET" || method == "HEAD";
    match (path, get, method == "POST") {
        ("/", true, _) => Reply::new(200, "text/html; charset=utf-8", PAGE_HTML),
        ("/page.css", true, _) => Reply::new(200, "text/css; charset=utf-8", PAGE_CSS),
        ("/page.js", true, _) => Reply::new(200, "text/javascript; charset=utf-8", PAGE_JS),
        ("/api/knobs", true, _) => knobs_reply(app),
        ("/api/run", _, true) => run_reply(app, body),
        ("/api/status", true, _) => with_id(query, |id| status_reply(app, id)),
        ("/api/plots", true, _) => with_id(query, |id| plots_reply(app, id, query)),
        ("/api/gantt", true, _) => with_id(query, |id| gantt_reply(app, id, query)),
        ("/api/scenario.yaml", true, _) => with_id(query, |id| yaml_reply(app, id)),
        ("/" | "/page.css" | "/page.js" | "/api/knobs" | "/api/status" | "/api/plots", ..)
        | ("/api/gantt", ..)
        | ("/api/scenario.yaml" | "/api/run", ..) => {
            let mut r = Reply::error(405, format!("{method} is not allowed on {path}"));
            let allow = if path == "/api/run" {
                "POST"
            } else {
                "GET, HEAD"
            };
            r.headers.push(("Allow", allow.to_string()));
            r
        }
        _ => Reply::error(404, format!("no such page: {path}")),
    }
}

const PAGE_HTML: &str = include_str!("serve/page.html");
const PAGE_CSS: &str = include_str!("serve/page.css");
const PAGE_JS: &str = include_str!("serve/page.js");

/// The value of `name` in a query string (no percent-decoding beyond `%2B`, `%2F`, `%20`:
/// policy names and ids need no more).
fn param<'a>(query: &'a str, name: &str) -> Option<std::borrow::Cow<'a, str>> {
    let raw = query
        .split('&')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))?;
    if !raw.contains('%') && !raw.contains('+') {
        return Some(raw.into());
    }
    let decoded = raw
        .replace('+', " ")
        .replace("%2B", "+")
        .replace("%2b", "+")
        .replace("%2F", "/")
        .replace("%2f", "/")
        .replace("%20", " ");
    Some(decoded.into())
}

/// The widths a plot may be asked for, px: a phone's box to a 4K screen's.
pub const PLOT_WIDTHS: std::ops::RangeInclusive<u32> = 480..=2400;
/// The heights a plot may be asked for, px.
pub const PLOT_HEIGHTS: std::ops::RangeInclusive<u32> = 320..=1600;

/// The size to draw a plot at: the query's `w` and `h` in CSS px, rounded and clamped to
/// [`PLOT_WIDTHS`] × [`PLOT_HEIGHTS`] (so no request makes the server draw without bound), each
/// [`crate::plot::SIZE`]'s when missing; a value that is not a finite number is a 400.
///
/// The page asks for the size of each plot's box, so one SVG unit is one CSS pixel and the
/// plot's type keeps its designed pixel size (tick labels 16 px) whatever the window; the
/// projector layout asks for its box divided by its zoom (page.js, `PRESENT_ZOOM`) and the
/// browser scales the drawing up by as much, type and lines alike.
fn plot_size(query: &str) -> Result<(u32, u32), Reply> {
    let (w, h) = crate::plot::SIZE;
    let one = |name: &str, default: u32, range: std::ops::RangeInclusive<u32>| {
        let Some(v) = param(query, name) else {
            return Ok(default);
        };
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x
                .round()
                .clamp(f64::from(*range.start()), f64::from(*range.end()))
                as u32),
            _ => Err(Reply::error(
                400,
                format!(
                    "{name}={v:.20}: give the plot's {} in CSS px, a number ({}..={} are drawn)",
                    if name == "w" { "width" } else { "height" },
                    range.start(),
                    range.end()
                ),
            )),
        }
    };
    Ok((one("w", w, PLOT_WIDTHS)?, one("h", h, PLOT_HEIGHTS)?))
}

fn with_id(query: &str, f: impl FnOnce(u64) -> Reply) -> Reply {
    match param(query, "id").and_then(|v| v.parse().ok()) {
        Some(id) => f(id),
        None => Reply::error(400, "give the run's id: ?id=N"),
    }
}

fn knobs_reply(app: &App) -> Reply {
    let sc = &app.base;
    Reply::json(
        200,
        &json!({
            "scenario": sc.name,
            "description": sc.description,
            "source": app.source,
            "base_sets": app.base_sets,
            "policies": sc.policies,
            "has_memory": sc.memory.is_some(),
            "knobs": app.knobs,
        }),
    )
}

fn run_reply(app: &App, body: &[u8]) -> Reply {
    let req: RunRequest = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(e) => {
            return Reply::error(
                400,
                format!("the body is not a run request ({e}): send {{\"sets\": [\"PATH=VALUE\"]}}"),
            );
        }
    };
    if req.sets.len() > MAX_SETS {
        return Reply::error(400, format!("more than {MAX_SETS} sets in one request"));
    }
    if req.page.len() > MAX_PAGE_TOKEN {
        return Reply::error(
            400,
            format!("the page token is over {MAX_PAGE_TOKEN} bytes"),
        );
    }
    match app.resolve(&req.sets) {
        Ok((sc, key)) => {
            let id = app.jobs.submit(&req.page, sc, key, req.sets);
            Reply::json(200, &json!({ "id": id }))
        }
        Err(e) => Reply::error(422, e),
    }
}

fn status_reply(app: &App, id: u64) -> Reply {
    let (status, req) = app.jobs.status(id);
    let v = match status {
        Status::Superseded => json!({"state": "superseded"}),
        Status::Unknown => return Reply::error(404, format!("no run {id}")),
        Status::Queued => json!({"state": "queued"}),
        Status::Running(done, total) => json!({"state": "running", "done": done, "total": total}),
        Status::Failed(e) => json!({"state": "failed", "error": e}),
        Status::Done(f) => {
            let Some(req) = req else {
                return Reply::error(404, format!("no run {id}"));
            };
            json!({
                "state": "done",
                "seed": req.scenario.seed,
                "replications": req.scenario.replications,
                "policies": req.scenario.policies,
                "elapsed_ms": f.elapsed_ms,
                "command": reproduction(app, &req.sets).0,
                "values": knobs::values(&req.scenario),
                "report": f.report,
            })
        }
    };
    Reply::json(200, &v)
}

/// The downloadable scenario file of a run made by `sets`, and the `qsim run` command that
/// reproduces the run from it: the overrides written into the file
/// ([`scenario::written_yaml`], checked to resolve to the same scenario), or, when they cannot
/// be, the file as it is and the `--set`s on the command line.
fn reproduction(app: &App, sets: &[String]) -> (String, String) {
    let all: Vec<String> = app.base_sets.iter().chain(sets).cloned().collect();
    let file = &app.file_name;
    if let Ok(Some(yaml)) = scenario::written_yaml(&app.source, &app.text, &all) {
        let cmd = format!("qsim run {file}");
        let mut text = format!(
            "# {file}: {source} as `qsim serve` ran it, every override written in:\n",
            source = app.source
        );
        for s in &all {
            text.push_str(&format!("#   --set {s}\n"));
        }
        text.push_str(&format!("# Reproduce with: {cmd}\n{yaml}"));
        return (cmd, text);
    }
    let mut cmd = format!("qsim run {file}");
    for s in &all {
        cmd.push_str(&format!(" --set '{}'", s.replace('\'', r"'\''")));
    }
    let text = format!(
        "# {file}: {source} as it is; `qsim serve` ran it with overrides. Reproduce with:\n#   \
         {cmd}\n{text}",
        source = app.source,
        text = app.text
    );
    (cmd, text)
}

fn plots_reply(app: &App, id: u64, query: &str) -> Reply {
    let size = match plot_size(query) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let Some((_, f)) = app.jobs.finished(id) else {
        return Reply::error(404, format!("run {id} has no result (yet)"));
    };
    let policy = param(query, "policy").unwrap_or("all".into());
    let mut data = f.plots.clone();
    if policy != "all" {
        data.runs.retain(|r| r.label == policy);
        if data.runs.is_empty() {
            return Reply::error(404, format!("run {id} has no policy `{policy}`"));
        }
    }
    let mut out = serde_json::Map::new();
    for name in ["percentiles", "stages", "failures"] {
        match crate::plot::svg_named(&data, name, size) {
            Ok(svg) => out.insert(name.to_string(), json!(svg)),
            Err(e) => return Reply::error(500, e.to_string()),
        };
    }
    Reply::json(200, &Value::Object(out))
}

/// The trace's Gantt chart of run `id`'s scenario under one policy: `{"gantt": SVG}`, or
/// `{"note": why not}` (no single policy picked, or the trace failed). Its own request, so a
/// trace never delays the plots.
fn gantt_reply(app: &App, id: u64, query: &str) -> Reply {
    let width = match plot_size(query) {
        Ok((w, _)) => w,
        Err(r) => return r,
    };
    let Some((req, _)) = app.jobs.finished(id) else {
        return Reply::error(404, format!("run {id} has no result (yet)"));
    };
    let policy = param(query, "policy").unwrap_or("all".into());
    let gantt = if req.scenario.policies.iter().any(|p| *p == policy) {
        crate::experiment::trace::gantt_svg(&req.scenario, &policy, Some(width))
            .map_err(|e| format!("{e:#}"))
    } else {
        Err("pick one policy to see its trace".to_string())
    };
    match gantt {
        Ok(svg) => Reply::json(200, &json!({ "gantt": svg })),
        Err(note) => Reply::json(200, &json!({ "note": note })),
    }
}

fn yaml_reply(app: &App, id: u64) -> Reply {
    let (_, Some(req)) = app.jobs.status(id) else {
        return Reply::error(404, format!("no run {id}"));
    };
    let (_, text) = reproduction(app, &req.sets);
    let mut r = Reply::new(200, "text/yaml; charset=utf-8", text);
    r.headers.push((
        "Content-Disposition",
        format!("attachment; filename=\"{}\"", app.file_name),
    ));
    r
}

/// Reads `bytes` as one request, the way the server reads a connection, and returns the bytes
/// it would answer with (none when the request is incomplete), from a page over the shipped
/// `nvme-fio` whose runs fail at once instead of simulating: the fuzz target `http`
/// ([`crate::fuzzing::http`]) drives the parser, the limits and every endpoint through it.
pub fn answer_raw(bytes: &[u8]) -> Vec<u8> {
    static APP: std::sync::OnceLock<App> = std::sync::OnceLock::new();
    let app = APP.get_or_init(|| {
        let runner: jobs::Runner =
            Box::new(|_: &Scenario, _: &jobs::Progress| jobs::Outcome::Failed("not run".into()));
        App::with_runner("nvme-fio", runner).expect("the shipped nvme-fio loads")
    });
    let mut wire = std::io::Cursor::new(bytes);
    match http::read_request(&mut wire, &http::LIMITS, |_| Ok(true)) {
        Ok(req) => {
            let reply = respond(app, &req.method, &req.target, &req.body);
            http::response_bytes(&reply, req.method == "HEAD")
        }
        Err(http::ReadError::Refuse(reply)) => http::response_bytes(&reply, false),
        Err(http::ReadError::Gone) => Vec::new(),
    }
}

/// Runs `qsim serve`: prints the URL on `out` and answers requests until killed.
pub fn serve_cmd(args: &ServeArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let app = Arc::new(App::new(&args.scenario, args.jobs)?);
    let listener = std::net::TcpListener::bind((args.bind, args.port))
        .map_err(|e| anyhow::anyhow!("cannot listen on {}:{}: {e}", args.bind, args.port))?;
    let addr = listener.local_addr().context("the server has no address")?;
    app.warm();
    writeln!(out, "qsim serve: http://{addr}/")?;
    out.flush()?;
    let handler: Arc<http::Handler> =
        Arc::new(move |method: &str, url: &str, body: &[u8]| respond(&app, method, url, body));
    http::serve(listener, http::LIMITS, handler).context("the server stopped")
}

#[cfg(test)]
mod tests;
