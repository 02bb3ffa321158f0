//! Runs that repeat another: a row of a table whose only change does nothing in the model (a
//! dm-crypt patch on a disk without dm-crypt, a patch the kernel already has) simulates exactly
//! what an earlier row does. [`SameModel`] finds them by [`model::model_key`]; the replications
//! of such a run are not simulated but copied from the earlier run's as they are folded
//! ([`Copies`]), so the report is byte for byte what simulating both would give.

use super::PlannedRun;
use crate::model::{self, RunResult, crypt::policy};
use std::collections::{BTreeMap, HashMap};

/// Which runs of a plan simulate exactly what an earlier run does ([`model::model_key`]: the
/// same policy, and a scenario equal in everything the model reads), so that one simulation
/// stands for both. Mel Gorman's tables list patches that change nothing in a run (patch 6
/// without dm-crypt, patches 1 and 2 on a kernel that has them); each such row is simulated
/// once and reported under both labels, byte for byte what simulating it twice gives.
pub(super) struct SameModel {
    /// Per run, the earlier run it repeats (always one that is not itself a repeat).
    pub(super) source: Vec<Option<usize>>,
    /// Per run, how many later runs repeat it.
    repeats: Vec<usize>,
}

impl SameModel {
    /// The repeats among `runs` (run under `infos`); none unless `allowed` (a run with
    /// per-I/O logs writes its own files, so it is never stood in for).
    pub(super) fn of(
        runs: &[PlannedRun],
        infos: &[&'static policy::PolicyInfo],
        allowed: bool,
    ) -> SameModel {
        let mut first: HashMap<String, usize> = HashMap::new();
        let mut same = SameModel::none(runs.len());
        if !allowed {
            return same;
        }
        for (i, (run, info)) in runs.iter().zip(infos).enumerate() {
            let key = model::model_key(run.scenario, info);
            match first.get(&key) {
                Some(&j) => {
                    same.source[i] = Some(j);
                    same.repeats[j] += 1;
                }
                None => {
                    first.insert(key, i);
                }
            }
        }
        same
    }

    /// No run repeats another.
    fn none(runs: usize) -> SameModel {
        SameModel {
            source: vec![None; runs],
            repeats: vec![0; runs],
        }
    }
}

/// The results of repeated runs' replications, from the fold of the source's replication until
/// the last repeat's fold takes it. Jobs fold run-major, so a source's replication always
/// folds before its repeats'.
#[derive(Default)]
pub(super) struct Copies {
    /// (source run, replication) → (its result, repeats still to fold).
    kept: BTreeMap<(usize, u64), (RunResult, usize)>,
}

impl Copies {
    /// The result to fold for replication `rep` of run `i` (labelled `label`): `r` when it
    /// was simulated, else its source's; kept for later repeats when there are any.
    pub(super) fn settle(
        &mut self,
        same: &SameModel,
        i: usize,
        rep: u64,
        label: &str,
        r: Option<RunResult>,
    ) -> RunResult {
        let r = r.unwrap_or_else(|| self.take(same, i, rep, label));
        self.keep(same, i, rep, &r);
        r
    }

    /// Keeps a copy of replication `rep` of run `i` when later runs repeat it.
    fn keep(&mut self, same: &SameModel, i: usize, rep: u64, r: &RunResult) {
        if same.repeats[i] > 0
            && let Some(copy) = r.copy_as(&r.obs.policy)
        {
            self.kept.insert((i, rep), (copy, same.repeats[i]));
        }
    }

    /// Replication `rep` of repeat run `i`: its source's result, labelled `label`.
    fn take(&mut self, same: &SameModel, i: usize, rep: u64, label: &str) -> RunResult {
        let j = same.source[i].expect("only a repeat has no result of its own");
        let key = (j, rep);
        let (r, left) = self
            .kept
            .get_mut(&key)
            .expect("a source's replication folds before its repeats'");
        *left -= 1;
        if *left > 0 {
            return r.copy_as(label).expect("a kept result has no I/O sink");
        }
        let (mut r, _) = self.kept.remove(&key).expect("present");
        r.obs.policy = label.to_string();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::tests::{tiny, with_variants};
    use crate::experiment::{plan, run_one, run_replicated};
    use crate::model::base::obs::RunObs;
    use crate::report::spread::RepSample;
    use crate::scenario::Scenario;

    /// The plan of `sc`, its runs' policies and the repeats among them.
    fn planned(
        sc: &Scenario,
    ) -> (
        Vec<PlannedRun<'_>>,
        Vec<&'static policy::PolicyInfo>,
        SameModel,
    ) {
        let runs = plan(sc);
        let infos: Vec<_> = runs
            .iter()
            .map(|r| policy::find(r.policy).unwrap())
            .collect();
        let same = SameModel::of(&runs, &infos, true);
        (runs, infos, same)
    }

    /// The runs `SameModel` finds repeated, as (repeat, source) labels.
    fn repeats(sc: &Scenario) -> Vec<(String, String)> {
        let (runs, _, same) = planned(sc);
        (0..runs.len())
            .filter_map(|i| same.source[i].map(|j| (runs[i].label.clone(), runs[j].label.clone())))
            .collect()
    }

    #[test]
    fn runs_whose_patches_change_nothing_repeat_an_earlier_run() {
        let sc = crate::scenario::resolve("mel-2009-nocrypt").unwrap();
        let pairs = |ll: &str| {
            [
                (format!("{ll} + 6"), ll.to_string()),
                (format!("{ll} + 1,2"), ll.to_string()),
                (format!("{ll} + 1..6"), format!("{ll} + 1..5")),
            ]
        };
        let want: Vec<(String, String)> = pairs("ll=0").into_iter().chain(pairs("ll=1")).collect();
        assert_eq!(repeats(&sc), want);
        // Every row of the dm-crypt table differs: patch 6 splits dm-crypt's io threads there.
        let swap = crate::scenario::resolve("mel-2009-swap").unwrap();
        assert_eq!(repeats(&swap), Vec::<(String, String)>::new());
        // Two variants that differ in the device are two models.
        let sc = with_variants(&tiny("fifo"), &[("a", &["fifo"], 1), ("b", &["fifo"], 2)]);
        assert!(repeats(&sc).is_empty());
        let sc = with_variants(&tiny("fifo"), &[("a", &["fifo"], 1), ("b", &["fifo"], 1)]);
        assert_eq!(repeats(&sc), [("b".to_string(), "a".to_string())]);
    }

    /// The claim behind standing in: in every shipped scenario, each repeat simulated on its
    /// own gives exactly its source's result (shortened to 3 s of simulated time).
    #[test]
    fn a_repeat_simulated_on_its_own_gives_its_sources_result() {
        let mut checked = 0;
        for s in crate::scenario::shipped() {
            let mut sc = crate::scenario::resolve(s.name).unwrap();
            let short = crate::engine::SimDuration::from_secs(3);
            let half = crate::engine::SimDuration::from_ms(1500);
            for v in sc.variants.iter_mut() {
                v.scenario.duration = v.scenario.duration.min(short);
                v.scenario.warmup = v.scenario.warmup.min(half);
            }
            sc.duration = sc.duration.min(short);
            sc.warmup = sc.warmup.min(half);
            let (runs, infos, same) = planned(&sc);
            for (i, j) in (0..runs.len()).filter_map(|i| same.source[i].map(|j| (i, j))) {
                let own = run_one(
                    &runs[i],
                    infos[i],
                    1,
                    model::Recording::default(),
                    model::Valve::OPEN,
                );
                let source = run_one(
                    &runs[j],
                    infos[j],
                    1,
                    model::Recording::default(),
                    model::Valve::OPEN,
                );
                let stand_in = source.copy_as(&runs[i].label).unwrap();
                assert_eq!(
                    format!("{:?}", own.obs),
                    format!("{:?}", stand_in.obs),
                    "{}: {}",
                    s.name,
                    runs[i].label
                );
                assert_eq!(own.violations, stand_in.violations);
                checked += 1;
            }
        }
        assert!(
            checked >= 6,
            "the shipped scenarios hold repeats to check ({checked})"
        );
    }

    #[test]
    fn a_repeat_is_folded_as_if_it_had_been_simulated() {
        let mut sc = with_variants(
            &tiny("fifo"),
            &[
                ("a", &["fifo"], 1),
                ("b", &["fifo"], 2),
                ("c", &["fifo"], 1),
            ],
        );
        for v in sc.variants.iter_mut() {
            v.scenario.replications = 3;
        }
        sc.replications = 3;
        assert_eq!(repeats(&sc), [("c".to_string(), "a".to_string())]);
        for jobs in [1, 2] {
            let rep =
                run_replicated(&sc, jobs, None, true, model::Valve::OPEN, &|_, _| {}).unwrap();
            let runs = plan(&sc);
            let info = policy::find("fifo").unwrap();
            for (i, run) in runs.iter().enumerate() {
                let each: Vec<RunObs> = (0..3)
                    .map(|r| {
                        run_one(
                            run,
                            info,
                            r,
                            model::Recording::timeline(),
                            model::Valve::OPEN,
                        )
                        .obs
                    })
                    .collect();
                let want: Vec<RepSample> = each.iter().map(RepSample::of).collect();
                assert_eq!(
                    format!("{:?}", rep.samples[i]),
                    format!("{want:?}"),
                    "{}",
                    run.label
                );
                assert_eq!(rep.first[i].obs.policy, run.label);
                assert_eq!(format!("{:?}", rep.first[i].obs), format!("{:?}", each[0]));
            }
        }
    }
}
