// qsim serve's page: builds the knobs the server lists, sends every change as `--set`s, polls
// the newest run only, and draws the plots the server renders. No library, no network but
// this server.
"use strict";

const S = {
  knobs: [],      // the server's knob list
  initial: {},    // knob id -> value in the file
  edited: {},     // knob id -> the user's value (only knobs the user changed)
  latest: 0,      // id of the newest run request
  shown: 0,       // id of the run whose plots are on the page
  drawSeq: 0,     // increments per plot request, so a slow answer never overwrites a newer one
  present: false, // the projector layout: one plot at a time, large
  slide: "percentiles",  // the plot the projector layout shows (a figure id without "fig-")
  drawn: null,    // the size the plots on the page were asked for: {w, h, zoom} (plotBox)
};

// The server draws each plot at the size of its box, so one SVG unit is one CSS pixel and the
// plots' type keeps its designed size (tick labels 16 px) in any window, instead of shrinking
// with a 1200-px drawing. The projector layout asks for its box divided by PRESENT_ZOOM and
// the browser scales the drawing up by as much: type and lines 1.5 times as large (ticks
// 24 px), unless that would leave fewer than PRESENT_MIN_H units of height for the plot's
// panels; then the zoom is less, never below 1 (at 1280x720 about 1.23: ticks 20 px).
const PRESENT_ZOOM = 1.5;
const PRESENT_MIN_H = 480;
// The projector layout's plot height: the window less this many ems of header and buttons
// (the same as page.css's `max-height: calc(100vh - 6em)`).
const PRESENT_CHROME_EM = 6;
// Outside it, a plot is as wide as its box and two thirds as tall, the files' 1200x800 shape.
const ASPECT = 2 / 3;

// This page's token: the server stops this page's older run for its newer one, never another
// page's (randomUUID needs a secure context; a page opened over the LAN falls back).
const PAGE = (window.crypto && crypto.randomUUID) ? crypto.randomUUID()
  : Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

// A log slider position (0..1000) and a value in bytes (or bytes/s) between min and max.
const toPos = (k, v) => Math.round(1000 * Math.log(v / k.min) / Math.log(k.max / k.min));
const fromPos = (k, p) => k.min * Math.pow(k.max / k.min, p / 1000);

function formatValue(k, x) {
  if (k.kind === "size") {
    const mib = Math.max(1, Math.round(x / 1048576));
    return mib % 1024 === 0 ? `${mib / 1024}GiB` : `${mib}MiB`;
  }
  const mb = x / 1e6;
  return mb >= 1000 ? `${+(mb / 1000).toPrecision(3)}GB/s` : `${+mb.toPrecision(3)}MB/s`;
}

// Bytes (or bytes/s) of a value as written, for the slider only; NaN when it cannot tell.
function parseValue(text) {
  const m = /^\s*([0-9.]+)\s*([kKMGT]?i?)B(\/s)?\s*$/.exec(text || "");
  if (!m) return NaN;
  const f = { "": 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, KI: 1024,
    Mi: 1048576, Gi: 1073741824, Ti: 1099511627776 }[m[2]];
  return parseFloat(m[1]) * (f || NaN);
}

function knobControl(k) {
  const box = el("div", { class: "knob", id: `knob-${k.id}`, title: k.help || "" });
  box.append(el("label", { for: `in-${k.id}`, text: k.label }));
  let input;
  if (k.kind === "select") {
    input = el("select", { id: `in-${k.id}` });
    for (const o of k.options) {
      const opt = el("option", { value: o.value, text: o.label });
      // An entry this scenario refuses stays listed, greyed, with the reason on hover and
      // under the knob: every entry that can be picked runs.
      if (o.why) { opt.disabled = true; opt.title = o.why; }
      input.append(opt);
    }
  } else if (k.kind === "checks") {
    input = el("div", { class: "checks", id: `in-${k.id}` });
    for (const o of k.options) {
      const c = el("input", { type: "checkbox", value: o.value });
      if (o.why) c.disabled = true;
      input.append(el("label", { title: o.why || o.title }, c, ` ${o.label}`));
    }
  } else if (k.kind === "number") {
    input = el("input", { type: "number", id: `in-${k.id}`, min: k.min, max: k.max, step: 1 });
  } else {
    input = el("input", { type: "text", id: `in-${k.id}`, spellcheck: "false" });
  }
  box.append(input);
  let slider = null;
  if (k.kind === "rate" || k.kind === "size") {
    slider = el("input", { type: "range", min: 0, max: 1000, id: `slider-${k.id}`,
      "aria-label": `${k.label} slider` });
    slider.addEventListener("input", () => { input.value = formatValue(k, fromPos(k, +slider.value)); });
    slider.addEventListener("change", () => changed(k));
    box.append(slider);
  }
  // A typed value moves the slider too (when the page can read it), so the two never disagree.
  input.addEventListener("change", () => {
    if (slider) placeSlider(k, slider, input.value);
    changed(k);
  });
  box.append(el("small", { text: k.help || "" }));
  const refused = refusedText(k);
  if (refused) box.append(el("small", { class: "refused", text: refused }));
  return box;
}

// `why` with `value` written "…" where it stands as a whole word (kernel "5.9" in "kernel 5.9
// has no…", not the "1" inside "6.12"), so that alike reasons group.
function withoutName(why, value) {
  const esc = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return why.replace(new RegExp(`(^|[^\\w.])${esc}(?![\\w.])`, "g"), "$1…");
}

// "not with this scenario: 4.19, 5.4 (why); 2.6.30 (why)": the refused entries grouped by
// reason.
function refusedText(k) {
  const byWhy = new Map();
  for (const o of k.options || []) {
    if (!o.why) continue;
    const why = withoutName(o.why, o.value);
    byWhy.set(why, [...(byWhy.get(why) || []), o.value]);
  }
  if (!byWhy.size) return "";
  const parts = [...byWhy].map(([why, values]) => `${values.join(", ")} (${why})`);
  return `not with this scenario: ${parts.join("; ")}`;
}

function readKnob(k) {
  const input = $(`in-${k.id}`);
  if (k.kind === "checks") {
    return [...input.querySelectorAll("input:checked")].map((c) => c.value);
  }
  return input.value.trim();
}

function showKnob(k, value) {
  const input = $(`in-${k.id}`);
  if (k.kind === "checks") {
    for (const c of input.querySelectorAll("input")) c.checked = (value || []).includes(c.value);
  } else {
    input.value = value === null || value === undefined ? "" : value;
  }
  const slider = $(`slider-${k.id}`);
  if (slider) placeSlider(k, slider, value);
}

// Puts a slider where the value written as `text` lies (left alone if the page cannot read it).
function placeSlider(k, slider, text) {
  const x = parseValue(String(text));
  if (isFinite(x) && x > 0) slider.value = Math.min(1000, Math.max(0, toPos(k, x)));
}

// A knob's value as the YAML of a --set. A menu entry or a checked box is text and goes
// quoted (JSON's string syntax is YAML's): kernel "6.12" is not the number 6.12, patch "1" is
// the name Mel gave it. A typed value goes as typed, as on the command line.
const asYaml = (k, v) => {
  if (k.kind === "checks") return `[${v.map((x) => JSON.stringify(x)).join(", ")}]`;
  if (k.kind === "select") return JSON.stringify(v);
  return String(v);
};
// Knob values compared as the page reads them back: a list, or text.
const norm = (v) => (Array.isArray(v) ? v : v === null || v === undefined ? "" : String(v));
const same = (a, b) => JSON.stringify(norm(a)) === JSON.stringify(norm(b));

function changed(k) {
  const v = readKnob(k);
  if (same(v, S.initial[k.id])) delete S.edited[k.id]; else S.edited[k.id] = v;
  $(`knob-${k.id}`).classList.toggle("edited", k.id in S.edited);
  noteOverrides();
  saveState();
  submit();
}

// A cipher preset sets both rates; a speed typed after it wins, and the menu says so rather
// than naming a preset whose rates no longer run.
function noteOverrides() {
  const box = $("knob-cipher");
  if (!box) return;
  let note = box.querySelector("small.override");
  if (!note) {
    note = el("small", { class: "override" });
    box.append(note);
  }
  const speed = S.edited.cipher_rate;
  note.textContent = speed ? `its rates replaced by the cipher speed below (${speed})` : "";
  note.hidden = !speed;
}

// The view in the address, `#policy=all&kernel=2.6.32&patches=3,5`: the policy shown and every
// knob the user changed, so a link (a teacher's prepared view) opens the same page.
function saveState() {
  const q = new URLSearchParams();
  q.set("policy", $("policy").value);
  if (S.present) q.set("present", S.slide);
  for (const k of S.knobs) {
    if (!(k.id in S.edited)) continue;
    const v = S.edited[k.id];
    q.set(k.id, Array.isArray(v) ? v.join(",") : v);
  }
  history.replaceState(null, "", `#${q}`);
}

// Applies the address's view (see saveState) to the controls, before the first run.
function loadState() {
  const q = new URLSearchParams(location.hash.slice(1));
  const policy = q.get("policy");
  if (policy && [...$("policy").options].some((o) => o.value === policy)) $("policy").value = policy;
  if (q.has("present")) {
    S.present = true;
    if ($(`fig-${q.get("present")}`)) S.slide = q.get("present");
  }
  for (const k of S.knobs) {
    if (!q.has(k.id)) continue;
    const raw = q.get(k.id);
    showKnob(k, k.kind === "checks" ? raw.split(",").filter((x) => x) : raw);
    const v = readKnob(k);
    if (!same(v, S.initial[k.id])) S.edited[k.id] = v;
    $(`knob-${k.id}`).classList.toggle("edited", k.id in S.edited);
  }
}

// The --sets of the current knob state: every path of every knob the user changed, in the
// page's knob order.
function sets() {
  const out = [];
  for (const k of S.knobs) {
    if (!(k.id in S.edited)) continue;
    for (const p of k.paths) out.push(`${p}=${asYaml(k, S.edited[k.id])}`);
  }
  return out;
}

function showError(text) {
  $("error-text").textContent = text;
  $("error").hidden = false;
  $("plots").hidden = true;
  $("slides").hidden = true;
  $("plots").classList.remove("stale");
  $("status").textContent = "";
}

async function submit() {
  const body = JSON.stringify({ sets: sets(), page: PAGE });
  // Until the newest state's result arrives, the plots on view stay, dimmed: nothing older is
  // shown as if it were current, and nothing jumps.
  S.latest = -1;
  $("plots").classList.add("stale");
  $("status").textContent = "resolving…";
  let r, j;
  try {
    r = await fetch("/api/run", { method: "POST", headers: { "Content-Type": "application/json" }, body });
    j = await r.json();
  } catch (e) {
    showError(`the server did not answer: ${e}`);
    return;
  }
  if (body !== JSON.stringify({ sets: sets(), page: PAGE })) return;  // a newer change is on its way
  if (!r.ok) { S.latest = 0; showError(j.error); return; }
  S.latest = j.id;
  poll(j.id);
}

async function poll(id) {
  while (id === S.latest) {
    let s;
    try {
      s = await (await fetch(`/api/status?id=${id}`)).json();
    } catch (e) {
      showError(`the server did not answer: ${e}`);
      return;
    }
    if (id !== S.latest || s.state === "superseded") return;
    if (s.state === "done") { await showResult(id, s); return; }
    if (s.state === "failed" || s.error) { showError(s.error); return; }
    const st = $("status");
    st.textContent = "";
    if (s.state === "running") {
      st.append(`running: ${s.done} / ${s.total} replications `,
        el("progress", { max: s.total, value: s.done }));
    } else {
      st.textContent = "queued behind a run of this page that is stopping, or of another page…";
    }
    await sleep(100);
  }
}

async function showResult(id, s) {
  for (const k of S.knobs) if (!(k.id in S.edited)) showKnob(k, s.values[k.id]);
  S.shown = id;
  await drawPlots();
  if (id !== S.latest) return;
  $("meta").textContent = `seed ${s.seed}, ${s.replications} replication(s) per policy ` +
    `(${s.policies.join(", ")}), run in ${(s.elapsed_ms / 1000).toFixed(1)} s wall clock.`;
  const rep = $("reproduce");
  rep.textContent = "";
  rep.append("Reproduce: download ",
    el("a", { href: `/api/scenario.yaml?id=${id}`, id: "yaml-link", text: "the scenario YAML" }),
    " and run ", el("code", { id: "command", text: s.command }));
  $("report").textContent = s.report;
  $("status").textContent = `up to date (run ${id})`;
}

// The size, in SVG units, to ask the plots for: {w, h, zoom}, the box a plot has on the page
// (the content box of a figure; in the projector layout the screen below the buttons) over
// the zoom the browser will draw it at. Measured with the plots shown, before the first draw
// too: unhiding and hiding again in one task lays out but paints nothing.
function plotBox() {
  const plots = $("plots");
  const hidden = plots.hidden;
  plots.hidden = false;
  const px = (v) => parseFloat(v) || 0;
  const fig = getComputedStyle($("fig-percentiles"));
  const w = plots.clientWidth - px(fig.paddingLeft) - px(fig.paddingRight) -
    px(fig.borderLeftWidth) - px(fig.borderRightWidth);
  const em = px(getComputedStyle(plots).fontSize);
  plots.hidden = hidden;
  if (!S.present) return { w: Math.floor(w), h: Math.round(Math.floor(w) * ASPECT), zoom: 1 };
  const h = innerHeight - PRESENT_CHROME_EM * em;
  const zoom = Math.max(1, Math.min(PRESENT_ZOOM, h / PRESENT_MIN_H));
  return { w: Math.floor(w / zoom), h: Math.floor(h / zoom), zoom };
}

// Redraws the plots on view when their box has changed size (a resized window, the projector
// layout entered or left), unless a run is on its way (its plots will come at the new size).
function redrawIfResized() {
  if (!S.shown || S.shown !== S.latest || !S.drawn) return;
  const b = plotBox();
  if (Math.abs(b.w - S.drawn.w) <= 2 && Math.abs(b.h - S.drawn.h) <= 2) return;
  drawPlots();
}

// Draws the shown run's plots for the selected policy, at the size of their box.
async function drawPlots() {
  const id = S.shown;
  if (!id) return;
  const seq = ++S.drawSeq;
  const policy = encodeURIComponent($("policy").value);
  const box = plotBox();
  let p;
  try {
    const r = await fetch(`/api/plots?id=${id}&policy=${policy}&w=${box.w}&h=${box.h}`);
    p = await r.json();
    if (!r.ok) throw new Error(p.error);
  } catch (e) {
    if (seq === S.drawSeq) showError(`cannot draw the plots: ${e.message || e}`);
    return;
  }
  if (seq !== S.drawSeq || id !== S.latest) return;
  S.drawn = box;
  $("plot-percentiles").innerHTML = p.percentiles;
  $("plot-stages").innerHTML = p.stages;
  $("fig-failures").hidden = !p.failures;
  $("plot-failures").innerHTML = p.failures || "";
  const g = $("plot-gantt");
  g.textContent = "";
  g.append(el("span", { class: "note", text: "trace: drawing…" }));
  $("error").hidden = true;
  $("plots").hidden = false;
  $("plots").classList.remove("stale");
  showSlide(0);
  drawGantt(id, policy, seq, box.w);
}

// The trace's Gantt chart, in its own request so a slow trace never holds up the plots; `w`
// units wide, as the plots (it is as tall as its lanes need).
async function drawGantt(id, policy, seq, w) {
  let p;
  try {
    p = await (await fetch(`/api/gantt?id=${id}&policy=${policy}&w=${w}`)).json();
  } catch (e) {
    p = { note: `trace: ${e}` };
  }
  if (seq !== S.drawSeq || id !== S.latest) return;
  const g = $("plot-gantt");
  if (p.gantt) { g.innerHTML = p.gantt; return; }
  g.textContent = "";
  g.append(el("span", { class: "note", text: p.note || p.error }));
}

// The figures the plots show now (the failures plot only when the run has failures).
const slides = () => [...$("plots").querySelectorAll("figure")].filter((f) => !f.hidden);

// Applies the layout: in the projector layout only the current plot shows, `step` plots on
// from the one stored (wrapping), with its caption between the previous/next buttons.
function showSlide(step) {
  document.body.classList.toggle("present", S.present);
  $("present").setAttribute("aria-pressed", String(S.present));
  $("present").textContent = S.present ? "back to the knobs" : "present (one plot at a time)";
  $("slides").hidden = !S.present || $("plots").hidden;
  const figs = slides();
  let i = Math.max(0, figs.findIndex((f) => f.id === `fig-${S.slide}`));
  if (figs.length) i = (i + step + figs.length) % figs.length;
  figs.forEach((f, j) => f.classList.toggle("current", j === i));
  if (figs[i]) {
    S.slide = figs[i].id.slice(4);
    $("slide-name").textContent = figs[i].querySelector("figcaption").textContent;
  }
  if (step) saveState();
}

function layoutControls() {
  $("present").addEventListener("click", () => {
    S.present = !S.present;
    showSlide(0);
    saveState();
    redrawIfResized();
  });
  // A resized window redraws the plots at their new size once it has stopped moving.
  let resizing = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(redrawIfResized, 200);
  });
  $("prev").addEventListener("click", () => showSlide(-1));
  $("next").addEventListener("click", () => showSlide(1));
  // Arrow keys (and PageUp/PageDown, what a presenter's clicker sends) turn the plots, unless
  // a knob has the keyboard.
  document.addEventListener("keydown", (e) => {
    if (!S.present || (e.target.closest && e.target.closest("input, select, textarea"))) return;
    const step = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 }[e.key];
    if (step) { e.preventDefault(); showSlide(step); }
  });
}

async function init() {
  const k = await (await fetch("/api/knobs")).json();
  document.title = `qsim serve: ${k.scenario}`;
  $("scenario").textContent = k.scenario;
  $("description").textContent = k.description +
    (k.base_sets.length ? ` (the page runs no variants: ${k.base_sets.join(" ")})` : "");
  const pol = $("policy");
  for (const p of k.policies) pol.append(el("option", { value: p, text: p }));
  pol.append(el("option", { value: "all", text: "all (compare)" }));
  // The comparison first: it is what the page is for.
  pol.value = "all";
  pol.addEventListener("change", () => { saveState(); drawPlots(); });
  S.knobs = k.knobs;
  const list = $("knob-list");
  for (const knob of k.knobs) {
    list.append(knobControl(knob));
    S.initial[knob.id] = knob.value;
    showKnob(knob, knob.value);
  }
  $("reset").addEventListener("click", () => {
    S.edited = {};
    for (const knob of S.knobs) {
      showKnob(knob, S.initial[knob.id]);
      $(`knob-${knob.id}`).classList.remove("edited");
    }
    noteOverrides();
    saveState();
    submit();
  });
  layoutControls();
  loadState();
  showSlide(0);
  noteOverrides();
  submit();
}

init();
