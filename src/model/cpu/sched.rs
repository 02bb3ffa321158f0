//! CPUs with identity and priority: the per-CPU [`Machine`], and the [`Cpus`] facade that holds
//! either it or today's shared `CpuPool`.
//!
//! Each CPU of a [`Machine`] runs two kinds of work (`docs/model/cpu.md`):
//!
//! - **softirq** work, one item at a time in arrival order at full speed, before any thread: while
//!   a CPU has softirq work pending its threads are preempted and make no progress
//!   (kernel/softirq.c `__do_softirq`, run from `irq_exit`);
//! - **threads**, which share what softirq leaves under CFS weighted fair sharing: each runnable
//!   thread progresses at `weight / Σ weights` of its CPU, the weights from the kernel's
//!   `sched_prio_to_weight` table ([`SCHED_PRIO_TO_WEIGHT`]);
//! - between the two, a thread's **section without `cond_resched()`**
//!   ([`SchedClass::NoResched`]): on a kernel without full preemption such a section keeps its
//!   CPU against every other thread until it ends, while softirq work still interrupts it. These
//!   run one at a time in arrival order at full speed, after softirq and before threads.
//!
//! A task is placed on one CPU when it is added ([`Placement`]: bound, or a simplified
//! `select_idle_sibling`) and never migrates. Per CPU, threads keep an exact integer *virtual
//! time* that advances at `VSCALE / Σ weights` per ns; a thread of weight `w` and work `c` added at
//! `V` finishes when the virtual time reaches `V + c·VSCALE/w`. Threads sit in a min-heap on that
//! finish tag, so an arrival or departure costs O(log n) on its CPU; finding the next completion
//! scans the CPUs (at most 64). No float enters the timing and no hash map is iterated.
//!
//! CPU time is booked per *account*, a label the caller chooses (softirq, kcryptd workers,
//! dmcrypt_write, ...): a softirq item's account gets its CPU's whole time, threads split theirs
//! by weight. The books are kept in units of 2^-20 CPU-ns and every CPU-ns is booked to exactly
//! one account, so the accounts sum to the busy time.

use crate::engine::{SimDuration, SimTime};
use crate::model::cpu::pool::CpuPool;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

#[cfg(test)]
mod tests;

/// CFS load weight per nice level, nice −20 first: kernel/sched/core.c `sched_prio_to_weight`
/// (`prio_to_weight` in kernel/sched/sched.h before 4.10). Each step is about ×1.25, so one nice
/// level is about 10 % of CPU between two competing threads; nice 0 is 1024.
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, // −20
    29154, 23254, 18705, 14949, 11916, // −15
    9548, 7620, 6100, 4904, 3906, // −10
    3121, 2501, 1991, 1586, 1277, // −5
    1024, 820, 655, 526, 423, // 0
    335, 272, 215, 172, 137, // 5
    110, 87, 70, 56, 45, // 10
    36, 29, 23, 18, 15, // 15
];

/// The most favoured nice level, include/linux/sched/prio.h `MIN_NICE`.
pub const MIN_NICE: i8 = -20;
/// The least favoured nice level, include/linux/sched/prio.h `MAX_NICE`.
pub const MAX_NICE: i8 = 19;
/// The nice level of `WQ_HIGHPRI` workqueue workers: kernel/workqueue.c `HIGHPRI_NICE_LEVEL`
/// (= `MIN_NICE`); also `dmcrypt_write`'s under dm-crypt's `high_priority` (drivers/md/dm-crypt.c
/// `crypt_ctr`: `set_user_nice(cc->write_thread, MIN_NICE)`).
pub const HIGHPRI_NICE: i8 = MIN_NICE;

/// The CFS weight of a nice level, clamped to `MIN_NICE..=MAX_NICE` as `nice(2)` clamps.
pub fn nice_to_weight(nice: i8) -> u32 {
    let i = nice.clamp(MIN_NICE, MAX_NICE) - MIN_NICE;
    SCHED_PRIO_TO_WEIGHT[i as usize]
}

/// Fixed-point scale of a CPU's thread virtual time: units per ns of CPU at weight 1.
const VSCALE: u128 = 1 << 32;
/// Fixed-point scale of the CPU-time books: units per CPU-ns.
const ASCALE: u128 = 1 << 20;

/// `a / b`, by a shift when `b` is a power of two (a CPU whose runnable threads are all nice 0
/// has a weight of 1024 per thread: one or two of them, 1024 or 2048), else by a 64-bit
/// division when both fit (the common case, and several times cheaper than the 128-bit one):
/// the same quotient every way.
#[inline]
pub(crate) fn div_u128(a: u128, b: u128) -> u128 {
    if b.is_power_of_two() {
        a >> b.trailing_zeros()
    } else if (a | b) >> 64 == 0 {
        u128::from(a as u64 / b as u64)
    } else {
        a / b
    }
}

/// `a.div_ceil(b)`, by a shift when `b` is a power of two, else by a 64-bit division when both
/// fit: the same quotient every way.
#[inline]
pub(crate) fn div_ceil_u128(a: u128, b: u128) -> u128 {
    if b.is_power_of_two() {
        (a >> b.trailing_zeros()) + u128::from(a & (b - 1) != 0)
    } else if (a | b) >> 64 == 0 {
        u128::from((a as u64).div_ceil(b as u64))
    } else {
        a.div_ceil(b)
    }
}

/// How a task competes for its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedClass {
    /// Softirq context: runs before every thread on its CPU, one item at a time, FIFO.
    Softirq,
    /// A thread in a section that never calls `cond_resched()` (dm-crypt's `crypt_convert()`
    /// with `atomic` set, as under the no-workqueue flags): it holds its CPU against every
    /// thread until done, preempted only by softirq; such sections queue FIFO per CPU.
    NoResched,
    /// A thread at a nice level (−20..=19; out-of-range values are clamped).
    Thread {
        /// The nice level; its weight is [`nice_to_weight`].
        nice: i8,
    },
}

impl SchedClass {
    /// A nice-0 thread: submitters, the application, default kcryptd workers.
    pub const NORMAL: SchedClass = SchedClass::Thread { nice: 0 };
    /// A thread at [`HIGHPRI_NICE`]: `WQ_HIGHPRI` kworkers, `dmcrypt_write` under `high_priority`.
    pub const HIGHPRI: SchedClass = SchedClass::Thread { nice: HIGHPRI_NICE };
}

/// Where a task is placed when it is added; it stays there until it finishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// This CPU: bound work (a per-CPU kworker under `same_cpu_crypt`), softirq on the CPU that
    /// took the interrupt.
    On(u32),
    /// A waking thread: `prev` (the CPU it last ran on, or the waker's) if it has nothing
    /// runnable, else the lowest-numbered idle CPU, else the CPU with the least runnable thread
    /// weight (ties: `prev`, then the lowest index). A simplified kernel/sched/fair.c
    /// `select_idle_sibling`.
    Wake {
        /// The CPU the task last ran on, if any.
        prev: Option<u32>,
    },
}

/// A finished task and the CPU it ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done<T> {
    /// The tag given to [`Machine::add`].
    pub tag: T,
    /// The CPU it ran on (0 under [`Cpus::Shared`]).
    pub cpu: u32,
}

/// A runnable thread: its finish tag in its CPU's virtual time, its arrival sequence (unique, so
/// the order is total and never looks at the tag), its weight, account and tag.
#[derive(Debug, Clone, Copy)]
struct Thread<T> {
    finish: u128,
    seq: u64,
    weight: u32,
    account: usize,
    /// Placed by [`Placement::Wake`]: the load balancer could move it (a bound one it could not).
    movable: bool,
    tag: T,
}

impl<T> PartialEq for Thread<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Thread<T> {}

impl<T> PartialOrd for Thread<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Thread<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.finish, self.seq).cmp(&(other.finish, other.seq))
    }
}

/// A pending softirq item: its remaining work in ns.
#[derive(Debug, Clone, Copy)]
struct Soft<T> {
    rem: u64,
    seq: u64,
    account: usize,
    tag: T,
}

/// A task finished but not yet handed out by [`Machine::finished`].
#[derive(Debug, Clone, Copy)]
struct Finished<T> {
    at: SimTime,
    cpu: u32,
    seq: u64,
    tag: T,
}

/// CPU-time books: busy CPU-ns and CPU time per account in units of 1/ASCALE CPU-ns.
#[derive(Debug, Clone)]
struct Books {
    busy_ns: u128,
    acct: Vec<u128>,
}

impl Books {
    fn new(accounts: usize) -> Self {
        assert!(accounts >= 1, "at least one account");
        Books {
            busy_ns: 0,
            acct: vec![0; accounts],
        }
    }

    /// `ns` CPU-ns of one account.
    fn charge(&mut self, account: usize, ns: u128) {
        self.busy_ns += ns;
        self.acct[account] += ns * ASCALE;
    }

    /// `ns` CPU-ns split over the accounts in proportion to `weights` (summing to `total` > 0);
    /// what the floors leave goes to the heaviest account (the lowest index among equals), so
    /// the books stay exact.
    fn share(&mut self, ns: u128, weights: &[u64], total: u64) {
        let all = ns * ASCALE;
        let mut given = 0;
        let mut heaviest = 0;
        for (a, &w) in weights.iter().enumerate() {
            if w == 0 {
                continue;
            }
            let part = div_u128(all * u128::from(w), u128::from(total));
            self.acct[a] += part;
            given += part;
            if w > weights[heaviest] {
                heaviest = a;
            }
        }
        self.acct[heaviest] += all - given;
        self.busy_ns += ns;
    }

    fn account_ns(&self, account: usize) -> u128 {
        self.acct[account] / ASCALE
    }
}

/// One CPU: its softirq queue and its threads.
#[derive(Debug, Clone)]
struct Cpu<T> {
    soft: VecDeque<Soft<T>>,
    /// Thread sections without `cond_resched()`, FIFO, after softirq and before threads.
    held: VecDeque<Soft<T>>,
    threads: BinaryHeap<Reverse<Thread<T>>>,
    /// Thread virtual time, in units of 1/VSCALE ns of CPU at weight 1.
    vtime: u128,
    /// Σ weights of the runnable threads.
    weight: u64,
    /// Σ weights of the runnable threads per account.
    acct_weight: Vec<u64>,
    /// Runnable threads placed by [`Placement::Wake`] (not bound to this CPU).
    movable: usize,
    /// CPU-ns this CPU has been busy.
    busy_ns: u128,
}

impl<T: Copy> Cpu<T> {
    fn new(accounts: usize) -> Self {
        Cpu {
            soft: VecDeque::new(),
            held: VecDeque::new(),
            threads: BinaryHeap::new(),
            vtime: 0,
            weight: 0,
            acct_weight: vec![0; accounts],
            movable: 0,
            busy_ns: 0,
        }
    }

    fn runnable(&self) -> usize {
        self.soft.len() + self.held.len() + self.threads.len()
    }

    fn idle(&self) -> bool {
        self.runnable() == 0
    }

    /// The thread load placement compares: Σ weights, a held section counting as a nice-0
    /// thread (it occupies the CPU as one would, and more).
    fn load(&self) -> u64 {
        self.weight + self.held.len() as u64 * u64::from(nice_to_weight(0))
    }

    /// Adds a runnable thread, `movable` if placed by wake-up (else bound to this CPU).
    fn push_thread(
        &mut self,
        work: SimDuration,
        weight: u32,
        seq: u64,
        account: usize,
        movable: bool,
        tag: T,
    ) {
        let finish =
            self.vtime + div_ceil_u128(u128::from(work.as_ns()) * VSCALE, u128::from(weight));
        self.weight += u64::from(weight);
        self.acct_weight[account] += u64::from(weight);
        self.movable += usize::from(movable);
        self.threads.push(Reverse(Thread {
            finish,
            seq,
            weight,
            account,
            movable,
            tag,
        }));
    }

    /// Runnable threads here that another CPU could take: the movable ones beyond the one task
    /// that would keep this CPU busy.
    fn waiting_movable(&self) -> usize {
        self.movable.min(self.runnable().saturating_sub(1))
    }

    /// Real ns until the earliest thread's finish tag, at the present weight.
    fn thread_ns_to_finish(&self) -> Option<u64> {
        let first = self.threads.peek()?.0.finish;
        let need = first.saturating_sub(self.vtime);
        let ns = (need * u128::from(self.weight)).div_ceil(VSCALE);
        Some(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// When this CPU's next task finishes if nothing changes, counted from `now`.
    fn next_completion(&self, now: SimTime) -> Option<SimTime> {
        match self.soft.front().or(self.held.front()) {
            Some(head) => Some(now + SimDuration::from_ns(head.rem)),
            None => Some(now + SimDuration::from_ns(self.thread_ns_to_finish()?)),
        }
    }

    /// Moves every softirq item (then held section) with no work left at the head, and every
    /// thread whose finish tag is reached, to `done` at `at`.
    fn retire(&mut self, at: SimTime, cpu: u32, done: &mut Vec<Finished<T>>) {
        for q in [&mut self.soft, &mut self.held] {
            while let Some(head) = q.front().filter(|s| s.rem == 0) {
                let (seq, tag) = (head.seq, head.tag);
                q.pop_front();
                done.push(Finished { at, cpu, seq, tag });
            }
            if !q.is_empty() {
                return;
            }
        }
        while let Some(t) = self.threads.peek().filter(|t| t.0.finish <= self.vtime) {
            let t = t.0;
            self.threads.pop();
            self.weight -= u64::from(t.weight);
            self.acct_weight[t.account] -= u64::from(t.weight);
            self.movable -= usize::from(t.movable);
            let (seq, tag) = (t.seq, t.tag);
            done.push(Finished { at, cpu, seq, tag });
        }
    }

    /// Runs this CPU from `from` to `to`, in segments that end at each completion.
    fn advance(
        &mut self,
        from: SimTime,
        to: SimTime,
        cpu: u32,
        books: &mut Books,
        done: &mut Vec<Finished<T>>,
    ) {
        let mut t = from;
        loop {
            self.retire(t, cpu, done);
            let left = to.since(t).as_ns();
            if left == 0 {
                return;
            }
            if let Some(head) = match self.soft.front_mut() {
                Some(h) => Some(h),
                None => self.held.front_mut(),
            } {
                let run = head.rem.min(left);
                head.rem -= run;
                books.charge(head.account, u128::from(run));
                self.busy_ns += u128::from(run);
                t += SimDuration::from_ns(run);
                continue;
            }
            let Some(to_finish) = self.thread_ns_to_finish() else {
                return;
            };
            let run = to_finish.min(left);
            self.vtime += div_u128(u128::from(run) * VSCALE, u128::from(self.weight));
            // One account holding the whole weight (a lone thread, or threads of one account)
            // takes the whole time: what `share` would give it, without its divisions.
            let first = self.threads.peek().map_or(0, |t| t.0.account);
            if self.acct_weight[first] == self.weight {
                books.charge(first, u128::from(run));
            } else {
                books.share(u128::from(run), &self.acct_weight, self.weight);
            }
            self.busy_ns += u128::from(run);
            t += SimDuration::from_ns(run);
        }
    }
}

/// CPUs with identity: per CPU a FIFO softirq queue that preempts CFS-weighted threads. `T`
/// tells a finished task's owner.
#[derive(Debug, Clone)]
pub struct Machine<T> {
    cpus: Vec<Cpu<T>>,
    /// Every CPU has run up to here.
    last: SimTime,
    seq: u64,
    /// Finished tasks not yet handed out.
    done: Vec<Finished<T>>,
    books: Books,
    /// CPU-ns a CPU sat idle while a movable thread waited on another ([`Machine::idle_beside_waiting_ns`]).
    idle_beside_waiting_ns: u128,
}

impl<T: Copy> Machine<T> {
    /// `cpus` idle CPUs, booking CPU time to `accounts` labels (`0..accounts`).
    pub fn new(cpus: u32, accounts: usize) -> Self {
        assert!(cpus >= 1, "at least one CPU");
        Machine {
            cpus: (0..cpus).map(|_| Cpu::new(accounts)).collect(),
            last: SimTime::ZERO,
            seq: 0,
            done: Vec::new(),
            books: Books::new(accounts),
            idle_beside_waiting_ns: 0,
        }
    }

    /// Runs every CPU up to `now`.
    fn advance(&mut self, now: SimTime) {
        let from = self.last;
        assert!(now >= from, "time went backwards: {now:?} < {from:?}");
        self.last = now;
        // Idle CPUs and waiting movable threads as they stood over [from, now), counted before
        // each CPU runs (and retires what finishes at `now`).
        let (mut idle, mut waiting) = (0usize, 0usize);
        for (i, cpu) in self.cpus.iter_mut().enumerate() {
            if cpu.idle() {
                idle += 1;
            } else {
                waiting += cpu.waiting_movable();
                cpu.advance(from, now, i as u32, &mut self.books, &mut self.done);
            }
        }
        let lost = idle.min(waiting) as u128;
        self.idle_beside_waiting_ns += lost * u128::from(now.since(from).as_ns());
    }

    /// Adds a task of `work` CPU time in `class`, placed by `place`, its CPU time booked to
    /// `account`; returns the CPU it runs on. Call [`Machine::next_completion`] afterwards.
    pub fn add(
        &mut self,
        now: SimTime,
        work: SimDuration,
        tag: T,
        class: SchedClass,
        place: Placement,
        account: usize,
    ) -> u32 {
        assert!(
            account < self.books.acct.len(),
            "account {account} out of range"
        );
        self.advance(now);
        let cpu = self.place(place);
        self.seq += 1;
        let seq = self.seq;
        let c = &mut self.cpus[cpu as usize];
        match class {
            SchedClass::Softirq => c.soft.push_back(Soft {
                rem: work.as_ns(),
                seq,
                account,
                tag,
            }),
            SchedClass::NoResched => c.held.push_back(Soft {
                rem: work.as_ns(),
                seq,
                account,
                tag,
            }),
            SchedClass::Thread { nice } => {
                let movable = matches!(place, Placement::Wake { .. });
                c.push_thread(work, nice_to_weight(nice), seq, account, movable, tag)
            }
        }
        cpu
    }

    /// The CPU `place` picks given what is runnable now.
    fn place(&self, place: Placement) -> u32 {
        let n = self.cpus() as usize;
        let prev = match place {
            Placement::On(c) => {
                assert!((c as usize) < n, "cpu {c} of {n}");
                return c;
            }
            Placement::Wake { prev } => prev,
        };
        if let Some(p) = prev {
            assert!((p as usize) < n, "prev cpu {p} of {n}");
            if self.cpus[p as usize].idle() {
                return p;
            }
        }
        if let Some(i) = self.cpus.iter().position(Cpu::idle) {
            return i as u32;
        }
        let least = self.cpus.iter().map(Cpu::load).min().unwrap_or(0);
        if let Some(p) = prev.filter(|&p| self.cpus[p as usize].load() == least) {
            return p;
        }
        self.cpus
            .iter()
            .position(|c| c.load() == least)
            .unwrap_or(0) as u32
    }

    /// When the earliest task will finish if nothing changes, or `None` when every CPU is idle.
    /// Call it at the instant of the last [`add`](Machine::add), [`finished`](Machine::finished)
    /// or [`sync`](Machine::sync).
    pub fn next_completion(&self, now: SimTime) -> Option<SimTime> {
        debug_assert_eq!(
            now, self.last,
            "call after add/finished at the same instant"
        );
        if !self.done.is_empty() {
            return Some(self.last);
        }
        self.cpus
            .iter()
            .filter_map(|c| c.next_completion(self.last))
            .min()
    }

    /// Appends every task finished by `now` to `out`, ordered by finish time, then CPU, then
    /// arrival.
    pub fn finished(&mut self, now: SimTime, out: &mut Vec<Done<T>>) {
        self.advance(now);
        self.done.sort_unstable_by_key(|f| (f.at, f.cpu, f.seq));
        out.extend(self.done.drain(..).map(|f| Done {
            tag: f.tag,
            cpu: f.cpu,
        }));
    }

    /// Brings the books up to `now` without handing out finished tasks.
    pub fn sync(&mut self, now: SimTime) {
        self.advance(now);
    }

    /// CPU-ns consumed so far on every CPU, all accounts (advance first with
    /// [`Machine::sync`]).
    pub fn busy_cpu_ns(&self) -> u128 {
        self.books.busy_ns
    }

    /// CPU-ns booked to `account` so far (rounded down).
    pub fn account_ns(&self, account: usize) -> u128 {
        self.books.account_ns(account)
    }

    /// CPU-ns so far during which a CPU had nothing to run while a thread that was not bound
    /// to its CPU waited beside another task elsewhere: at each instant, the smaller of the
    /// idle CPUs and those waiting threads. It is what a load balancer (kernel/sched/fair.c's
    /// newidle and periodic balancing, which qsim does not model: tasks never migrate) could
    /// have put to work, an upper bound on what the missing balancing costs a run. Exact when
    /// completions are handed out at the instants [`Machine::next_completion`] gives, as the
    /// world does: the runnable sets are then constant between calls.
    pub fn idle_beside_waiting_ns(&self) -> u128 {
        self.idle_beside_waiting_ns
    }

    /// CPU-ns `cpu` has been busy so far (softirq and threads).
    pub fn busy_ns_on(&self, cpu: u32) -> u128 {
        self.cpus[cpu as usize].busy_ns
    }

    /// Number of runnable tasks on every CPU (softirq items and threads).
    pub fn runnable(&self) -> usize {
        self.cpus.iter().map(Cpu::runnable).sum()
    }

    /// Number of runnable tasks on `cpu`.
    pub fn runnable_on(&self, cpu: u32) -> usize {
        self.cpus[cpu as usize].runnable()
    }

    /// Pending softirq items on `cpu`.
    pub fn softirq_on(&self, cpu: u32) -> usize {
        self.cpus[cpu as usize].soft.len()
    }

    /// Σ CFS weights of the runnable threads on `cpu`.
    pub fn thread_weight_on(&self, cpu: u32) -> u64 {
        self.cpus[cpu as usize].weight
    }

    /// Number of CPUs.
    pub fn cpus(&self) -> u32 {
        self.cpus.len() as u32
    }

    /// Number of accounts.
    pub fn accounts(&self) -> usize {
        self.books.acct.len()
    }
}

/// Today's shared pool (`CpuPool`, unchanged) with per-account books: its timing is
/// `CpuPool`'s to the nanosecond; a task's account gets `1/n` of the busy CPU time while `n`
/// tasks are runnable.
#[derive(Debug)]
pub struct SharedCpus<T> {
    pool: CpuPool<(T, usize)>,
    last: SimTime,
    /// Runnable tasks per account.
    count: Vec<u64>,
    books: Books,
    scratch: Vec<(T, usize)>,
}

impl<T: Copy> SharedCpus<T> {
    /// `cpus` processors shared by processor sharing, booking to `accounts` labels.
    pub fn new(cpus: u32, accounts: usize) -> Self {
        SharedCpus {
            pool: CpuPool::new(cpus),
            last: SimTime::ZERO,
            count: vec![0; accounts],
            books: Books::new(accounts),
            scratch: Vec::new(),
        }
    }

    /// Books the time since the last call the way the pool counts it (every task in the pool
    /// counts until it is handed out).
    fn book(&mut self, now: SimTime) {
        let dt = u128::from(now.since(self.last).as_ns());
        self.last = now;
        let n = self.pool.runnable() as u64;
        if n == 0 || dt == 0 {
            return;
        }
        let busy = u128::from(n.min(u64::from(self.pool.cpus())));
        self.books.share(dt * busy, &self.count, n);
    }

    /// `CpuPool::add`, booked to `account`.
    pub fn add(&mut self, now: SimTime, work: SimDuration, tag: T, account: usize) {
        assert!(account < self.count.len(), "account {account} out of range");
        self.book(now);
        self.count[account] += 1;
        self.pool.add(now, work, (tag, account));
    }

    /// `CpuPool::finished`; every task reports CPU 0.
    pub fn finished(&mut self, now: SimTime, out: &mut Vec<Done<T>>) {
        self.book(now);
        self.scratch.clear();
        self.pool.finished(now, &mut self.scratch);
        for &(tag, account) in &self.scratch {
            self.count[account] -= 1;
            out.push(Done { tag, cpu: 0 });
        }
    }

    /// `CpuPool::sync`.
    pub fn sync(&mut self, now: SimTime) {
        self.book(now);
        self.pool.sync(now);
    }
}

/// The CPUs a world holds: today's shared pool or the per-CPU machine, behind the same calls.
#[derive(Debug)]
pub enum Cpus<T> {
    /// `CpuPool`'s processor sharing: placement and class ignored, every task on "CPU 0".
    Shared(SharedCpus<T>),
    /// The per-CPU [`Machine`].
    PerCpu(Machine<T>),
}

impl<T: Copy> Cpus<T> {
    /// Today's shared pool of `cpus` processors.
    pub fn shared(cpus: u32, accounts: usize) -> Self {
        Cpus::Shared(SharedCpus::new(cpus, accounts))
    }

    /// A per-CPU machine of `cpus` CPUs.
    pub fn per_cpu(cpus: u32, accounts: usize) -> Self {
        Cpus::PerCpu(Machine::new(cpus, accounts))
    }

    /// [`Machine::add`]; the shared pool ignores `class` and `place` and returns 0.
    pub fn add(
        &mut self,
        now: SimTime,
        work: SimDuration,
        tag: T,
        class: SchedClass,
        place: Placement,
        account: usize,
    ) -> u32 {
        match self {
            Cpus::Shared(s) => {
                s.add(now, work, tag, account);
                0
            }
            Cpus::PerCpu(m) => m.add(now, work, tag, class, place, account),
        }
    }

    /// `Machine::next_completion` / `CpuPool::next_completion`.
    pub fn next_completion(&self, now: SimTime) -> Option<SimTime> {
        match self {
            Cpus::Shared(s) => s.pool.next_completion(now),
            Cpus::PerCpu(m) => m.next_completion(now),
        }
    }

    /// `Machine::finished` / `CpuPool::finished` (in the pool's finish order, CPU 0).
    pub fn finished(&mut self, now: SimTime, out: &mut Vec<Done<T>>) {
        match self {
            Cpus::Shared(s) => s.finished(now, out),
            Cpus::PerCpu(m) => m.finished(now, out),
        }
    }

    /// Brings the books up to `now`.
    pub fn sync(&mut self, now: SimTime) {
        match self {
            Cpus::Shared(s) => s.sync(now),
            Cpus::PerCpu(m) => m.sync(now),
        }
    }

    /// CPU-ns consumed so far, all accounts.
    pub fn busy_cpu_ns(&self) -> u128 {
        match self {
            Cpus::Shared(s) => s.pool.busy_cpu_ns(),
            Cpus::PerCpu(m) => m.busy_cpu_ns(),
        }
    }

    /// CPU-ns booked to `account` so far (rounded down).
    pub fn account_ns(&self, account: usize) -> u128 {
        match self {
            Cpus::Shared(s) => s.books.account_ns(account),
            Cpus::PerCpu(m) => m.account_ns(account),
        }
    }

    /// Number of runnable tasks (under the shared pool, finished ones not yet handed out too,
    /// as `CpuPool::runnable` counts them).
    pub fn runnable(&self) -> usize {
        match self {
            Cpus::Shared(s) => s.pool.runnable(),
            Cpus::PerCpu(m) => m.runnable(),
        }
    }

    /// Number of runnable tasks on `cpu` (the shared pool has them all on CPU 0).
    pub fn runnable_on(&self, cpu: u32) -> usize {
        match self {
            Cpus::Shared(s) if cpu == 0 => s.pool.runnable(),
            Cpus::Shared(_) => 0,
            Cpus::PerCpu(m) => m.runnable_on(cpu),
        }
    }

    /// Number of CPUs.
    pub fn cpus(&self) -> u32 {
        match self {
            Cpus::Shared(s) => s.pool.cpus(),
            Cpus::PerCpu(m) => m.cpus(),
        }
    }
}
