//! A YAML tree that remembers where every node came from.
//!
//! Built from `yaml-rust2`'s event parser without recursion, so deeply nested
//! input cannot overflow the stack, and with explicit limits on size, depth and
//! alias expansion (a "billion laughs" document is refused, not expanded).
//! Diagnostics point at the exact line and column of a bad value because every
//! node carries its [`Span`].

use crate::diag::{Diagnostic, Span};
use std::collections::BTreeMap;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

/// Limits on what one input may contain.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_depth: usize,
    /// Total nodes produced, counting each alias expansion in full.
    pub max_nodes: usize,
    pub max_documents: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 8 * 1024 * 1024,
            max_depth: 64,
            max_nodes: 2_000_000,
            max_documents: 20_000,
        }
    }
}

/// A YAML value with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A scalar; `quoted` is true when it was written in quotes or as a block,
    /// so `"1"` stays a string while `1` may be read as a number.
    Scalar {
        text: String,
        quoted: bool,
    },
    Seq(Vec<Node>),
    /// Keys in document order (duplicates are reported and the last kept).
    Map(Vec<(Node, Node)>),
}

/// Where the last entry with that key is in a mapping's entries.
fn last_with_key(entries: &[(Node, Node)], key: &str) -> Option<usize> {
    entries.iter().rposition(|(k, _)| k.as_str() == Some(key))
}

impl Node {
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Is this a null (`~`, `null`, or an empty plain scalar)?
    pub fn is_null(&self) -> bool {
        matches!(&self.value, Value::Scalar { text, quoted: false } if text.is_empty() || text == "~" || text == "null" || text == "Null" || text == "NULL")
    }

    /// Look up a key of a mapping (the last entry with that key).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.get(last_with_key(entries, key)?).map(|(_, v)| v),
            _ => None,
        }
    }

    /// [`Node::get`], taking the value out of the node.
    pub fn take(self, key: &str) -> Option<Node> {
        match self.value {
            Value::Map(mut entries) => {
                let i = last_with_key(&entries, key)?;
                Some(entries.swap_remove(i).1)
            }
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match &self.value {
            Value::Scalar { .. } if self.is_null() => "null",
            Value::Scalar { .. } => "scalar",
            Value::Seq(_) => "list",
            Value::Map(_) => "mapping",
        }
    }
}

/// One parsed document of a stream.
#[derive(Clone, Debug)]
pub struct Document {
    pub index: usize,
    pub root: Node,
}

enum Frame {
    Seq {
        span: Span,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        span: Span,
        anchor: usize,
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
    },
}

fn span_of(m: &yaml_rust2::scanner::Marker) -> Span {
    Span {
        line: m.line(),
        column: m.col() + 1,
    }
}

fn count_nodes(n: &Node) -> usize {
    // Iterative to stay safe on deep trees.
    let mut stack = vec![n];
    let mut count = 0;
    while let Some(n) = stack.pop() {
        count += 1;
        match &n.value {
            Value::Scalar { .. } => {}
            Value::Seq(items) => stack.extend(items.iter()),
            Value::Map(entries) => {
                for (k, v) in entries {
                    stack.push(k);
                    stack.push(v);
                }
            }
        }
    }
    count
}

/// YAML's printable characters (YAML 1.2 `c-printable`, plus the byte-order
/// mark): tab, line breaks and everything else but C0/C1 controls, surrogates
/// and U+FFFE/U+FFFF.
fn printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7E}' | '\u{85}' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// The first character YAML does not allow, as an error at its position. The
/// parser would otherwise stop silently at a NUL and report nothing.
fn unprintable(src: &str) -> Option<Diagnostic> {
    let (mut line, mut column) = (1usize, 1usize);
    for c in src.chars() {
        if !printable(c) {
            return Some(
                Diagnostic::error(format!(
                    "the character U+{:04X} is not allowed in YAML",
                    u32::from(c)
                ))
                .at(Span { line, column })
                .with_hint("this looks like binary data or text in another encoding; save the manifests as UTF-8 text"),
            );
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    None
}

/// Parse a multi-document YAML stream.
///
/// Returns every document that parsed; a syntax error ends the stream with one
/// diagnostic carrying the document index, line and column.
pub fn parse_stream(src: &str, limits: &Limits) -> (Vec<Document>, Vec<Diagnostic>) {
    let mut docs = Vec::new();
    let mut diags = Vec::new();
    if src.len() > limits.max_bytes {
        diags.push(
            Diagnostic::error(format!(
                "input is {} bytes; at most {} bytes are accepted",
                src.len(),
                limits.max_bytes
            ))
            .with_hint("split the manifests into smaller files"),
        );
        return (docs, diags);
    }
    if let Some(d) = unprintable(src) {
        diags.push(d);
        return (docs, diags);
    }
    let mut parser = Parser::new_from_str(src);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: BTreeMap<usize, Node> = BTreeMap::new();
    let mut nodes = 0usize;
    let mut doc_index = 0usize;
    let mut root: Option<Node> = None;
    loop {
        let (ev, mark) = match parser.next_token() {
            Ok(x) => x,
            Err(e) => {
                let m = e.marker();
                let mut d = Diagnostic::error(format!("YAML syntax error: {}", e.info()))
                    .at(span_of(m))
                    .with_hint("check the indentation and quoting around this position");
                d.document = doc_index;
                diags.push(d);
                break;
            }
        };
        let span = span_of(&mark);
        let mut finished: Option<(Node, usize)> = None;
        match ev {
            Event::StreamStart | Event::Nothing => {}
            Event::StreamEnd => break,
            Event::DocumentStart => {
                anchors.clear();
                root = None;
            }
            Event::DocumentEnd => {
                if let Some(r) = root.take() {
                    docs.push(Document {
                        index: doc_index,
                        root: r,
                    });
                }
                doc_index += 1;
                if doc_index > limits.max_documents {
                    let mut d = Diagnostic::error(format!(
                        "more than {} YAML documents",
                        limits.max_documents
                    ));
                    d.document = doc_index;
                    diags.push(d);
                    break;
                }
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some(n) => {
                    let size = count_nodes(n);
                    nodes = nodes.saturating_add(size);
                    let mut copy = n.clone();
                    copy.span = span;
                    finished = Some((copy, 0));
                }
                None => {
                    let mut d = Diagnostic::error("alias refers to an unknown anchor").at(span);
                    d.document = doc_index;
                    diags.push(d);
                    break;
                }
            },
            Event::Scalar(text, style, anchor, _tag) => {
                nodes += 1;
                let quoted = !matches!(style, TScalarStyle::Plain);
                finished = Some((
                    Node {
                        span,
                        value: Value::Scalar { text, quoted },
                    },
                    anchor,
                ));
            }
            Event::SequenceStart(anchor, _) => {
                nodes += 1;
                stack.push(Frame::Seq {
                    span,
                    anchor,
                    items: Vec::new(),
                });
            }
            Event::MappingStart(anchor, _) => {
                nodes += 1;
                stack.push(Frame::Map {
                    span,
                    anchor,
                    entries: Vec::new(),
                    key: None,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq {
                    span,
                    anchor,
                    items,
                }) => {
                    finished = Some((
                        Node {
                            span,
                            value: Value::Seq(items),
                        },
                        anchor,
                    ))
                }
                Some(Frame::Map {
                    span,
                    anchor,
                    entries,
                    ..
                }) => {
                    finished = Some((
                        Node {
                            span,
                            value: Value::Map(entries),
                        },
                        anchor,
                    ))
                }
                None => {}
            },
        }
        if stack.len() > limits.max_depth {
            let mut d = Diagnostic::error(format!(
                "YAML nested more than {} levels deep",
                limits.max_depth
            ))
            .at(span)
            .with_hint("Kubernetes manifests are never this deep; check the input");
            d.document = doc_index;
            diags.push(d);
            break;
        }
        if nodes > limits.max_nodes {
            let mut d = Diagnostic::error(format!(
                "YAML expands to more than {} values (aliases counted in full)",
                limits.max_nodes
            ))
            .at(span)
            .with_hint("the document may be a YAML bomb; remove the repeated aliases");
            d.document = doc_index;
            diags.push(d);
            break;
        }
        if let Some((node, anchor)) = finished {
            if anchor > 0 {
                anchors.insert(anchor, node.clone());
            }
            match stack.last_mut() {
                Some(Frame::Seq { items, .. }) => items.push(node),
                Some(Frame::Map { entries, key, .. }) => match key.take() {
                    None => *key = Some(node),
                    Some(k) => entries.push((k, node)),
                },
                None => root = Some(node),
            }
        }
    }
    (docs, diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_point_at_values() {
        let (docs, diags) = parse_stream(
            "a: 1\nb:\n  - x\n  - \"y\"\n---\nc: d\n",
            &Limits::default(),
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(docs.len(), 2);
        let b = docs[0].root.get("b").and_then(Node::as_seq).unwrap_or(&[]);
        assert_eq!(b[1].span, Span { line: 4, column: 5 });
        assert_eq!(
            b[1].value,
            Value::Scalar {
                text: "y".into(),
                quoted: true
            }
        );
        assert_eq!(docs[1].index, 1);
        assert_eq!(docs[1].root.get("c").and_then(Node::as_str), Some("d"));
    }

    #[test]
    fn control_characters_are_refused_where_they_are() {
        let (docs, diags) = parse_stream("a: 1\nb: x\u{0}y\n", &Limits::default());
        assert!(docs.is_empty());
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].span, Some(Span { line: 2, column: 5 }));
        assert!(diags[0].message.contains("U+0000"), "{}", diags[0].message);
        for ok in [
            "a: \"tab\there\"\r\n",
            "name: café ☕ 한국어\n",
            "\u{FEFF}a: 1\n",
        ] {
            let (_, d) = parse_stream(ok, &Limits::default());
            assert!(d.is_empty(), "{ok:?}: {d:?}");
        }
        for bad in ["\u{1}", "\u{7F}", "\u{FFFE}", "x: \u{9F}"] {
            let (_, d) = parse_stream(bad, &Limits::default());
            assert_eq!(d.len(), 1, "{bad:?}");
        }
    }

    #[test]
    fn syntax_error_has_position() {
        let (_, diags) = parse_stream("a: [1, 2\nb: c\n", &Limits::default());
        assert_eq!(diags.len(), 1);
        assert!(diags[0].span.is_some());
        assert!(diags[0].message.starts_with("YAML syntax error"));
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut src = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        let mut prev = 'a';
        for c in 'b'..='j' {
            src.push_str(&format!(
                "{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
            prev = c;
        }
        let (_, diags) = parse_stream(&src, &Limits::default());
        assert!(
            diags.iter().any(|d| d.message.contains("expands")),
            "{diags:?}"
        );
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        // Flow style: the scanner's own recursion guard answers.
        let src = "[".repeat(100_000);
        let (_, diags) = parse_stream(&src, &Limits::default());
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(diags[0].message.contains("recursion limit"), "{diags:?}");
        // Block style: our depth limit answers.
        let mut src = String::new();
        for depth in 0..100 {
            src.push_str(&" ".repeat(depth * 2));
            src.push_str("a:\n");
        }
        let (_, diags) = parse_stream(&src, &Limits::default());
        assert!(
            diags
                .iter()
                .any(|d| d.message.contains("nested more than 64")),
            "{diags:?}"
        );
    }
}
