//! The scenario side of today's dm-crypt (kernels after 2.6.x): which `dm-crypt+<flag>`
//! policies a kernel accepts, and the `qsim check` rows of its dm-crypt rules
//! (docs/model/crypt.md §9, docs/model/kernels.md §2a).

use super::Error;
use super::check::Checker;
use super::describe::{Rows, row};
use crate::model::base::config::KernelConfig;
use serde_saphyr::Spanned;

/// Whether policy `info` (written at `path`) exists on `kernel`: the `dm-crypt` layout and its
/// flags only from the version that brought them (a kernel without a flag refuses the table
/// with "Invalid feature arguments"); the 2.6.x layouts only on a 2.6.x kernel.
pub(crate) fn policy_fits(
    c: &Checker,
    path: &str,
    at: &Spanned<String>,
    info: &crate::model::crypt::policy::PolicyInfo,
    kernel: &KernelConfig,
) -> Result<(), Error> {
    use crate::model::crypt::policy::{DmFlags, Topology};
    let v = kernel.version;
    let named = super::shorten(&at.value);
    let Some(rules) = v.dmcrypt() else {
        if info.name.starts_with("dm-crypt") {
            return Err(c.at(path, at).conflict(
                format!(
                    "`{named}` is the dm-crypt of kernels 4.19 and later; kernel.version is {}",
                    v.name()
                ),
                "set kernel.version to 4.19 or later, or use `fifo` (2.6.x's single kcryptd)",
            ));
        }
        return Ok(());
    };
    let old_layout =
        matches!(info.topology, Topology::Queued | Topology::Inline) || info.name == "stock-5.8";
    if old_layout {
        return Err(c.at(path, at).conflict(
            format!("`{named}` is a 2.6.x layout or a pinned 2020 one; kernel {} runs its own dm-crypt", v.name()),
            "use `dm-crypt` (with +<flag> for cryptsetup's --perf-* flags), or `none`, on kernels after 2.6.x",
        ));
    }
    let since = |f: DmFlags| match f {
        f if f == DmFlags::NO_READ_WORKQUEUE || f == DmFlags::NO_WRITE_WORKQUEUE => {
            (!rules.bypass_flags).then_some("5.9")
        }
        f if f == DmFlags::HIGH_PRIORITY => (!rules.high_priority_flag).then_some("6.10"),
        _ => None,
    };
    for (name, f) in DmFlags::ALL {
        if let Some(first) = info.flags.has(f).then(|| since(f)).flatten() {
            return Err(c.at(path, at).conflict(
                format!(
                    "kernel {} has no `{name}` (added in {first}): dm-crypt refuses the table \
                     with \"Invalid feature arguments\"",
                    v.name()
                ),
                format!("drop `+{name}`, or set kernel.version to {first} or later"),
            ));
        }
    }
    Ok(())
}

/// A modern kernel's dm-crypt rules, and the flags each listed policy sets.
pub(crate) fn describe_dmcrypt(o: &mut Rows, r: &crate::model::base::config::DmCryptRules) {
    use crate::model::base::config::HardirqFallback;
    use crate::model::crypt::policy::DmFlags;
    row(
        o,
        2,
        "dm-crypt",
        "unbound kcryptd (a worker per CPU), dmcrypt_write",
    );
    let prio = if r.highpri_default {
        "WQ_HIGHPRI (nice -20) always"
    } else if r.high_priority_flag {
        "normal; WQ_HIGHPRI with high_priority"
    } else {
        "normal"
    };
    row(o, 4, "workqueues", prio);
    let flags: Vec<&str> = DmFlags::ALL
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| {
            (r.bypass_flags || !n.starts_with("no_"))
                && (r.high_priority_flag || *n != "high_priority")
        })
        .collect();
    row(o, 4, "flags", &flags.join(", "));
    if r.bypass_flags {
        let fallback = match r.hardirq_fallback {
            HardirqFallback::Tasklet => "tasklet (softirq, same CPU)",
            HardirqFallback::Workqueue => "kcryptd workqueue (as without the flag)",
            HardirqFallback::BhWorkqueue => "BH workqueue (softirq, same CPU)",
        };
        row(
            o,
            4,
            "hard-IRQ read",
            &format!("no_read_workqueue falls back to the {fallback}"),
        );
    }
    let split = if r.split_bios {
        "at max_read_size / max_write_size"
    } else {
        "none"
    };
    row(o, 4, "bio splitting", split);
}

/// A `memory:` section (at `at`) on a kernel after 2.6.x is refused: qsim's reclaim rules are
/// 2.6.x's.
pub(crate) fn no_memory_model(
    c: &Checker,
    at: serde_saphyr::Location,
    kernel: &KernelConfig,
) -> Result<(), Error> {
    if !kernel.version.is_modern() {
        return Ok(());
    }
    Err(c.at("memory", Some(at)).conflict(
        format!(
            "qsim's reclaim rules stop at 2.6.37; kernel {} has none modelled",
            kernel.version.name()
        ),
        "remove `memory:` (memory is then unlimited), or use a 2.6.x kernel",
    ))
}
