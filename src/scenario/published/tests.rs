//! Unit tests of `published:`: located errors for bad rows and claims, and the rules' verdicts.

use super::*;
use crate::scenario::ErrorKind;
use crate::scenario::testutil::*;

/// Two policies, two variants.
const TWO: &str = "device: { kind: hdd5400 }\nworkloads:\n  - kind: fio\n\
                       policies: [fifo, none]\n\
                       variants:\n  - { name: a, set: {} }\n  - { name: b, set: {} }\n";

#[test]
fn rows_must_name_their_run_when_there_are_several() {
    let row = |extra: &str| {
        format!(
            "{TWO}published:\n  source: s\n  rows:\n    - {{ name: r, metric: read_iops, \
                 value: 1, within: 5%{extra} }}\n"
        )
    };
    let e = err(&row(""));
    assert_eq!(
        (e.kind(), e.path()),
        (ErrorKind::Missing, Some("published.rows[0].variant"))
    );
    assert!(e.hint().unwrap().contains("`a`, `b`"), "{e}");
    let e = err(&row(", variant: a"));
    assert_eq!(e.path(), Some("published.rows[0].policy"));
    let e = err(&row(", variant: a, policy: prio"));
    assert_eq!((e.kind(), e.line()), (ErrorKind::UnknownName, Some(11)));
    ok(&row(", variant: a, policy: none"));
    let e = err(&format!("{TWO}published:\n  source: s\n"));
    assert_eq!(e.path(), Some("published"));
    let e = err(&format!(
        "{TWO}published:\n  rows:\n    - {{ name: r, metric: m, value: 1, within: 5% }}\n"
    ));
    assert_eq!(e.path(), Some("published.source"));
    let e = err(&format!(
        "{TWO}published:\n  source: s\n  claims:\n    - {{ name: c, metric: m, \
             noise: [a/fifo, b/none], within: 5% }}\n"
    ));
    assert_eq!(
        (e.kind(), e.path()),
        (ErrorKind::Conflict, Some("published.claims[0]"))
    );
    ok(&format!(
        "{TWO}published:\n  source: s\n  claims:\n    - {{ name: c, metric: m, \
             ratio: [a/fifo, b/none], factor: 2 }}\n"
    ));
    ok(&format!(
        "{TWO}published:\n  source: s\n  claims:\n    - {{ name: c, metric: m, \
             ratio: [a/fifo, b/none], value: 0.13, within: 20% }}\n    - {{ name: d, \
             metric: m, better: [a/fifo, b/none] }}\n"
    ));
    for (bad, path) in [
        (
            "better: [a/fifo, b/none], at_least: 1",
            "published.claims[0]",
        ),
        (
            "noise: [a/fifo, b/none], value: 2",
            "published.claims[0].value",
        ),
        (
            "ratio: [a/fifo, b/none], value: -1, within: 5%",
            "published.claims[0].value",
        ),
    ] {
        let e = err(&format!(
            "{TWO}published:\n  source: s\n  claims:\n    - {{ name: c, metric: m, \
                 {bad} }}\n"
        ));
        assert_eq!(e.path(), Some(path), "{bad}: {e}");
    }
}

#[test]
fn spread_claims_need_a_rule_and_replications() {
    let claim = |reps: &str, body: &str| {
        format!(
            "{TWO}published:\n  source: s\n{reps}  claims:\n    - {{ name: c, metric: m, \
                 {body} }}\n"
        )
    };
    let text = claim("", "spread: [a/fifo, b/none], at_least: 1.5");
    let (_, p) = crate::scenario::load_parts("t.yaml", &text, &[], Some(&["m"])).unwrap();
    let p = p.expect("published");
    assert_eq!(p.claims[0].kind, ClaimKind::Spread(Rule::AtLeast(1.5)));
    assert_eq!(p.claims[0].b.policy, "none");
    // No rule: the rule's error, at the claim.
    let e = err(&claim("", "spread: [a/fifo, b/none]"));
    assert_eq!(
        (e.kind(), e.path()),
        (ErrorKind::Missing, Some("published.claims[0].within"))
    );
    // One replication has no spread: refused at `spread`, with the line.
    let e = err(&claim(
        "  replications: 1\n",
        "spread: [a/fifo, b/none], at_least: 1.5",
    ));
    assert_eq!(
        (e.kind(), e.path(), e.line()),
        (
            ErrorKind::BadValue,
            Some("published.claims[0].spread"),
            Some(12)
        )
    );
    assert!(e.hint().unwrap().contains("replications"), "{e}");
    // Two comparisons in one claim: refused at the second.
    let e = err(&claim(
        "",
        "ratio: [a/fifo, b/none], spread: [a/fifo, b/none], factor: 2",
    ));
    assert_eq!(
        (e.kind(), e.path()),
        (ErrorKind::Conflict, Some("published.claims[0].spread"))
    );
    let e = err(&claim("", "spread: [a/fifo], factor: 2"));
    assert_eq!(e.path(), Some("published.claims[0].spread"));
    let e = err(&claim("", "spread: [a/fifo, c], factor: 2"));
    assert_eq!(e.kind(), ErrorKind::UnknownName);
}

#[test]
fn a_variant_cannot_set_published_figures() {
    let e = err(&format!(
        "{BASE}variants:\n  - name: v\n    set: {{ published: {{ source: s }} }}\n"
    ));
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert_eq!(e.path(), Some("variants[0].set.published"));
}

#[test]
fn rules_judge_values() {
    assert!(Rule::Within(0.05).holds(1.04, 1.0));
    assert!(!Rule::Within(0.05).holds(0.94, 1.0));
    assert!(Rule::Factor(2.0).holds(6.1, 12.2) && !Rule::Factor(2.0).holds(6.0, 12.2));
    assert!(Rule::Range(347.0, 478.0).holds(400.0, 0.0));
    assert!(Rule::AtLeast(1.8).holds(1.8, 1.0) && !Rule::AtMost(0.1).holds(0.2, 1.0));
    assert!(!Rule::AtLeast(0.0).holds(f64::NAN, 1.0));
    // A ratio over zero: more than any bound, less than none.
    assert!(Rule::AtLeast(1.01).holds(f64::INFINITY, 1.0));
    assert!(!Rule::AtMost(1e9).holds(f64::INFINITY, 1.0));
    assert!(!Rule::Factor(2.0).holds(f64::INFINITY, 1.0));
    assert!(!Rule::Range(0.0, 1e9).holds(f64::INFINITY, 0.0));
    assert_eq!(Rule::Within(0.05).describe(), "within 5%");
    assert_eq!(Rule::Range(347.0, 478.5).describe(), "in [347, 478.5]");
}
