//! md RAID0 arrays of identical drives: how a bio is cut into pieces and how the members serve
//! them (docs/model/device.md §3d for HDDs, §3e for NVMe).
//!
//! A bio is cut at chunk boundaries as `raid0_make_request` does, each piece goes to its member
//! (chunk `c` to member `c mod disks`, at member offset `(c / disks)·chunk` plus the offset
//! within the chunk), and pieces of one bio that fall on one member contiguously travel as one
//! request (the member's queue would merge them). Each member serves its pieces in FIFO order on
//! its own channels (an HDD member has one, its head; an NVMe member has the drive's `channels`,
//! and its own pauses); the bio completes when its last piece does.

use super::{Device, DeviceWake, Pauses, Wakes, hdd_service, nvme_service};
use crate::engine::SimTime;
use crate::model::base::bio::{Bio, BioId};
use crate::model::base::config::DeviceConfig;
use std::collections::VecDeque;

/// One piece of a bio on one member of an array.
#[derive(Debug, Clone, Copy)]
pub(super) struct Piece {
    pub(super) bio: BioId,
    /// Byte offset on the member.
    offset: u64,
    bytes: u64,
    /// The piece's uniform draw (an HDD's rotational delay, an NVMe's controller overhead).
    u: f64,
}

/// One drive of an array: an HDD's head, the pieces waiting for the drive, and an NVMe's
/// pauses.
#[derive(Debug, Default)]
pub(super) struct Member {
    head: u64,
    queue: VecDeque<Piece>,
    pub(super) pauses: Option<Pauses>,
}

/// The pieces of a bio of `bytes` at array offset `offset` on `disks` members striped in
/// `chunk`-byte chunks (md RAID0's `map_sector` for one zone of equal members), pieces that are
/// contiguous on one member joined: `(member, member offset, bytes)`, in array order.
pub fn raid0_pieces(offset: u64, bytes: u64, disks: u32, chunk: u64) -> Vec<(u32, u64, u64)> {
    let (disks, chunk) = (u64::from(disks.max(1)), chunk.max(512));
    let mut out: Vec<(u32, u64, u64)> = Vec::new();
    let (mut at, end) = (offset, offset + bytes);
    while at < end {
        let c = at / chunk;
        let within = at % chunk;
        let len = (chunk - within).min(end - at);
        let member = (c % disks) as u32;
        let moff = (c / disks) * chunk + within;
        match out.iter_mut().find(|p| p.0 == member && p.1 + p.2 == moff) {
            Some(p) => p.2 += len,
            None => out.push((member, moff, len)),
        }
        at += len;
    }
    out
}

/// Piece `i`'s uniform draw: the bio's, spread by golden-ratio steps so that the pieces of one
/// bio do not share one draw (assumed; piece 0 keeps the bio's).
fn piece_u(u: f64, i: usize) -> f64 {
    (u + i as f64 * 0.618_033_988_749_895).fract()
}

impl Device {
    /// The array's members and chunk.
    fn geometry(&self) -> (u32, u64) {
        match &self.config {
            DeviceConfig::Hdd(h) => (h.disks, h.chunk),
            DeviceConfig::Nvme(n) => (n.disks, n.chunk),
            DeviceConfig::Generic(_) => (1, 0),
        }
    }

    /// An array takes a bio (after its fixed latency, if any): its pieces join their members'
    /// queues; idle channels start.
    pub(super) fn stripe(&mut self, id: BioId, bio: &Bio, now: SimTime) -> Wakes {
        let (disks, chunk) = self.geometry();
        let pieces = raid0_pieces(bio.offset, u64::from(bio.bytes), disks, chunk);
        self.pieces_left.insert(id, pieces.len() as u32);
        let mut wakes = Wakes::default();
        for (i, &(m, offset, bytes)) in pieces.iter().enumerate() {
            let piece = Piece {
                bio: id,
                offset,
                bytes,
                u: piece_u(bio.service_u, i),
            };
            let m = m as usize;
            let mut own = m * self.per_member..(m + 1) * self.per_member;
            match own.find(|&c| self.serving[c].is_none()) {
                Some(chan) => wakes.push(self.start_piece(chan, piece, now)),
                None => self.members[m].queue.push_back(piece),
            }
        }
        wakes
    }

    /// Channel `chan` (of member `chan / per_member`) starts serving `piece`.
    fn start_piece(&mut self, chan: usize, piece: Piece, now: SimTime) -> DeviceWake {
        let member = &mut self.members[chan / self.per_member];
        let service = match &self.config {
            DeviceConfig::Hdd(h) => {
                hdd_service(h, &mut member.head, piece.offset, piece.bytes, piece.u)
            }
            DeviceConfig::Nvme(n) => nvme_service(n, piece.bytes, piece.u),
            DeviceConfig::Generic(_) => unreachable!("a generic device is never an array"),
        };
        let done = match &mut member.pauses {
            Some(p) => p.finish(now, service),
            None => now + service,
        };
        self.serving[chan] = Some(piece);
        self.channels[chan] = Some(piece.bio);
        DeviceWake::ChannelDone(done, chan as u32)
    }

    /// Channel `chan` of an array finished its piece: the bio is done if that was its last
    /// one; the member's next piece, if any, starts on the channel.
    pub(super) fn member_done(
        &mut self,
        chan: usize,
        now: SimTime,
    ) -> (Option<BioId>, Option<DeviceWake>) {
        let piece = self.serving[chan].take().expect("channel was idle");
        self.channels[chan] = None;
        let left = self
            .pieces_left
            .get_mut(&piece.bio)
            .expect("a piece of a bio the array holds");
        *left -= 1;
        let done = (*left == 0).then(|| {
            self.pieces_left.remove(&piece.bio);
            self.finished(now);
            piece.bio
        });
        let next = self.members[chan / self.per_member]
            .queue
            .pop_front()
            .map(|p| self.start_piece(chan, p, now));
        (done, next)
    }
}
