//! Tests of the plain-text charts: exact pictures of small fixtures, the mapping, the width
//! bound, and inputs that must not panic.

use super::axis::{Axis, number};
use super::*;

fn nines_fixture() -> LineChart {
    let ps = [50.0, 90.0, 99.0, 99.9, 99.99];
    let mut chart = LineChart::new(
        "Read clat",
        ("percentile", Scale::Nines),
        ("ms (log)", Scale::Log),
        vec![
            Series::new("fifo", ps.into_iter().zip([1.0, 3.0, 20.0, 200.0, 900.0])),
            Series::new("split", ps.into_iter().zip([1.0, 2.0, 5.0, 9.0, 30.0])),
        ],
    );
    chart.series[1].points[2].range = Some((3.0, 8.0));
    chart.width = 40;
    chart.height = 6;
    chart
}

/// Every line of `text` at most `width` columns, ASCII, and ending in a newline.
pub(super) fn fits(text: &str, width: usize) {
    assert!(text.ends_with('\n'), "{text}");
    for l in text.lines() {
        assert!(
            l.is_ascii() && l.len() <= width,
            "{} > {width}: {l}\n{text}",
            l.len()
        );
    }
}

#[test]
fn a_nines_chart_draws_exactly() {
    let got = line_chart(&nines_fixture());
    assert_eq!(got, NINES, "\n{got}");
}

const NINES: &str = r"Read clat
      ms (log)
1000 +                              ...A
 200 +                       .A.....
  50 +                 ......
  20 +           ....A.      .B........B
   5 +    ..*........B.......
   1 +*.....
     ++-----+--------+--------+--------+
     50    90       99      99.9   99.99
                  percentile
   A fifo  B split
   * = several series, : = range
";

#[test]
fn a_knee_curve_marks_its_crossover() {
    let got = knee_curve(
        "p99.9 against cipher speed",
        ("cipher MB/s", Scale::Log),
        ("p99.9, ms", Scale::Linear),
        &[
            (
                "fifo".into(),
                vec![(50.0, 300.0), (400.0, 40.0), (1600.0, 10.0)],
            ),
            (
                "split".into(),
                vec![(50.0, 100.0), (400.0, 30.0), (1600.0, 12.0)],
            ),
        ],
        &[(1000.0, "crossover".into())],
    );
    fits(&got, MAX_WIDTH);
    assert_eq!(got, KNEE, "\n{got}");
}

const KNEE: &str = r"p99.9 against cipher speed
     p99.9, ms
300 +A.                                                    |
    |  ....                                                |
    |      ....                                            |
    |          ....                                        |
200 +              ....                                    |
    |                  ....                                |
    |                      ....                            |
100 +B..                       ....                        |
    |   ..............             ...                     |
    |                 ............... ....                 |
    |                                .....*......................
  0 +                                                      |    ...*
    ++-----------+------------+---------------+------------+-----------+
    50          100          200             500         1000       2000
                                 cipher MB/s
   A fifo  B split
   * = several series; | at x=1000: crossover
";

#[test]
fn bars_draw_exactly_with_whiskers() {
    let got = bars(
        "failures",
        &[
            Bar {
                label: "fifo".into(),
                value: 120.0,
                range: Some((90.0, 150.0)),
            },
            Bar {
                label: "split".into(),
                value: 12.0,
                range: Some((0.0, 30.0)),
            },
            Bar {
                label: "none".into(),
                value: 0.0,
                range: None,
            },
        ],
        40,
    );
    assert_eq!(got, BARS, "\n{got}");
}

const BARS: &str = r"failures
fifo  |##########|###--| 120 [90..150]
split ||--|              12 [0..30]
none  |                  0
";

#[test]
fn the_mapping_is_monotone_and_ends_at_the_edges() {
    for scale in [Scale::Linear, Scale::Log, Scale::Nines] {
        let vals = [0.5, 3.0, 7.0, 50.0, 90.0, 99.0, 99.9];
        let pos: Vec<f64> = vals.iter().filter_map(|&v| scale.to_pos(v)).collect();
        let ax = Axis::fit(scale, &pos).unwrap();
        let cells: Vec<usize> = pos.iter().map(|&p| ax.cell(p, 50)).collect();
        assert!(
            cells.windows(2).all(|w| w[0] <= w[1]),
            "{scale:?}: {cells:?}"
        );
        assert!(*cells.last().unwrap() <= 49);
        assert_eq!(ax.cell(ax.lo, 50), 0);
        assert_eq!(ax.cell(ax.hi, 50), 49);
        assert!(ax.ticks.windows(2).all(|w| w[0].0 < w[1].0), "{scale:?}");
    }
}

#[test]
fn the_nines_axis_labels_its_nines() {
    let pos: Vec<f64> = [50.0, 99.99]
        .iter()
        .filter_map(|&p| Scale::Nines.to_pos(p))
        .collect();
    let ax = Axis::fit(Scale::Nines, &pos).unwrap();
    let labels: Vec<&str> = ax.ticks.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(labels, ["50", "90", "99", "99.9", "99.99"]);
    assert_eq!(Scale::Nines.to_pos(100.0), None);
    assert_eq!(Scale::Nines.to_pos(-1.0), None);
    assert_eq!(Scale::Log.to_pos(0.0), None);
}

#[test]
fn tick_numbers_are_short() {
    assert_eq!(number(0.002, 0.002), "0.002");
    assert_eq!(number(20000.0, 20000.0), "20k");
    assert_eq!(number(1.5, 0.5), "1.5");
    assert_eq!(number(3e6, 1e6), "3M");
    assert_eq!(number(0.0, 1.0), "0");
    assert_eq!(number(-5.0, 0.0), "-5");
    assert_eq!(number(1e-7, 1e-7), "1e-7");
}

#[test]
fn degenerate_inputs_never_panic_and_never_pass_the_width() {
    let weird = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -1.0,
        1e308,
        -1e308,
        1e-308,
    ];
    let cases: Vec<Vec<(f64, f64)>> = vec![
        vec![],
        vec![(1.0, 1.0)],
        vec![(5.0, 2.0); 4],
        weird.iter().map(|&v| (v, v)).collect(),
        weird.iter().map(|&v| (50.0, v)).collect(),
        weird.iter().map(|&v| (v, 1.0)).collect(),
        vec![(0.0, 1e-300), (99.999999, 1e300)],
    ];
    for xs in [Scale::Linear, Scale::Log, Scale::Nines] {
        for ys in [Scale::Linear, Scale::Log, Scale::Nines] {
            for (k, pts) in cases.iter().enumerate() {
                for width in [0, 30, 55, 72, 500] {
                    let mut c = LineChart::new(
                        "t".repeat(width + 5),
                        ("x", xs),
                        ("y", ys),
                        vec![Series::new("s".repeat(200), pts.clone()); 3],
                    );
                    c.width = width;
                    c.height = k * 7;
                    c.x_marks = vec![(f64::NAN, "n".into()), (1.0, "µ".into())];
                    c.series[0]
                        .points
                        .iter_mut()
                        .for_each(|p| p.range = Some((f64::NAN, 0.0)));
                    fits(&line_chart(&c), width.clamp(MIN_WIDTH, MAX_WIDTH));
                }
            }
        }
    }
    let many: Vec<Series> = (0..60)
        .map(|i| Series::new(format!("s{i}"), [(i as f64, 1.0)]))
        .collect();
    let text = line_chart(&LineChart::new(
        "many",
        ("x", Scale::Linear),
        ("y", Scale::Linear),
        many,
    ));
    fits(&text, MAX_WIDTH);
    assert!(text.contains("8 more series not shown"), "{text}");
    let empty = line_chart(&LineChart::new(
        "e",
        ("x", Scale::Log),
        ("y", Scale::Log),
        vec![],
    ));
    assert_eq!(empty, "e\n  (no data)\n");
    for v in weird {
        let b = [Bar {
            label: "λ".repeat(90),
            value: v,
            range: Some((v, -v)),
        }];
        fits(&bars("t", &b, 72), 72);
    }
    assert_eq!(bars("t", &[], 72), "t\n  (no data)\n");
}

#[test]
fn one_point_and_all_equal_values_still_draw_a_marker() {
    for pts in [vec![(3.0, 4.0)], vec![(3.0, 4.0); 5]] {
        for scale in [Scale::Linear, Scale::Log] {
            let text = line_chart(&LineChart::new(
                "one",
                ("x", scale),
                ("y", scale),
                vec![Series::new("a", pts.clone())],
            ));
            fits(&text, MAX_WIDTH);
            assert_eq!(text.matches('A').count(), 2, "marker and legend\n{text}");
        }
    }
}

#[test]
fn a_series_hidden_under_another_is_named_in_the_legend() {
    let pts = [(1.0, 1.0), (2.0, 4.0), (3.0, 9.0)];
    let text = line_chart(&LineChart::new(
        "same",
        ("x", Scale::Linear),
        ("y", Scale::Linear),
        vec![
            Series::new("fifo", pts),
            Series::new("split", [(1.0, 9.0), (3.0, 1.0)]),
            Series::new("prio", pts),
        ],
    ));
    assert!(text.contains("C = A in every cell"), "{text}");
    assert!(
        !text.contains("B = ") && !text.contains("B everywhere"),
        "{text}"
    );
    // Under two different series: named as under `*`.
    let text = line_chart(&LineChart::new(
        "mixed",
        ("x", Scale::Linear),
        ("y", Scale::Linear),
        vec![
            Series::new("a", [(1.0, 1.0), (3.0, 5.0)]),
            Series::new("b", [(1.0, 9.0), (3.0, 1.0)]),
            Series::new("c", [(1.0, 1.0), (3.0, 1.0)]),
        ],
    ));
    assert!(text.contains("C everywhere under *"), "{text}");
}

#[test]
fn a_long_bar_label_is_never_cut() {
    // The longest label of `--flags all` fits beside its bar at 72 columns; one longer than
    // the room goes whole on a line of its own, its bar under it.
    let bar = |label: &str| Bar {
        label: label.into(),
        value: 0.65,
        range: Some((0.64, 0.66)),
    };
    let got = bars("t", &[bar("sc+sf+nr+nw+hp p99.9"), bar("nr p99.9")], 72);
    assert!(got.contains("\nsc+sf+nr+nw+hp p99.9 |"), "\n{got}");
    assert!(got.contains("\nnr p99.9             |"), "\n{got}");
    let long = "a label far longer than any room beside a bar could hold";
    let got = bars("t", &[bar(long), bar("nr p99.9")], 72);
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines[1], long, "\n{got}");
    assert!(lines[2].trim_start().starts_with('|'), "\n{got}");
    assert!(got.lines().all(|l| l.len() <= 72), "\n{got}");
}
