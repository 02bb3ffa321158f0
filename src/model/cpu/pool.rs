//! CPUs shared by processor sharing.
//!
//! Runnable tasks (a crypt thread encrypting, kcryptd_io doing its hop, a softirq decrypting
//! under `inline`) share `cpus` processors equally: with `n` tasks each progresses at
//! `min(1, cpus / n)` ns of work per ns. dm-crypt yields between 512-byte sectors, so this is close
//! to what the scheduler does, and it needs no event per sector.
//!
//! The implementation keeps a *virtual time* `V` that advances at the per-task rate; a task that
//! arrives at `V_a` with work `w` finishes when `V` reaches `V_a + w`. Tasks sit in a min-heap
//! on that finish tag (ties broken by arrival order), so each arrival and departure costs
//! O(log n) and the next completion is one event. `V` is an integer in units of 2^-20 ns of work so everything stays exact and
//! reproducible.

use crate::engine::{SimDuration, SimTime};
use crate::model::cpu::sched::{div_ceil_u128, div_u128};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Fixed-point scale of virtual time: units per ns of work.
const SCALE: u128 = 1 << 20;

/// A plain numeric task tag (what the pool's own tests use); the world tags tasks with
/// [`TaskOwner`](crate::model::base::ids::TaskOwner).
pub type TaskTag = u64;

/// A runnable task: its finish tag in virtual time, its arrival sequence (unique, so the order
/// is total and never looks at the owner) and its owner.
#[derive(Debug, Clone, Copy)]
struct Task<T> {
    finish: u128,
    seq: u64,
    tag: T,
}

impl<T> PartialEq for Task<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Task<T> {}

impl<T> PartialOrd for Task<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Task<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.finish, self.seq).cmp(&(other.finish, other.seq))
    }
}

/// A pool of CPUs shared by processor sharing; `T` tells a finished task's owner.
#[derive(Debug)]
pub struct CpuPool<T = TaskTag> {
    cpus: u32,
    /// Virtual time, in units of 1/SCALE ns of work.
    vtime: u128,
    last: SimTime,
    /// Runnable tasks, earliest finish tag first.
    tasks: BinaryHeap<Reverse<Task<T>>>,
    seq: u64,
    /// Integral of busy CPUs over time, in CPU-ns.
    busy_cpu_ns: u128,
}

impl<T: Copy> CpuPool<T> {
    /// `cpus` processors, idle.
    pub fn new(cpus: u32) -> Self {
        assert!(cpus >= 1);
        CpuPool {
            cpus,
            vtime: 0,
            last: SimTime::ZERO,
            tasks: BinaryHeap::new(),
            seq: 0,
            busy_cpu_ns: 0,
        }
    }

    /// Number of runnable tasks.
    pub fn runnable(&self) -> usize {
        self.tasks.len()
    }

    fn busy(&self) -> u128 {
        (self.tasks.len() as u128).min(u128::from(self.cpus))
    }

    /// Advances virtual time to `now`.
    fn advance(&mut self, now: SimTime) {
        let dt = u128::from(now.since(self.last).as_ns());
        self.last = now;
        let n = self.tasks.len() as u128;
        if n == 0 || dt == 0 {
            return;
        }
        let busy = self.busy();
        self.busy_cpu_ns += dt * busy;
        self.vtime += div_u128(dt * SCALE * busy, n);
    }

    /// Adds a task needing `work` of CPU time. Call [`CpuPool::next_completion`] afterwards.
    pub fn add(&mut self, now: SimTime, work: SimDuration, tag: T) {
        self.advance(now);
        let finish = self.vtime + u128::from(work.as_ns()) * SCALE;
        self.seq += 1;
        self.tasks.push(Reverse(Task {
            finish,
            seq: self.seq,
            tag,
        }));
    }

    /// When the earliest task will finish if nothing changes, or `None` when idle.
    pub fn next_completion(&self, now: SimTime) -> Option<SimTime> {
        let finish = self.tasks.peek()?.0.finish;
        debug_assert_eq!(
            now, self.last,
            "call after add/finished at the same instant"
        );
        let need = finish.saturating_sub(self.vtime);
        let n = self.tasks.len() as u128;
        let per_ns = SCALE * self.busy();
        // ceil(need * n / per_ns) real ns.
        let dt = div_ceil_u128(need * n, per_ns);
        Some(now + SimDuration::from_ns(dt as u64))
    }

    /// Removes and returns the tags of every task finished by `now`, in finish order.
    pub fn finished(&mut self, now: SimTime, out: &mut Vec<T>) {
        self.advance(now);
        while let Some(task) = self.tasks.peek() {
            if task.0.finish > self.vtime {
                break;
            }
            out.push(task.0.tag);
            self.tasks.pop();
        }
    }

    /// CPU-ns consumed so far (advance first with [`CpuPool::sync`]).
    pub fn busy_cpu_ns(&self) -> u128 {
        self.busy_cpu_ns
    }

    /// Brings the accounting up to `now` without changing the task set.
    pub fn sync(&mut self, now: SimTime) {
        self.advance(now);
    }

    /// Number of CPUs.
    pub fn cpus(&self) -> u32 {
        self.cpus
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_to_completion(pool: &mut CpuPool, mut now: SimTime) -> Vec<(TaskTag, u64)> {
        let mut done = Vec::new();
        let mut out = Vec::new();
        while let Some(t) = pool.next_completion(now) {
            now = t;
            out.clear();
            pool.finished(now, &mut out);
            done.extend(out.iter().map(|&tag| (tag, now.as_ns())));
        }
        done
    }

    #[test]
    fn one_cpu_shares_equally() {
        let mut p = CpuPool::new(1);
        let t0 = SimTime::ZERO;
        p.add(t0, SimDuration::from_ns(100), 1);
        p.add(t0, SimDuration::from_ns(300), 2);
        // Both run at half speed until 200 ns, when task 1 is done; task 2 then has 200 left.
        assert_eq!(run_to_completion(&mut p, t0), vec![(1, 200), (2, 400)]);
    }

    #[test]
    fn two_cpus_run_two_tasks_in_parallel() {
        let mut p = CpuPool::new(2);
        let t0 = SimTime::ZERO;
        p.add(t0, SimDuration::from_ns(100), 1);
        p.add(t0, SimDuration::from_ns(300), 2);
        assert_eq!(run_to_completion(&mut p, t0), vec![(1, 100), (2, 300)]);
        assert_eq!(p.busy_cpu_ns(), 400);
    }

    #[test]
    fn late_arrival_slows_the_running_task() {
        let mut p = CpuPool::new(1);
        p.add(SimTime::ZERO, SimDuration::from_ns(100), 1);
        let t = SimTime::from_ns(50);
        p.sync(t);
        p.add(t, SimDuration::from_ns(100), 2);
        // Task 1 has 50 left at half speed: done at 150; task 2 then has 50 left alone: 200.
        assert_eq!(run_to_completion(&mut p, t), vec![(1, 150), (2, 200)]);
    }

    /// Differential check against a slow, obvious per-nanosecond simulation.
    #[test]
    fn matches_a_step_by_step_reference() {
        let jobs = [(0u64, 70u64), (10, 30), (10, 200), (40, 5), (90, 60)];
        for cpus in 1..=3u32 {
            // Reference: step 1 ns at a time with fractional progress.
            let mut rem: Vec<f64> = vec![f64::NAN; jobs.len()];
            let mut done_ref = vec![0u64; jobs.len()];
            let mut t = 0u64;
            while done_ref.contains(&0) {
                for (i, &(a, w)) in jobs.iter().enumerate() {
                    if a == t {
                        rem[i] = w as f64;
                    }
                }
                let active: Vec<usize> = (0..jobs.len())
                    .filter(|&i| !rem[i].is_nan() && rem[i] > 1e-9)
                    .collect();
                let rate = (cpus as f64 / active.len().max(1) as f64).min(1.0);
                t += 1;
                for &i in &active {
                    rem[i] -= rate;
                    if rem[i] <= 1e-9 {
                        done_ref[i] = t;
                    }
                }
            }
            // Fast model.
            let mut p = CpuPool::new(cpus);
            let mut done = vec![0u64; jobs.len()];
            let mut out = Vec::new();
            let mut now = SimTime::ZERO;
            let mut next_arrival = 0;
            loop {
                let na = jobs.get(next_arrival).map(|j| SimTime::from_ns(j.0));
                let nc = p.next_completion(now);
                let t = match (na, nc) {
                    (None, None) => break,
                    (Some(a), Some(c)) => a.min(c),
                    (a, c) => a.or(c).unwrap(),
                };
                now = t;
                out.clear();
                p.finished(now, &mut out);
                for &tag in &out {
                    done[tag as usize] = now.as_ns();
                }
                while jobs.get(next_arrival).is_some_and(|j| j.0 == now.as_ns()) {
                    let (_, w) = jobs[next_arrival];
                    p.add(now, SimDuration::from_ns(w), next_arrival as u64);
                    next_arrival += 1;
                }
            }
            for i in 0..jobs.len() {
                let diff = done[i].abs_diff(done_ref[i]);
                assert!(
                    diff <= 1,
                    "cpus={cpus} job {i}: {} vs {}",
                    done[i],
                    done_ref[i]
                );
            }
        }
    }
}
