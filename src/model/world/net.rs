//! The world's side of `net/rx.rs`: each sender's paced transmissions and retransmissions, the
//! kswapd wake-ups of the ring's refills, and the process that reads the socket (a buffered
//! writer with `from:`), whose reads reopen the window.

use crate::engine::{Scheduler, SimDuration};
use crate::model::net::NetEvent;
use crate::model::net::rx::Sent;
use crate::model::workload::{DIRTY_STEP, WorkloadEvent};
use crate::model::world::World;
use crate::model::world::event::Event;
use crate::model::world::pressure::zone;

impl World {
    /// Fills every ring (the driver's open) and starts each sender.
    pub(in crate::model) fn start_rx(&mut self, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        for i in 0..self.rx.len() {
            let rx = &mut self.rx[i];
            let wake = rx.refill(&mut zone(&mut self.memory).mem, now);
            let (pace, order) = (rx.pace(), rx.cfg().order);
            sched.schedule_in(pace, Event::Net(NetEvent::Send { path: i as u32 }));
            if wake {
                self.wake_kswapd(order, sched);
            }
        }
    }

    /// The receive paths' events.
    pub(in crate::model) fn net_event(&mut self, ev: NetEvent, sched: &mut Scheduler<Event>) {
        match ev {
            NetEvent::Send { path } => self.rx_send(path, sched),
        }
    }

    /// Path `i`'s sender transmits: the next transmission is paced, retried after a loss, or
    /// left to the reader when the window closed.
    fn rx_send(&mut self, i: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let rx = &mut self.rx[i as usize];
        let out = rx.send(&mut zone(&mut self.memory).mem, now);
        let order = rx.cfg().order;
        match out.sent {
            Sent::Queued => {
                sched.schedule_in(rx.pace(), Event::Net(NetEvent::Send { path: i }));
                let reader = rx.cfg().reader;
                if self.writers[reader as usize].waiting_data {
                    self.reader_wakes(reader, i, sched);
                }
            }
            Sent::Lost(rto) => {
                sched.schedule_in(rto, Event::Net(NetEvent::Send { path: i }));
            }
            Sent::WindowClosed => {}
        }
        if out.wake_kswapd {
            self.wake_kswapd(order, sched);
        }
    }

    /// Writer `w`, asleep in the socket's read, gets the data that arrived; with a step's worth
    /// it goes on to write.
    fn reader_wakes(&mut self, w: u32, path: u32, sched: &mut Scheduler<Event>) {
        self.read_socket(w, path, sched);
        if self.writers[w as usize].inbox >= DIRTY_STEP {
            self.writers[w as usize].waiting_data = false;
            sched.schedule_in(
                SimDuration::ZERO,
                Event::Workload(WorkloadEvent::WriterTick { writer: w }),
            );
        }
    }

    /// Writer `w` copies everything its socket holds; a sender the window held back resumes.
    pub(in crate::model) fn read_socket(
        &mut self,
        w: u32,
        path: u32,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let rx = &mut self.rx[path as usize];
        let bytes = rx.read(&mut zone(&mut self.memory).mem, now);
        self.writers[w as usize].inbox += bytes;
        if rx.unblock(now).is_some() {
            sched.schedule_in(SimDuration::ZERO, Event::Net(NetEvent::Send { path }));
        }
    }

    /// Before a step, a writer that reads a socket takes what has arrived; without a step's
    /// worth it sleeps in the read (`true`: the step waits).
    pub(in crate::model) fn writer_needs_data(
        &mut self,
        w: u32,
        sched: &mut Scheduler<Event>,
    ) -> bool {
        let Some(path) = self.writers[w as usize].cfg.source else {
            return false;
        };
        self.read_socket(w, path, sched);
        let wr = &mut self.writers[w as usize];
        wr.waiting_data = wr.inbox < DIRTY_STEP;
        wr.waiting_data
    }
}
