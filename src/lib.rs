//! qsim: a discrete-event simulator of Linux dm-crypt work queues under memory pressure.
//!
//! A scenario (YAML) describes a machine (CPUs, memory, a disk, a kernel version and its
//! patches), dm-crypt's settings and some workloads. qsim runs it once per queue policy (and per
//! variant, and per replication), and reports what the 2009 argument was about: read latency
//! percentiles and where the time went, GFP_ATOMIC allocation failures, kswapd's time in
//! `congestion_wait`, and whether two policies differ beyond the noise. What each component
//! models, with the kernel rules it follows and the values it assumes, is written up in
//! `docs/model/` (start at `docs/model/README.md`).
//!
//! # The layers
//!
//! ```text
//!   cli ─────────── qsim run / check / plot / validate / list / reproduce / merge / trace /
//!    │              serve; exit codes
//!   serve ───────── qsim serve's local page: its HTTP server (std::net, bounded) and run queue
//!    │
//!   experiment ──── Scenario → planned runs × replications, in parallel, collected by index
//!    │        ╲
//!   plot       ╲─── draws the report's plot series (PNG, SVG, plain ASCII); reads nothing else
//!    │          ╲
//!   report ──────── one Report: pooled blocks, per-replication metrics (registry), comparisons,
//!    │              precision, invariants, plot series; text, JSON, CSV, Markdown renderers
//!   scenario ────── YAML → validated model::base::config::Scenario, one module per section
//!    │
//!   model ───────── the dm-crypt machine as components; its parameters (model::base::config) and
//!    │              closed forms (model::base::physics); observations of one run
//!   stats, engine ─ histograms and summaries; simulated time, the event calendar, RNG streams
//! ```
//!
//! Each module imports only the layers below it: `tests/tidy.rs` checks it on every
//! `cargo test`, together with the size limits (no file over 1,000 lines, no function over 80
//! outside tests). The engine knows nothing of dm-crypt; the model formats nothing and never
//! sees YAML; the report never runs a simulation; the plots read only the report (or its JSON
//! export, for `qsim plot`). Support modules sit beside the stack: [`output`] writes every file
//! atomically, [`error`] maps errors to exit codes, [`theory`] holds the closed forms of the
//! textbook queues that [`validate`] checks the model against, and [`torture`] and [`fuzzing`]
//! feed the loaders, the plot reader, the shard merger and the page server hostile input.
//!
//! # The life of one bio
//!
//! Take a buffered 4 KiB read of the `gitk` workload under the `fifo` policy on a 2.6.32 kernel
//! with a `memory:` section ([`model::world`] wires the components; each step names the one
//! that acts; `docs/model/README.md` §3 tells the same story with the kernel's functions):
//!
//! 1. The job ([`model::workload`]) issues it and first needs a page-cache page from the zone
//!    (`src/model/mm/mod.rs`, [`model::mm::zone`]). Below the watermarks it wakes kswapd
//!    (`src/model/mm/kswapd.rs`) and may become a direct reclaimer (`src/model/mm/reclaim.rs`), scanning and
//!    sleeping in `congestion_wait` ([`model::mm::cwait`]) until it has its page. The bio
//!    ([`model::base::bio`]) carries a timestamp per stage from here on.
//! 2. dm-crypt maps it: by the policy's [`model::crypt::policy::Topology`] the clone goes to the
//!    kcryptd_io thread (`src/model/crypt/threads.rs`), which needs a CPU from the [`model::cpu`],
//!    then a request of the SYNC pool of the request queue ([`model::block::queue`]), sleeping on the
//!    pool while it is empty.
//! 3. The request queue plugs, merges and dispatches through the elevator to the device
//!    ([`model::block::device`]), which serves it after its seek, rotation and transfer.
//! 4. The completion frees the request (below the pool's off threshold that clears SYNC
//!    congestion and ends every `congestion_wait` of that class) and queues a decrypt on the
//!    crypt queue: under `fifo`, behind every write encryption already there
//!    ([`model::crypt::policy`]). A kcryptd thread takes it in policy order and decrypts it on a CPU at
//!    the cipher's rate (or hands it to the async engine, [`model::crypt::engine`]).
//! 5. The bio completes to the job, and the [`model::observe::recorder`] books its latency and its time
//!    per stage if the warm-up is over: the recorder holds every statistic and the warm-up gate.
//!
//! Every stage change above goes through one call (`World::enter`, which closes the stage on
//! the bio); with a trace on ([`model::observe::trace`], `qsim trace`), the same call hands the closed
//! span to the tracer, so a traced window's stage sums are the report's (`docs/trace.md`).
//!
//! A write goes the other way: the flusher of a buffered writer ([`model::workload`]) sends
//! dirty pages down as async bios, and kcryptd encrypts each into bounce pages taken from the
//! zone or dm-crypt's mempool (`src/model/mm/mempool.rs`) before submitting it to the ASYNC pool; the
//! pages come back on completion. The memory model is one value behind one interface
//! (`src/model/mm/mod.rs`): unlimited, or a zone ([`model::mm::zone`], [`model::mm::memory`]) with its
//! watermarks, the GFP_ATOMIC streams ([`model::mm::pressure`]), kswapd and direct reclaim.
//!
//! The world's events are one enum with a variant per component ([`model::world::event`]); the engine
//! ([`engine`]) pops them in `(time, insertion)` order and the world dispatches each to its
//! component, so equal-time events always run in the same order and a run is reproducible bit
//! for bit from its seed.
//!
//! # Where things live
//!
//! | concern | module |
//! |---|---|
//! | simulated time, calendar, RNG streams, the run loop and its work budget | [`engine`] |
//! | histograms (fio's buckets), summaries, Welch comparisons, bounded timelines | [`stats`] |
//! | the model's parameters, one struct per scenario section | [`model::base::config`] |
//! | device presets, cipher rates, mean service and crypto costs | [`model::base::physics`] |
//! | queue policies and their registry | [`model::crypt::policy`] |
//! | what a run measured | [`model::base::obs`] (filled by [`model::observe::recorder`]) |
//! | conservation laws and Little's law, checked at the end of each run | [`model::observe::invariants`] |
//! | YAML sections, defaults, checks, hints, `qsim check` rows | [`scenario`] (`kernel.rs`, `device.rs`, …) |
//! | the per-run metrics (key, label, unit, direction, reader) | [`report::metrics`] |
//! | the result of a whole scenario | [`report::Report`] |
//! | running the plan in parallel, `--precision` | [`experiment`] |
//! | published figures (`published:`) and `qsim reproduce`'s verdicts | [`scenario::published`], [`report::reproduce`] |
//!
//! # How to add …
//!
//! - **A queue policy**: write `src/model/crypt/policy/<name>.rs` (a type implementing
//!   [`model::crypt::policy::CryptQueuePolicy`], its `INFO` and a test-only `REFERENCE` model) and add
//!   `<name>` to the `policies!` line in `src/model/crypt/policy/mod.rs`. The loader's list of valid
//!   names, `qsim check`, the reports, the reference test and the timeline test all read the
//!   registry.
//! - **A device preset**: its numbers go in [`model::base::physics`] and its name in the `kind` enum of
//!   `src/scenario/device.rs`, with one arm where the preset is resolved and one in its table of
//!   accepted fields; the model reads the resolved [`model::base::config::DeviceConfig`] and needs
//!   nothing.
//! - **A kernel knob** (a switch of the memory-management rules): a field of
//!   [`model::base::config::VmBehaviour`] with its default per version, one field and one row of the
//!   `SWITCHES` table in `src/scenario/kernel.rs` (which drive resolution, patch conflicts and
//!   the `qsim check` row), and the component whose rule it changes.
//! - **A model component** (say, a NIC's receive ring): a file in the folder of its kernel
//!   subsystem (`src/model/mm/`, `src/model/block/`, …) that owns its state and its event type,
//!   declared in that folder's `mod.rs`; its functions that set timers are generic over
//!   `Scheduler<E>` with `E: From<ItsEvent>`, so it never names the world's event. The world's
//!   side is one more file in `src/model/world/` (an `impl World` that starts it, routes its
//!   bios and acts on what it returns), one variant in [`model::world::Event`] with one line in
//!   its `carries!` list, and one arm in the world's dispatch. `tests/tidy.rs` keeps the folders
//!   free of circles and of `impl World`.
//! - **A per-run metric**: measure it in the model (a field of [`model::base::obs::RunObs`],
//!   filled where the event happens and merged across replications) and add one row to
//!   [`report::metrics::METRICS`]. That row puts it in the replication summary, the CSV and
//!   Markdown exports and the `--json` summary; `in_block` also shows it in each run's text block
//!   and fio-JSON job, `headline` makes it a `--precision-metric`, and `plot` gives it a bar
//!   chart of its own. A `published:` row of a scenario may then compare it with a published
//!   figure (`metric: <key>`).
//!
//! Every change must keep `tests/golden/` (every shipped scenario and `qsim validate`, in every
//! format) byte-identical unless the output is meant to change; `QSIM_BLESS=1 cargo test golden`
//! rewrites them, and the commit says why.

pub mod calibrate;
pub mod cli;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod fuzzing;
pub mod model;
pub mod output;
pub mod plot;
pub mod report;
pub mod scenario;
pub mod serve;
pub mod stats;
pub mod textfit;
pub mod theory;
pub mod torture;
pub mod validate;
