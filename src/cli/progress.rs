//! The progress bar `qsim run`, `validate`, `reproduce` and `--shard` runs draw on stderr.

/// The progress bar of `qsim run`, `validate` and `reproduce`: drawn on stderr once the work
/// has taken a second, never with `--quiet`, and hidden by indicatif when stderr is not a
/// terminal. It only draws, so it cannot change any output.
pub(super) struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: std::time::Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Progress {
    pub(super) fn new(quiet: bool) -> Progress {
        Progress::counting(quiet, "runs")
    }

    /// A bar counting `unit` (runs, replications), after a message set by
    /// [`Progress::say`].
    pub(super) fn counting(quiet: bool, unit: &str) -> Progress {
        let bar = (!quiet).then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::hidden(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
                "{{spinner}} {{msg}}{{pos}}/{{len}} {unit} [{{wide_bar}}] {{elapsed}} (eta {{eta}})"
            )) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        });
        Progress {
            bar,
            started: std::time::Instant::now(),
            shown: std::sync::atomic::AtomicBool::new(false),
        }
    }

    pub(super) fn tick(&self, done: usize, total: usize) {
        let Some(bar) = &self.bar else {
            return;
        };
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if self.started.elapsed() >= std::time::Duration::from_secs(1)
            && !self.shown.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    /// Runs `f` with the bar cleared from the terminal (redrawn after), so that what `f` prints
    /// is not mixed with it.
    pub(super) fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Shows `what` before the count (a scenario's name).
    pub(super) fn say(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{what}: "));
        }
    }

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
