//! The world's side of `mm/swap.rs`: swap-out bios issued through dm-crypt and their
//! completions.

use crate::engine::Scheduler;
use crate::model::base::bio::{Bio, Dir, Origin};
use crate::model::base::ids::ActorId;
use crate::model::mm::memory::{PAGE_SIZE, SWAP_CLUSTER_MAX, Scan};
use crate::model::mm::swap::*;
use crate::model::world::World;
use crate::model::world::event::Event;
use rand::RngExt;

impl World {
    /// One reclaim pass at `prio` over both LRUs with swap (2.6.32's `shrink_zone`): the
    /// lists' targets from [`Swap::scan_percent`], scanned a batch of each in turn (anon
    /// first), a file batch's dirty pages sent to pageout and an anon batch's pages to
    /// swap-out right away, until the targets are met or `stop` pages were reclaimed.
    pub(in crate::model) fn shrink_lists(
        &mut self,
        prio: i32,
        may_writepage: bool,
        stop: Option<u64>,
        cic: Option<ActorId>,
        sched: &mut Scheduler<Event>,
    ) -> Scan {
        let p = self.pr();
        let file = p.mem.file_lru_pages();
        let (free, high) = (p.mem.zone.free_pages(), p.mem.zone.marks().high);
        let pct = p.swap.scan_percent(file, free, high);
        let sizes = [p.swap.resident(), file];
        let mut nr = [0u64; 2];
        for l in 0..2 {
            let mut scan = sizes[l];
            if prio > 0 {
                scan = (scan >> prio) * pct[l] / 100;
            }
            nr[l] = p.swap.try_batch(l, scan);
        }
        let mut total = Scan::default();
        while nr[0] > 0 || nr[1] > 0 {
            if nr[0] > 0 {
                let n = nr[0].min(SWAP_CLUSTER_MAX);
                nr[0] -= n;
                let p = self.pr();
                let a = p.swap.scan(&mut p.mem, n, may_writepage);
                total.scanned += a.scanned;
                total.reclaimed += a.reclaimed;
                self.swap_write(cic, sched);
            }
            if nr[1] > 0 {
                let n = nr[1].min(SWAP_CLUSTER_MAX);
                nr[1] -= n;
                let p = self.pr();
                let s = p.mem.scan(n, may_writepage, None);
                p.swap.note(1, s.scanned, s.scanned - s.reclaimed - s.dirty);
                if p.mem.measuring() {
                    p.mem.obs.pageout_pages += s.pageout;
                }
                total.scanned += s.scanned;
                total.reclaimed += s.reclaimed;
                total.dirty += s.dirty;
                total.pageout += s.pageout;
                self.pageout(s.pageout, cic, sched);
            }
            if stop.is_some_and(|s| total.reclaimed >= s) {
                break;
            }
        }
        total
    }

    /// Issues the pending swap-out writes: runs of contiguous slots, each one async WRITE bio
    /// of at most [`SWAP_WRITE_PAGES`] pages through dm-crypt, from the swap writer's context,
    /// on behalf of the reclaiming task's io context `cic`.
    pub(in crate::model) fn swap_write(
        &mut self,
        cic: Option<ActorId>,
        sched: &mut Scheduler<Event>,
    ) {
        let mut slots = self.pr().swap.take_writes();
        if slots.is_empty() {
            self.pr().swap.return_writes(slots);
            return;
        }
        slots.sort_unstable();
        let ctx = self.swap_ctx();
        let mut i = 0;
        while i < slots.len() {
            let mut n = 1;
            while i + n < slots.len()
                && slots[i + n] == slots[i] + n as u32
                && (n as u32) < SWAP_WRITE_PAGES
            {
                n += 1;
            }
            let p = self.pr();
            p.swap.obs.swap_out_bios += 1;
            let offset = p.swap.slot_offset(slots[i]);
            let bytes = n as u32 * PAGE_SIZE as u32;
            let mut bio = Bio::new(
                Dir::Write,
                false,
                bytes,
                offset,
                Origin::SwapOut,
                sched.now(),
            );
            bio.cic = cic;
            let rng = &mut p.swap_rng;
            bio.service_u = rng.random();
            bio.crypt_u = rng.random();
            self.issue(bio, ctx, sched);
            i += n;
        }
        self.pr().swap.return_writes(slots);
    }

    /// The swap writer's submitting context.
    fn swap_ctx(&self) -> ActorId {
        let i = self
            .actors
            .iter()
            .position(|a| a.kind == crate::model::crypt::threads::ActorKind::SwapWriter)
            .expect("a swap writer context exists with swap");
        ActorId(i as u32)
    }

    /// A swap-out write completed: each of its slots' pages is freed (or mapped again).
    pub(in crate::model) fn swapout_done(&mut self, bio: &Bio) {
        let p = self.pr();
        let first = p.swap.slot_at(bio.offset);
        let n = (u64::from(bio.bytes) / PAGE_SIZE) as u32;
        p.swap.writes_done(&mut p.mem, first..first + n);
    }
}
