//! The dm-crypt table's optional flags (cryptsetup's `--perf-*`), as the scenario names them and
//! the kernel version allows them. The queue policies read them; the scenario config asks them.

/// The name of the policy that runs the kernel's own dm-crypt table; `<name>+<flag>+…` names it
/// with flags.
pub const TABLE_POLICY: &str = "dm-crypt";

/// cryptsetup's `--perf-*` flags of a dm-crypt table, as bits (docs/model/crypt.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct DmFlags(pub u8);

impl DmFlags {
    /// No flag set: the default table.
    pub const NONE: DmFlags = DmFlags(0);
    /// `same_cpu_crypt`: kcryptd bound, one worker per CPU.
    pub const SAME_CPU_CRYPT: DmFlags = DmFlags(1);
    /// `submit_from_crypt_cpus`: a synchronously encrypted write is submitted by its kcryptd
    /// worker, not `dmcrypt_write`.
    pub const SUBMIT_FROM_CRYPT_CPUS: DmFlags = DmFlags(2);
    /// `no_read_workqueue` (5.9+): decrypt in the completion context.
    pub const NO_READ_WORKQUEUE: DmFlags = DmFlags(4);
    /// `no_write_workqueue` (5.9+): encrypt in the submitter and submit directly.
    pub const NO_WRITE_WORKQUEUE: DmFlags = DmFlags(8);
    /// `high_priority` (6.10+): `WQ_HIGHPRI` workqueues, `dmcrypt_write` at nice −20.
    pub const HIGH_PRIORITY: DmFlags = DmFlags(16);
    /// Every flag with its cryptsetup name, in the order policy names list them.
    pub const ALL: [(&'static str, DmFlags); 5] = [
        ("same_cpu_crypt", DmFlags::SAME_CPU_CRYPT),
        ("submit_from_crypt_cpus", DmFlags::SUBMIT_FROM_CRYPT_CPUS),
        ("no_read_workqueue", DmFlags::NO_READ_WORKQUEUE),
        ("no_write_workqueue", DmFlags::NO_WRITE_WORKQUEUE),
        ("high_priority", DmFlags::HIGH_PRIORITY),
    ];

    /// Whether every flag of `f` is set.
    pub fn has(self, f: DmFlags) -> bool {
        self.0 & f.0 == f.0
    }

    /// The flags named by `dm-crypt+<flag>+…` (any order, each once, at least one), or `None`.
    pub fn parse(name: &str) -> Option<DmFlags> {
        let mut parts = name.split('+');
        if parts.next()? != TABLE_POLICY {
            return None;
        }
        let mut flags = DmFlags::NONE;
        for p in parts {
            let &(_, f) = DmFlags::ALL.iter().find(|(n, _)| *n == p)?;
            if flags.has(f) {
                return None;
            }
            flags.0 |= f.0;
        }
        (flags != DmFlags::NONE).then_some(flags)
    }

    /// The flags' cryptsetup names, in [`DmFlags::ALL`] order.
    pub fn names(self) -> Vec<&'static str> {
        DmFlags::ALL
            .iter()
            .filter(|(_, f)| self.has(*f))
            .map(|(n, _)| *n)
            .collect()
    }

    /// The flags of `self` and `other` together.
    pub fn union(self, other: DmFlags) -> DmFlags {
        DmFlags(self.0 | other.0)
    }

    /// How many flags are set.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Every combination of the flags of `self`, the empty one (the default table) first, then
    /// by number of flags, and among as many flags in [`DmFlags::ALL`] order (the first flag
    /// decides, then the second, …): `2^n` sets for `n` flags.
    pub fn combinations(self) -> Vec<DmFlags> {
        // Each flag's position in ALL: a set sorts by its positions read as a word.
        let positions = |f: DmFlags| -> Vec<usize> {
            DmFlags::ALL
                .iter()
                .enumerate()
                .filter(|(_, (_, g))| f.has(*g))
                .map(|(i, _)| i)
                .collect()
        };
        let mut out: Vec<DmFlags> = (0..1u8 << DmFlags::ALL.len())
            .map(DmFlags)
            .filter(|f| self.has(*f))
            .collect();
        out.sort_by_key(|&f| (f.count(), positions(f)));
        out
    }

    /// `dm-crypt`, then `+<flag>` for each flag set.
    pub fn policy_name(self) -> String {
        let mut s = TABLE_POLICY.to_string();
        for n in self.names() {
            s.push('+');
            s.push_str(n);
        }
        s
    }
}
