//! Field paths by location: a walk of the YAML event stream that turns a line and column back
//! into a field path (`workloads[1].rate`), which serde-saphyr's own errors do not carry.

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

/// Where a node of the YAML document starts and the field path that leads to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodePath {
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// `workloads[1].rate`; empty for the document root.
    pub path: String,
}

/// What the event walk found in a document.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    /// Every node (keys included) in document order.
    pub nodes: Vec<NodePath>,
    /// Whether the document holds no content at all (nothing, comments, `---`, `~`).
    pub empty: bool,
}

enum Frame {
    Map { path: String, key: Option<String> },
    Seq { path: String, next: usize },
}

fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// Walks the YAML events of `text` and records the field path of every node, stopping quietly at
/// the first syntax error (serde-saphyr reports that error itself), or after one node more than
/// the loader's budget ([`super::MAX_YAML_NODES`]): serde-saphyr refuses such a file, and the
/// walk must not cost more memory and time than the parse it serves.
pub(crate) fn outline(text: &str) -> Outline {
    let mut out = Outline {
        nodes: Vec::new(),
        empty: true,
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((event, span))) = parser.next_event() {
        if out.nodes.len() > super::MAX_YAML_NODES {
            break;
        }
        let (line, column) = (span.start.line() as u64, span.start.col() as u64 + 1);
        let (is_start, scalar) = match &event {
            Event::Scalar(value, style, _, _) => (false, Some((value.to_string(), *style))),
            Event::MappingStart(..) | Event::SequenceStart(..) => (true, None),
            Event::Alias(_) => (false, Some((String::from("*alias"), ScalarStyle::Plain))),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                continue;
            }
            _ => continue,
        };
        // The path of this node; a mapping key is recorded and then waits for its value.
        let mut key_of: Option<String> = None;
        let path = match stack.last_mut() {
            None => String::new(),
            Some(Frame::Seq { path, next }) => {
                let p = format!("{path}[{next}]");
                *next += 1;
                p
            }
            Some(Frame::Map { path, key }) => match key.take() {
                Some(k) => join(path, &k),
                None => {
                    let k = scalar
                        .as_ref()
                        .map(|(s, _)| s.clone())
                        .unwrap_or_else(|| String::from("?"));
                    *key = Some(k.clone());
                    key_of = Some(path.clone());
                    join(path, &k)
                }
            },
        };
        if let Some(map_path) = key_of {
            out.nodes.push(NodePath { line, column, path });
            if is_start {
                // A complex key: its inner nodes are attributed to `<map>.?`.
                stack.push(Frame::Seq {
                    path: join(&map_path, "?"),
                    next: 0,
                });
            }
            continue;
        }
        let root_null = stack.is_empty()
            && matches!(&scalar, Some((s, ScalarStyle::Plain)) if s.is_empty() || s == "~" || s == "null");
        if !root_null {
            out.empty = false;
        }
        out.nodes.push(NodePath {
            line,
            column,
            path: path.clone(),
        });
        if is_start {
            stack.push(match event {
                Event::MappingStart(..) => Frame::Map { path, key: None },
                _ => Frame::Seq { path, next: 0 },
            });
        }
    }
    out
}

impl Outline {
    /// The field path at a location: of the innermost node starting there (or, failing that,
    /// the last node before it); with `outermost`, of the outermost node at that position (the
    /// mapping itself rather than its first key, for "missing field" errors).
    pub fn path_at(&self, line: u64, column: u64, outermost: bool) -> Option<&str> {
        let before: Vec<&NodePath> = self
            .nodes
            .iter()
            .filter(|n| (n.line, n.column) <= (line, column))
            .collect();
        let last = before.last()?;
        let pick = if outermost {
            before
                .iter()
                .find(|n| (n.line, n.column) == (last.line, last.column))
                .unwrap_or(last)
        } else {
            last
        };
        Some(pick.path.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
name: x
device:
  kind: nvme
  latency: 45us
workloads:
  - kind: fio
    rate: 2000/s
  - kind: gitk
    think: {kind: exponential, mean: 2ms}
policies: [fifo, split]
";

    #[test]
    fn outline_maps_locations_to_paths() {
        let o = outline(DOC);
        assert!(!o.empty);
        assert_eq!(o.path_at(1, 1, false), Some("name"));
        assert_eq!(o.path_at(1, 7, false), Some("name"));
        assert_eq!(o.path_at(3, 3, false), Some("device.kind"));
        assert_eq!(o.path_at(3, 3, true), Some("device"));
        assert_eq!(o.path_at(4, 12, false), Some("device.latency"));
        assert_eq!(o.path_at(7, 11, false), Some("workloads[0].rate"));
        assert_eq!(o.path_at(8, 5, false), Some("workloads[1].kind"));
        assert_eq!(o.path_at(9, 39, false), Some("workloads[1].think.mean"));
        assert_eq!(o.path_at(10, 18, false), Some("policies[1]"));
    }

    #[test]
    fn outline_detects_empty_documents() {
        for text in ["", "\n\n", "# only a comment\n", "---\n", "~\n", "null\n"] {
            assert!(outline(text).empty, "{text:?}");
        }
        assert!(!outline("a: 1\n").empty);
        assert!(!outline("just a string\n").empty);
    }
}
