//! The worker pool every experiment runs on: jobs handed out by index over scoped threads,
//! results folded back in index order, so what a caller sees never depends on the thread
//! count.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `f(0..n)` over `jobs` threads (0 = all cores) and returns the results by index.
pub(super) fn parallel<T: Send>(n: usize, jobs: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    parallel_fold(n, jobs, f, |_, r| out.push(r));
    out
}

/// Runs `f(0..n)` over `jobs` threads (0 = all cores) and hands each result to `fold` in
/// index order, as soon as every earlier one has been folded. Results that finish early wait
/// in a small reorder buffer, so memory holds about one result per thread, not `n`.
pub(super) fn parallel_fold<T: Send>(
    n: usize,
    jobs: usize,
    f: impl Fn(usize) -> T + Sync,
    fold: impl FnMut(usize, T) + Send,
) {
    let threads = if jobs == 0 {
        std::thread::available_parallelism().map_or(1, |c| c.get())
    } else {
        jobs
    }
    .min(n)
    .max(1);
    struct Order<T, F> {
        next: usize,
        waiting: BTreeMap<usize, T>,
        fold: F,
    }
    let order = Mutex::new(Order {
        next: 0,
        waiting: BTreeMap::new(),
        fold,
    });
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let r = f(i);
                    let mut o = order.lock().expect("a run thread panicked");
                    o.waiting.insert(i, r);
                    loop {
                        let k = o.next;
                        let Some(r) = o.waiting.remove(&k) else {
                            break;
                        };
                        (o.fold)(k, r);
                        o.next += 1;
                    }
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_fold_sees_results_in_index_order_whatever_the_threads() {
        for jobs in [1, 2, 7] {
            let mut seen = Vec::new();
            parallel_fold(
                50,
                jobs,
                |i| {
                    // Later indices finish first more often than not.
                    std::thread::sleep(std::time::Duration::from_micros(((50 - i) * 20) as u64));
                    i * i
                },
                |k, v| seen.push((k, v)),
            );
            let want: Vec<(usize, usize)> = (0..50).map(|i| (i, i * i)).collect();
            assert_eq!(seen, want, "jobs {jobs}");
        }
    }
}
