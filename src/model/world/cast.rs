//! The cast: the world's thread table (crypt threads, kcryptd_io, then one submitting context
//! per job, writer, fake-gitk copy and the swap writer) and the workloads it builds beside it.

use crate::engine::RngStreams;
use crate::model::base::config::{IoQueues, Scenario, WorkloadKind};
use crate::model::base::ids::ActorId;
use crate::model::crypt::policy::{PolicyInfo, Topology};
use crate::model::crypt::threads::{Actor, ActorKind};
use crate::model::workload::{Job, Writer};

/// The actor table: crypt threads, kcryptd_io, then one context per job and per writer.
pub(in crate::model) struct Cast {
    pub(in crate::model) actors: Vec<Actor>,
    pub(in crate::model) crypt: Vec<ActorId>,
    pub(in crate::model) io: ActorId,
    pub(in crate::model) jobs: Vec<Job>,
    pub(in crate::model) writers: Vec<Writer>,
    /// Mason's kcryptd_async_io, if the io queues are `mason-v3` (appended after the contexts).
    pub(in crate::model) async_io: Option<ActorId>,
    /// 5.8's `dmcrypt_write`, under the `Workqueue` topology (appended last).
    pub(in crate::model) write: Option<ActorId>,
}

/// Whether a world of policy `info` runs Mason's two io queues: the policy's own choice, else
/// the scenario's `crypt.io_queues`; only the queued (2.6.32) layout has io threads.
pub(in crate::model) fn mason_io(sc: &Scenario, info: &PolicyInfo) -> bool {
    info.topology == Topology::Queued
        && info.io_queues.unwrap_or(sc.crypt.io_queues) == IoQueues::MasonV3
}

pub(in crate::model) fn cast(sc: &Scenario, info: &PolicyInfo, streams: &RngStreams) -> Cast {
    let mut actors = Vec::new();
    let next = |actors: &Vec<Actor>| ActorId(actors.len() as u32);
    let mut crypt = Vec::new();
    // An unbound kcryptd runs up to num_online_cpus() work items at once.
    let threads = match info.topology {
        Topology::Workqueue => sc.cpus as usize,
        _ => info.threads,
    };
    for i in 0..threads {
        crypt.push(next(&actors));
        actors.push(Actor::new(ActorKind::Crypt(i)));
    }
    let io = next(&actors);
    actors.push(Actor::new(ActorKind::Io));
    let (mut jobs, mut writers) = (Vec::new(), Vec::new());
    for wl in &sc.workloads {
        match &wl.kind {
            WorkloadKind::Fio(f) => {
                for copy in 0..f.numjobs {
                    let ctx = next(&actors);
                    actors.push(Actor::new(ActorKind::JobCtx(jobs.len() as u32)));
                    jobs.push(Job::new(&wl.name, copy, f, ctx, streams));
                }
            }
            WorkloadKind::BufferedWriter(b) => {
                let ctx = next(&actors);
                actors.push(Actor::new(ActorKind::FlusherCtx(writers.len() as u32)));
                writers.push(Writer::new(&wl.name, b, ctx, streams));
            }
            WorkloadKind::FakeGitk(_) | WorkloadKind::CpuIo(_) => {}
        }
    }
    let async_io = mason_io(sc, info).then(|| {
        actors.push(Actor::new(ActorKind::AsyncIo));
        ActorId(actors.len() as u32 - 1)
    });
    let write = (info.topology == Topology::Workqueue).then(|| {
        actors.push(Actor::new(ActorKind::DmcryptWrite));
        ActorId(actors.len() as u32 - 1)
    });
    // fake-gitk processes and the swap writer: the memory model finds their contexts by kind.
    cast_contexts(sc, &mut actors);
    // Home CPUs: kcryptd worker i on CPU i (a bound worker never leaves it), jobs and flushers
    // spread over the CPUs as the scheduler spreads new tasks.
    for a in &mut actors {
        a.cpu = match a.kind {
            ActorKind::Crypt(i) => i as u32,
            ActorKind::JobCtx(j) => j,
            ActorKind::FlusherCtx(w) => w,
            _ => 0,
        } % sc.cpus.max(1);
    }
    Cast {
        actors,
        crypt,
        io,
        jobs,
        writers,
        async_io,
        write,
    }
}

/// Adds the submitting contexts of the fake-gitk copies and, with swap, of the swap writer,
/// after the other actors.
pub(in crate::model) fn cast_contexts(sc: &Scenario, actors: &mut Vec<Actor>) {
    let copies: u32 = sc
        .workloads
        .iter()
        .map(|w| match &w.kind {
            WorkloadKind::FakeGitk(g) => g.numjobs,
            _ => 0,
        })
        .sum();
    for p in 0..copies {
        actors.push(Actor::new(ActorKind::ProcCtx(p)));
    }
    if sc.memory.as_ref().is_some_and(|m| m.swap > 0) {
        actors.push(Actor::new(ActorKind::SwapWriter));
    }
}
