//! Request handling of `qsim serve`, without a socket: [`respond`] on an [`App`] whose runs
//! are real but short.

use super::*;
use std::time::{Duration, Instant};

/// two-queue with a short horizon, so each page run takes milliseconds.
fn app() -> App {
    let runner: jobs::Runner = Box::new(|sc: &Scenario, p: &jobs::Progress| {
        let mut sc = sc.clone();
        sc.duration = crate::engine::SimDuration::from_secs(3);
        run::run_all_policies(&sc, 1, p)
    });
    App::with_runner("two-queue", runner).unwrap()
}

fn json_of(r: &Reply) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {:?}", r))
}

fn post(app: &App, sets: &[&str]) -> Reply {
    let body = json!({ "sets": sets }).to_string();
    respond(app, "POST", "/api/run", body.as_bytes())
}

fn wait_done(app: &App, id: u64) -> Value {
    let start = Instant::now();
    loop {
        let v = json_of(&respond(app, "GET", &format!("/api/status?id={id}"), b""));
        if v["state"] != "running" && v["state"] != "queued" {
            return v;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{v}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_page_and_its_assets_are_served_from_the_binary() {
    let app = app();
    let r = respond(&app, "GET", "/", b"");
    assert_eq!(
        (r.status, r.content_type),
        (200, "text/html; charset=utf-8")
    );
    let html = String::from_utf8(r.body).unwrap();
    assert!(html.contains("/page.js") && html.contains("/page.css"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no CDN"
    );
    for asset in ["/page.js", "/page.css"] {
        let r = respond(&app, "GET", asset, b"");
        assert_eq!(r.status, 200, "{asset}");
        assert!(!String::from_utf8(r.body).unwrap().contains("https://"));
    }
    let k = json_of(&respond(&app, "GET", "/api/knobs", b""));
    assert_eq!(k["scenario"], "two-queue");
    assert_eq!(k["policies"], json!(["fifo", "split", "prio"]));
}

#[test]
fn unknown_paths_are_404_and_wrong_methods_405() {
    let app = app();
    let r = respond(&app, "GET", "/etc/passwd", b"");
    assert_eq!(r.status, 404);
    assert!(
        json_of(&r)["error"]
            .as_str()
            .unwrap()
            .contains("/etc/passwd")
    );
    let r = respond(&app, "GET", "/api/run", b"");
    assert_eq!(r.status, 405);
    assert_eq!(r.headers, [("Allow", "POST".to_string())]);
    assert_eq!(respond(&app, "DELETE", "/", b"").status, 405);
    assert_eq!(respond(&app, "GET", "/api/status", b"").status, 400);
    assert_eq!(respond(&app, "GET", "/api/status?id=x", b"").status, 400);
    assert_eq!(respond(&app, "GET", "/api/status?id=77", b"").status, 404);
    assert_eq!(respond(&app, "GET", "/api/plots?id=77", b"").status, 404);
}

#[test]
fn bad_json_is_400_with_a_message() {
    let app = app();
    for body in [
        &b"{"[..],
        b"[]",
        b"{\"sets\": 3}",
        b"{\"sets\": [], \"x\": 1}",
        b"\xff\xfe",
    ] {
        let r = respond(&app, "POST", "/api/run", body);
        assert_eq!(r.status, 400, "{body:?}");
        let e = json_of(&r)["error"].as_str().unwrap().to_string();
        assert!(e.contains("not a run request"), "{e}");
    }
    let many: Vec<String> = (0..=MAX_SETS).map(|_| "cpus=2".to_string()).collect();
    let r = respond(
        &app,
        "POST",
        "/api/run",
        json!({ "sets": many }).to_string().as_bytes(),
    );
    assert_eq!(r.status, 400);
}

#[test]
fn a_bad_value_gets_the_located_error_the_command_line_gets() {
    let app = app();
    for set in [
        "crypt.encrypt_rate=-5MB/s",
        "crypt.encrypt_rate=fast",
        "memory.ram=1GB",
        "kernel.version=2.6.99",
        "no-equals-sign",
    ] {
        let r = post(&app, &[set]);
        assert_eq!(r.status, 422, "{set}");
        let got = json_of(&r)["error"].as_str().unwrap().to_string();
        let cli =
            crate::scenario::resolve_with_overrides("two-queue", &[set.to_string()]).unwrap_err();
        let want = crate::error::render(&anyhow::Error::from(cli));
        assert_eq!(got, want, "{set}");
        assert!(
            got.contains(&format!("--set {set}")) && got.contains("hint:"),
            "{got}"
        );
    }
    let r = post(&app, &["replications=51"]);
    assert_eq!(r.status, 422);
    assert!(
        json_of(&r)["error"]
            .as_str()
            .unwrap()
            .contains("qsim run -r 51")
    );
}

#[test]
fn equal_resolved_scenarios_share_one_cache_key() {
    let app = app();
    let key = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        app.resolve(&sets).unwrap().1
    };
    // Written differently, resolved the same.
    assert_eq!(key(&[]), key(&["crypt.cipher=aes-2009"]));
    assert_eq!(key(&[]), key(&["memory.ram=2048MiB"]));
    assert_eq!(key(&["cpus=3", "cpus=2"]), key(&[]));
    assert_ne!(key(&[]), key(&["crypt.cipher=aes-ni"]));
    assert_ne!(key(&[]), key(&["replications=2"]));
}

#[test]
fn a_run_reports_progress_then_its_plots_seed_and_reproducer() {
    let app = app();
    let r = post(&app, &["crypt.cipher=aes-ni"]);
    assert_eq!(r.status, 200, "{r:?}");
    let id = json_of(&r)["id"].as_u64().unwrap();
    let s = wait_done(&app, id);
    assert_eq!(s["state"], "done", "{s}");
    assert_eq!(
        (s["seed"].as_u64(), s["replications"].as_u64()),
        (Some(42), Some(10))
    );
    assert_eq!(s["values"]["cipher"], "aes-ni");
    assert_eq!(s["values"]["cipher_rate"], "1432MiB/s");
    assert_eq!(s["command"], "qsim run two-queue-serve.yaml");
    assert!(s["report"].as_str().unwrap().contains("fifo"));
    let plots = |policy: &str| {
        json_of(&respond(
            &app,
            "GET",
            &format!("/api/plots?id={id}&policy={policy}"),
            b"",
        ))
    };
    let (fifo, split, all) = (plots("fifo"), plots("split"), plots("all"));
    for p in [&fifo, &split, &all] {
        assert!(p["percentiles"].as_str().unwrap().starts_with("<svg"));
        assert!(p["stages"].as_str().unwrap().starts_with("<svg"));
        assert!(
            p["failures"].as_str().unwrap().starts_with("<svg"),
            "two-queue has memory"
        );
    }
    let gantt = json_of(&respond(
        &app,
        "GET",
        &format!("/api/gantt?id={id}&policy=split"),
        b"",
    ));
    let svg = gantt["gantt"].as_str().expect("a chart");
    assert!(svg.starts_with("<svg") && svg.contains("policy split") && svg.contains("kcryptd/0"));
    let all = json_of(&respond(
        &app,
        "GET",
        &format!("/api/gantt?id={id}&policy=all"),
        b"",
    ));
    assert_eq!(all, json!({"note": "pick one policy to see its trace"}));
    assert_ne!(fifo["percentiles"], split["percentiles"]);
    assert_eq!(
        respond(&app, "GET", &format!("/api/plots?id={id}&policy=cfq"), b"").status,
        404
    );
    let y = respond(&app, "GET", &format!("/api/scenario.yaml?id={id}"), b"");
    assert_eq!(
        (y.status, y.content_type),
        (200, "text/yaml; charset=utf-8")
    );
    assert_eq!(
        y.headers,
        [(
            "Content-Disposition",
            "attachment; filename=\"two-queue-serve.yaml\"".to_string()
        )]
    );
    let text = String::from_utf8(y.body).unwrap();
    assert!(text.contains("#   --set crypt.cipher=aes-ni\n"), "{text}");
    // The file alone is the scenario the page ran.
    let sc = crate::scenario::load_str("two-queue-serve.yaml", &text).unwrap();
    let ran = app.resolve(&["crypt.cipher=aes-ni".into()]).unwrap();
    assert_eq!(serde_json::to_string(&sc).unwrap(), ran.1);
}

#[test]
fn a_newer_request_supersedes_the_older_one_for_the_page() {
    let app = app();
    let a = json_of(&post(&app, &["replications=3"]))["id"]
        .as_u64()
        .unwrap();
    let b = json_of(&post(&app, &["replications=2"]))["id"]
        .as_u64()
        .unwrap();
    assert_eq!(wait_done(&app, a)["state"], "superseded");
    assert_eq!(wait_done(&app, b)["replications"], 2);
}

#[test]
fn a_scenario_with_variants_runs_its_base_without_them() {
    let runner: jobs::Runner = Box::new(|_: &Scenario, _: &jobs::Progress| jobs::Outcome::Stopped);
    let app = App::with_runner("gfp-atomic-storm", runner).unwrap();
    assert!(app.base.variants.is_empty());
    assert_eq!(app.base_sets[0], "!variants");
    let k = json_of(&respond(&app, "GET", "/api/knobs", b""));
    assert_eq!(k["base_sets"][0], "!variants");
    assert!(
        App::with_runner(
            "no-such-scenario",
            Box::new(|_: &Scenario, _: &jobs::Progress| jobs::Outcome::Stopped)
        )
        .is_err()
    );
}

#[test]
fn a_plot_size_is_clamped_and_a_non_number_refused() {
    let size = |q: &str| plot_size(q).map_err(|r| (r.status, json_of(&r)["error"].clone()));
    assert_eq!(size("id=1"), Ok((1200, 800)), "missing: the files' size");
    assert_eq!(size("w=900&h=600"), Ok((900, 600)));
    assert_eq!(size("w=870.4&h=579.6"), Ok((870, 580)));
    assert_eq!(size("w=0&h=0"), Ok((480, 320)));
    assert_eq!(size("w=-1&h=-1"), Ok((480, 320)));
    assert_eq!(size("w=1e9&h=1e9"), Ok((2400, 1600)));
    assert_eq!(size("w=700"), Ok((700, 800)));
    for q in ["w=abc", "h=abc", "w=", "w=NaN", "h=inf", "w=1e999"] {
        let (status, error) = size(q).unwrap_err();
        assert_eq!(status, 400, "{q}");
        let e = error.as_str().unwrap();
        assert!(e.contains("in CSS px, a number"), "{q}: {e}");
    }
    let app = app();
    let r = respond(&app, "GET", "/api/plots?id=77&w=abc", b"");
    assert_eq!(r.status, 400, "checked before the run is looked up");
    let r = respond(&app, "GET", "/api/gantt?id=77&w=abc", b"");
    assert_eq!(r.status, 400);
}

#[test]
fn the_plots_are_drawn_at_the_size_asked_for() {
    let app = app();
    let id = json_of(&post(&app, &["replications=1"]))["id"]
        .as_u64()
        .unwrap();
    assert_eq!(wait_done(&app, id)["state"], "done");
    let get = |q: &str| json_of(&respond(&app, "GET", &format!("/api/{q}"), b""));
    let p = get(&format!("plots?id={id}&policy=all&w=870&h=580"));
    for name in ["percentiles", "stages"] {
        let svg = p[name].as_str().unwrap();
        assert!(
            svg.starts_with(r#"<svg width="870" height="580" viewBox="0 0 870 580""#),
            "{name}: {svg:.100}"
        );
    }
    // The failures plot's two panels stack in a box this shape, and it comes taller (nine
    // tenths of its width) so their rows stay apart; in a wide box they go side by side.
    let svg = p["failures"].as_str().unwrap();
    assert!(
        svg.starts_with(r#"<svg width="870" height="783""#),
        "{svg:.100}"
    );
    let wide = get(&format!("plots?id={id}&policy=all&w=982&h=480"));
    let svg = wide["failures"].as_str().unwrap();
    assert!(
        svg.starts_with(r#"<svg width="982" height="480""#),
        "{svg:.100}"
    );
    let p = get(&format!("plots?id={id}&policy=all&w=99999&h=1"));
    assert!(
        p["stages"]
            .as_str()
            .unwrap()
            .starts_with(r#"<svg width="2400" height="320""#)
    );
    let g = get(&format!("gantt?id={id}&policy=fifo&w=700&h=5"));
    let svg = g["gantt"].as_str().expect("a chart");
    assert!(
        svg.starts_with(r#"<svg width="700" height=""#),
        "{svg:.100}"
    );
}
