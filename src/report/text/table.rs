//! The one layout every text table goes through: columns aligned by display width (comfy-table
//! lays the cells out), two spaces between columns, and a width every row must fit. A table that
//! would be wider never has a cell broken across lines; instead, in this order:
//! 1. columns the caller marked optional are left out, the least important first, and a note
//!    under the table names them;
//! 2. in a table that allows it, a row whose first cell leaves no room for the rest prints that
//!    cell on a line of its own above the rest of the row (a "stacked" row: a long name such
//!    as a published figure's keeps every word, and the other rows stay on one line);
//! 3. both.
//!
//! Each cell is one line; headings (a line of text between rows, such as a validation case)
//! share the column widths of the whole table so the columns line up across groups.

use comfy_table::{CellAlignment, ContentArrangement, Table as Comfy, TableStyle};

/// How a column's cells sit in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: left-aligned.
    Left,
    /// Numbers: right-aligned, so digits line up.
    Right,
}

/// One column: its header (lines separated by `\n`), alignment, and whether it may be left
/// out to fit (`Some(rank)`, the highest rank leaving first).
#[derive(Debug, Clone)]
struct Column {
    head: String,
    align: Align,
    optional: Option<u8>,
}

/// A line of the table: cells, or a heading printed across the columns.
#[derive(Debug, Clone)]
enum Line {
    Cells(Vec<String>),
    Heading(String),
}

/// A text table that fits a width without breaking a cell (see the module doc).
#[derive(Debug, Clone)]
pub struct Table {
    indent: usize,
    columns: Vec<Column>,
    lines: Vec<Line>,
    stackable: bool,
}

impl Table {
    /// An empty table whose lines start `indent` spaces in.
    pub fn new(indent: usize) -> Self {
        Table {
            indent,
            columns: Vec::new(),
            lines: Vec::new(),
            stackable: false,
        }
    }

    /// Adds a column that is always shown.
    pub fn column(mut self, head: &str, align: Align) -> Self {
        self.columns.push(Column {
            head: head.to_string(),
            align,
            optional: None,
        });
        self
    }

    /// Adds a column that may be left out to fit; among optional columns the highest `rank`
    /// leaves first.
    pub fn optional(mut self, head: &str, align: Align, rank: u8) -> Self {
        self.columns.push(Column {
            head: head.to_string(),
            align,
            optional: Some(rank),
        });
        self
    }

    /// Lets the first column move to a line of its own above its row when nothing else fits.
    pub fn stackable(mut self) -> Self {
        self.stackable = true;
        self
    }

    /// Adds a row; missing trailing cells are empty, a line break in a cell becomes a space.
    pub fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let cells = cells
            .into_iter()
            .map(|c| c.as_ref().replace('\n', " "))
            .collect();
        self.lines.push(Line::Cells(cells));
    }

    /// Adds a line of text between rows, starting at the table's indent.
    pub fn heading(&mut self, text: impl Into<String>) {
        self.lines.push(Line::Heading(text.into()));
    }

    /// The table laid out to fit `width` columns, each line ending in `\n`. A table that cannot
    /// fit by the module's rules is printed in its narrowest form (wider than `width`).
    pub fn render(&self, width: usize) -> String {
        let mut ranked: Vec<usize> = (0..self.columns.len())
            .filter(|&c| self.columns[c].optional.is_some())
            .collect();
        ranked.sort_by_key(|&c| std::cmp::Reverse(self.columns[c].optional));
        let mut best = None;
        'search: for dropped in 0..=ranked.len() {
            for stacked in [false, true] {
                if stacked && !self.stackable {
                    continue;
                }
                let lines = self.layout(&ranked[..dropped], stacked, width);
                let fits = lines.iter().all(|l| l.chars().count() <= width);
                best = Some((lines, dropped));
                if fits {
                    break 'search;
                }
            }
        }
        let (lines, dropped) = best.unwrap_or_default();
        let mut out = String::new();
        for l in &lines {
            out.push_str(l);
            out.push('\n');
        }
        if dropped > 0 {
            out.push_str(&self.dropped_note(&ranked[..dropped], width));
        }
        out
    }

    /// "(left out to fit 80 columns: a, b)", refilled to `width`.
    fn dropped_note(&self, dropped: &[usize], width: usize) -> String {
        let mut names: Vec<usize> = dropped.to_vec();
        names.sort_unstable();
        let names: Vec<String> = names
            .iter()
            .map(|&c| self.columns[c].head.replace('\n', " "))
            .collect();
        let text = format!("(left out to fit {width} columns: {})", names.join(", "));
        let fill = super::fit::fill(&text, width.saturating_sub(self.indent));
        let pad = " ".repeat(self.indent);
        fill.lines().map(|l| format!("{pad}{l}\n")).collect()
    }

    /// The table's lines with the `hidden` columns left out. If `stacked`, a row whose first
    /// cell leaves no room in `width` for the rest puts that cell on a line of its own above
    /// the rest of the row; when no first cell has room, the first column leaves the table and
    /// every row is stacked.
    fn layout(&self, hidden: &[usize], stacked: bool, width: usize) -> Vec<String> {
        let shown: Vec<usize> = (0..self.columns.len())
            .filter(|c| !hidden.contains(c))
            .collect();
        let rows: Vec<&Vec<String>> = self
            .lines
            .iter()
            .filter_map(|l| match l {
                Line::Cells(c) => Some(c),
                Line::Heading(_) => None,
            })
            .collect();
        let first = |r: &Vec<String>| r.first().map_or(String::new(), Clone::clone);
        let mut long = vec![false; rows.len()];
        let mut cols = shown.clone();
        if stacked && shown.first() == Some(&0) {
            let (rest, _) = self.draw(&shown[1..], &rows, &long);
            let rest_w = rest.iter().map(|l| l.chars().count()).max().unwrap_or(0);
            let room = width.saturating_sub(self.indent + rest_w + 2);
            for (i, r) in rows.iter().enumerate() {
                long[i] = first(r).chars().count() > room;
            }
            let head_fits = self.columns[0]
                .head
                .lines()
                .all(|h| h.chars().count() <= room);
            if room < 4 || !head_fits || long.iter().all(|&l| l) {
                cols.remove(0);
                long.iter_mut().for_each(|l| *l = true);
            }
        }
        let (drawn, head_lines) = self.draw(&cols, &rows, &long);
        let pad = " ".repeat(self.indent);
        let all_stacked = cols.first() != Some(&0) && shown.first() == Some(&0);
        // Stacked rows keep the table's indent: their first column, right-aligned numbers in
        // the shipped tables, already sits in from the name above it.
        let inner = pad.clone();
        let mut drawn = drawn.into_iter();
        let mut out: Vec<String> = Vec::new();
        if all_stacked && head_lines > 0 {
            out.push(format!("{pad}{}", self.columns[0].head.replace('\n', " ")));
        }
        for l in drawn.by_ref().take(head_lines) {
            out.push(format!("{inner}{l}").trim_end().to_string());
        }
        let mut row = 0;
        for line in &self.lines {
            match line {
                Line::Heading(h) => out.push(format!("{pad}{h}")),
                Line::Cells(cells) => {
                    if long[row] {
                        out.push(format!("{pad}{}", first(cells)));
                    }
                    if let Some(l) = drawn.next() {
                        out.push(format!("{inner}{l}").trim_end().to_string());
                    }
                    row += 1;
                }
            }
        }
        out
    }

    /// The columns `cols` of `rows` drawn by comfy-table (a `long` row's first cell left
    /// empty), without indent or trailing blanks; and how many of the lines are the header.
    fn draw(&self, cols: &[usize], rows: &[&Vec<String>], long: &[bool]) -> (Vec<String>, usize) {
        if cols.is_empty() {
            return (Vec::new(), 0);
        }
        let mut comfy = Comfy::new();
        comfy
            .load_style(TableStyle::new())
            .set_content_arrangement(ContentArrangement::Disabled);
        let heads: Vec<&str> = self.columns.iter().map(|c| c.head.as_str()).collect();
        let has_head = heads.iter().any(|h| !h.is_empty());
        if has_head {
            // Headers of fewer lines sit on the bottom line, above their column's cells.
            let depth = cols
                .iter()
                .map(|&c| heads[c].lines().count())
                .max()
                .unwrap_or(1);
            let head = |c: usize| {
                let n = heads[c].lines().count().max(1);
                format!("{}{}", "\n".repeat(depth.max(1) - n), heads[c])
            };
            comfy.set_header(cols.iter().map(|&c| head(c)).collect::<Vec<_>>());
        }
        for (r, is_long) in rows.iter().zip(long) {
            let cell = |c: usize| match (c, is_long) {
                (0, true) => "",
                _ => r.get(c).map_or("", String::as_str),
            };
            comfy.add_row(cols.iter().map(|&c| cell(c)).collect::<Vec<_>>());
        }
        let last = cols.len() - 1;
        for (i, &c) in cols.iter().enumerate() {
            if let Some(col) = comfy.column_mut(i) {
                col.set_padding((0, if i == last { 0 } else { 2 }));
                col.set_cell_alignment(match self.columns[c].align {
                    Align::Left => CellAlignment::Left,
                    Align::Right => CellAlignment::Right,
                });
            }
        }
        let lines: Vec<String> = comfy.lines().map(|l| l.trim_end().to_string()).collect();
        let head_lines = match has_head {
            true => lines.len() - rows.len(),
            false => 0,
        };
        (lines, head_lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(2)
            .column("name", Align::Left)
            .column("value (ms)", Align::Right)
            .optional("detail", Align::Left, 1);
        t.row(["a", "1.5", "first"]);
        t.row(["longer name", "12.25", "second"]);
        t
    }

    #[test]
    fn columns_align_with_two_spaces_between_and_no_trailing_blanks() {
        assert_eq!(
            sample().render(80),
            "  name         value (ms)  detail\n\
             \x20 a                   1.5  first\n\
             \x20 longer name       12.25  second\n"
        );
    }

    #[test]
    fn an_optional_column_leaves_first_and_a_note_names_it() {
        let out = sample().render(28);
        assert_eq!(
            out,
            "  name         value (ms)\n\
             \x20 a                   1.5\n\
             \x20 longer name       12.25\n\
             \x20 (left out to fit 28\n\
             \x20 columns: detail)\n"
        );
    }

    #[test]
    fn a_stackable_table_puts_its_first_cell_above_its_row_and_never_breaks_a_cell() {
        let mut t = Table::new(2)
            .column("figure", Align::Left)
            .column("published", Align::Right)
            .column("verdict", Align::Left)
            .stackable();
        t.row([
            "a figure whose name is far too long to share a line",
            "49391",
            "reproduced",
        ]);
        t.heading("a heading");
        t.row(["short", "7", "not reproduced"]);
        let out = t.render(40);
        assert_eq!(
            out,
            "  figure  published  verdict\n\
             \x20 a figure whose name is far too long to share a line\n\
             \x20             49391  reproduced\n\
             \x20 a heading\n\
             \x20 short           7  not reproduced\n"
        );
        // With no room for any first cell, the first column leaves the table.
        assert_eq!(
            t.render(28),
            "  figure\n\
             \x20 published  verdict\n\
             \x20 a figure whose name is far too long to share a line\n\
             \x20     49391  reproduced\n\
             \x20 a heading\n\
             \x20 short\n\
             \x20         7  not reproduced\n"
        );
        for l in out.lines() {
            assert!(l.chars().count() <= 53, "{l}");
        }
    }

    #[test]
    fn widths_count_characters_so_units_and_plus_minus_align() {
        let mut t = Table::new(0)
            .column("x", Align::Left)
            .column("µs", Align::Right);
        t.row(["a", "1.0 ± 0.1"]);
        t.row(["b", "10.0 ± 2.5"]);
        let out = t.render(80);
        let lines: Vec<usize> = out.lines().map(|l| l.chars().count()).collect();
        assert_eq!(lines, vec![13, 13, 13]);
    }

    #[test]
    fn two_line_headers_and_empty_tables() {
        let mut t = Table::new(0)
            .column("run", Align::Left)
            .column("read\np99", Align::Right);
        t.row(["x", "5"]);
        assert_eq!(t.render(80), "     read\nrun   p99\nx       5\n");
    }
}
