//! `published:`: the figures a measurement published, their source, and the rule that says
//! whether a simulated value reproduces each, for `qsim reproduce`.
//!
//! ```yaml
//! published:
//!   source: "Hubbard, 2019 fio run (docs/model/measurements.md §7)"
//!   replications: 10            # what `qsim reproduce` runs (default: the scenario's)
//!   rows:                       # one published figure each
//!     - name: "read IOPS"
//!       variant: baseline       # optional when the scenario has no variants
//!       policy: none            # optional when the run has one policy
//!       metric: read_iops       # a key of the metrics registry (`qsim reproduce` checks it)
//!       value: 191500           # the published mean, or the centre of a published range
//!       stddev: 1500            # optional
//!       within: 5%              # or factor: 2, range: [lo, hi], at_least: x, at_most: x
//!       why: "..."              # optional: why the model misses it, printed when it does
//!   claims:                     # relations between two runs
//!     - name: "2.6.32-rc6 at least 1.8x slower than 2.6.30"
//!       metric: elapsed_s
//!       ratio: ["2.6.32-rc6", "2.6.30"]   # run a over run b ("variant" or "variant/policy")
//!       at_least: 1.8                      # the same rules as a row, on the ratio
//!       why: "..."                         # as a row's
//!     - name: "dm-crypt at 13 % of the plain ramdisk's MB/s"
//!       metric: read_mib_s
//!       ratio: ["dm-crypt", "none"]
//!       value: 0.1306                      # the published ratio (1 when absent)
//!       within: 20%                        # judged against `value`
//!     - name: "submit_from_crypt_cpus faster than the default"
//!       metric: read_mib_s
//!       better: ["dm-crypt+submit_from_crypt_cpus", "dm-crypt"]  # paired, beyond noise
//!     - name: "patch 6 within noise"
//!       metric: elapsed_s
//!       noise: ["2.6.32-rc6 + 1..6", "2.6.32-rc6"]  # the paired 95 % interval holds zero
//!     - name: "low_latency on varies more than off"
//!       metric: elapsed_s
//!       spread: ["ll=1", "ll=0"]  # stddev(a) / stddev(b) over replications
//!       at_least: 1.01            # the same rules, on the ratio of the two spreads
//! ```
//!
//! Every row and ratio claim has exactly one rule. A row's rule applies to the simulated mean
//! over replications; `within: 5%` means |sim / published − 1| ≤ 5 %, `factor: 2` means the
//! ratio lies in [1/2, 2], `range` is inclusive. A ratio claim's `within` and `factor` are
//! judged against its `value`, the published ratio (1 when absent); `range`, `at_least` and
//! `at_most` against the ratio itself. A ratio whose second run is zero and first is
//! not is infinite: only `at_least` can hold for it. A `better` claim holds when run a is
//! better than run b on the metric (lower or higher, as the registry says) and the paired 95 %
//! interval of the difference excludes zero: an order that a tie does not satisfy. A `spread` claim needs at least two
//! replications (`published.replications`, else the scenario's); its stddevs are the sample
//! standard deviations over replications, as the report prints them. Runs are named as the report names them; a
//! name that matches no run is refused at its line, with the runs listed. The scenario layer
//! sits below the report, so metric keys are checked against the list the caller passes (the
//! `metrics` argument of [`super::resolve_published`]); `qsim check` and `qsim run` check
//! everything else.
//!
//! A `why:` is the scenario author's sentence on why the model misses a figure or claim and
//! which measurement would decide it; `qsim reproduce` prints it under the miss, and flags it
//! as out of date when the figure reproduces after all.

use super::Error;
use super::check::{Checker, at, loc};
use super::schema::{Capped, raw_section};
use super::types::Scenario;
use serde_saphyr::{Location, Spanned};

/// Most rows or claims one `published:` may list.
pub const MAX_PUBLISHED_ROWS: usize = 256;

raw_section! {
    /// `published:`: the source, the replications to run, the rows and the claims.
    pub struct RawPublished {
        /// Where the figures come from.
        [value] source: String,
        /// Replications `qsim reproduce` runs.
        [value] replications: u32,
        /// One published figure each.
        [value] rows: Capped<Spanned<RawRow>, MAX_PUBLISHED_ROWS>,
        /// Relations between two runs.
        [value] claims: Capped<Spanned<RawClaim>, MAX_PUBLISHED_ROWS>,
    }
}

raw_section! {
    /// One row of `published.rows`.
    pub struct RawRow {
        /// What the figure is.
        [value] name: String,
        /// The variant it belongs to.
        [value] variant: String,
        /// The policy it belongs to.
        [value] policy: String,
        /// The metrics-registry key.
        [value] metric: String,
        /// The published value.
        [value] value: f64,
        /// The published standard deviation.
        [value] stddev: f64,
        /// Rule: relative tolerance, `5%`.
        [value] within: String,
        /// Rule: at most this factor either way.
        [value] factor: f64,
        /// Rule: inside `[lo, hi]`.
        [value] range: Vec<f64>,
        /// Rule: at least this.
        [value] at_least: f64,
        /// Rule: at most this.
        [value] at_most: f64,
        /// Why the model misses the figure, printed when it does.
        [value] why: String,
    }
}

raw_section! {
    /// One claim of `published.claims`.
    pub struct RawClaim {
        /// What the claim says.
        [value] name: String,
        /// The metrics-registry key.
        [value] metric: String,
        /// Two runs whose mean ratio the rule judges.
        [value] ratio: Vec<Spanned<String>>,
        /// Two runs whose paired difference should be within noise.
        [value] noise: Vec<Spanned<String>>,
        /// Two runs whose ratio of standard deviations over replications the rule judges.
        [value] spread: Vec<Spanned<String>>,
        /// Two runs, the first better than the second beyond noise (paired).
        [value] better: Vec<Spanned<String>>,
        /// The published ratio a `ratio` claim's `within` or `factor` is judged against.
        [value] value: f64,
        /// Rule on the ratio: relative tolerance around `value` (1 when absent), `5%`.
        [value] within: String,
        /// Rule on the ratio: at most this factor either way of 1.
        [value] factor: f64,
        /// Rule on the ratio: inside `[lo, hi]`.
        [value] range: Vec<f64>,
        /// Rule on the ratio: at least this.
        [value] at_least: f64,
        /// Rule on the ratio: at most this.
        [value] at_most: f64,
        /// Why the model misses the claim, printed when it does.
        [value] why: String,
    }
}

/// A run of the scenario as the report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRef {
    /// The variant (`None` without variants).
    pub variant: Option<String>,
    /// The policy.
    pub policy: String,
}

/// What a simulated value (or a ratio of two) must satisfy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// |x / target − 1| ≤ this fraction.
    Within(f64),
    /// x / target in [1 / f, f].
    Factor(f64),
    /// lo ≤ x ≤ hi.
    Range(f64, f64),
    /// x ≥ this.
    AtLeast(f64),
    /// x ≤ this.
    AtMost(f64),
}

impl Rule {
    /// Whether `x` satisfies the rule against `target` (the published value; 1 for a ratio).
    /// A NaN never holds; +∞ (a ratio over zero) holds only `at_least`.
    pub fn holds(self, x: f64, target: f64) -> bool {
        if x == f64::INFINITY {
            return matches!(self, Rule::AtLeast(_));
        }
        if !x.is_finite() {
            return false;
        }
        match self {
            Rule::Within(f) => target != 0.0 && (x / target - 1.0).abs() <= f + 1e-12,
            Rule::Factor(f) => {
                target != 0.0 && {
                    let q = x / target;
                    q >= 1.0 / f - 1e-12 && q <= f + 1e-12
                }
            }
            Rule::Range(lo, hi) => x >= lo && x <= hi,
            Rule::AtLeast(v) => x >= v,
            Rule::AtMost(v) => x <= v,
        }
    }

    /// The rule in words: `within 5%`, `factor 2`, `in [347, 478]`, `>= 1.8`, `<= 0.1`.
    pub fn describe(self) -> String {
        match self {
            Rule::Within(f) => format!("within {}%", trim(f * 100.0)),
            Rule::Factor(f) => format!("factor {}", trim(f)),
            Rule::Range(lo, hi) => format!("in [{}, {}]", trim(lo), trim(hi)),
            Rule::AtLeast(v) => format!(">= {}", trim(v)),
            Rule::AtMost(v) => format!("<= {}", trim(v)),
        }
    }
}

/// A number without trailing zeros.
fn trim(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// One published figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What the figure is.
    pub name: String,
    /// The run it is compared with.
    pub run: RunRef,
    /// The metrics-registry key.
    pub metric: String,
    /// The published value.
    pub value: f64,
    /// The published standard deviation, when given.
    pub stddev: Option<f64>,
    /// The verdict rule on the simulated mean.
    pub rule: Rule,
    /// Why the model misses it (the scenario's words, whitespace collapsed), when given.
    pub why: Option<String>,
}

/// What a claim compares.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimKind {
    /// mean(a) / mean(b) must satisfy the rule against the target (the published ratio; 1
    /// when none was given).
    Ratio(Rule, f64),
    /// The paired 95 % interval of a − b must hold zero.
    Noise,
    /// stddev(a) / stddev(b) over replications must satisfy the rule (against 1).
    Spread(Rule),
    /// a must be better than b on the metric, the paired 95 % interval excluding zero.
    Better,
}

/// A published relation between two runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// What the claim says.
    pub name: String,
    /// The metrics-registry key.
    pub metric: String,
    /// The first run.
    pub a: RunRef,
    /// The second run.
    pub b: RunRef,
    /// Ratio, noise, spread or better.
    pub kind: ClaimKind,
    /// Why the model misses it (the scenario's words, whitespace collapsed), when given.
    pub why: Option<String>,
}

/// A resolved `published:` section.
#[derive(Debug, Clone, PartialEq)]
pub struct Published {
    /// Where the figures come from.
    pub source: String,
    /// Replications `qsim reproduce` runs (the scenario's when absent).
    pub replications: Option<u32>,
    /// The rows, in file order.
    pub rows: Vec<Row>,
    /// The claims, in file order.
    pub claims: Vec<Claim>,
}

/// How to write a rule.
const RULE_HINT: &str = "give exactly one rule: `within: 5%`, `factor: 2`, `range: [lo, hi]`, \
                         `at_least: x` or `at_most: x`";

/// Resolves `published:` against the resolved scenario `sc`; with `metrics`, every metric key
/// must be one of them (the caller's registry).
pub(crate) fn published(
    c: &Checker,
    raw: &Spanned<RawPublished>,
    sc: &Scenario,
    metrics: Option<&[&str]>,
) -> Result<Published, Error> {
    let p = &raw.value;
    let Some(source) = &p.source else {
        return Err(c.at("published.source", raw.referenced).missing(
            "the published figures have no `source`",
            "say where they come from, e.g. `source: \"Hubbard, 2019 fio run\"`",
        ));
    };
    let replications = match &p.replications {
        Some(r) if !(1..=1000).contains(&r.value) => {
            return Err(c.at("published.replications", r).bad_value(
                format!("{} replications", r.value),
                "give 1 to 1000 replications",
            ));
        }
        r => r.as_ref().map(|r| r.value),
    };
    let mut rows = Vec::new();
    if let Some(list) = &p.rows {
        c.too_long(
            list,
            "published.rows",
            "rows",
            "split the figures over scenarios",
        )?;
        for (i, r) in list.value.iter().enumerate() {
            rows.push(row(c, r, &format!("published.rows[{i}]"), sc, metrics)?);
        }
    }
    // What `qsim reproduce` runs, for the claims that need several replications.
    let reps = replications.unwrap_or(sc.replications);
    let mut claims = Vec::new();
    if let Some(list) = &p.claims {
        c.too_long(
            list,
            "published.claims",
            "claims",
            "split the claims over scenarios",
        )?;
        for (i, r) in list.value.iter().enumerate() {
            let here = format!("published.claims[{i}]");
            claims.push(claim(c, r, &here, sc, metrics, reps)?);
        }
    }
    if rows.is_empty() && claims.is_empty() {
        return Err(c.at("published", raw.referenced).missing(
            "the published section has no rows and no claims",
            "add `rows:` with one published figure each, or `claims:`",
        ));
    }
    Ok(Published {
        source: source.value.clone(),
        replications,
        rows,
        claims,
    })
}

/// The name, or an error at the item.
fn name(
    c: &Checker,
    n: &Option<Spanned<String>>,
    here: Location,
    path: &str,
) -> Result<String, Error> {
    match n {
        Some(s) if !s.value.trim().is_empty() => Ok(s.value.clone()),
        _ => Err(c.at(&at(path, "name"), loc(n).or(Some(here))).missing(
            "the entry has no `name`",
            "name the published figure, e.g. `name: \"read IOPS\"`",
        )),
    }
}

/// Longest `why:`, characters: a few sentences, not a chapter (the docs hold the chapter).
pub const MAX_WHY_CHARS: usize = 1000;

/// The `why:` of a row or claim: its words with runs of whitespace (a folded YAML string's
/// line breaks) made single spaces; refused when empty or longer than [`MAX_WHY_CHARS`].
fn why(c: &Checker, w: &Option<Spanned<String>>, path: &str) -> Result<Option<String>, Error> {
    let Some(w) = w else {
        return Ok(None);
    };
    let text = w.value.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err(c.at(&at(path, "why"), w).bad_value(
            "`why` is empty",
            "say in a sentence why the model misses the figure, or leave `why` out",
        ));
    }
    let n = text.chars().count();
    if n > MAX_WHY_CHARS {
        return Err(c.at(&at(path, "why"), w).bad_value(
            format!("`why` is {n} characters long"),
            format!(
                "keep it to {MAX_WHY_CHARS} characters: a sentence or two, with a pointer to \
                 the docs that explain the rest"
            ),
        ));
    }
    Ok(Some(text))
}

/// The metric key, checked against `metrics` when given.
fn metric(
    c: &Checker,
    m: &Option<Spanned<String>>,
    here: Location,
    path: &str,
    metrics: Option<&[&str]>,
) -> Result<String, Error> {
    let Some(m) = m else {
        return Err(c.at(&at(path, "metric"), here).missing(
            "the entry has no `metric`",
            "name a key of the metrics registry (`src/report/metrics.rs`), e.g. `metric: read_iops`",
        ));
    };
    if let Some(keys) = metrics
        && !keys.contains(&m.value.as_str())
    {
        let hint = match super::suggestion(&m.value, keys) {
            Some(s) => format!("did you mean `{s}`? metrics: {}", keys.join(", ")),
            None => format!("metrics: {}", keys.join(", ")),
        };
        return Err(c.at(&at(path, "metric"), m).unknown(
            format!("unknown metric `{}`", super::shorten(&m.value)),
            hint,
        ));
    }
    Ok(m.value.clone())
}

/// The one rule among the given fields.
#[allow(clippy::too_many_arguments)]
fn rule(
    c: &Checker,
    within: &Option<Spanned<String>>,
    factor: &Option<Spanned<f64>>,
    range: &Option<Spanned<Vec<f64>>>,
    at_least: &Option<Spanned<f64>>,
    at_most: &Option<Spanned<f64>>,
    here: Location,
    path: &str,
) -> Result<Rule, Error> {
    let given = [
        ("within", loc(within)),
        ("factor", loc(factor)),
        ("range", loc(range)),
        ("at_least", loc(at_least)),
        ("at_most", loc(at_most)),
    ];
    let mut present = given.iter().filter(|(_, l)| l.is_some());
    let Some(&(first, _)) = present.next() else {
        return Err(c
            .at(&at(path, "within"), here)
            .missing("the entry has no verdict rule", RULE_HINT));
    };
    if let Some(&(second, l)) = present.next() {
        return Err(c.at(&at(path, second), l).conflict(
            format!("`{second}` and `{first}` are two verdict rules"),
            RULE_HINT,
        ));
    }
    let finite = |v: &Spanned<f64>, field: &str, positive: bool| {
        if !v.value.is_finite() || (positive && v.value <= 0.0) {
            Err(c.at(&at(path, field), v).bad_value(
                format!("`{field}` is {}", v.value),
                "give a finite number (a factor or tolerance above zero)",
            ))
        } else {
            Ok(v.value)
        }
    };
    match first {
        "within" => within_rule(c, within.as_ref().expect("present"), path),
        "factor" => {
            let f = factor.as_ref().expect("present");
            let x = finite(f, "factor", true)?;
            if x < 1.0 {
                return Err(c.at(&at(path, "factor"), f).bad_value(
                    format!("`factor: {x}` is below 1"),
                    "a factor bounds the ratio either way: give 1 or more, e.g. `factor: 2`",
                ));
            }
            Ok(Rule::Factor(x))
        }
        "range" => range_rule(c, range.as_ref().expect("present"), path),
        "at_least" => {
            let v = at_least.as_ref().expect("present");
            Ok(Rule::AtLeast(not_negative(
                c,
                v,
                "at_least",
                path,
                finite(v, "at_least", false)?,
            )?))
        }
        _ => {
            let v = at_most.as_ref().expect("present");
            Ok(Rule::AtMost(not_negative(
                c,
                v,
                "at_most",
                path,
                finite(v, "at_most", false)?,
            )?))
        }
    }
}

/// Refuses a negative bound: every metric and every ratio a verdict judges is at least 0, so
/// `at_least: -1` would always hold and `at_most: -1` never.
fn not_negative(
    c: &Checker,
    v: &Spanned<f64>,
    field: &str,
    path: &str,
    x: f64,
) -> Result<f64, Error> {
    if x >= 0.0 {
        return Ok(x);
    }
    let always = if field == "at_least" {
        "always"
    } else {
        "never"
    };
    Err(c.at(&at(path, field), v).bad_value(
        format!(
            "`{field}: {x}` is negative: metrics and ratios are never below 0, so the verdict \
             would {always} hold"
        ),
        format!("give a bound of 0 or more, e.g. `{field}: 1.5`"),
    ))
}

/// `within: 5%`.
fn within_rule(c: &Checker, w: &Spanned<String>, path: &str) -> Result<Rule, Error> {
    let pct = w
        .value
        .trim()
        .strip_suffix('%')
        .and_then(|n| n.trim().parse::<f64>().ok())
        .filter(|x| x.is_finite() && *x >= 0.0);
    match pct {
        Some(x) => Ok(Rule::Within(x / 100.0)),
        None => Err(c.at(&at(path, "within"), w).bad_value(
            format!("`within: {}` is not a percentage", super::shorten(&w.value)),
            "write the tolerance as a percentage, e.g. `within: 5%`",
        )),
    }
}

/// `range: [lo, hi]`.
fn range_rule(c: &Checker, r: &Spanned<Vec<f64>>, path: &str) -> Result<Rule, Error> {
    match r.value.as_slice() {
        [lo, hi] if lo.is_finite() && hi.is_finite() && 0.0 <= *lo && lo <= hi => {
            Ok(Rule::Range(*lo, *hi))
        }
        [lo, hi] if lo.is_finite() && hi.is_finite() && *lo < 0.0 && lo <= hi => {
            Err(c.at(&at(path, "range"), r).bad_value(
                format!("the range [{lo}, {hi}] reaches below 0, where no metric or ratio goes"),
                "give bounds of 0 or more, the lower first, e.g. `range: [347, 478]`",
            ))
        }
        [lo, hi] if lo > hi => Err(c.at(&at(path, "range"), r).bad_value(
            format!("the range [{lo}, {hi}] is inverted: its lower bound comes second"),
            format!("write the lower first: `range: [{hi}, {lo}]`"),
        )),
        _ => Err(c.at(&at(path, "range"), r).bad_value(
            "a range is two finite numbers, the lower first",
            "write e.g. `range: [347, 478]`",
        )),
    }
}

/// One row.
fn row(
    c: &Checker,
    r: &Spanned<RawRow>,
    path: &str,
    sc: &Scenario,
    metrics: Option<&[&str]>,
) -> Result<Row, Error> {
    let here = r.referenced;
    let v = &r.value;
    let name = name(c, &v.name, here, path)?;
    let metric = metric(c, &v.metric, here, path, metrics)?;
    let Some(value) = &v.value else {
        return Err(c.at(&at(path, "value"), here).missing(
            "the row has no published `value`",
            "give the published mean, or the centre of a published range",
        ));
    };
    if !value.value.is_finite() {
        return Err(c.at(&at(path, "value"), value).bad_value(
            "the value is not a finite number",
            "give the published mean",
        ));
    }
    let stddev = match &v.stddev {
        Some(s) if !s.value.is_finite() || s.value < 0.0 => {
            return Err(c.at(&at(path, "stddev"), s).bad_value(
                "a standard deviation is a finite number, at least 0",
                "e.g. `stddev: 8`",
            ));
        }
        s => s.as_ref().map(|s| s.value),
    };
    let rule = rule(
        c,
        &v.within,
        &v.factor,
        &v.range,
        &v.at_least,
        &v.at_most,
        here,
        path,
    )?;
    let run = run_of(c, sc, v.variant.as_ref(), v.policy.as_ref(), here, path)?;
    Ok(Row {
        name,
        run,
        metric,
        value: value.value,
        stddev,
        rule,
        why: why(c, &v.why, path)?,
    })
}

/// The run a row names by `variant` and `policy`, either optional when there is only one.
fn run_of(
    c: &Checker,
    sc: &Scenario,
    variant: Option<&Spanned<String>>,
    policy: Option<&Spanned<String>>,
    here: Location,
    path: &str,
) -> Result<RunRef, Error> {
    let (vname, scen) = match variant {
        None if sc.variants.len() > 1 => {
            return Err(c.at(&at(path, "variant"), here).missing(
                "the scenario has several variants: say which one",
                format!("add `variant:` with one of {}", variant_names(sc)),
            ));
        }
        None => (
            sc.variants.first().map(|v| v.name.clone()),
            sc.variants.first().map_or(sc, |v| &*v.scenario),
        ),
        Some(v) => match sc.variants.iter().find(|x| x.name == v.value) {
            Some(x) => (Some(x.name.clone()), &*x.scenario),
            None => {
                return Err(c.at(&at(path, "variant"), v).unknown(
                    format!("no variant `{}`", super::shorten(&v.value)),
                    format!("variants: {}", variant_names(sc)),
                ));
            }
        },
    };
    let policy = match policy {
        None if scen.policies.len() == 1 => scen.policies[0].clone(),
        None => {
            return Err(c.at(&at(path, "policy"), here).missing(
                "the run has several policies: say which one",
                format!("add `policy:` with one of {}", scen.policies.join(", ")),
            ));
        }
        Some(p) if scen.policies.contains(&p.value) => p.value.clone(),
        Some(p) => {
            return Err(c.at(&at(path, "policy"), p).unknown(
                format!("the run does not use policy `{}`", super::shorten(&p.value)),
                format!("its policies: {}", scen.policies.join(", ")),
            ));
        }
    };
    Ok(RunRef {
        variant: vname,
        policy,
    })
}

/// The variants' names, for hints.
fn variant_names(sc: &Scenario) -> String {
    if sc.variants.is_empty() {
        return "(the scenario has none: leave `variant` out)".to_string();
    }
    sc.variants
        .iter()
        .map(|v| format!("`{}`", v.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One claim.
fn claim(
    c: &Checker,
    r: &Spanned<RawClaim>,
    path: &str,
    sc: &Scenario,
    metrics: Option<&[&str]>,
    reps: u32,
) -> Result<Claim, Error> {
    let here = r.referenced;
    let v = &r.value;
    let name = name(c, &v.name, here, path)?;
    let metric = metric(c, &v.metric, here, path, metrics)?;
    let (field, pair, kind) = claim_kind(c, v, here, path, reps)?;
    let fpath = at(path, field);
    let [a, b] = pair.value.as_slice() else {
        return Err(c.at(&fpath, pair).bad_value(
            format!("`{field}` lists {} runs", pair.value.len()),
            "list two runs: `[a, b]`",
        ));
    };
    Ok(Claim {
        name,
        metric,
        a: named_run(c, sc, a, &fpath)?,
        b: named_run(c, sc, b, &fpath)?,
        kind,
        why: why(c, &v.why, path)?,
    })
}

/// Two runs as a claim lists them.
type RunPair = Spanned<Vec<Spanned<String>>>;

/// The claim's one comparison (`ratio`, `noise`, `spread` or `better`), the runs it lists and
/// its kind.
fn claim_kind<'a>(
    c: &Checker,
    v: &'a RawClaim,
    here: Location,
    path: &str,
    reps: u32,
) -> Result<(&'static str, &'a RunPair, ClaimKind), Error> {
    let given = [
        ("ratio", v.ratio.as_ref()),
        ("noise", v.noise.as_ref()),
        ("spread", v.spread.as_ref()),
        ("better", v.better.as_ref()),
    ];
    let mut present = given.iter().filter_map(|(f, p)| p.map(|p| (*f, p)));
    let Some((field, pair)) = present.next() else {
        return Err(c.at(&at(path, "ratio"), here).missing(
            "the claim compares nothing",
            "add `ratio: [a, b]` or `spread: [a, b]` with a rule, or `noise: [a, b]` or \
             `better: [a, b]`; a and b are runs as the report names them (`variant` or \
             `variant/policy`)",
        ));
    };
    if let Some((second, p)) = present.next() {
        return Err(c.at(&at(path, second), p).conflict(
            format!("a claim makes one comparison: `{field}` and `{second}` are two"),
            "split it into two claims",
        ));
    }
    let rule = || {
        rule(
            c,
            &v.within,
            &v.factor,
            &v.range,
            &v.at_least,
            &v.at_most,
            here,
            path,
        )
    };
    if let (Some(x), false) = (&v.value, field == "ratio") {
        return Err(c.at(&at(path, "value"), x).conflict(
            format!("only a `ratio` claim takes a published `value`; this is a `{field}` claim"),
            "remove `value`, or compare with `ratio: [a, b]`",
        ));
    }
    let kind = match field {
        "ratio" => ClaimKind::Ratio(rule()?, ratio_target(c, v, path)?),
        "spread" => {
            if reps < 2 {
                return Err(c.at(&at(path, "spread"), pair).bad_value(
                    format!("a spread needs replications, and the runs have {reps}"),
                    "set `published.replications` (or `replications`) to 2 or more; Mel \
                     Gorman's stddevs came from several runs of each kernel",
                ));
            }
            ClaimKind::Spread(rule()?)
        }
        _ => ruleless(c, v, path, field)?,
    };
    Ok((field, pair, kind))
}

/// A ratio claim's published `value` (1 when absent): a positive number.
fn ratio_target(c: &Checker, v: &RawClaim, path: &str) -> Result<f64, Error> {
    match &v.value {
        Some(x) if !(x.value.is_finite() && x.value > 0.0) => {
            Err(c.at(&at(path, "value"), x).bad_value(
                format!("a published ratio of {}", x.value),
                "give the published ratio of the two runs' means, a positive number",
            ))
        }
        Some(x) => Ok(x.value),
        None => Ok(1.0),
    }
}

/// A `noise` or `better` claim, which takes no rule: a rule given is refused at its line.
fn ruleless(c: &Checker, v: &RawClaim, path: &str, field: &str) -> Result<ClaimKind, Error> {
    let rules = [
        loc(&v.within),
        loc(&v.factor),
        loc(&v.range),
        loc(&v.at_least),
        loc(&v.at_most),
    ];
    if let Some(l) = rules.into_iter().flatten().next() {
        return Err(c.at(path, l).conflict(
            format!("a `{field}` claim takes no rule"),
            if field == "noise" {
                "it holds when the paired 95% interval of the difference holds zero"
            } else {
                "it holds when a is better than b and the paired 95% interval of the \
                 difference excludes zero"
            },
        ));
    }
    Ok(if field == "noise" {
        ClaimKind::Noise
    } else {
        ClaimKind::Better
    })
}

/// A run written as the report labels it: `variant`, `variant/policy`, or a policy without
/// variants.
fn named_run(c: &Checker, sc: &Scenario, s: &Spanned<String>, path: &str) -> Result<RunRef, Error> {
    let runs = run_labels(sc);
    match runs
        .iter()
        .find(|(label, _)| *label == s.value || long_label(sc, label) == s.value)
    {
        Some((_, r)) => Ok(r.clone()),
        None => Err(c.at(path, s).unknown(
            format!("no run `{}`", super::shorten(&s.value)),
            format!(
                "runs: {}",
                runs.iter()
                    .map(|(l, _)| format!("`{l}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Every run of `sc` with its label as the report gives it: the policy without variants; with
/// them `<variant>` when every variant runs one policy, else `<variant>/<policy>`.
fn run_labels(sc: &Scenario) -> Vec<(String, RunRef)> {
    if sc.variants.is_empty() {
        return sc
            .policies
            .iter()
            .map(|p| {
                let r = RunRef {
                    variant: None,
                    policy: p.clone(),
                };
                (p.clone(), r)
            })
            .collect();
    }
    let one_each = sc.variants.iter().all(|v| v.scenario.policies.len() == 1);
    let mut out = Vec::new();
    for v in &sc.variants {
        for p in &v.scenario.policies {
            let label = if one_each {
                v.name.clone()
            } else {
                format!("{}/{p}", v.name)
            };
            let r = RunRef {
                variant: Some(v.name.clone()),
                policy: p.clone(),
            };
            out.push((label, r));
        }
    }
    out
}

/// `variant/policy` for a short label, so either spelling names the run.
fn long_label(sc: &Scenario, label: &str) -> String {
    match sc.variants.iter().find(|v| v.name == label) {
        Some(v) if v.scenario.policies.len() == 1 => format!("{label}/{}", v.scenario.policies[0]),
        _ => label.to_string(),
    }
}

#[cfg(test)]
mod tests;
