//! The warnings of one job file, each kept once: an option warned on many lines (500,000 lines
//! of `verify=md5`) is one warning that counts its lines, and a `[global]` option that every
//! job inherits is counted once, however many jobs apply it. Each warning costs a hash lookup,
//! so reading stays linear in the file, and at most [`MAX_WARNINGS`] are kept.

use super::Warning;
use std::collections::{HashMap, HashSet};

/// Most distinct warnings one job file keeps; the rest are counted in a last warning that says
/// how many were left out.
pub const MAX_WARNINGS: usize = 100;

/// The warnings so far: distinct `(option, message)` pairs in the order first seen.
#[derive(Debug, Default)]
pub(super) struct Warnings {
    file: String,
    list: Vec<Warning>,
    /// Where each kept `(option, message)` is in `list`.
    index: HashMap<(String, String), usize>,
    /// The lines already counted for each kept warning (a `[global]` line is seen once per job).
    seen: HashSet<(u64, usize)>,
    /// Warnings past [`MAX_WARNINGS`] (distinct lines), and the first line among them.
    left_out: u64,
    first_left_out: Option<u64>,
    left_out_seen: HashSet<(u64, String)>,
}

impl Warnings {
    pub(super) fn new(file: &str) -> Warnings {
        Warnings {
            file: file.to_string(),
            ..Warnings::default()
        }
    }

    /// Records that `option` at `line` gets `message`: a new warning, another line of a known
    /// one, or nothing when that line was already counted.
    pub(super) fn push(&mut self, line: u64, option: String, message: String) {
        let key = (option, message);
        if let Some(&i) = self.index.get(&key) {
            if self.seen.insert((line, i)) {
                let w = &mut self.list[i];
                w.count += 1;
                w.line = w.line.min(line);
                w.last_line = w.last_line.max(line);
            }
            return;
        }
        if self.list.len() >= MAX_WARNINGS {
            if self.left_out_seen.insert((line, key.0)) {
                self.left_out += 1;
                self.first_left_out = Some(self.first_left_out.map_or(line, |l| l.min(line)));
            }
            return;
        }
        let i = self.list.len();
        self.list.push(Warning {
            file: self.file.clone(),
            line,
            option: key.0.clone(),
            message: key.1.clone(),
            count: 1,
            last_line: line,
        });
        self.seen.insert((line, i));
        self.index.insert(key, i);
    }

    /// The warnings in the order first seen, with one more saying how many were left out.
    pub(super) fn into_list(self) -> Vec<Warning> {
        let mut list = self.list;
        if let Some(line) = self.first_left_out {
            list.push(Warning {
                file: self.file,
                line,
                option: "more warnings".to_string(),
                message: format!(
                    "{} more warnings from here on are not shown (qsim shows the first \
                     {MAX_WARNINGS} distinct ones)",
                    self.left_out
                ),
                count: 1,
                last_line: line,
            });
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn texts(w: Warnings) -> Vec<String> {
        w.into_list().iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn repeats_of_one_option_are_one_warning_with_their_count() {
        let mut w = Warnings::new("j.fio");
        for line in 3..8 {
            w.push(line, "[r] verify".into(), "ignored".into());
        }
        w.push(9, "[r] norandommap".into(), "ignored".into());
        assert_eq!(
            texts(w),
            [
                "j.fio:3: [r] verify: ignored (5 times, lines 3 to 7)",
                "j.fio:9: [r] norandommap: ignored"
            ]
        );
    }

    #[test]
    fn a_line_seen_again_is_not_counted_again() {
        // A [global] option is applied to every job: one line, counted once.
        let mut w = Warnings::new("j.fio");
        for _job in 0..64 {
            w.push(2, "[global] verify".into(), "ignored".into());
            w.push(3, "[global] verify".into(), "ignored".into());
        }
        assert_eq!(
            texts(w),
            ["j.fio:2: [global] verify: ignored (2 times, lines 2 to 3)"]
        );
    }

    #[test]
    fn past_the_cap_warnings_are_counted_not_kept() {
        let mut w = Warnings::new("j.fio");
        for line in 0..(MAX_WARNINGS as u64 + 30) {
            w.push(line + 1, format!("[r] o{line}"), "ignored".into());
            w.push(line + 1, format!("[r] o{line}"), "ignored".into());
        }
        let list = w.into_list();
        assert_eq!(list.len(), MAX_WARNINGS + 1);
        let last = list.last().unwrap().to_string();
        assert_eq!(
            last,
            "j.fio:101: more warnings: 30 more warnings from here on are not shown (qsim shows \
             the first 100 distinct ones)"
        );
    }

    #[test]
    fn de_duplication_is_linear() {
        // 200,000 repeats: quadratic de-duplication took minutes here; a hash lookup each
        // takes well under a second even in a debug build.
        let start = Instant::now();
        let mut w = Warnings::new("j.fio");
        for line in 0..200_000 {
            w.push(line, "[r] verify".into(), "ignored".into());
        }
        let list = w.into_list();
        assert_eq!((list.len(), list[0].count), (1, 200_000));
        assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    }
}
