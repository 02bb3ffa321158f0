//! A tiny YAML writer for the torture generator: a tree of scalars, mappings and sequences,
//! printed in block style or, node by node, in flow style (`{kind: uniform, low: 1ms}`), so the
//! generated files exercise both forms of the loader's input.

/// One node of a generated document. Scalars are written verbatim: the generator quotes what
/// needs quoting.
#[derive(Debug, Clone)]
pub(crate) enum Y {
    /// A scalar, already in its YAML spelling.
    S(String),
    /// A mapping in key order; `flow` prints it on one line.
    M {
        entries: Vec<(String, Y)>,
        flow: bool,
    },
    /// A sequence; `flow` prints it on one line.
    L { items: Vec<Y>, flow: bool },
}

impl Y {
    /// A block mapping.
    pub fn map(entries: Vec<(String, Y)>) -> Y {
        Y::M {
            entries,
            flow: false,
        }
    }

    fn is_flow(&self) -> bool {
        match self {
            Y::S(_) => true,
            Y::M { entries, flow } => *flow || entries.is_empty(),
            Y::L { items, flow } => *flow || items.is_empty(),
        }
    }

    /// The node on one line, in flow style (children included).
    fn flow(&self, out: &mut String) {
        match self {
            Y::S(s) => out.push_str(s),
            Y::M { entries, .. } => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(k);
                    out.push_str(": ");
                    v.flow(out);
                }
                out.push('}');
            }
            Y::L { items, .. } => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.flow(out);
                }
                out.push(']');
            }
        }
    }

    /// The entries of a block mapping at `indent` spaces, one per line.
    fn block_map(entries: &[(String, Y)], indent: usize, out: &mut String) {
        for (k, v) in entries {
            out.push_str(&" ".repeat(indent));
            out.push_str(k);
            out.push(':');
            v.block_value(indent, out);
        }
    }

    /// A value after `key:` whose key sits at `indent`.
    fn block_value(&self, indent: usize, out: &mut String) {
        if self.is_flow() {
            out.push(' ');
            self.flow(out);
            out.push('\n');
            return;
        }
        out.push('\n');
        match self {
            Y::M { entries, .. } => Y::block_map(entries, indent + 2, out),
            Y::L { items, .. } => Y::block_seq(items, indent + 2, out),
            Y::S(_) => unreachable!("scalars are flow"),
        }
    }

    /// The items of a block sequence at `indent` spaces.
    fn block_seq(items: &[Y], indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        for item in items {
            match item {
                Y::M { entries, .. } if !item.is_flow() => {
                    // The mapping's lines at indent + 2, the first one starting with "- ".
                    let mut inner = String::new();
                    Y::block_map(entries, indent + 2, &mut inner);
                    out.push_str(&pad);
                    out.push_str("- ");
                    out.push_str(&inner[indent + 2..]);
                }
                Y::L { items, .. } if !item.is_flow() => {
                    out.push_str(&pad);
                    out.push_str("-\n");
                    Y::block_seq(items, indent + 2, out);
                }
                _ => {
                    out.push_str(&pad);
                    out.push_str("- ");
                    item.flow(out);
                    out.push('\n');
                }
            }
        }
    }

    /// The document: a top-level block mapping.
    pub fn document(&self) -> String {
        let mut out = String::new();
        match self {
            Y::M { entries, .. } => Y::block_map(entries, 0, &mut out),
            other => {
                other.flow(&mut out);
                out.push('\n');
            }
        }
        out
    }
}

/// A double-quoted YAML string (the generator's names are plain ASCII and a few letters
/// beyond it; quotes and backslashes are escaped).
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_flow_nest() {
        let doc = Y::map(vec![
            ("a".into(), Y::S("1".into())),
            ("b".into(), Y::map(vec![("c".into(), Y::S("2".into()))])),
            (
                "l".into(),
                Y::L {
                    items: vec![
                        Y::map(vec![
                            ("x".into(), Y::S("1".into())),
                            (
                                "y".into(),
                                Y::M {
                                    entries: vec![("z".into(), Y::S("3".into()))],
                                    flow: true,
                                },
                            ),
                        ]),
                        Y::S("s".into()),
                    ],
                    flow: false,
                },
            ),
            ("e".into(), Y::map(vec![])),
        ]);
        assert_eq!(
            doc.document(),
            "a: 1\nb:\n  c: 2\nl:\n  - x: 1\n    y: {z: 3}\n  - s\ne: {}\n"
        );
        assert_eq!(quoted("a\"b"), "\"a\\\"b\"");
    }
}
