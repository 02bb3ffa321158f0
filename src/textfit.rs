//! Fitting text into 80 columns, so it survives a plain-text mail: the text report, `qsim
//! check` and `qsim reproduce` (the bottom layer, as the scenario layer's `qsim check` uses it
//! too). Prose is refilled ([`fill`]), and any other line wider than [`WIDTH`] is wrapped
//! ([`fit`]) after a `, ` where it can (fio's `k=v, k=v` lines) or a space, its continuation lines indented
//! under the text after its first `: ` (`  block        : ...`, `  fifo: ...`), so fio's
//! per-job layout stays recognisable. Widths count characters, not bytes (`±`, `µ`).

/// Widest line of the text report, columns.
pub const WIDTH: usize = 80;

/// `text` (one paragraph; its line breaks are spaces) refilled to lines of at most `width`
/// characters, each ending in `\n`. A word longer than the width stays whole on its own line.
pub fn fill(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let n = line.chars().count();
        if n > 0 && n + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        } else if n > 0 {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `text` with every line wider than [`WIDTH`] wrapped ([`wrap`]); other lines unchanged.
pub fn fit(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.chars().count() <= WIDTH {
            out.push_str(line);
        } else {
            out.push_str(&wrap(line, WIDTH, hanging_indent(line)).join("\n"));
        }
    }
    out
}

/// Where a wrapped line's continuation starts: under the text after its first `: ` when that
/// is within the first 40 columns, else two columns in from its own indentation.
fn hanging_indent(line: &str) -> usize {
    let lead = line.chars().take_while(|c| *c == ' ').count();
    match line.find(": ").map(|b| line[..b].chars().count() + 2) {
        Some(col) if col <= 40 => col,
        _ => lead + 2,
    }
}

/// `line` broken into lines of at most `width` characters, continuation lines starting with
/// `indent` spaces. Breaks after the last `, ` that leaves a line at least half full, else at
/// the last space; a word longer than the room stays whole on its line (never cut).
pub fn wrap(line: &str, width: usize, indent: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest: Vec<char> = line.chars().collect();
    let lead = rest.iter().take_while(|c| **c == ' ').count();
    let mut from = lead.max(1);
    while rest.len() > width {
        let top = width.min(rest.len() - 1);
        let space = |i: &usize| rest[*i] == ' ' && rest[*i - 1] != ' ';
        let comma = (from.max(width / 2)..=top)
            .rev()
            .find(|i| space(i) && rest[*i - 1] == ',');
        // A word longer than the room stays whole: the break goes after it.
        let past = || (top + 1..rest.len()).find(space);
        let Some(at) = comma
            .or_else(|| (from..=top).rev().find(space))
            .or_else(past)
        else {
            break;
        };
        let head: String = rest[..at].iter().collect();
        out.push(head.trim_end().to_string());
        let tail: Vec<char> = rest[at..]
            .iter()
            .copied()
            .skip_while(|c| *c == ' ')
            .collect();
        rest = std::iter::repeat_n(' ', indent).chain(tail).collect();
        from = indent + 1;
    }
    out.push(rest.into_iter().collect());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_fio_line_wraps_after_a_comma_under_its_value() {
        let line = "  block        : congested_ms=0/0, pool_sleeps=0/0, clears=0/0 (sync/async), \
                    unplugs=0/0 (timer/threshold), dispatched=9192545, util=100.00%";
        assert_eq!(
            fit(line),
            "  block        : congested_ms=0/0, pool_sleeps=0/0, clears=0/0 (sync/async),\n\
             \x20                unplugs=0/0 (timer/threshold), dispatched=9192545, util=100.00%"
        );
    }

    #[test]
    fn lines_that_fit_are_untouched_and_nothing_is_wider_than_80_after() {
        let text = "short\n\nµs ± σ\n";
        assert_eq!(fit(text), text);
        let long = format!("x: {}", "word ".repeat(60));
        for l in fit(&long).lines() {
            assert!(l.chars().count() <= WIDTH, "{l}");
        }
        // A word longer than the width stays whole, and what follows it still wraps.
        let word = "y".repeat(100);
        assert_eq!(fit(&word), word);
        let line = format!("k: {word} {}", "z ".repeat(50));
        let lines: Vec<String> = fit(&line).lines().map(str::to_string).collect();
        assert!(lines.iter().any(|l| l.trim() == word), "{lines:?}");
        let others = lines.iter().filter(|l| l.trim() != word);
        assert!(
            others.clone().all(|l| l.chars().count() <= WIDTH),
            "{lines:?}"
        );
        assert_eq!(others.count(), 3, "{lines:?}");
    }

    #[test]
    fn width_counts_characters_not_bytes() {
        let line = format!("{}±", "a".repeat(79));
        assert_eq!(line.chars().count(), 80);
        assert_eq!(fit(&line), line);
    }

    #[test]
    fn prose_is_refilled() {
        assert_eq!(fill("a bb\nccc  dd", 6), "a bb\nccc dd\n");
        assert_eq!(fill("", 6), "");
    }
}
