//! What the world reports to [`crate::model::observe::invariants`]: the checked queues' counts (integrated
//! before every event) and, at the end of a run, a snapshot of every conservation law's books.

use crate::engine::SimTime;
use crate::model::base::bio::{Dir, Origin};
use crate::model::base::ids::QueueClass;
use crate::model::base::obs::IssueTrace;
use crate::model::cpu::sched::Cpus;
use crate::model::crypt::threads::{ActorState, Step};
use crate::model::mm::memory::PAGE_SIZE;
use crate::model::observe::invariants::{
    ConservationCheck, InvariantReport, QUEUES, Queue, Snapshot,
};
use crate::model::world::World;

impl World {
    /// Checks the run's invariants at its end, `now` (see [`crate::model::observe::invariants`]): Little's law
    /// per queue and for the whole system, conservation of requests, tags and bounce pages, the
    /// CPU books, and the clock.
    pub fn invariants(&mut self, now: SimTime) -> InvariantReport {
        self.integrate_occupancy(now);
        let held: u64 = self.bios.iter().map(|b| u64::from(b.bounce_pages)).sum();
        let (pages_allocated, pages_freed) = self.memory.bounce_books(held);
        let (issued, completed) = self.rec.totals();
        let snapshot = Snapshot {
            end: now,
            integrated_to: self.rec.occupancy().since(),
            clock_regressions: self.rec.occupancy().regressions(),
            areas: self.rec.occupancy().areas(),
            time_sums: self.rec.time_in_stage().totals(self.bios.iter(), now),
            issued,
            completed,
            live: self.bios.live() as u64 - self.pieces_live,
            issuers: self.issuers(),
            pages_allocated,
            pages_freed,
            pages_held: held,
            tags_allocated: u64::from(self.queue.allocated(QueueClass::Sync))
                + u64::from(self.queue.allocated(QueueClass::Async)),
            tags_queued: u64::from(self.queue.queued()),
            tags_on_device: u64::from(self.device.inflight()),
            crypt_queued: self.policy.len() as u64,
            pieces: self.pieces_live,
            elevator: self.elevator_checks(),
            memory: self.memory_checks(held),
            cpu: self.cpu_checks(now),
        };
        InvariantReport::check(&snapshot)
    }

    /// CFQ's count of waiting requests (which its `hw_tag` estimate reads) against the
    /// requests in its queues and in the request queue's elevator, and its priority tree's
    /// shape and contents; none for other elevators.
    fn elevator_checks(&self) -> Vec<ConservationCheck> {
        let Some((counted, in_queues)) = self.queue.cfq_books() else {
            return Vec::new();
        };
        let in_elevator = u64::from(self.queue.queued());
        let tree = self.queue.cfq_prio_tree().unwrap_or(Ok(()));
        vec![
            ConservationCheck {
                law: "cfq queued",
                detail: format!(
                    "counted {counted} = in its queues {in_queues} = in the elevator {in_elevator}"
                ),
                holds: counted == in_queues && counted == in_elevator,
            },
            ConservationCheck {
                law: "cfq prio tree",
                detail: match &tree {
                    Ok(()) => "a red-black tree of busy queues".to_string(),
                    Err(e) => e.clone(),
                },
                holds: tree.is_ok(),
            },
        ]
    }

    /// The per-CPU machine's books ([`cpu_laws`](crate::model::observe::invariants::cpu_laws)) as they stand,
    /// against `now`; none on the shared pool. The books are not brought up to `now` here, so
    /// that checking changes nothing a later reader sees; what they hold up to their last call
    /// fits in `now` all the more.
    fn cpu_checks(&self, now: SimTime) -> Vec<ConservationCheck> {
        let Cpus::PerCpu(m) = &self.cpu else {
            return Vec::new();
        };
        let per_cpu: Vec<u128> = (0..m.cpus()).map(|c| m.busy_ns_on(c)).collect();
        crate::model::observe::invariants::cpu_laws(
            m.cpus(),
            now.as_ns(),
            &per_cpu,
            m.busy_cpu_ns(),
            m.idle_beside_waiting_ns(),
        )
    }

    /// Each issuer's claim (bios in flight, bytes under writeback) against the live bios.
    fn issuers(&self) -> Vec<(String, u64, u64)> {
        let mut issuers = Vec::new();
        let mut job_bios = vec![0u64; self.jobs.len()];
        let mut writer_bytes = vec![0u64; self.writers.len()];
        for b in self.bios.iter() {
            match b.origin {
                Origin::Job(j) => job_bios[j as usize] += 1,
                Origin::Writeback(w) => writer_bytes[w as usize] += u64::from(b.bytes),
                Origin::Proc(_) | Origin::SwapIn(_) | Origin::SwapOut | Origin::Piece(_) => {}
            }
        }
        for (j, found) in job_bios.into_iter().enumerate() {
            let claimed = u64::from(self.jobs[j].inflight());
            issuers.push((format!("job {j} (bios)"), claimed, found));
        }
        for (w, found) in writer_bytes.into_iter().enumerate() {
            let claimed = self.writers[w].under_writeback();
            issuers.push((format!("writer {w} (bytes)"), claimed, found));
        }
        issuers
    }

    /// The checked queues' counts, read from their containers, indexed by [`Queue::index`].
    #[inline]
    fn occupancy_counts(&self) -> [u64; QUEUES] {
        let io = &self.actors[self.io_actor.index()];
        let io_hop = matches!(
            io.state,
            ActorState::Cpu {
                step: Step::IoHop,
                ..
            }
        );
        let mut n = [0; QUEUES];
        n[Queue::CryptQueue.index()] = self.policy.len() as u64;
        n[Queue::IoHop.index()] =
            io.queue.len() as u64 + u64::from(io_hop) + self.io_thread_occupancy();
        n[Queue::PoolSleep.index()] = self.queue.sleepers() as u64;
        n[Queue::BlockQueue.index()] = u64::from(self.queue.queued());
        n[Queue::Device.index()] = u64::from(self.device.inflight());
        n[Queue::System.index()] = self.bios.live() as u64 - self.pieces_live;
        n
    }

    /// Integrates the checked queues' counts up to `now`. Called before every event, when the
    /// counts are still those that held since the previous one.
    #[inline]
    pub(in crate::model) fn integrate_occupancy(&mut self, now: SimTime) {
        if let Some(gap) = self.rec.occupancy_gap(now) {
            let counts = self.occupancy_counts();
            self.rec.integrate(gap, counts);
        }
    }

    /// The issue trace asked for with [`World::with_trace`] (empty if none was).
    pub fn take_issue_trace(&mut self) -> IssueTrace {
        self.rec.take_issue_trace()
    }

    /// The memory model's conservation laws: the zone's books, and every page state against
    /// the holders that account for it.
    fn memory_checks(&self, bounce_held: u64) -> Vec<ConservationCheck> {
        use ConservationCheck as C;
        let Some(p) = self.memory.zone() else {
            return Vec::new();
        };
        let m = &p.mem;
        let pages = m.pages;
        let zone = m
            .check_conservation()
            .and_then(|()| p.pool.check(pages.bounce));
        let writer_dirty: u64 = self.writers.iter().map(|w| w.dirty_bytes()).sum();
        let writer_wb: u64 = self.writers.iter().map(|w| w.under_writeback()).sum();
        let filling = self.filling_in_bios() + p.reclaim.pages();
        let mut checks = self.anon_checks();
        checks.splice(
            0..0,
            [
                C {
                    law: "zone pages",
                    detail: match &zone {
                        Ok(()) => format!(
                            "free {} + by state {} = total {}",
                            m.zone.free_pages(),
                            pages.total(),
                            m.zone.total_pages()
                        ),
                        Err(e) => e.clone(),
                    },
                    holds: zone.is_ok(),
                },
                C {
                    law: "bounce pages (zone)",
                    detail: format!(
                        "{} = page_pool reserve {} + held by bios {}",
                        pages.bounce,
                        p.pool.reserve(),
                        bounce_held
                    ),
                    holds: pages.bounce == u64::from(p.pool.reserve()) + bounce_held,
                },
                C {
                    law: "dirty pages",
                    detail: format!(
                        "{} = writers' dirty {} B / 4 KiB",
                        pages.dirty, writer_dirty
                    ),
                    holds: pages.dirty * PAGE_SIZE == writer_dirty,
                },
                C {
                    law: "writeback pages",
                    detail: format!(
                        "{} = writers' writeback {} B / 4 KiB",
                        pages.writeback, writer_wb
                    ),
                    holds: pages.writeback * PAGE_SIZE == writer_wb,
                },
                C {
                    law: "filling pages",
                    detail: format!(
                        "{} = reads and reclaimers holding {}",
                        pages.filling, filling
                    ),
                    holds: pages.filling == filling,
                },
            ],
        );
        checks.extend(self.rx_checks(pages.atomic));
        checks
    }

    /// Each TCP receive path's books, and what they hold against the zone's atomic pages.
    fn rx_checks(&self, atomic: u64) -> Vec<ConservationCheck> {
        let mut checks = Vec::new();
        for rx in &self.rx {
            let problem = rx.check();
            checks.push(ConservationCheck {
                law: "receive path",
                detail: problem.clone().unwrap_or_else(|| {
                    format!(
                        "{} ring + {} queued buffers, {} pages of {} atomic",
                        rx.filled(),
                        rx.queued(),
                        rx.held_pages(),
                        atomic
                    )
                }),
                holds: problem.is_none() && rx.held_pages() <= atomic,
            });
        }
        checks
    }

    /// Anonymous pages and swap slots against the processes that hold them (only when swap
    /// or a fake-gitk process is modelled).
    fn anon_checks(&self) -> Vec<ConservationCheck> {
        let Some(p) = self.memory.zone() else {
            return Vec::new();
        };
        if !p.swap.enabled() && self.procs.is_empty() {
            return Vec::new();
        }
        let r = p.swap.check(&p.mem);
        let files = &p.mem.files;
        let log_bios = self
            .bios
            .iter()
            .filter(|b| matches!(b.origin, Origin::Proc(_)))
            .count();
        let shared = files.check().and_then(|()| {
            if files.cached() > p.mem.pages.clean {
                Err(format!(
                    "{} shared log pages cached, only {} clean pages",
                    files.cached(),
                    p.mem.pages.clean
                ))
            } else if files.reads_in_flight() != log_bios {
                Err(format!(
                    "{} shared log reads in flight, {} log read bios live",
                    files.reads_in_flight(),
                    log_bios
                ))
            } else {
                Ok(())
            }
        });
        let shared_check = ConservationCheck {
            law: "shared log pages",
            detail: match &shared {
                Ok(()) => format!(
                    "cached {} <= clean {}; reads in flight {} = log read bios {}",
                    files.cached(),
                    p.mem.pages.clean,
                    files.reads_in_flight(),
                    log_bios
                ),
                Err(e) => e.clone(),
            },
            holds: shared.is_ok(),
        };
        let mut out = vec![ConservationCheck {
            law: "anonymous pages and swap slots",
            detail: match &r {
                Ok(()) => format!(
                    "anon {} + under swap-out {}; swap slots {}",
                    p.mem.pages.anon,
                    p.mem.pages.anon_writeback,
                    p.swap.used()
                ),
                Err(e) => e.clone(),
            },
            holds: r.is_ok(),
        }];
        if !self.procs.is_empty() {
            out.push(shared_check);
        }
        out
    }

    /// Pages that readers' live bios hold as cache being filled.
    pub(in crate::model) fn filling_in_bios(&self) -> u64 {
        self.bios
            .iter()
            .filter(|b| b.dir == Dir::Read && matches!(b.origin, Origin::Job(_) | Origin::Proc(_)))
            .map(|b| u64::from(b.cache_pages))
            .sum()
    }
}
