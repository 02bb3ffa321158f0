//! The run matrix of a scenario: which runs its report lays out, in report order (policies;
//! with variants, variants × each variant's policies, variant-major) and what each is called.
//! The report builds its blocks in this order and the experiment runs it, so the order lives
//! here, below both.

use crate::scenario::Scenario;

/// One run of a scenario's matrix: which scenario it uses, under which policy, and what the
/// report calls it.
#[derive(Debug, Clone)]
pub struct PlannedRun<'a> {
    /// The scenario the run uses: a variant's, or the scenario itself without variants.
    pub scenario: &'a Scenario,
    /// The variant's name (`None` when the scenario has no variants).
    pub variant: Option<&'a str>,
    /// The policy's name as the scenario lists it.
    pub policy: &'a str,
    /// The run's label in the report: the policy without variants; with them `<variant>` when
    /// every variant runs exactly one policy, else `<variant>/<policy>`.
    pub label: String,
}

/// The runs a scenario asks for, in report order: its policies; with variants, variants ×
/// each variant's policies, variant-major.
pub fn plan(sc: &Scenario) -> Vec<PlannedRun<'_>> {
    if sc.variants.is_empty() {
        return sc
            .policies
            .iter()
            .map(|p| PlannedRun {
                scenario: sc,
                variant: None,
                policy: p,
                label: p.clone(),
            })
            .collect();
    }
    let one_policy_each = sc.variants.iter().all(|v| v.scenario.policies.len() == 1);
    sc.variants
        .iter()
        .flat_map(|v| {
            v.scenario.policies.iter().map(move |p| PlannedRun {
                scenario: &v.scenario,
                variant: Some(v.name.as_str()),
                policy: p,
                label: if one_policy_each {
                    v.name.clone()
                } else {
                    format!("{}/{p}", v.name)
                },
            })
        })
        .collect()
}
