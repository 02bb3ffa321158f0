//! The exact form of the statistics, for files that must be read back bit for bit (the
//! partial results of `qsim run --shard`).
//!
//! [`Histogram`](super::Histogram) and [`Running`](super::Running) serialise, by default, in
//! the form reports show (count, mean, standard deviation, percentile bins), which cannot be
//! folded again. Inside [`with_exact`] they serialise their whole state instead: every counter,
//! and each `f64` as its IEEE-754 bit pattern (so infinities, NaN and the last bit survive);
//! their `Deserialize` reads only that form. Every other type keeps its one serde form.

use std::cell::Cell;

thread_local! {
    static EXACT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the exact form switched on for this thread (restored afterwards, even if `f`
/// panics).
pub fn with_exact<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            EXACT.with(|e| e.set(self.0));
        }
    }
    let _restore = Restore(EXACT.with(|e| e.replace(true)));
    f()
}

/// Whether this thread is inside [`with_exact`].
pub fn is_exact() -> bool {
    EXACT.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_scoped_and_restored() {
        assert!(!is_exact());
        with_exact(|| {
            assert!(is_exact());
            with_exact(|| assert!(is_exact()));
            assert!(is_exact(), "an inner scope keeps the outer one's mode");
        });
        assert!(!is_exact());
        let _ = std::panic::catch_unwind(|| with_exact(|| panic!("inside")));
        assert!(!is_exact(), "restored after a panic");
    }
}
