//! Tests of the PNG and SVG Gantt chart and the analysis it shares with the ASCII form, on
//! the fixture.

use super::fixture::{at, fixture, opts};
use super::*;

#[test]
fn the_fixture_draws_to_a_png_of_the_page_size() {
    let t = fixture();
    let png = gantt_png(&t, &opts()).unwrap();
    if let Ok(p) = std::env::var("QSIM_GANTT_PNG") {
        std::fs::write(p, &png).unwrap();
    }
    let img = image::load_from_memory_with_format(&png, image::ImageFormat::Png).unwrap();
    let h = page_height(&t, &opts(), Path::new("x")).unwrap();
    assert_eq!((img.width(), img.height()), (WIDTH, h));
    // 11 lanes, the crypt queue in 3 sub-rows, the elevator in 2: taller than 11 rows.
    assert!(h > 11 * LANE_H as u32 + 200, "{h}");
}

#[test]
fn the_svg_names_every_lane_and_the_highlighted_bio() {
    let t = fixture();
    let svg = gantt_svg(&t, &opts()).unwrap();
    if let Ok(p) = std::env::var("QSIM_GANTT_SVG") {
        std::fs::write(p, &svg).unwrap();
    }
    for l in &t.lanes {
        assert!(svg.contains(&format!(">\n{}\n<", l.name)), "{}", l.name);
    }
    assert!(svg.contains("#2 read 4 KiB from job reader"), "summary");
    assert!(
        svg.contains(">\n#2\n<") && svg.contains("#2 highlighted"),
        "bar label, legend"
    );
    assert!(svg.contains("what #2 waited behind"));
    assert!(!svg.contains("truncated"));
}

#[test]
fn the_read_waited_behind_the_write_being_encrypted() {
    let t = fixture();
    let behind = |k: u32| {
        let mut v: Vec<u32> = crate::report::trace::waited_behind(&t, k)
            .iter()
            .map(|b| b.bio)
            .collect();
        v.dedup();
        v
    };
    assert_eq!(behind(2), [0]);
    // #3 queued behind #0 and #2 (ahead of it in the list, then decrypted); #4 behind #1.
    assert!(
        behind(3).contains(&0) && behind(3).contains(&2),
        "{:?}",
        behind(3)
    );
    assert!(behind(4).contains(&1));
    assert!(behind(0).is_empty() && behind(99).is_empty());
    let f = focus(&t, Some(2)).unwrap();
    assert_eq!(
        f.summary,
        "#2 read 4 KiB from job reader, 18.1 ms: crypt queue wait 17.6 ms, \
         block queue wait 0.15 ms; behind #0 write 512 KiB"
    );
    assert!(f.blockers.iter().all(|&i| t.spans[i].lane == 0));
}

#[test]
fn spans_are_clipped_to_the_window_and_queues_packed_under_a_cap() {
    let t = fixture();
    let lanes = lanes(&t, MAX_SUB_ROWS, None);
    let w = Window::of(&t);
    let all: Vec<&Bar> = lanes.iter().flat_map(|l| l.rows.iter().flatten()).collect();
    assert!(
        all.iter()
            .all(|b| b.start >= w.from && b.end <= w.end && b.start < b.end)
    );
    // #5's device span (90-95 ms) and kswapd's 80-85 ms are outside: not drawn.
    assert!(!all.iter().any(|b| b.end <= w.from));
    assert_eq!(lanes[8].rows.len(), 3);
    assert_eq!(
        lanes[8].rows[0][0].start, w.from,
        "#0's wait cut at the window's start"
    );
    let bar = |k: u64| Bar {
        span: k as usize,
        start: k,
        end: 100,
        what: Activity::Runnable(1),
    };
    let (rows, hidden) = pack((0..8).map(bar).collect(), 6, &|_| false);
    assert_eq!((rows.len(), hidden), (6, 2));
}

#[test]
fn empty_and_truncated_traces_draw() {
    let mut t = fixture();
    t.spans.clear();
    t.marks.clear();
    t.bios.clear();
    gantt_png(&t, &opts()).unwrap();
    t.lanes.clear();
    gantt_png(&t, &GanttOptions::default()).unwrap();
    gantt_svg(&t, &GanttOptions::default()).unwrap();
    let mut t = fixture();
    t.truncated = Some(at(120.0));
    let svg = gantt_svg(&t, &opts()).unwrap();
    assert!(svg.contains("(truncated at 120 ms"), "title");
    assert_eq!(Window::of(&t).end, at(120.0).as_ns());
}

#[test]
fn a_queue_longer_than_the_cap_draws_the_cap_and_says_how_many_more() {
    let t = super::fixture::deep_elevator(9);
    let l = &lanes(&t, MAX_SUB_ROWS, None)[10];
    assert_eq!((l.rows.len(), l.hidden), (MAX_SUB_ROWS, 3));
    let svg = gantt_svg(&t, &GanttOptions::default()).unwrap();
    assert!(svg.contains("+3 more waiting"));
    gantt_png(&t, &GanttOptions::default()).unwrap();
    // Whichever bio is highlighted, its bar is drawn (top sub-row), never among the hidden.
    let on_lane: Vec<u32> = t
        .spans
        .iter()
        .filter(|s| s.lane == 10)
        .filter_map(|s| match s.what {
            Activity::Bio { bio, .. } => Some(bio),
            _ => None,
        })
        .collect();
    assert!(on_lane.len() > MAX_SUB_ROWS);
    let mut bios = on_lane.clone();
    bios.sort_unstable();
    bios.dedup();
    for k in bios {
        let l = &lanes(&t, MAX_SUB_ROWS, Some(k))[10];
        let top = &l.rows[0];
        assert!(
            top.iter()
                .any(|b| matches!(b.what, Activity::Bio { bio, .. } if bio == k)),
            "#{k} in the top row"
        );
        let drawn: usize = l.rows.iter().map(Vec::len).sum();
        assert_eq!(
            drawn + l.hidden,
            on_lane.len(),
            "every bar drawn or counted"
        );
        for row in &l.rows[1..] {
            for (i, a) in row.iter().enumerate() {
                assert!(
                    row[i + 1..]
                        .iter()
                        .all(|b| a.end <= b.start || b.end <= a.start)
                );
            }
        }
    }
}

/// A split bio's pieces wait side by side; highlighting the bio draws every piece's bar, so a
/// crowded queue lane cannot hide one of them in a sub-row past the cap.
#[test]
fn a_highlighted_bio_draws_all_its_pieces_in_a_crowded_queue() {
    let mut t = super::fixture::deep_elevator(9);
    let parent = 0u32;
    let mut pieces = Vec::new();
    for p in 0..3 {
        let mut piece = t.bios[parent as usize].clone();
        piece.parent = Some(parent);
        piece.origin = format!("piece {}/3 of #0", p + 1);
        piece.stages.clear();
        t.bios.push(piece);
        let bio = (t.bios.len() - 1) as u32;
        pieces.push(bio);
        // Late in the crowd, all three overlapping one another.
        t.spans.push(crate::model::observe::trace::Span {
            lane: 10,
            start: at(137.0),
            end: at(138.5),
            what: Activity::Bio {
                bio,
                stage: crate::model::base::obs::Stage::BlockQueue,
            },
        });
    }
    let drawn = |l: &LaneRows| -> Vec<u32> {
        l.rows
            .iter()
            .flatten()
            .filter_map(|b| match b.what {
                Activity::Bio { bio, .. } => Some(bio),
                _ => None,
            })
            .collect()
    };
    // Unhighlighted, the pieces come last in start order and the cap hides them.
    let plain = &lanes(&t, MAX_SUB_ROWS, None)[10];
    assert!(pieces.iter().any(|p| !drawn(plain).contains(p)));
    let l = &lanes(&t, MAX_SUB_ROWS, Some(parent))[10];
    for p in &pieces {
        assert!(drawn(l).contains(p), "piece #{p} drawn");
    }
    assert_eq!(drawn(l).len() + l.hidden, drawn(plain).len() + plain.hidden);
    for row in &l.rows {
        for (i, a) in row.iter().enumerate() {
            assert!(
                row[i + 1..]
                    .iter()
                    .all(|b| a.end <= b.start || b.end <= a.start),
                "no overlap in a row"
            );
        }
    }
}
