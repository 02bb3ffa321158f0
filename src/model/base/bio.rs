//! The bio: one I/O request as it travels from a workload through dm-crypt, the block layer and
//! the device, carrying a timestamp for every stage it passes.
//!
//! Bios live in a [`BioSlab`]: a vector with a free list, so memory is bounded by the number of
//! bios in flight, never by simulated duration.

use crate::engine::SimTime;
use crate::model::base::ids::ActorId;
use crate::model::base::obs::Stage;

/// Index of a bio in the slab.
pub type BioId = u32;

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// A read: decrypted after the device returns it.
    Read = 0,
    /// A write: encrypted into bounce pages before the device sees it.
    Write = 1,
}

/// Who issued a bio and is told when it completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A fio job (index into the world's jobs).
    Job(u32),
    /// A buffered writer's flusher (index into the world's writers).
    Writeback(u32),
    /// A fake-gitk process's file read (index into the memory model's processes).
    Proc(u32),
    /// A fake-gitk process's major fault: a plain READ of its page from swap (not READ_SYNC).
    SwapIn(u32),
    /// Reclaim's swap-out of anonymous pages (async write of contiguous swap slots).
    SwapOut,
    /// A piece of this bio, cut off by dm-crypt's `crypt_map()` (6.11's `max_read_size` /
    /// `max_write_size`): its own `dm_crypt_io`, completed into the bio it came from.
    Piece(BioId),
}

/// One I/O.
#[derive(Debug, Clone)]
pub struct Bio {
    /// Read or write.
    pub dir: Dir,
    /// REQ_SYNC: reads, and writes of sync writers. Picks the request-pool class and crypt list.
    pub sync: bool,
    /// Size in bytes (a multiple of 512).
    pub bytes: u32,
    /// Byte offset on the device.
    pub offset: u64,
    /// Who issued it.
    pub origin: Origin,
    /// Uniform draw in [0, 1) made at creation, turned into a device service time later.
    pub service_u: f64,
    /// Uniform draw in [0, 1) made at creation, turned into a crypto cost when the scenario
    /// gives the cost as a distribution.
    pub crypt_u: f64,
    /// When the workload issued it.
    pub issued: SimTime,
    /// When dm-crypt (or, without it, the block layer) accepted it: the end of slat.
    pub accepted: SimTime,
    /// Submitted by a context that unplugs the disk right after its own submission.
    pub unplug: bool,
    /// Issued after the warm-up: counted in statistics.
    pub measured: bool,
    /// Bounce pages held (writes, between encryption and completion).
    pub bounce_pages: u32,
    /// Page-cache pages a buffered read allocated for its data (they become clean cache at
    /// its completion); 0 without a memory model or for direct I/O.
    pub cache_pages: u32,
    /// The stage the bio is in now.
    pub stage: Stage,
    /// When it entered that stage.
    pub stage_since: SimTime,
    /// Time spent in each stage so far, ns, indexed by [`Stage::index`].
    pub stage_ns: [u64; Stage::COUNT],
    /// 2.6.32's `BIO_RW_SYNCIO` flag, distinct from [`Bio::sync`] (which every read has): set
    /// by READ_SYNC, WRITE_SYNC and O_DIRECT's WRITE_ODIRECT, never by a plain READ (page-cache
    /// reads, readahead, swap-in, O_DIRECT reads). [`Bio::new`] sets it on sync writes only;
    /// Mason's io queues route on it (docs/model/crypt.md).
    pub syncio: bool,
    /// The CPU that submitted its clone to the block layer (what picks the hardware queue and
    /// so the CPU of its completion).
    pub submit_cpu: u32,
    /// Pieces of it still in flight (dm-crypt split it; 0 otherwise).
    pub pieces_left: u32,
    /// The io context CFQ charges the request to when a helper context (the swap writer, a
    /// flusher) submits it straight to the disk on a task's behalf: a direct reclaimer's own
    /// submitting context (a fake-gitk copy's, a reading job's) for the pages its `pageout()`
    /// writes, as the kernel submits them in the reclaimer; `None` otherwise (the helper's own,
    /// shared context). Through a queued dm-crypt, kcryptd submits and this is not read.
    pub cic: Option<ActorId>,
}

impl Bio {
    /// A new bio in stage [`Stage::Other`] at `now`.
    pub fn new(dir: Dir, sync: bool, bytes: u32, offset: u64, origin: Origin, now: SimTime) -> Bio {
        Bio {
            dir,
            sync,
            bytes,
            offset,
            origin,
            service_u: 0.0,
            crypt_u: 0.0,
            issued: now,
            accepted: now,
            unplug: false,
            measured: false,
            bounce_pages: 0,
            cache_pages: 0,
            stage: Stage::Other,
            stage_since: now,
            stage_ns: [0; Stage::COUNT],
            syncio: dir == Dir::Write && sync,
            submit_cpu: 0,
            pieces_left: 0,
            cic: None,
        }
    }

    /// Closes the current stage at `now` and opens `stage`; returns the stage closed and when
    /// it began (what a trace records, [`crate::model::observe::trace`]).
    pub fn enter(&mut self, stage: Stage, now: SimTime) -> (Stage, SimTime) {
        let closed = (self.stage, self.stage_since);
        self.stage_ns[self.stage.index()] += now.since(self.stage_since).as_ns();
        self.stage = stage;
        self.stage_since = now;
        closed
    }

    /// Request-pool class: 0 = SYNC, 1 = ASYNC.
    pub fn class(&self) -> crate::model::base::ids::QueueClass {
        crate::model::base::ids::QueueClass::of(self.sync)
    }

    /// Whether it is a piece of a split bio ([`Origin::Piece`]): inside the system's books of
    /// its parent, not a request of its own.
    pub fn is_piece(&self) -> bool {
        matches!(self.origin, Origin::Piece(_))
    }

    /// Number of 512-byte sectors.
    pub fn sectors(&self) -> u64 {
        u64::from(self.bytes) / 512
    }
}

/// Bios in flight, addressed by [`BioId`].
#[derive(Debug, Default)]
pub struct BioSlab {
    slots: Vec<Option<Bio>>,
    free: Vec<BioId>,
    live: usize,
}

impl BioSlab {
    /// Stores a bio and returns its id.
    pub fn insert(&mut self, bio: Bio) -> BioId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = Some(bio);
            id
        } else {
            self.slots.push(Some(bio));
            (self.slots.len() - 1) as BioId
        }
    }
    /// Removes a finished bio.
    pub fn remove(&mut self, id: BioId) -> Bio {
        let bio = self.slots[id as usize].take().expect("bio freed twice");
        self.free.push(id);
        self.live -= 1;
        bio
    }
    /// Frees a finished bio's slot without moving the bio out (for a caller done reading it
    /// in place): the slab is then as [`BioSlab::remove`] leaves it.
    pub fn release(&mut self, id: BioId) {
        let slot = &mut self.slots[id as usize];
        assert!(slot.is_some(), "bio freed twice");
        *slot = None;
        self.free.push(id);
        self.live -= 1;
    }
    /// Bios in flight.
    pub fn live(&self) -> usize {
        self.live
    }
    /// Iterates the bios in flight.
    pub fn iter(&self) -> impl Iterator<Item = &Bio> {
        self.slots.iter().flatten()
    }
    /// Iterates the bios in flight with their ids.
    pub fn iter_ids(&self) -> impl Iterator<Item = (BioId, &Bio)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.as_ref().map(|b| (i as BioId, b)))
    }
}

impl std::ops::Index<BioId> for BioSlab {
    type Output = Bio;
    fn index(&self, id: BioId) -> &Bio {
        self.slots[id as usize].as_ref().expect("stale bio id")
    }
}

impl std::ops::IndexMut<BioId> for BioSlab {
    fn index_mut(&mut self, id: BioId) -> &mut Bio {
        self.slots[id as usize].as_mut().expect("stale bio id")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SimDuration;

    #[test]
    fn stages_sum_to_the_elapsed_time() {
        let t0 = SimTime::from_ns(100);
        let mut b = Bio::new(Dir::Read, true, 4096, 0, Origin::Job(0), t0);
        b.enter(Stage::IoQueue, t0 + SimDuration::from_ns(5));
        b.enter(Stage::Device, t0 + SimDuration::from_ns(25));
        b.enter(Stage::Other, t0 + SimDuration::from_ns(125));
        assert_eq!(b.stage_ns[Stage::Other.index()], 5);
        assert_eq!(b.stage_ns[Stage::IoQueue.index()], 20);
        assert_eq!(b.stage_ns[Stage::Device.index()], 100);
        assert_eq!(b.stage_ns.iter().sum::<u64>(), 125);
    }

    #[test]
    fn slab_reuses_slots() {
        let mut s = BioSlab::default();
        let t = SimTime::ZERO;
        let a = s.insert(Bio::new(Dir::Read, true, 512, 0, Origin::Job(0), t));
        let b = s.insert(Bio::new(Dir::Write, false, 512, 0, Origin::Job(0), t));
        assert_eq!(s.live(), 2);
        s.remove(a);
        let c = s.insert(Bio::new(Dir::Read, true, 512, 0, Origin::Job(0), t));
        assert_eq!(c, a);
        assert_eq!(s[b].dir, Dir::Write);
        assert_eq!(s.live(), 2);
        // Releasing in place frees the slot as removing does: the next insert takes it.
        s.release(b);
        assert_eq!(s.live(), 1);
        assert_eq!(s.iter().count(), 1);
        let d = s.insert(Bio::new(Dir::Read, true, 512, 0, Origin::Job(0), t));
        assert_eq!(d, b);
    }

    #[test]
    #[should_panic(expected = "bio freed twice")]
    fn releasing_a_free_slot_panics() {
        let mut s = BioSlab::default();
        let a = s.insert(Bio::new(
            Dir::Read,
            true,
            512,
            0,
            Origin::Job(0),
            SimTime::ZERO,
        ));
        s.release(a);
        s.release(a);
    }
}
