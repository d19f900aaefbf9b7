//! A YAML tree that remembers where every node came from.
//!
//! Built from `yaml-rust2`'s event parser without recursion, so deeply nested
//! input cannot overflow the stack, and with explicit limits on size, depth and
//! what aliases expand to: every alias, and every anchored copy kept for
//! later aliases, is paid for in nodes and in bytes of text *before* it is
//! made, so a "billion laughs" document or one large scalar aliased a
//! thousand times is refused, not expanded.
//! Diagnostics point at the exact line and column of a bad value because every
//! node carries its [`Span`].
//!
//! The tree is what `kubectl apply -f` reads (go-yaml v2, YAML 1.1): merge
//! keys (`<<: *base`) are resolved, a key written twice in one mapping is
//! reported (the later value is kept, as there), and [`Node::as_int`] /
//! [`Node::as_bool`] read unquoted scalars by YAML 1.1's rules (`010` is 8).
//! Nothing here knows about Kubernetes objects.

use crate::util::diag::{Diagnostic, Severity, Span};
use std::collections::{BTreeMap, BTreeSet};
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::TScalarStyle;

pub mod scalar;

/// Limits on what one input may contain.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_depth: usize,
    /// Total nodes produced, counting each alias expansion (and each copy
    /// kept for an anchor) in full.
    pub max_nodes: usize,
    /// Total bytes of scalar text produced, counted as `max_nodes` is.
    pub max_text_bytes: usize,
    pub max_documents: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 8 * 1024 * 1024,
            max_depth: 64,
            max_nodes: 2_000_000,
            // Four times the largest input: room for anchors shared by many
            // objects, none for a scalar copied thousands of times.
            max_text_bytes: 32 * 1024 * 1024,
            max_documents: 20_000,
        }
    }
}

impl Limits {
    /// The most memory a tree within these limits takes, by
    /// [`Footprint::heap_bytes`]: what the limits promise.
    pub fn max_heap_bytes(&self) -> usize {
        Footprint {
            nodes: self.max_nodes,
            text_bytes: self.max_text_bytes,
        }
        .heap_bytes()
    }
}

/// What a tree costs: its nodes and the bytes of its scalars' text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    pub nodes: usize,
    pub text_bytes: usize,
}

impl Footprint {
    fn plus(self, o: Footprint) -> Footprint {
        Footprint {
            nodes: self.nodes.saturating_add(o.nodes),
            text_bytes: self.text_bytes.saturating_add(o.text_bytes),
        }
    }

    /// An estimate of the heap the tree holds: one [`Node`] per node (a
    /// mapping entry is two nodes side by side) plus the text.
    pub fn heap_bytes(self) -> usize {
        self.nodes
            .saturating_mul(std::mem::size_of::<Node>())
            .saturating_add(self.text_bytes)
    }
}

/// The footprint of a tree (walked without recursion).
pub fn footprint(n: &Node) -> Footprint {
    let mut stack = vec![n];
    let mut f = Footprint::default();
    while let Some(n) = stack.pop() {
        f.nodes += 1;
        match &n.value {
            Value::Scalar { text, .. } => f.text_bytes += text.len(),
            Value::Seq(items) => stack.extend(items.iter()),
            Value::Map(entries) => {
                for (k, v) in entries {
                    stack.push(k);
                    stack.push(v);
                }
            }
        }
    }
    f
}

/// A YAML value with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A scalar; `quoted` is true when it was written in quotes, as a block
    /// or tagged `!!str`, so `"1"` stays a string while `1` may be read as a
    /// number.
    Scalar {
        text: String,
        quoted: bool,
    },
    Seq(Vec<Node>),
    /// Keys in document order, merge keys resolved (duplicates are reported
    /// and the last kept).
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

    /// The integer kubectl reads an unquoted scalar as (YAML 1.1: `010` is
    /// 8, `0x1F90` is 8080, `1_000` is 1000, `+12` is 12; see
    /// [`scalar::int`]); `None` for quoted scalars and anything else.
    pub fn as_int(&self) -> Option<i64> {
        match &self.value {
            Value::Scalar {
                text,
                quoted: false,
            } => scalar::int(text),
            _ => None,
        }
    }

    /// The boolean kubectl reads an unquoted scalar as (YAML 1.1: `yes`,
    /// `on` and `y` are true; see [`scalar::boolean`]).
    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            Value::Scalar {
                text,
                quoted: false,
            } => scalar::boolean(text),
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

/// A collection being built. `cost` is what it has been charged so far
/// (itself and its children), `flow` whether it was opened with `[` or `{`.
enum Frame {
    Seq {
        span: Span,
        anchor: usize,
        items: Vec<Node>,
        cost: Footprint,
        flow: bool,
    },
    Map {
        span: Span,
        anchor: usize,
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        cost: Footprint,
        flow: bool,
    },
}

impl Frame {
    fn cost_mut(&mut self) -> &mut Footprint {
        match self {
            Frame::Seq { cost, .. } | Frame::Map { cost, .. } => cost,
        }
    }

    /// Where a flow collection was opened, and its closing character.
    fn open_flow(&self) -> Option<(Span, &'static str, char)> {
        match self {
            Frame::Seq {
                span, flow: true, ..
            } => Some((*span, "flow sequence", ']')),
            Frame::Map {
                span, flow: true, ..
            } => Some((*span, "flow mapping", '}')),
            _ => None,
        }
    }
}

fn span_of(m: &yaml_rust2::scanner::Marker) -> Span {
    Span {
        line: m.line(),
        column: m.col() + 1,
    }
}

/// The character at a line and (0-based) column, read with a cursor that
/// only moves forward while positions do, so looking up every collection's
/// opening character costs one pass over the text. Lines and columns, not
/// the parser's character index: after a block scalar with non-ASCII text
/// the parser's index counts bytes, while its lines and columns stay right.
struct CharAt<'a> {
    src: &'a str,
    /// The cursor: 1-based line, 0-based column, byte offset.
    line: usize,
    col: usize,
    byte: usize,
}

impl CharAt<'_> {
    fn new(src: &str) -> CharAt<'_> {
        CharAt {
            src,
            line: 1,
            col: 0,
            byte: 0,
        }
    }

    fn get(&mut self, line: usize, col: usize) -> Option<char> {
        if (line, col) < (self.line, self.col) {
            *self = CharAt::new(self.src);
        }
        let rest = self.src.get(self.byte..)?;
        let mut chars = rest.char_indices().peekable();
        let start = self.byte;
        while self.line < line {
            let (i, c) = chars.next()?;
            // A line break is `\n`, `\r\n` or a lone `\r`, as the parser counts.
            let ends_line =
                c == '\n' || (c == '\r' && chars.peek().is_none_or(|(_, n)| *n != '\n'));
            if ends_line {
                self.line += 1;
                self.col = 0;
                self.byte = start + i + 1;
            }
        }
        let mut chars = self.src.get(self.byte..)?.chars();
        while self.col < col {
            let c = chars.next()?;
            if c == '\n' || c == '\r' {
                return None;
            }
            self.byte += c.len_utf8();
            self.col += 1;
        }
        chars.next()
    }
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

/// How bad a key written twice in one mapping is. `kubectl apply -f`
/// (go-yaml v2 without strict mode) keeps the later value without a word;
/// kustomize (`kubectl apply -k`, go-yaml v3) refuses the file. The tree
/// keeps the later value, as `apply -f` does, and says so.
const DUPLICATE_KEY: Severity = Severity::Warning;

/// Is this the YAML 1.1 merge key `<<` (unquoted)?
fn is_merge_key(k: &Node) -> bool {
    matches!(&k.value, Value::Scalar { text, quoted: false } if text == "<<")
}

/// Each key written again in the same mapping, reported at the later one
/// with go-yaml v3's words (what kustomize prints).
fn report_duplicates(entries: &[(Node, Node)], out: &mut Vec<Diagnostic>) {
    if entries.len() < 2 {
        return;
    }
    let mut first: BTreeMap<&str, Span> = BTreeMap::new();
    for (k, _) in entries {
        let Some(name) = k.as_str() else { continue };
        match first.get(name) {
            Some(at) => out.push(Diagnostic {
                severity: DUPLICATE_KEY,
                ..Diagnostic::error(format!(
                    "mapping key {} already defined at line {}; this later value replaces it",
                    crate::util::diag::quoted(name),
                    at.line
                ))
                .at(k.span)
                .with_hint(format!(
                    "remove one of the two; kubectl apply -f keeps this later value without a word, kustomize (kubectl apply -k) refuses the file (first at line {}, column {})",
                    at.line, at.column
                ))
            }),
            None => {
                first.insert(name, k.span);
            }
        }
    }
}

/// Resolve merge keys (`<<: *base` or `<<: [*a, *b]`) as YAML 1.1 says and
/// go-yaml does: the mapping's own keys win over merged ones, and an
/// earlier merged mapping over a later one. The merged entries take the
/// place of the `<<` entry. Entries are moved, never copied.
fn resolve_merges(entries: Vec<(Node, Node)>, out: &mut Vec<Diagnostic>) -> Vec<(Node, Node)> {
    if !entries.iter().any(|(k, _)| is_merge_key(k)) {
        return entries;
    }
    let mut present: BTreeSet<String> = entries
        .iter()
        .filter(|(k, _)| !is_merge_key(k))
        .filter_map(|(k, _)| k.as_str().map(str::to_string))
        .collect();
    let mut merged = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        if !is_merge_key(&k) {
            merged.push((k, v));
            continue;
        }
        let sources = match v.value {
            Value::Map(_) => vec![v],
            Value::Seq(items) if items.iter().all(|i| i.as_map().is_some()) => items,
            _ => {
                out.push(
                    Diagnostic::error("map merge requires map or sequence of maps as the value")
                        .at(v.span)
                        .with_hint(
                            "`<<:` takes an alias of a mapping (`<<: *base`) or a list of them",
                        ),
                );
                continue;
            }
        };
        for source in sources {
            let Value::Map(from) = source.value else {
                continue;
            };
            for (mk, mv) in from {
                if let Some(name) = mk.as_str() {
                    if !present.insert(name.to_string()) {
                        continue;
                    }
                }
                merged.push((mk, mv));
            }
        }
    }
    merged
}

/// Which limit an input went past.
enum Exceeded {
    Nodes,
    Text,
}

/// What has been produced so far, against the limits.
struct Budget {
    used: Footprint,
    max: Footprint,
}

impl Budget {
    /// Charge `f`, or say which limit it would pass (then nothing is charged).
    fn spend(&mut self, f: Footprint) -> Result<(), Exceeded> {
        let after = self.used.plus(f);
        if after.nodes > self.max.nodes {
            return Err(Exceeded::Nodes);
        }
        if after.text_bytes > self.max.text_bytes {
            return Err(Exceeded::Text);
        }
        self.used = after;
        Ok(())
    }
}

fn limit_diagnostic(e: Exceeded, limits: &Limits) -> Diagnostic {
    match e {
        Exceeded::Nodes => Diagnostic::error(format!(
            "YAML expands to more than {} values (aliases counted in full)",
            limits.max_nodes
        )),
        Exceeded::Text => Diagnostic::error(format!(
            "YAML expands to more than {} MiB of text (aliases counted in full)",
            limits.max_text_bytes / (1024 * 1024)
        )),
    }
    .with_hint("the document may be a YAML bomb; remove the repeated aliases")
}

fn is_str_tag(tag: &Option<Tag>) -> bool {
    tag.as_ref()
        .is_some_and(|t| t.handle == "tag:yaml.org,2002:" && t.suffix == "str")
}

/// The syntax error for `info` at `at`; or, when the parser gave up on a
/// flow collection that is still open (a missing `]` or `}`: it then stops
/// only at the next line's key, or at the end of the input), the error where
/// that collection was opened, as kubectl reports it. Other errors inside a
/// flow collection (a stray character, an unclosed quote) stay where they are.
fn syntax_error(stack: &[Frame], info: &str, at: Span, at_end: bool) -> Diagnostic {
    let unclosed = stack
        .iter()
        .rev()
        .find_map(Frame::open_flow)
        .filter(|(open, ..)| {
            info.contains("flow") || at_end || (info.contains("':'") && at.line > open.line)
        });
    match unclosed {
        Some((open, what, close)) => Diagnostic::error(format!(
            "YAML syntax error: the {what} opened here is not closed (the parser stopped at line {}, column {}: {info})",
            at.line, at.column
        ))
        .at(open)
        .with_hint(format!(
            "close it with `{close}`, or check the commas and quoting inside it"
        )),
        None => Diagnostic::error(format!("YAML syntax error: {info}"))
            .at(at)
            .with_hint("check the indentation and quoting around this position"),
    }
}

/// Parse a multi-document YAML stream.
///
/// Returns every document that parsed; a syntax error ends the stream with one
/// diagnostic carrying the document index, line and column.
pub fn parse_stream(src: &str, limits: &Limits) -> (Vec<Document>, Vec<Diagnostic>) {
    if src.len() > limits.max_bytes {
        let d = Diagnostic::error(format!(
            "input is {} bytes; at most {} bytes are accepted",
            src.len(),
            limits.max_bytes
        ))
        .with_hint("split the manifests into smaller files");
        return (Vec::new(), vec![d]);
    }
    if let Some(d) = unprintable(src) {
        return (Vec::new(), vec![d]);
    }
    let mut parser = Parser::new_from_str(src);
    let mut chars = CharAt::new(src);
    let mut r = Reader::new(limits);
    loop {
        let (ev, mark) = match parser.next_token() {
            Ok(x) => x,
            Err(e) => {
                let at_end = e.marker().index() >= src.len()
                    || chars.get(e.marker().line(), e.marker().col()).is_none();
                let d = syntax_error(&r.stack, e.info(), span_of(e.marker()), at_end);
                r.found.push(d);
                break;
            }
        };
        if matches!(ev, Event::StreamEnd) {
            break;
        }
        let flow = matches!(ev, Event::SequenceStart(..) | Event::MappingStart(..))
            && matches!(chars.get(mark.line(), mark.col()), Some('[' | '{'));
        if let Err(d) = r.event(ev, span_of(&mark), flow) {
            r.found.push(*d);
            break;
        }
    }
    r.finish()
}

/// A node an event completed: the node, what it cost, its anchor (0: none).
type Finished = Option<(Node, Footprint, usize)>;

/// What ends a stream early.
type Stop = Box<Diagnostic>;

/// The state of a stream being read: the open collections, the anchors of
/// the current document, the memory budget and what has been read.
struct Reader<'l> {
    limits: &'l Limits,
    stack: Vec<Frame>,
    anchors: BTreeMap<usize, (Node, Footprint)>,
    budget: Budget,
    doc_index: usize,
    root: Option<Node>,
    /// Diagnostics of the current document, given its index when it ends.
    found: Vec<Diagnostic>,
    docs: Vec<Document>,
    diags: Vec<Diagnostic>,
}

impl<'l> Reader<'l> {
    fn new(limits: &'l Limits) -> Reader<'l> {
        Reader {
            limits,
            stack: Vec::new(),
            anchors: BTreeMap::new(),
            budget: Budget {
                used: Footprint::default(),
                max: Footprint {
                    nodes: limits.max_nodes,
                    text_bytes: limits.max_text_bytes,
                },
            },
            doc_index: 0,
            root: None,
            found: Vec::new(),
            docs: Vec::new(),
            diags: Vec::new(),
        }
    }

    /// Read one event at `span`; `flow` when it opens a `[`/`{` collection.
    /// An error ends the stream.
    fn event(&mut self, ev: Event, span: Span, flow: bool) -> Result<(), Stop> {
        let finished = match ev {
            Event::StreamStart | Event::Nothing | Event::StreamEnd => None,
            Event::DocumentStart => {
                self.anchors.clear();
                self.root = None;
                None
            }
            Event::DocumentEnd => {
                self.end_document(span)?;
                None
            }
            Event::Alias(id) => {
                let Some(cost) = self.anchors.get(&id).map(|(_, cost)| *cost) else {
                    return Err(Box::new(
                        Diagnostic::error("alias refers to an unknown anchor").at(span),
                    ));
                };
                // Spent before the copy is made (a billion laughs stops here).
                self.spend(cost, span)?;
                let mut copy = self.anchors.get(&id).map(|(n, _)| n.clone());
                if let Some(c) = copy.as_mut() {
                    c.span = span;
                }
                copy.map(|c| (c, cost, 0))
            }
            Event::Scalar(text, style, anchor, tag) => {
                let cost = Footprint {
                    nodes: 1,
                    text_bytes: text.len(),
                };
                self.spend(cost, span)?;
                let quoted = !matches!(style, TScalarStyle::Plain) || is_str_tag(&tag);
                let value = Value::Scalar { text, quoted };
                Some((Node { span, value }, cost, anchor))
            }
            Event::SequenceStart(anchor, _) => {
                let cost = self.open(span)?;
                let items = Vec::new();
                self.stack.push(Frame::Seq {
                    span,
                    anchor,
                    items,
                    cost,
                    flow,
                });
                None
            }
            Event::MappingStart(anchor, _) => {
                let cost = self.open(span)?;
                let (entries, key) = (Vec::new(), None);
                self.stack.push(Frame::Map {
                    span,
                    anchor,
                    entries,
                    key,
                    cost,
                    flow,
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(),
        };
        if self.stack.len() > self.limits.max_depth {
            return Err(Box::new(
                Diagnostic::error(format!(
                    "YAML nested more than {} levels deep",
                    self.limits.max_depth
                ))
                .at(span)
                .with_hint("Kubernetes manifests are never this deep; check the input"),
            ));
        }
        match finished {
            Some((node, cost, anchor)) => self.place(node, cost, anchor),
            None => Ok(()),
        }
    }

    fn spend(&mut self, cost: Footprint, span: Span) -> Result<(), Stop> {
        self.budget
            .spend(cost)
            .map_err(|e| Box::new(limit_diagnostic(e, self.limits).at(span)))
    }

    /// A collection opens: what it costs itself.
    fn open(&mut self, span: Span) -> Result<Footprint, Stop> {
        let cost = Footprint {
            nodes: 1,
            text_bytes: 0,
        };
        self.spend(cost, span)?;
        Ok(cost)
    }

    /// The innermost collection closes: its node.
    fn close(&mut self) -> Finished {
        match self.stack.pop()? {
            Frame::Seq {
                span,
                anchor,
                items,
                cost,
                ..
            } => Some((
                Node {
                    span,
                    value: Value::Seq(items),
                },
                cost,
                anchor,
            )),
            Frame::Map {
                span,
                anchor,
                entries,
                cost,
                ..
            } => {
                report_duplicates(&entries, &mut self.found);
                let entries = resolve_merges(entries, &mut self.found);
                Some((
                    Node {
                        span,
                        value: Value::Map(entries),
                    },
                    cost,
                    anchor,
                ))
            }
        }
    }

    /// A document ends: keep it and its diagnostics.
    fn end_document(&mut self, span: Span) -> Result<(), Stop> {
        if let Some(root) = self.root.take() {
            self.docs.push(Document {
                index: self.doc_index,
                root,
            });
        }
        for mut d in self.found.drain(..) {
            d.document = self.doc_index;
            self.diags.push(d);
        }
        self.doc_index += 1;
        if self.doc_index > self.limits.max_documents {
            return Err(Box::new(
                Diagnostic::error(format!(
                    "more than {} YAML documents",
                    self.limits.max_documents
                ))
                .at(span)
                .with_hint("split the manifests into smaller files"),
            ));
        }
        Ok(())
    }

    /// Put a finished node in its parent (or make it the document's root),
    /// keeping a copy under its anchor for later aliases.
    fn place(&mut self, node: Node, cost: Footprint, anchor: usize) -> Result<(), Stop> {
        if anchor > 0 {
            // The copy kept for later aliases is memory too.
            self.spend(cost, node.span)?;
            self.anchors.insert(anchor, (node.clone(), cost));
        }
        match self.stack.last_mut() {
            Some(parent) => {
                *parent.cost_mut() = parent.cost_mut().plus(cost);
                match parent {
                    Frame::Seq { items, .. } => items.push(node),
                    Frame::Map { entries, key, .. } => match key.take() {
                        None => *key = Some(node),
                        Some(k) => entries.push((k, node)),
                    },
                }
            }
            None => self.root = Some(node),
        }
        Ok(())
    }

    /// The documents read and every diagnostic, the last document's too.
    fn finish(mut self) -> (Vec<Document>, Vec<Diagnostic>) {
        for mut d in self.found {
            d.document = self.doc_index;
            self.diags.push(d);
        }
        (self.docs, self.diags)
    }
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
