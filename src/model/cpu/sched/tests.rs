//! Scripted tests of the per-CPU machine and the shared facade.

use super::*;

type Tag = u64;

/// One scripted task: arrival (ns), work (ns), class, placement, account.
#[derive(Debug, Clone, Copy)]
struct Job {
    at: u64,
    work: u64,
    class: SchedClass,
    place: Placement,
    account: usize,
}

fn job(at: u64, work: u64, class: SchedClass, cpu: u32, account: usize) -> Job {
    Job {
        at,
        work,
        class,
        place: Placement::On(cpu),
        account,
    }
}

fn thread(nice: i8) -> SchedClass {
    SchedClass::Thread { nice }
}

fn ns(t: u64) -> SimTime {
    SimTime::from_ns(t)
}

/// Runs `jobs` (sorted by arrival) to completion as the world would: an event at each arrival
/// and at each `next_completion`. Returns per job (finish ns, cpu), and the machine.
fn drive(cpus: u32, accounts: usize, jobs: &[Job]) -> (Vec<(u64, u32)>, Machine<Tag>) {
    let mut m = Machine::new(cpus, accounts);
    let mut res = vec![(u64::MAX, u32::MAX); jobs.len()];
    let mut out = Vec::new();
    let mut now = SimTime::ZERO;
    let mut next = 0;
    loop {
        let na = jobs.get(next).map(|j| ns(j.at));
        let t = match (na, m.next_completion(now)) {
            (None, None) => break,
            (Some(a), Some(c)) => a.min(c),
            (a, c) => a.or(c).unwrap(),
        };
        now = t;
        out.clear();
        m.finished(now, &mut out);
        for d in &out {
            res[d.tag as usize] = (now.as_ns(), d.cpu);
        }
        while let Some(j) = jobs.get(next).filter(|j| j.at == now.as_ns()) {
            let w = SimDuration::from_ns(j.work);
            m.add(now, w, next as Tag, j.class, j.place, j.account);
            next += 1;
        }
    }
    (res, m)
}

/// The obvious per-nanosecond machine: each ns, a CPU with softirq work gives that ns to its
/// first item; otherwise its threads share it by weight. Returns per job its finish ns, and the
/// CPU-ns per account and busy.
fn reference(cpus: u32, accounts: usize, jobs: &[Job]) -> (Vec<u64>, Vec<f64>, u64) {
    let n = cpus as usize;
    let mut soft: Vec<VecDeque<(usize, u64)>> = vec![VecDeque::new(); n];
    let mut held: Vec<VecDeque<(usize, u64)>> = vec![VecDeque::new(); n];
    let mut threads: Vec<Vec<(usize, f64, f64)>> = vec![Vec::new(); n];
    let mut done = vec![u64::MAX; jobs.len()];
    let mut acct = vec![0.0; accounts];
    let (mut busy, mut t, mut next) = (0u64, 0u64, 0usize);
    while next < jobs.len()
        || soft.iter().any(|q| !q.is_empty())
        || held.iter().any(|q| !q.is_empty())
        || threads.iter().any(|v| !v.is_empty())
    {
        while let Some(j) = jobs.get(next).filter(|j| j.at == t) {
            let Placement::On(c) = j.place else {
                panic!("reference places On only")
            };
            match j.class {
                SchedClass::Softirq => soft[c as usize].push_back((next, j.work)),
                SchedClass::NoResched => held[c as usize].push_back((next, j.work)),
                SchedClass::Thread { nice } => {
                    threads[c as usize].push((next, j.work as f64, f64::from(nice_to_weight(nice))))
                }
            }
            next += 1;
        }
        t += 1;
        for c in 0..n {
            let q = if soft[c].is_empty() {
                &mut held[c]
            } else {
                &mut soft[c]
            };
            if let Some(head) = q.front_mut() {
                head.1 -= 1;
                acct[jobs[head.0].account] += 1.0;
                busy += 1;
                if head.1 == 0 {
                    done[head.0] = t;
                    q.pop_front();
                }
                continue;
            }
            if threads[c].is_empty() {
                continue;
            }
            busy += 1;
            let total: f64 = threads[c].iter().map(|th| th.2).sum();
            for th in threads[c].iter_mut() {
                th.1 -= th.2 / total;
                acct[jobs[th.0].account] += th.2 / total;
                if th.1 <= 1e-9 {
                    done[th.0] = t;
                }
            }
            threads[c].retain(|th| th.1 > 1e-9);
        }
    }
    (done, acct, busy)
}

/// A small deterministic generator (xorshift64*), so the tests need no random streams.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn random_jobs(g: &mut Gen, cpus: u32, count: usize) -> Vec<Job> {
    const NICES: [i8; 5] = [-20, -5, 0, 5, 19];
    let mut jobs: Vec<Job> = (0..count)
        .map(|_| {
            let class = match g.below(6) {
                0 => SchedClass::Softirq,
                1 => SchedClass::NoResched,
                _ => thread(NICES[g.below(5) as usize]),
            };
            let work = if !matches!(class, SchedClass::Thread { .. }) {
                1 + g.below(40)
            } else {
                1 + g.below(300)
            };
            job(
                g.below(400),
                work,
                class,
                g.below(u64::from(cpus)) as u32,
                g.below(3) as usize,
            )
        })
        .collect();
    jobs.sort_by_key(|j| j.at);
    jobs
}

/// Differential check against the per-nanosecond reference: weights, softirq preemption and
/// several CPUs.
#[test]
fn matches_a_step_by_step_reference() {
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    for round in 0..40 {
        let cpus = 1 + (round % 3) as u32;
        let jobs = random_jobs(&mut g, cpus, 4 + round % 12);
        let (fast, m) = drive(cpus, 3, &jobs);
        let (slow, acct, busy) = reference(cpus, 3, &jobs);
        for (i, j) in jobs.iter().enumerate() {
            let diff = fast[i].0.abs_diff(slow[i]);
            assert!(
                diff <= 2,
                "round {round} job {i} {j:?}: {} vs {}\n{jobs:?}",
                fast[i].0,
                slow[i]
            );
            assert_eq!(Placement::On(fast[i].1), j.place);
        }
        let events = jobs.len() as f64;
        assert!(
            (m.busy_cpu_ns() as f64 - busy as f64).abs() <= 2.0 * events,
            "busy"
        );
        for (a, &want) in acct.iter().enumerate() {
            let got = m.account_ns(a) as f64;
            assert!(
                (got - want).abs() <= 2.0 * events + 1.0,
                "round {round} account {a}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn nice_minus_20_gets_86_times_the_share_of_nice_0() {
    let ms = 1_000_000;
    let jobs = [job(0, ms, thread(-20), 0, 0), job(0, ms, thread(0), 0, 1)];
    let (done, mut m) = drive(1, 2, &jobs);
    // The high one runs at 88761/89785 of the CPU: done at 1e6 · 89785/88761 ns.
    let high = (ms * 89_785).div_ceil(88_761);
    assert!(done[0].0.abs_diff(high) <= 1, "{done:?}");
    // The CPU is work-conserving: the low one ends when 2 ms of work are done (to the ns the
    // first completion was rounded up to).
    assert!(done[1].0.abs_diff(2 * ms) <= 1, "{done:?}");
    m.sync(ns(2 * ms + 1));
    assert!(m.busy_cpu_ns().abs_diff(u128::from(2 * ms)) <= 1);
    assert!(m.account_ns(0).abs_diff(u128::from(ms)) <= 1);
    assert!(m.account_ns(1).abs_diff(u128::from(ms)) <= 1);
    // While both ran, the low one got 1/86.7 of the high one's CPU time.
    let mut m: Machine<Tag> = Machine::new(1, 2);
    let w = SimDuration::from_ns(ms);
    m.add(ns(0), w, 0, SchedClass::HIGHPRI, Placement::On(0), 0);
    m.add(ns(0), w, 1, SchedClass::NORMAL, Placement::On(0), 1);
    m.sync(ns(high - 1));
    let ratio = m.account_ns(0) as f64 / m.account_ns(1) as f64;
    assert!((ratio - 88_761.0 / 1024.0).abs() < 0.01, "{ratio}");
    assert!((86.6..86.8).contains(&ratio));
}

#[test]
fn equal_weights_share_equally_and_unequal_ones_by_weight() {
    // Nice 0 (1024) and nice 5 (335): 1024/1359 and 335/1359 of the CPU.
    let jobs = [job(0, 1024, thread(0), 0, 0), job(0, 2000, thread(5), 0, 0)];
    let (done, _) = drive(1, 1, &jobs);
    assert_eq!(done[0].0, 1359);
    assert!(done[1].0.abs_diff(3024) <= 1, "{done:?}");
    let jobs = [job(0, 100, thread(0), 0, 0), job(0, 300, thread(0), 0, 0)];
    assert_eq!(drive(1, 1, &jobs).0, vec![(200, 0), (400, 0)]);
}

#[test]
fn softirq_runs_first_in_fifo_order_and_threads_resume_where_they_were() {
    let jobs = [
        job(0, 100, thread(0), 0, 0),
        job(0, 100, thread(0), 1, 0),
        job(10, 30, SchedClass::Softirq, 0, 1),
        job(15, 20, SchedClass::Softirq, 0, 1),
        job(20, 5, SchedClass::Softirq, 0, 1),
    ];
    let (done, m) = drive(2, 2, &jobs);
    // Items run one after another from 10 ns: 40, 60, 65; the thread on CPU 0 did 10 ns
    // before and finishes its 90 ns left at 155; CPU 1 never noticed.
    assert_eq!(done[2], (40, 0));
    assert_eq!(done[3], (60, 0));
    assert_eq!(done[4], (65, 0));
    assert_eq!(done[0], (155, 0));
    assert_eq!(done[1], (100, 1));
    assert_eq!(m.account_ns(1), 55);
    assert_eq!(m.account_ns(0), 200);
    assert_eq!(m.busy_cpu_ns(), 255);
    assert_eq!((m.busy_ns_on(0), m.busy_ns_on(1)), (155, 100));
}

#[test]
fn a_section_without_cond_resched_holds_its_cpu_against_threads_but_not_softirq() {
    let jobs = [
        job(0, 100, thread(0), 0, 0),
        job(10, 50, SchedClass::NoResched, 0, 1),
        job(20, 30, SchedClass::NoResched, 0, 1),
        job(30, 5, SchedClass::Softirq, 0, 2),
    ];
    let (done, m) = drive(1, 3, &jobs);
    // The thread ran 10 ns; the first section runs from 10, loses 5 ns to the softirq
    // item (30..35) and ends at 65; the second follows to 95; only then does the thread go on,
    // its 90 ns left ending at 185.
    assert_eq!(done[3], (35, 0));
    assert_eq!(done[1], (65, 0));
    assert_eq!(done[2], (95, 0));
    assert_eq!(done[0], (185, 0));
    assert_eq!(
        (m.account_ns(0), m.account_ns(1), m.account_ns(2)),
        (100, 80, 5)
    );
}

#[test]
fn a_softirq_item_arriving_mid_item_waits_its_turn() {
    let mut m: Machine<Tag> = Machine::new(1, 1);
    m.add(
        ns(0),
        SimDuration::from_ns(50),
        1,
        SchedClass::Softirq,
        Placement::On(0),
        0,
    );
    assert_eq!(m.next_completion(ns(0)), Some(ns(50)));
    m.sync(ns(20));
    m.add(
        ns(20),
        SimDuration::from_ns(10),
        2,
        SchedClass::Softirq,
        Placement::On(0),
        0,
    );
    // The first is not preempted by the second.
    assert_eq!(m.next_completion(ns(20)), Some(ns(50)));
    let mut out = Vec::new();
    m.finished(ns(60), &mut out);
    assert_eq!(out, vec![Done { tag: 1, cpu: 0 }, Done { tag: 2, cpu: 0 }]);
    assert_eq!(m.runnable(), 0);
    assert_eq!(m.next_completion(ns(60)), None);
}

#[test]
fn a_late_caller_gets_every_completion_in_time_order() {
    // Three threads on two CPUs finishing at 100, 100 and 200; asked only at 500.
    let mut m: Machine<Tag> = Machine::new(2, 1);
    for (tag, cpu, work) in [(7, 1, 100), (8, 0, 100), (9, 0, 50)] {
        m.add(
            ns(0),
            SimDuration::from_ns(work),
            tag,
            SchedClass::NORMAL,
            Placement::On(cpu),
            0,
        );
    }
    let mut out = Vec::new();
    m.finished(ns(500), &mut out);
    let tags: Vec<(Tag, u32)> = out.iter().map(|d| (d.tag, d.cpu)).collect();
    // Tag 9 at 100 on CPU 0, tag 7 at 100 on CPU 1, tag 8 at 150 on CPU 0.
    assert_eq!(tags, vec![(9, 0), (7, 1), (8, 0)]);
    assert_eq!(m.busy_cpu_ns(), 250);
}

#[test]
fn zero_work_finishes_at_once() {
    let mut m: Machine<Tag> = Machine::new(1, 1);
    m.add(
        ns(5),
        SimDuration::ZERO,
        1,
        SchedClass::NORMAL,
        Placement::On(0),
        0,
    );
    m.add(
        ns(5),
        SimDuration::ZERO,
        2,
        SchedClass::Softirq,
        Placement::On(0),
        0,
    );
    assert_eq!(m.next_completion(ns(5)), Some(ns(5)));
    let mut out = Vec::new();
    m.finished(ns(5), &mut out);
    assert_eq!(out.len(), 2);
    assert_eq!(m.busy_cpu_ns(), 0);
}

#[test]
fn placement_prefers_prev_then_an_idle_cpu_then_the_least_weight() {
    let mut m: Machine<Tag> = Machine::new(4, 1);
    let w = SimDuration::from_ns(1_000);
    let t0 = ns(0);
    let wake = |m: &mut Machine<Tag>, prev, nice| {
        m.add(t0, w, 0, thread(nice), Placement::Wake { prev }, 0)
    };
    assert_eq!(wake(&mut m, Some(2), 0), 2, "prev is idle");
    assert_eq!(wake(&mut m, Some(2), 0), 0, "prev busy: lowest idle");
    assert_eq!(wake(&mut m, None, 0), 1);
    // A softirq item makes CPU 3 busy though it has no thread weight.
    assert_eq!(m.add(t0, w, 0, SchedClass::Softirq, Placement::On(3), 0), 3);
    assert_eq!(m.thread_weight_on(3), 0);
    assert_eq!(
        wake(&mut m, Some(2), 0),
        3,
        "no idle CPU: least thread weight"
    );
    // All at 1024 now: prev wins the tie, else the lowest index.
    assert_eq!(wake(&mut m, Some(2), 0), 2);
    assert_eq!(wake(&mut m, None, 0), 0);
    // Weights 2048, 1024, 2048, 1024: the lowest index of the least.
    assert_eq!(wake(&mut m, Some(0), -20), 1);
    assert_eq!(m.thread_weight_on(1), 1024 + 88_761);
    assert_eq!(wake(&mut m, Some(2), 0), 3);
    assert_eq!(m.runnable(), 9);
    assert_eq!(
        (0..4).map(|c| m.runnable_on(c)).collect::<Vec<_>>(),
        vec![2, 2, 2, 3]
    );
    assert_eq!(m.softirq_on(3), 1);
}

#[test]
fn bound_work_stays_on_its_cpu_whatever_the_load() {
    let jobs = vec![job(0, 100, SchedClass::NORMAL, 1, 0); 6];
    let (done, _) = drive(4, 1, &jobs);
    assert!(done.iter().all(|&(t, c)| c == 1 && t == 600), "{done:?}");
}

#[test]
fn every_cpu_ns_is_booked_to_one_account() {
    let mut g = Gen(42);
    for cpus in [1, 4, 16] {
        let mut jobs = random_jobs(&mut g, cpus, 200);
        for j in &mut jobs {
            j.account = g.below(5) as usize;
            if g.below(2) == 0 && j.class != SchedClass::Softirq {
                j.place = Placement::Wake {
                    prev: Some(g.below(u64::from(cpus)) as u32),
                };
            }
        }
        let (_, m) = drive(cpus, 5, &jobs);
        let fp: u128 = m.books.acct.iter().sum();
        assert_eq!(fp, m.busy_cpu_ns() * ASCALE, "exact in fixed point");
        let sum: u128 = (0..5).map(|a| m.account_ns(a)).sum();
        assert!(m.busy_cpu_ns() - sum < 5, "{sum} vs {}", m.busy_cpu_ns());
        let per_cpu: u128 = (0..cpus).map(|c| m.busy_ns_on(c)).sum();
        assert_eq!(per_cpu, m.busy_cpu_ns());
        let work: u64 = jobs.iter().map(|j| j.work).sum();
        assert!(m.busy_cpu_ns().abs_diff(u128::from(work)) <= jobs.len() as u128);
    }
}

#[test]
fn same_inputs_same_completions() {
    let mut g = Gen(7);
    let mut jobs = random_jobs(&mut g, 8, 300);
    for j in &mut jobs {
        j.place = Placement::Wake {
            prev: Some(g.below(8) as u32),
        };
    }
    let a = drive(8, 3, &jobs);
    let b = drive(8, 3, &jobs);
    assert_eq!(a.0, b.0);
    assert_eq!(a.1.busy_cpu_ns(), b.1.busy_cpu_ns());
}

/// `Cpus::Shared` is `CpuPool` to the nanosecond, with books that add up.
#[test]
fn the_shared_facade_matches_the_pool() {
    let mut g = Gen(2024);
    for cpus in 1..=4u32 {
        let mut jobs: Vec<(u64, u64, usize)> = (0..120)
            .map(|_| (g.below(5_000), 1 + g.below(900), g.below(4) as usize))
            .collect();
        jobs.sort_by_key(|j| j.0);
        let mut pool: CpuPool<Tag> = CpuPool::new(cpus);
        let mut cpus_: Cpus<Tag> = Cpus::shared(cpus, 4);
        let (mut now, mut next) = (SimTime::ZERO, 0);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        loop {
            let nc = pool.next_completion(now);
            assert_eq!(nc, cpus_.next_completion(now));
            let t = match (jobs.get(next).map(|j| ns(j.0)), nc) {
                (None, None) => break,
                (Some(x), Some(y)) => x.min(y),
                (x, y) => x.or(y).unwrap(),
            };
            now = t;
            let mut out = Vec::new();
            pool.finished(now, &mut out);
            a.extend(out.iter().map(|&tag| (tag, now)));
            let mut out = Vec::new();
            cpus_.finished(now, &mut out);
            b.extend(out.iter().map(|d| (d.tag, now)));
            assert!(out.iter().all(|d| d.cpu == 0));
            while let Some(&(at, w, acct)) = jobs.get(next).filter(|j| j.0 == now.as_ns()) {
                let w = SimDuration::from_ns(w);
                pool.add(now, w, next as Tag);
                let place = Placement::Wake { prev: Some(3) };
                assert_eq!(
                    cpus_.add(now, w, next as Tag, SchedClass::HIGHPRI, place, acct),
                    0
                );
                assert_eq!(at, now.as_ns());
                next += 1;
            }
            assert_eq!(pool.runnable(), cpus_.runnable());
            assert_eq!(cpus_.runnable_on(0), cpus_.runnable());
        }
        assert_eq!(a, b);
        pool.sync(now);
        cpus_.sync(now);
        assert_eq!(pool.busy_cpu_ns(), cpus_.busy_cpu_ns());
        let Cpus::Shared(s) = &cpus_ else {
            unreachable!()
        };
        assert_eq!(s.books.busy_ns, pool.busy_cpu_ns());
        assert_eq!(
            s.books.acct.iter().sum::<u128>(),
            pool.busy_cpu_ns() * ASCALE
        );
        // Each account got roughly its work.
        for acct in 0..4 {
            let work: u64 = jobs.iter().filter(|j| j.2 == acct).map(|j| j.1).sum();
            let got = cpus_.account_ns(acct);
            assert!(
                got.abs_diff(u128::from(work)) <= 200,
                "account {acct}: {got} vs {work}"
            );
        }
        assert_eq!(cpus_.cpus(), cpus);
    }
}

#[test]
fn the_per_cpu_facade_is_the_machine() {
    let jobs = random_jobs(&mut Gen(99), 3, 50);
    let (want, m) = drive(3, 3, &jobs);
    let mut c: Cpus<Tag> = Cpus::per_cpu(3, 3);
    let (mut now, mut next) = (SimTime::ZERO, 0);
    let mut got = vec![(0, 0); jobs.len()];
    loop {
        let t = match (jobs.get(next).map(|j| ns(j.at)), c.next_completion(now)) {
            (None, None) => break,
            (Some(x), Some(y)) => x.min(y),
            (x, y) => x.or(y).unwrap(),
        };
        now = t;
        let mut out = Vec::new();
        c.finished(now, &mut out);
        for d in out {
            got[d.tag as usize] = (now.as_ns(), d.cpu);
        }
        while let Some(j) = jobs.get(next).filter(|j| j.at == now.as_ns()) {
            c.add(
                now,
                SimDuration::from_ns(j.work),
                next as Tag,
                j.class,
                j.place,
                j.account,
            );
            next += 1;
        }
    }
    assert_eq!(got, want);
    assert_eq!(c.busy_cpu_ns(), m.busy_cpu_ns());
    assert_eq!(c.account_ns(2), m.account_ns(2));
    assert_eq!(c.cpus(), 3);
}

#[test]
fn nice_levels_map_to_the_kernel_weights() {
    assert_eq!(nice_to_weight(0), 1024);
    assert_eq!(nice_to_weight(HIGHPRI_NICE), 88_761);
    assert_eq!(nice_to_weight(19), 15);
    assert_eq!(nice_to_weight(-128), 88_761, "clamped");
    assert_eq!(nice_to_weight(100), 15, "clamped");
    // Each level is about ×1.25 of the next.
    for w in SCHED_PRIO_TO_WEIGHT.windows(2) {
        let r = f64::from(w[0]) / f64::from(w[1]);
        assert!((1.20..1.30).contains(&r), "{w:?}");
    }
}

/// A CPU idle while a thread that could move waits beside another task elsewhere is counted
/// (what a load balancer could use); one beside a thread bound to its CPU is not.
#[test]
fn idle_time_beside_a_waiting_movable_thread_is_counted() {
    let wake = |at, work, prev| Job {
        at,
        work,
        class: thread(0),
        place: Placement::Wake { prev: Some(prev) },
        account: 0,
    };
    // A bound on CPU 0 (100 ns), B bound on CPU 1 (50 ns), then C wakes with both busy and
    // joins A on its previous CPU 0 (equal loads: prev wins).
    let jobs = [
        job(0, 100, thread(0), 0, 0),
        job(0, 50, thread(0), 1, 0),
        wake(0, 100, 0),
    ];
    let (res, m) = drive(2, 1, &jobs);
    assert_eq!(res, vec![(200, 0), (50, 1), (200, 0)]);
    // From 50 to 200 CPU 1 is idle while C shares CPU 0 with A.
    assert_eq!(m.idle_beside_waiting_ns(), 150);

    // The same with C bound to CPU 0: nothing a balancer could move.
    let jobs = [
        job(0, 100, thread(0), 0, 0),
        job(0, 50, thread(0), 1, 0),
        job(0, 100, thread(0), 0, 0),
    ];
    let (_, m) = drive(2, 1, &jobs);
    assert_eq!(m.idle_beside_waiting_ns(), 0);
}

/// The shortcuts (a shift for a power of two, 64 bits when both fit) give the 128-bit
/// quotient, at and around the 2^64 boundary and at the top of the range.
#[test]
fn the_division_shortcut_is_exact() {
    let big = u128::from(u64::MAX);
    let cases = [
        (0, 1),
        (7, 2),
        (big, 3),
        (big, big),
        (big + 1, 3),
        (big * 5, big),
        (1 << 100, 7),
        (0, 1024),
        (1023, 1024),
        (1024, 1024),
        (1025, 2048),
        (big * 5 + 3, 2048),
        (u128::MAX, 1),
        (u128::MAX, 1 << 64),
        (u128::MAX, 1 << 127),
        ((1 << 127) + 1, 1 << 127),
    ];
    for (a, b) in cases {
        assert_eq!(div_u128(a, b), a / b, "{a} / {b}");
        assert_eq!(div_ceil_u128(a, b), a.div_ceil(b), "{a} / {b}");
    }
}

/// A machine of 130 CPUs matches the reference, and a waking thread finds the first idle CPU
/// past 64 busy ones.
#[test]
fn more_than_64_cpus_match_the_reference_and_place_past_them() {
    let mut g = Gen(0x51ed_2701_f3a5_c0de);
    let cpus = 130;
    let jobs = random_jobs(&mut g, cpus, 60);
    let (fast, _) = drive(cpus, 3, &jobs);
    let (slow, _, _) = reference(cpus, 3, &jobs);
    for (i, j) in jobs.iter().enumerate() {
        assert!(fast[i].0.abs_diff(slow[i]) <= 2, "job {i} {j:?}");
    }
    // CPUs 0..=64 busy with bound work: the waking thread goes to CPU 65, the first idle one.
    let mut m: Machine<Tag> = Machine::new(cpus, 1);
    let ms = SimDuration::from_ms(1);
    for c in 0..=64 {
        m.add(
            SimTime::ZERO,
            ms,
            u64::from(c),
            thread(0),
            Placement::On(c),
            0,
        );
    }
    let wake = Placement::Wake { prev: None };
    assert_eq!(m.add(SimTime::ZERO, ms, 99, thread(0), wake, 0), 65);
    assert_eq!(m.next_completion(SimTime::ZERO), Some(SimTime::ZERO + ms));
}
