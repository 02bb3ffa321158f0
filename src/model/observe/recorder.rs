//! The recorder: every statistic of a run outside the memory model, and the warm-up gate.
//!
//! Components report what happened (a bio issued or completed, a wait begun or ended, the crypt
//! queue changed); the recorder alone decides whether it counts. Nothing before the warm-up
//! ends counts, except what the invariants need (issued and completed totals, queue occupancy,
//! time in stage), which cover the whole run. The memory model's counters live with the zone
//! ([`crate::model::mm::memory::Mem`]), which the recorder opens at the same instant.

use crate::engine::{Scheduler, SimDuration, SimTime};
use crate::model::base::bio::{Bio, Dir};
use crate::model::base::ids::QueueClass;
use crate::model::base::obs::{
    BlockObs, CongestionWaitObs, DirectionObs, IssueRecord, IssueTrace, Stage, WritebackObs,
};
use crate::model::mm::cwait::Waiter;
use crate::model::observe::invariants::{Occupancy, QUEUES, TimeInStage};
use crate::stats::Histogram;
use crate::stats::windows::{self, WindowLog};

/// Length of one bandwidth / IOPS sample interval (fio's default `bw_avg_time` is 500 ms).
pub const SAMPLE_INTERVAL: SimDuration = SimDuration::from_ms(500);

/// The recorder's own events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecEvent {
    /// A bandwidth / IOPS sample interval ends.
    Sample,
    /// The warm-up ends: statistics start.
    WarmupEnd,
    /// A window of fio's averaged logs ends, when `log_avg_msec` is not the sample interval
    /// ([`Recorder::keep_fio_log`]).
    LogWindow,
}

/// One completed, measured I/O as the recorder saw it: what fio's per-I/O logs
/// (`log_avg_msec=0`) write a line of. Formatting it is the caller's business.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoRecord {
    /// Completion time, ns after the warm-up's end (where statistics start).
    pub time_ns: u64,
    /// 0 for a read, 1 for a write (fio's `ddir`).
    pub dir: u8,
    /// Its bytes.
    pub bytes: u32,
    /// Its byte offset on the device.
    pub offset: u64,
    /// Submission latency, ns (as the text report's slat).
    pub slat_ns: u64,
    /// Completion latency, ns.
    pub clat_ns: u64,
    /// Total latency, ns: slat + clat.
    pub lat_ns: u64,
}

/// Where the recorder hands each completed, measured I/O ([`IoRecord`]) when a run asks for
/// per-I/O records ([`crate::model::run_replication_logged`]). Supplied by the caller (the
/// experiment layer writes fio's per-I/O logs through one), so the model formats nothing; it
/// must not keep the records in memory. `Any` lets the caller take its own type back after
/// the run.
pub trait IoSink: std::any::Any + Send + std::fmt::Debug {
    /// One I/O completed.
    fn completed(&mut self, io: &IoRecord);

    /// The run ended: no I/O follows (a sink may release what it holds).
    fn ended(&mut self) {}
}

/// Running statistics of one direction.
#[derive(Debug)]
struct DirStats {
    obs: DirectionObs,
    window_ios: u64,
    window_bytes: u64,
    /// Every submission latency so far was 0, so `lat` (slat + clat) has seen exactly the
    /// values `clat` has: `obs.lat` is left empty and copied from `obs.clat` when the first
    /// nonzero slat arrives or the run ends (a histogram update per bio saved where the block
    /// layer never makes a submitter wait).
    lat_is_clat: bool,
    /// Bios whose stages have been seen. A stage whose histogram holds only zeros (the
    /// commonest case: a stage this run's bios never enter) is not updated for a zero: its
    /// zeros not yet recorded are `stages_seen` less its count, and go in before its first
    /// nonzero value, or at the end.
    stages_seen: u64,
    /// Bit `s` set once stage `s`'s histogram has a nonzero value (its maximum is not 0):
    /// from then on it records every value, zeros included.
    live_stages: u32,
}

impl DirStats {
    fn new() -> Self {
        DirStats {
            obs: DirectionObs::new(),
            window_ios: 0,
            window_bytes: 0,
            lat_is_clat: true,
            stages_seen: 0,
            live_stages: 0,
        }
    }
}

/// The crypt queue's length integrated over the measured time.
#[derive(Debug)]
struct CryptLen {
    area: u128,
    since: SimTime,
    max: u64,
}

/// What the recorder hands to [`crate::model::base::obs::RunObs`] at the end of a run.
#[derive(Debug)]
pub struct Recorded {
    /// Per direction: reads, writes.
    pub dirs: [DirectionObs; 2],
    /// Completion latency of both directions.
    pub clat_all: Histogram,
    /// fio's iodepth distribution buckets.
    pub depth_buckets: [u64; 7],
    /// congestion_wait per class.
    pub congestion_waits: [CongestionWaitObs; 2],
    /// Buffered writeback.
    pub writeback: WritebackObs,
    /// Mean crypt queue length over the measured time.
    pub crypt_queue_len_avg: f64,
    /// Longest crypt queue while measuring.
    pub crypt_queue_len_max: u64,
}

/// Every non-memory statistic of a run, behind the warm-up gate.
#[derive(Debug)]
pub struct Recorder {
    warmup: SimTime,
    measuring: bool,
    dirs: [DirStats; 2],
    depth_buckets: [u64; 7],
    cw: [CongestionWaitObs; 2],
    wb: WritebackObs,
    crypt_len: CryptLen,
    busy_at_warmup: u128,
    block_at_warmup: BlockObs,
    issued_total: u64,
    completed_total: u64,
    /// Each checked queue's count integrated over the whole run (warm-up included).
    occupancy: Occupancy,
    /// Time completed bios spent in each checked queue.
    time_in_stage: TimeInStage,
    /// The first issues of each job, when a run asks for them.
    issue_trace: Option<IssueTrace>,
    /// Per-window sums for fio's log files, when a run asks for them
    /// ([`Recorder::keep_fio_log`]).
    fio_log: Option<Box<WindowLog>>,
    /// The averaged log's own window when it is not [`SAMPLE_INTERVAL`] (`log_avg_msec`):
    /// closed by [`RecEvent::LogWindow`] events instead of the samples.
    log_window: Option<SimDuration>,
    /// Where every completed, measured I/O goes, when a run asks for them.
    io_sink: Option<Box<dyn IoSink>>,
}

impl Recorder {
    /// A recorder whose gate opens at `warmup` (at once if it is zero), from `now`, keeping the
    /// first `trace_issues` issues of each of `jobs` jobs (0: none).
    pub fn new(warmup: SimDuration, now: SimTime, jobs: usize, trace_issues: usize) -> Self {
        let at = SimTime::ZERO + warmup;
        Recorder {
            warmup: at,
            measuring: warmup.is_zero(),
            dirs: [DirStats::new(), DirStats::new()],
            depth_buckets: [0; 7],
            cw: Default::default(),
            wb: Default::default(),
            crypt_len: CryptLen {
                area: 0,
                since: at,
                max: 0,
            },
            busy_at_warmup: 0,
            block_at_warmup: Default::default(),
            issued_total: 0,
            completed_total: 0,
            occupancy: Occupancy::new(now),
            time_in_stage: TimeInStage::default(),
            issue_trace: (trace_issues > 0).then(|| IssueTrace::new(jobs, trace_issues)),
            fio_log: None,
            log_window: None,
            io_sink: None,
        }
    }

    /// Also keeps, per `window` of the measured time (`None`: [`SAMPLE_INTERVAL`], fio's
    /// `log_avg_msec`), the sums fio's log files need ([`WindowLog`], bounded by
    /// [`windows::DEFAULT_CAP`] rows). With `hist` (window ns, coarseness), also fio's
    /// histogram log of the same I/Os. A window other than the sample interval is closed by
    /// its own events, scheduled here from the warm-up's end.
    pub fn keep_fio_log<E: From<RecEvent>>(
        &mut self,
        window: Option<SimDuration>,
        hist: Option<(u64, u32)>,
        sched: &mut Scheduler<E>,
    ) {
        let window = window.filter(|w| !w.is_zero() && *w != SAMPLE_INTERVAL);
        let width = window.unwrap_or(SAMPLE_INTERVAL);
        let mut log = WindowLog::new(width.as_ns(), windows::DEFAULT_CAP);
        log.hist = hist.map(|(window, c)| crate::stats::histlog::HistLog::new(window, c));
        self.fio_log = Some(Box::new(log));
        self.log_window = window;
        if let Some(w) = window {
            let first = self.warmup.max(sched.now()) + w;
            sched.schedule_at(first, E::from(RecEvent::LogWindow));
        }
    }

    /// Hands every completed, measured I/O from now on to `sink`.
    pub fn send_ios_to(&mut self, sink: Box<dyn IoSink>) {
        self.io_sink = Some(sink);
    }

    /// The sink given to [`Recorder::send_ios_to`], if any.
    pub fn take_io_sink(&mut self) -> Option<Box<dyn IoSink>> {
        let mut sink = self.io_sink.take()?;
        sink.ended();
        Some(sink)
    }

    /// A window of the averaged log's own width ended ([`RecEvent::LogWindow`]).
    pub fn log_window<E: From<RecEvent>>(&mut self, sched: &mut Scheduler<E>) {
        if let (Some(log), Some(w)) = (self.fio_log.as_deref_mut(), self.log_window) {
            log.tick();
            sched.schedule_in(w, E::from(RecEvent::LogWindow));
        }
    }

    /// The per-window log, if one was kept, at the run's end `now` (its histogram log's
    /// last, partial window closed).
    pub fn take_fio_log(&mut self, now: SimTime) -> Option<Box<WindowLog>> {
        let mut log = self.fio_log.take()?;
        if let Some(h) = &mut log.hist {
            h.finish(now.as_ns());
        }
        Some(log)
    }

    /// Schedules the warm-up's end (if there is one) and the first sample.
    pub fn start<E: From<RecEvent>>(&self, sched: &mut Scheduler<E>) {
        if !self.measuring {
            sched.schedule_at(self.warmup, E::from(RecEvent::WarmupEnd));
        }
        sched.schedule_at(self.warmup + SAMPLE_INTERVAL, E::from(RecEvent::Sample));
    }

    /// Whether the gate is open.
    #[inline]
    pub fn measuring(&self) -> bool {
        self.measuring
    }

    /// When the gate opens.
    #[inline]
    pub fn warmup(&self) -> SimTime {
        self.warmup
    }

    /// Whether a bio issued at `now` is one of the measured ones.
    #[inline]
    pub fn is_measured(&self, now: SimTime) -> bool {
        now >= self.warmup
    }

    /// A sample interval ended: closes its bandwidth and IOPS window and schedules the next.
    /// A direction that completed nothing in the window adds no sample, as fio's
    /// `__add_samples` skips a direction whose byte count did not move (so an idle direction
    /// has no samples at all).
    pub fn sample<E: From<RecEvent>>(&mut self, sched: &mut Scheduler<E>) {
        let secs = SAMPLE_INTERVAL.as_secs_f64();
        for d in &mut self.dirs {
            if d.window_bytes > 0 {
                d.obs.bw_kib_s.push(d.window_bytes as f64 / 1024.0 / secs);
                d.obs.iops.push(d.window_ios as f64 / secs);
            }
            d.window_bytes = 0;
            d.window_ios = 0;
        }
        if let (Some(log), None) = (self.fio_log.as_deref_mut(), self.log_window) {
            log.tick();
        }
        sched.schedule_in(SAMPLE_INTERVAL, E::from(RecEvent::Sample));
    }

    /// Opens the gate at `now`, given the CPU pool's busy time and the block counters (with the
    /// device's busy time) so far, which the measured figures start from.
    pub fn warmup_end(&mut self, now: SimTime, cpu_busy_ns: u128, block: BlockObs) {
        self.measuring = true;
        self.busy_at_warmup = cpu_busy_ns;
        self.block_at_warmup = block;
        self.crypt_len.since = now;
        for d in &mut self.dirs {
            d.window_bytes = 0;
            d.window_ios = 0;
        }
        if let Some(log) = self.fio_log.as_deref_mut() {
            log.restart();
            if let Some(h) = &mut log.hist {
                h.restart(now.as_ns());
            }
        }
    }

    // ----- bios -----------------------------------------------------------------------------

    /// A bio entered the system.
    pub fn issued(&mut self, dir: Dir, measured: bool) {
        self.issued_total += 1;
        if measured {
            self.dirs[dir as usize].obs.issued += 1;
        }
    }

    /// An open-loop arrival was dropped: its job had `iodepth` in flight.
    pub fn dropped(&mut self, dir: Dir) {
        if self.measuring {
            self.dirs[dir as usize].obs.dropped += 1;
        }
    }

    /// Job `job` issued `rec` at `now` with `depth` in flight.
    #[inline]
    pub fn job_issued(&mut self, job: usize, depth: u32, rec: IssueRecord, now: SimTime) {
        if now >= self.warmup {
            self.depth_buckets[crate::model::workload::depth_bucket(depth)] += 1;
        }
        if let Some(trace) = &mut self.issue_trace {
            trace.record(job, rec);
        }
    }

    /// A piece of a split bio completed at `now` (not a request of its own: only its time in
    /// the checked queues is booked; the last piece's goes with its parent).
    pub fn piece_completed(&mut self, piece: &Bio, now: SimTime) {
        self.time_in_stage.completed(piece, now);
    }

    /// `bio` completed at `now` (it has left the system).
    #[inline]
    pub fn completed(&mut self, bio: &Bio, now: SimTime) {
        self.completed_total += 1;
        self.time_in_stage.completed(bio, now);
        if !bio.measured {
            return;
        }
        let d = &mut self.dirs[bio.dir as usize];
        // Page-cache allocation (direct reclaim) happens inside the read call before
        // dm-crypt sees the bio: fio's sync engines count it in completion latency.
        let reclaim = bio.stage_ns[Stage::DirectReclaim.index()];
        let slat = bio.accepted.since(bio.issued).as_ns() - reclaim;
        let clat = now.since(bio.accepted).as_ns() + reclaim;
        d.obs.ios += 1;
        d.obs.bytes += u64::from(bio.bytes);
        d.obs.slat.record(slat);
        if d.lat_is_clat && slat != 0 {
            d.obs.lat = d.obs.clat.clone();
            d.lat_is_clat = false;
        }
        d.obs.clat.record(clat);
        if !d.lat_is_clat {
            d.obs.lat.record(slat + clat);
        }
        // Only the stages that record this bio are visited: those it spent time in, and those
        // whose histograms already hold a nonzero value.
        let mut nonzero = 0u32;
        for (s, &ns) in bio.stage_ns.iter().enumerate() {
            nonzero |= u32::from(ns != 0) << s;
        }
        let mut visit = nonzero | d.live_stages;
        while visit != 0 {
            let s = visit.trailing_zeros() as usize;
            visit &= visit - 1;
            let h = &mut d.obs.stages[s];
            h.record_zeros(d.stages_seen - h.count());
            h.record(bio.stage_ns[s]);
        }
        d.live_stages |= nonzero;
        d.stages_seen += 1;
        d.window_ios += 1;
        d.window_bytes += u64::from(bio.bytes);
        if let Some(log) = self.fio_log.as_deref_mut() {
            log.record(
                bio.dir as usize,
                u64::from(bio.bytes),
                slat,
                clat,
                slat + clat,
            );
            if let Some(h) = &mut log.hist {
                h.record(bio.dir as usize, clat, now.as_ns());
            }
        }
        if let Some(sink) = self.io_sink.as_deref_mut() {
            sink.completed(&IoRecord {
                time_ns: now.saturating_since(self.warmup).as_ns(),
                dir: bio.dir as u8,
                bytes: bio.bytes,
                offset: bio.offset,
                slat_ns: slat,
                clat_ns: clat,
                lat_ns: slat + clat,
            });
        }
    }

    /// Bios issued and completed over the whole run.
    pub fn totals(&self) -> (u64, u64) {
        (self.issued_total, self.completed_total)
    }

    // ----- crypt queue ----------------------------------------------------------------------

    /// The crypt queue held `len` items since the last change; it changes at `now`.
    #[inline]
    pub fn crypt_len_tick(&mut self, now: SimTime, len: usize) {
        if self.measuring {
            let dt = now.saturating_since(self.crypt_len.since).as_ns();
            self.crypt_len.area += u128::from(dt) * len as u128;
        }
        self.crypt_len.since = now;
    }

    /// The crypt queue grew to `len`.
    #[inline]
    pub fn crypt_len_grew(&mut self, len: usize) {
        if self.measuring {
            self.crypt_len.max = self.crypt_len.max.max(len as u64);
        }
    }

    // ----- congestion_wait and writeback ----------------------------------------------------

    /// A `congestion_wait` on `class` began.
    pub fn wait_began(&mut self, class: QueueClass) {
        if self.measuring {
            self.cw[class.index()].waits += 1;
        }
    }

    /// `w`'s wait ended at `now` (`early`: by a clear); returns how long it slept in measured
    /// time.
    pub fn wait_ended(&mut self, w: &Waiter, early: bool, now: SimTime) -> SimDuration {
        let slept = now.since(w.since.max(self.warmup).min(now));
        if self.measuring {
            let o = &mut self.cw[w.class.index()];
            o.total += slept;
            if early {
                o.woken_early += 1;
            }
        }
        slept
    }

    /// A writer throttled since `since` may write again at `now`.
    pub fn throttle_ended(&mut self, since: SimTime, now: SimTime) {
        if self.measuring {
            self.wb.throttled += now.since(since.max(self.warmup).min(now));
        }
    }

    /// A writer dirtied `bytes`.
    pub fn dirtied(&mut self, bytes: u64) {
        if self.measuring {
            self.wb.dirtied_bytes += bytes;
        }
    }

    /// Writeback of `bytes` completed.
    pub fn written_back(&mut self, bytes: u64) {
        if self.measuring {
            self.wb.written_back_bytes += bytes;
        }
    }

    // ----- invariants -----------------------------------------------------------------------

    /// The time since the checked queues' counts were last integrated, if it is time to
    /// integrate them again at `now` (see [`Recorder::integrate`]).
    #[inline]
    pub fn occupancy_gap(&mut self, now: SimTime) -> Option<u64> {
        self.occupancy.advance(now)
    }

    /// Adds `counts` held over `gap` ns.
    #[inline]
    pub fn integrate(&mut self, gap: u64, counts: [u64; QUEUES]) {
        self.occupancy.add(gap, counts);
    }

    /// The whole-run records the invariants check.
    pub fn occupancy(&self) -> &Occupancy {
        &self.occupancy
    }

    /// Time completed bios spent in each checked queue.
    pub fn time_in_stage(&self) -> &TimeInStage {
        &self.time_in_stage
    }

    /// The issue trace (empty if none was asked for).
    pub fn take_issue_trace(&mut self) -> IssueTrace {
        self.issue_trace.take().unwrap_or_default()
    }

    // ----- the end --------------------------------------------------------------------------

    /// Closes the books at `now`: waits still in progress count up to now; `cpu_busy_ns` and
    /// `block` (with the device's busy time) are the run's totals. Returns the block counters
    /// of the measured time, the CPU utilisation over `cpus`, and the rest.
    pub fn finish<'a>(
        mut self,
        now: SimTime,
        sleeping: impl Iterator<Item = &'a Waiter>,
        cpu_busy_ns: u128,
        cpus: u32,
        block: BlockObs,
    ) -> (Recorded, BlockObs, f64) {
        for w in sleeping {
            self.cw[w.class.index()].total += now.saturating_since(w.since.max(self.warmup));
        }
        let span = now.saturating_since(self.warmup).as_ns().max(1);
        let block = block.since(&self.block_at_warmup);
        let cpu = (cpu_busy_ns - self.busy_at_warmup) as f64 / (span as f64 * f64::from(cpus));
        for d in &mut self.dirs {
            if d.lat_is_clat {
                d.obs.lat = d.obs.clat.clone();
            }
            for h in &mut d.obs.stages {
                h.record_zeros(d.stages_seen - h.count());
            }
        }
        let [r, w] = self.dirs;
        // Both directions' completion latencies: the merge of the two, exact in every count
        // the report reads (recording each value a second time cost 1 in 12 of the histogram
        // updates per bio; only the spread, which nothing reads here, would round otherwise).
        let mut clat_all = r.obs.clat.clone();
        clat_all.merge(&w.obs.clat);
        let rec = Recorded {
            dirs: [r.obs, w.obs],
            clat_all,
            depth_buckets: self.depth_buckets,
            congestion_waits: self.cw,
            writeback: self.wb,
            crypt_queue_len_avg: self.crypt_len.area as f64 / span as f64,
            crypt_queue_len_max: self.crypt_len.max,
        };
        (rec, block, cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::base::bio::Origin;
    use crate::model::world::Event;

    fn bio_at(issued_ms: u64, done_measured: bool) -> Bio {
        let t = SimTime::ZERO + SimDuration::from_ms(issued_ms);
        let mut b = Bio::new(Dir::Read, true, 4096, 0, Origin::Job(0), t);
        b.accepted = t;
        b.measured = done_measured;
        b
    }

    #[test]
    fn nothing_before_the_warmup_counts_but_the_totals_do() {
        let mut r = Recorder::new(SimDuration::from_secs(1), SimTime::ZERO, 1, 0);
        assert!(!r.measuring());
        let early = SimTime::ZERO + SimDuration::from_ms(10);
        assert!(!r.is_measured(early));
        r.issued(Dir::Read, false);
        r.dropped(Dir::Read);
        r.wait_began(QueueClass::Async);
        r.dirtied(4096);
        r.crypt_len_tick(early, 5);
        r.crypt_len_grew(5);
        r.completed(&bio_at(0, false), early + SimDuration::from_ms(1));
        assert_eq!(r.totals(), (1, 1));
        let now = SimTime::ZERO + SimDuration::from_secs(1);
        r.warmup_end(now, 0, BlockObs::default());
        assert!(r.measuring());
        r.issued(Dir::Read, true);
        r.completed(&bio_at(1000, true), now + SimDuration::from_ms(2));
        let end = now + SimDuration::from_secs(1);
        let (rec, _, _) = r.finish(end, std::iter::empty(), 0, 1, BlockObs::default());
        let d = &rec.dirs[Dir::Read as usize];
        assert_eq!((d.issued, d.ios, d.dropped), (1, 1, 0));
        assert_eq!(d.clat.max(), 2_000_000);
        assert_eq!(rec.congestion_waits[1].waits, 0);
        assert_eq!(rec.writeback.dirtied_bytes, 0);
        assert_eq!(rec.crypt_queue_len_max, 0);
        assert_eq!(rec.crypt_queue_len_avg, 0.0);
    }

    /// fio's rule: a window in which a direction completed nothing adds no bandwidth or IOPS
    /// sample for it; the fio log keeps every closed window.
    #[test]
    fn an_idle_window_adds_no_sample() {
        let mut r = Recorder::new(SimDuration::ZERO, SimTime::ZERO, 1, 0);
        let mut sched: Scheduler<Event> = Scheduler::new();
        r.keep_fio_log(None, None, &mut sched);
        r.completed(&bio_at(0, true), SimTime::ZERO + SimDuration::from_ms(3));
        r.sample(&mut sched);
        r.sample(&mut sched);
        let log = r.take_fio_log(SimTime::ZERO).expect("asked for");
        assert_eq!(log.rows.len(), 2);
        assert_eq!((log.rows[0][0].ios, log.rows[0][0].clat_ns), (1, 3_000_000));
        assert_eq!(log.rows[1][0].ios, 0);
        let end = SimTime::ZERO + SimDuration::from_secs(1);
        let (rec, _, _) = r.finish(end, std::iter::empty(), 0, 1, BlockObs::default());
        let (read, write) = (&rec.dirs[0], &rec.dirs[1]);
        assert_eq!((read.bw_kib_s.count(), read.iops.count()), (1, 1));
        assert_eq!(read.iops.mean(), 2.0);
        assert_eq!((write.bw_kib_s.count(), write.iops.count()), (0, 0));
    }

    /// The stage histograms hold exactly what recording every stage of every bio one value at
    /// a time gives, whichever stages start late or never leave zero.
    #[test]
    fn stage_histograms_equal_recording_every_value() {
        let mut r = Recorder::new(SimDuration::ZERO, SimTime::ZERO, 1, 0);
        let mut by_hand: Vec<Histogram> = (0..Stage::COUNT)
            .map(|_| Histogram::counts_only())
            .collect();
        let mut state = 7u64;
        for i in 0..2_000u64 {
            let mut b = bio_at(0, true);
            // Accepted after the longest direct-reclaim stage the loop draws (slat stays >= 0).
            b.accepted = SimTime::ZERO + SimDuration::from_ms(1);
            for (s, ns) in b.stage_ns.iter_mut().enumerate() {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                // Stage s starts taking time at bio 300·s (never, for the last two), and then
                // takes none one time in three.
                let starts = s < Stage::COUNT - 2 && i >= 300 * s as u64;
                *ns = if starts && !(state >> 33).is_multiple_of(3) {
                    (state >> 40) % 50_000
                } else {
                    0
                };
                by_hand[s].record(*ns);
            }
            r.completed(&b, SimTime::ZERO + SimDuration::from_ms(2));
        }
        let end = SimTime::ZERO + SimDuration::from_secs(1);
        let (rec, _, _) = r.finish(end, std::iter::empty(), 0, 1, BlockObs::default());
        let stages = &rec.dirs[Dir::Read as usize].stages;
        for (s, (got, want)) in stages.iter().zip(&by_hand).enumerate() {
            assert_eq!(got.count(), 2_000, "stage {s}");
            assert!(
                got == want,
                "stage {s}: histogram differs from recording one by one"
            );
        }
        assert!(stages[0].max() > 0 && stages[Stage::COUNT - 1].max() == 0);
    }

    #[test]
    fn without_a_warmup_everything_counts_from_the_start() {
        let mut r = Recorder::new(SimDuration::ZERO, SimTime::ZERO, 1, 0);
        assert!(r.measuring());
        r.dropped(Dir::Write);
        r.crypt_len_tick(SimTime::ZERO, 0);
        r.crypt_len_grew(3);
        r.crypt_len_tick(SimTime::ZERO + SimDuration::from_secs(1), 3);
        let end = SimTime::ZERO + SimDuration::from_secs(1);
        let (rec, _, _) = r.finish(end, std::iter::empty(), 0, 1, BlockObs::default());
        assert_eq!(rec.dirs[Dir::Write as usize].dropped, 1);
        assert_eq!(rec.crypt_queue_len_max, 3);
        assert_eq!(rec.crypt_queue_len_avg, 3.0);
    }
}
