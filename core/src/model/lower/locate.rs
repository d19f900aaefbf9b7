//! Positions for diagnostics about relations between objects ("selector
//! matches no Pod", a pending load balancer, a route's backend that does not
//! resolve): they are found after lowering, from typed objects that carry no
//! position, so they name an object and a field path. Here the object is
//! found again among the input's documents and the diagnostic gets the
//! field's line and column (the key that names the relation), else the
//! object's `kind:` line, with its file and document.
//!
//! It only fills in positions: it never changes a diagnostic's message or
//! severity, never adds or drops one, and leaves alone a diagnostic that
//! already has a position or names no object found in the input.

use super::{collect_objects, Input, RawObject};
use crate::util::diag::{Diagnostic, Span};
use crate::yaml::{parse_stream, Limits, Node as Y};
use std::collections::BTreeMap;

/// Give positions to diagnostics computed after parsing (the HTTP route
/// and listener status): the input is read again, only when one needs it.
pub fn locate_diagnostics(inputs: &[Input<'_>], diags: &mut [Diagnostic]) {
    if !diags.iter().any(needs_position) {
        return;
    }
    let mut raw = Vec::new();
    let mut ignored = Vec::new();
    let limits = Limits::default();
    for (file, input) in inputs.iter().enumerate() {
        let (docs, _) = parse_stream(input.text, &limits);
        for doc in docs {
            collect_objects(file, doc.index, doc.root, "", &mut raw, &mut ignored);
        }
    }
    locate(&raw, diags);
}

fn needs_position(d: &Diagnostic) -> bool {
    d.object.is_some() && d.position().is_none()
}

/// The names a diagnostic may give an object by: `Kind/namespace/name`,
/// `Kind/name` and `Kind` (the first object of the kind wins, as the
/// lowering keeps the first of duplicates).
fn index(raw: &[RawObject]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (i, o) in raw.iter().enumerate() {
        let meta = o.node.get("metadata");
        let name = meta.and_then(|m| m.get("name")).and_then(Y::as_str);
        let ns = meta
            .and_then(|m| m.get("namespace"))
            .and_then(Y::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("default");
        out.entry(o.kind.clone()).or_insert(i);
        if let Some(name) = name {
            out.entry(format!("{}/{ns}/{name}", o.kind)).or_insert(i);
            out.entry(format!("{}/{name}", o.kind)).or_insert(i);
        }
    }
    out
}

/// Fill in the positions of diagnostics that name an object but have none.
pub(super) fn locate(raw: &[RawObject], diags: &mut [Diagnostic]) {
    if !diags.iter().any(needs_position) {
        return;
    }
    let by_name = index(raw);
    for d in diags.iter_mut().filter(|d| needs_position(d)) {
        let Some(o) = d
            .object
            .as_ref()
            .and_then(|name| by_name.get(name))
            .and_then(|&i| raw.get(i))
        else {
            continue;
        };
        let field = d.field.clone().unwrap_or_default();
        let own = field.strip_prefix(o.prefix.as_str()).unwrap_or(&field);
        let at = find(&o.node, own)
            .or_else(|| find(&o.node, "kind"))
            .unwrap_or(o.node.span);
        if !o.prefix.is_empty() && !field.starts_with(o.prefix.as_str()) && !field.is_empty() {
            d.field = Some(format!("{}{field}", o.prefix));
        }
        d.file = o.file;
        d.document = o.doc;
        d.span = Some(at);
    }
}

/// The position of a field path (`spec.rules[0].backendRefs[1].name`) in
/// an object: the key's position for a mapping entry, the item's for a
/// list index. Keys with dots (annotation names) are matched whole. A
/// field that is not written (`status.loadBalancer.ingress` of a pending
/// load balancer) is placed at its nearest written parent below the top
/// level (`status.loadBalancer`), else not at all.
pub(super) fn find(node: &Y, path: &str) -> Option<Span> {
    if path.is_empty() {
        return None;
    }
    let segments: Vec<&str> = path.split('.').collect();
    (2..=segments.len())
        .rev()
        .find_map(|n| walk(node, &segments[..n]))
        .or_else(|| {
            (segments.len() == 1)
                .then(|| walk(node, &segments))
                .flatten()
        })
}

fn walk(node: &Y, segments: &[&str]) -> Option<Span> {
    // The longest run of segments that is one key (`a.b/c` annotation names).
    for take in (1..=segments.len()).rev() {
        let joined = segments[..take].join(".");
        let Some((key, indices)) = split_indices(&joined) else {
            continue;
        };
        let Some((k, v)) = node
            .as_map()?
            .iter()
            .rev()
            .find(|(k, _)| k.as_str() == Some(key))
        else {
            continue;
        };
        let mut v: &Y = v;
        let mut at = k.span;
        for i in indices {
            v = v.as_seq()?.get(i)?;
            at = v.span;
        }
        let rest = &segments[take..];
        return if rest.is_empty() {
            Some(at)
        } else {
            walk(v, rest)
        };
    }
    None
}

/// `backendRefs[1]` → (`backendRefs`, [1]); `None` for a malformed index.
fn split_indices(seg: &str) -> Option<(&str, Vec<usize>)> {
    let Some(open) = seg.find('[') else {
        return Some((seg, Vec::new()));
    };
    let key = &seg[..open];
    let mut out = Vec::new();
    let mut rest = &seg[open..];
    while let Some(r) = rest.strip_prefix('[') {
        let close = r.find(']')?;
        out.push(r[..close].parse().ok()?);
        rest = &r[close + 1..];
    }
    rest.is_empty().then_some((key, out))
}
