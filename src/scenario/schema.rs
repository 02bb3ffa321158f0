//! The scenario file as written: the machinery every section's `Raw*` struct shares.
//!
//! Each section module (`top`, `kernel`, `device`, `block`, `crypt`, `memory`, `atomic`,
//! `workload`, `distribution`, `variants`) declares its raw struct once with [`raw_section!`],
//! which derives the serde mirror (denying unknown fields, so a typo fails at its own line with
//! serde's list of valid names), the list of fields present ([`raw_section!`]'s `present()`)
//! and the deep [`Merge`] of a variant's `set:`. Values that validation checks are wrapped in
//! [`Spanned`] so its errors can point at them.
//!
//! No internally tagged or untagged enums: serde-saphyr buffers those through a generic content
//! deserializer, and then every error raised inside them (a bad unit, an unknown field) reports
//! the line of the enclosing mapping instead of its own, and `Spanned` values come back with
//! line 0. So `device`, `workloads[*]` and distributions are read as one struct with a `kind:`
//! field and every per-kind field optional; which fields each kind takes is one table beside
//! the kind's enum (`DeviceKind::fields`, `WorkloadKindName::fields`, `DistKind::fields`), and
//! the section refuses the others at their own line.
//!
//! `Merge` deep-merges a variant's `set:` over the base file on these structs, so every value
//! keeps the span of the line it came from: mappings merge field by field, scalars and lists
//! replace, and a mapping whose `kind:` changes is replaced whole.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_saphyr::{Location, Spanned};
use std::fmt;

/// A field that may be absent.
pub type Field<T> = Option<Spanned<T>>;

/// Most names a `policies:` or `kernel.patches` list keeps while parsing (each name may be
/// listed once, and there are six policies and three patches).
pub const MAX_LISTED_NAMES: usize = 64;

/// A YAML list that keeps its first `MAX` items and only counts the rest ([`Capped::total`]),
/// so that a list far longer than any valid one (20,000 variants of 4.6 KB each as parsed)
/// costs its count, not its memory, before validation refuses it. Derefs to the kept items.
#[derive(Debug, Clone)]
pub struct Capped<T, const MAX: usize> {
    /// The first `MAX` items, in order.
    pub items: Vec<T>,
    /// How many items the list held in all.
    pub total: usize,
}

impl<T, const MAX: usize> std::ops::Deref for Capped<T, MAX> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.items
    }
}

impl<T, const MAX: usize> Capped<T, MAX> {
    /// Whether items were dropped: the list held more than `MAX`.
    pub fn over(&self) -> bool {
        self.total > MAX
    }
}

impl<'de, T: Deserialize<'de>, const MAX: usize> Deserialize<'de> for Capped<T, MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, const MAX: usize>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const MAX: usize> Visitor<'de> for V<T, MAX> {
            type Value = Capped<T, MAX>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                let mut total = 0usize;
                loop {
                    if items.len() < MAX {
                        match seq.next_element::<T>()? {
                            Some(x) => items.push(x),
                            None => break,
                        }
                    } else if seq.next_element::<de::IgnoredAny>()?.is_none() {
                        break;
                    }
                    total += 1;
                }
                Ok(Capped { items, total })
            }
        }
        d.deserialize_seq(V::<T, MAX>(std::marker::PhantomData))
    }
}

/// Deep merge of a variant's `set:` over the base file, on the parsed structs so that every
/// value keeps the location it was written at.
pub(crate) trait Merge {
    /// Applies `over` on top of `self`.
    fn merge(&mut self, over: Self);
}

/// Moves every value of a section to one location: a machine file's values, merged under a
/// scenario, point at the scenario's `machine:` line as a preset's do ([`super::machine`]).
/// Items inside lists keep their own locations (a machine file holds no list).
pub(crate) trait Relocate {
    /// Sets the location of every field (and of every nested section's fields) to `l`.
    fn relocate(&mut self, l: Location);
}

/// One value moved to `l`.
pub(crate) fn relocate_span<T>(s: &mut Spanned<T>, l: Location) {
    s.referenced = l;
    s.defined = l;
}

/// A nested mapping: merged field by field when both sides have it.
pub(crate) fn merge_map<T: Merge>(base: &mut Field<T>, over: Field<T>) {
    match (base.as_mut(), over) {
        (Some(b), Some(o)) => b.value.merge(o.value),
        (None, Some(o)) => *base = Some(o),
        (_, None) => {}
    }
}

/// A scalar or a list: replaced when the override has it.
pub(crate) fn replace<T>(base: &mut Field<T>, over: Field<T>) {
    if over.is_some() {
        *base = over;
    }
}

/// Whether both sides name a kind and the kinds differ.
pub(crate) fn kinds_differ<T: PartialEq>(base: &Field<T>, over: &Field<T>) -> bool {
    matches!((base, over), (Some(a), Some(b)) if a.value != b.value)
}

/// Records a present field with its location.
pub(crate) fn push<T>(v: &mut Vec<(&'static str, Location)>, name: &'static str, field: &Field<T>) {
    if let Some(s) = field {
        v.push((name, s.referenced));
    }
}

/// Declares a section's raw struct, every field once, each marked with how it merges:
///
/// - `[value]`: a scalar or a list, replaced by an override; listed by `present()`;
/// - `[map]`: a nested mapping, merged field by field; listed by `present()`;
/// - `[kind]`: the mapping's `kind:`; an override naming another kind replaces the whole
///   mapping (a `seek_min` of an hdd base must not survive into an nvme variant);
/// - `[name]`: a label, replaced; like `[kind]`, left out of `present()`.
///
/// Generates the serde mirror (`Field<T>` members, unknown fields denied), `present()` (the
/// fields the file gives, in declaration order, for the per-kind field check) and [`Merge`].
macro_rules! raw_section {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* [$how:ident] $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $crate::scenario::schema::Field<$ty>, )*
        }

        impl $name {
            /// Fields present in the file, with their locations, in declaration order (`kind`
            /// and `name` excluded).
            #[allow(dead_code)]
            pub fn present(&self) -> Vec<(&'static str, serde_saphyr::Location)> {
                let mut v = Vec::new();
                $( $crate::scenario::schema::raw_field!(present $how, v, $field, &self.$field); )*
                v
            }
        }

        impl $crate::scenario::schema::Relocate for $name {
            fn relocate(&mut self, l: serde_saphyr::Location) {
                $( $crate::scenario::schema::raw_field!(relocate $how, &mut self.$field, l); )*
            }
        }

        impl $crate::scenario::schema::Merge for $name {
            fn merge(&mut self, over: Self) {
                $(
                    if $crate::scenario::schema::raw_field!(differs $how, &self.$field, &over.$field) {
                        *self = over;
                        return;
                    }
                )*
                let Self { $($field,)* } = over;
                $( $crate::scenario::schema::raw_field!(merge $how, &mut self.$field, $field); )*
            }
        }
    };
}

/// One field's part in [`raw_section!`], by its merge mark.
macro_rules! raw_field {
    (present kind, $v:ident, $n:ident, $f:expr) => {};
    (present name, $v:ident, $n:ident, $f:expr) => {};
    (present $how:ident, $v:ident, $n:ident, $f:expr) => {
        $crate::scenario::schema::push(&mut $v, stringify!($n), $f)
    };
    (differs kind, $b:expr, $o:expr) => {
        $crate::scenario::schema::kinds_differ($b, $o)
    };
    (differs $how:ident, $b:expr, $o:expr) => {
        false
    };
    (relocate map, $f:expr, $l:ident) => {
        if let Some(s) = $f {
            $crate::scenario::schema::relocate_span(s, $l);
            $crate::scenario::schema::Relocate::relocate(&mut s.value, $l);
        }
    };
    (relocate $how:ident, $f:expr, $l:ident) => {
        if let Some(s) = $f {
            $crate::scenario::schema::relocate_span(s, $l);
        }
    };
    (merge map, $b:expr, $o:expr) => {
        $crate::scenario::schema::merge_map($b, $o)
    };
    (merge $how:ident, $b:expr, $o:expr) => {
        $crate::scenario::schema::replace($b, $o)
    };
}

pub(crate) use {raw_field, raw_section};

/// Declares the closed set of names a field accepts (`device.kind`, `block.elevator`, …): the
/// enum, its YAML spellings (serde reads them, and lists them in order for an unknown name),
/// [`ALL`](Self) and `NAMES` in the same order, and `name()`. Hints that list the valid names
/// read `NAMES`, so they cannot go stale.
macro_rules! names {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:tt ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant, )*
        }

        #[allow(dead_code)]
        impl $name {
            /// Every name, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];
            /// Every name as written in YAML, in [`Self::ALL`] order.
            pub const NAMES: &'static [&'static str] = &[$($text),*];

            /// The name as written in YAML.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }
    };
}

pub(crate) use names;
