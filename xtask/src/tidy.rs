//! Tidy checks of the source tree, run by `cargo test` (as rust-analyzer's
//! tidy tests are): the layers of kpv-core, read from its `crate::` paths.
//!
//! A crate declares its layers bottom up, each a list of module paths; a
//! file belongs to the layer of the longest declared path that is its
//! module or an ancestor of it. Two rules hold:
//! - no file names a module of a higher layer (an upward import);
//! - no cycle between files, apart from a module and its own descendants
//!   (a parent declares its children, and a child may use its parent's
//!   items).
//!
//! Only code is read: comment lines (doc links included) and `#[cfg(test)]`
//! modules are skipped, since a test may reach anything. A failure names
//! both ends and the line. This module only reads files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One layer: its name and the module paths in it.
pub type Layer = (&'static str, &'static [&'static str]);

/// kpv-core's layers, bottom up: its folders, with `net` and `http` split
/// where their parts stand on each other. `""` is the crate root
/// (`lib.rs`).
pub const CORE: &[Layer] = &[
    ("util", &["util"]),
    ("yaml", &["yaml"]),
    ("model", &["model"]),
    ("controller", &["net::controller"]),
    ("proxy", &["net::proxy", "net::dns"]),
    ("modes", &["net::modes"]),
    ("http values", &["http::values"]),
    ("trace", &["net::trace", "net"]),
    ("http", &["http"]),
    ("view", &["view"]),
    ("session", &["session"]),
    ("top", &["code", "cli", "fuzzing", "generate", ""]),
];

/// kpv-web's layers, bottom up: fetching the site's own files, the one
/// loading state and idle scheduler, writing numbers and measuring labels;
/// the words of each language; the compiled-in index of presets and
/// lessons; the outside world (address, storage, downloads,
/// work between frames); the code that loads later; the Store; what
/// changes the Store's inputs (data files, share links, lessons, fetching
/// modes); the components that bind to it and draw; the app (with what its
/// keys do).
pub const WEB: &[Layer] = &[
    ("leaves", &["fetch", "load", "numbers", "measure"]),
    ("words", &["i18n", "hops", "hops_http", "why"]),
    ("index", &["scenarios", "lessons"]),
    ("outside", &["env", "download", "export", "work"]),
    ("code", &["code", "modes", "lazy_http"]),
    ("state", &["state", "forms"]),
    ("actions", &["data", "share", "lesson_model", "mode_fetch"]),
    ("components", &["components", "lazy"]),
    ("app", &["", "main", "keyboard"]),
];

/// A file's module path (`trace::types` for `trace/types.rs`, `http` for
/// `http/mod.rs`, `""` for `lib.rs`), from its path below `src/`.
fn module_of(rel: &str) -> Option<String> {
    let rel = rel.strip_suffix(".rs")?;
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    if rel == "lib" || rel == "main" || rel.starts_with("bin/") {
        return Some(String::new());
    }
    Some(rel.replace('/', "::"))
}

/// The parent of a module path (`""`'s parent is itself).
fn parent(m: &str) -> &str {
    m.rfind("::").map_or("", |i| &m[..i])
}

/// True when `a` is `b` or an ancestor of it.
fn is_ancestor(a: &str, b: &str) -> bool {
    a.is_empty() || a == b || b.starts_with(&format!("{a}::"))
}

/// The code of a file: comment lines blanked, `#[cfg(test)]` items
/// blanked (line numbers kept).
fn code_lines(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if t.starts_with("#[cfg(test)]") {
            // Blank the attribute and the item after it, to its closing
            // brace (or its `;`).
            let mut depth = 0i64;
            let mut opened = false;
            while i < lines.len() {
                let l = lines[i];
                out.push(String::new());
                i += 1;
                if !l.trim_start().starts_with("//") {
                    for c in l.chars() {
                        match c {
                            '{' => {
                                depth += 1;
                                opened = true;
                            }
                            '}' => depth -= 1,
                            _ => {}
                        }
                    }
                }
                let ends_item = l.trim_end().ends_with(';') && !opened;
                if (opened && depth <= 0) || ends_item {
                    break;
                }
            }
            continue;
        }
        out.push(if t.starts_with("//") {
            String::new()
        } else {
            lines[i].to_string()
        });
        i += 1;
    }
    out
}

/// Each line with the module its `super::` and `self::` are relative to:
/// the file's module `m`, or an inline `mod name { … }` inside it.
fn with_inline_modules<'l>(lines: &'l [String], m: &str) -> Vec<(&'l str, String)> {
    let mut out = Vec::with_capacity(lines.len());
    // (module path, brace depth its body is at)
    let mut stack: Vec<(String, i64)> = Vec::new();
    let mut depth = 0i64;
    for line in lines {
        let here = stack.last().map_or(m, |(p, _)| p.as_str()).to_string();
        out.push((line.as_str(), here.clone()));
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub(super) "))
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        let opens_mod = t.strip_prefix("mod ").and_then(|r| {
            let name: String = r
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            r[name.len()..]
                .trim_start()
                .starts_with('{')
                .then_some(name)
        });
        for c in line.chars() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if stack.last().is_some_and(|(_, d)| depth < *d) {
                        stack.pop();
                    }
                }
                _ => {}
            }
        }
        if let Some(name) = opens_mod {
            let path = if here.is_empty() {
                name
            } else {
                format!("{here}::{name}")
            };
            stack.push((path, depth));
        }
    }
    out
}

/// Every path named after `crate::`, `super::` or `self::` on a line, as
/// absolute module paths (`use crate::{a, b::{c, d}}` gives `a`, `b::c`,
/// `b::d`), for a file whose module is `m`.
fn paths_on(line: &str, m: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !line.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let rest = &line[i..];
        let boundary = i == 0 || !is_ident(bytes[i - 1]);
        let start = ["crate::", "super::", "self::"]
            .iter()
            .find(|k| boundary && rest.starts_with(**k));
        let Some(kw) = start else {
            i += 1;
            continue;
        };
        let mut base: Vec<String> = match *kw {
            "crate::" => Vec::new(),
            "super::" => split(parent(m)),
            _ => split(m),
        };
        let mut j = i + kw.len();
        // Further `super::`s.
        while line[j..].starts_with("super::") {
            let p = base.join("::");
            base = split(parent(&p));
            j += "super::".len();
        }
        j = read_tree(line, j, &base, &mut out);
        i = j.max(i + 1);
    }
    out
}

fn split(m: &str) -> Vec<String> {
    if m.is_empty() {
        Vec::new()
    } else {
        m.split("::").map(str::to_string).collect()
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Read a path (or a `{…}` group of them) at `j`, pushing each with
/// `prefix`; returns where it ended.
fn read_tree(line: &str, mut j: usize, prefix: &[String], out: &mut Vec<String>) -> usize {
    let b = line.as_bytes();
    let mut segs: Vec<String> = prefix.to_vec();
    loop {
        if j < b.len() && b[j] == b'{' {
            j += 1;
            loop {
                while j < b.len() && (b[j] == b' ' || b[j] == b',') {
                    j += 1;
                }
                if j >= b.len() || b[j] == b'}' {
                    return j + 1;
                }
                let before = j;
                j = read_tree(line, j, &segs, out);
                if j == before {
                    j += 1;
                }
            }
        }
        let s = j;
        while j < b.len() && is_ident(b[j]) {
            j += 1;
        }
        if s == j {
            break;
        }
        segs.push(line[s..j].to_string());
        if line[j..].starts_with("::") {
            j += 2;
        } else {
            break;
        }
    }
    if segs.len() > prefix.len() || !prefix.is_empty() {
        out.push(segs.join("::"));
    }
    j
}

/// The longest module of `modules` that `path` names (itself or an
/// ancestor of it).
fn resolve<'m>(path: &str, modules: &'m BTreeSet<String>) -> Option<&'m str> {
    let mut p = path;
    loop {
        if let Some(m) = modules.get(p) {
            return Some(m);
        }
        if p.is_empty() {
            return None;
        }
        p = parent(p);
    }
}

/// The index of the layer `m` belongs to.
fn layer_of(m: &str, layers: &[Layer]) -> Option<usize> {
    layers
        .iter()
        .enumerate()
        .flat_map(|(i, (_, mods))| mods.iter().map(move |d| (i, *d)))
        .filter(|(_, d)| {
            if d.is_empty() {
                m.is_empty()
            } else {
                is_ancestor(d, m)
            }
        })
        .max_by_key(|(_, d)| d.len())
        .map(|(i, _)| i)
}

/// One import of a file: (importer, imported, 1-based line).
type Edge = (String, String, usize);

/// Check `files` (path below `src/`, text) against `layers`; every problem
/// found, one line each (empty when the crate is layered).
pub fn check(files: &[(String, String)], layers: &[Layer]) -> Vec<String> {
    let modules: BTreeSet<String> = files.iter().filter_map(|(p, _)| module_of(p)).collect();
    let mut problems = Vec::new();
    let mut edges: Vec<Edge> = Vec::new();
    for (path, text) in files {
        let Some(m) = module_of(path) else { continue };
        if layer_of(&m, layers).is_none() {
            problems.push(format!("{path}: module `{m}` is in no declared layer"));
        }
        for (n, (line, inline)) in with_inline_modules(&code_lines(text), &m)
            .iter()
            .enumerate()
        {
            for p in paths_on(line, inline) {
                if let Some(t) = resolve(&p, &modules) {
                    if t != m {
                        edges.push((m.clone(), t.to_string(), n + 1));
                    }
                }
            }
        }
    }
    edges.sort();
    edges.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let name = |m: &str| if m.is_empty() { "lib.rs" } else { m }.to_string();
    for (a, b, line) in &edges {
        if let (Some(la), Some(lb)) = (layer_of(a, layers), layer_of(b, layers)) {
            if lb > la {
                problems.push(format!(
                    "upward import: `{}` (layer {}) uses `{}` (layer {}), line {line}",
                    name(a),
                    layers[la].0,
                    name(b),
                    layers[lb].0
                ));
            }
        }
    }
    for cycle in cycles(&edges) {
        let shown: Vec<String> = cycle.iter().map(|m| name(m)).collect();
        problems.push(format!("import cycle between files: {}", shown.join(" ↔ ")));
    }
    problems
}

/// The strongly connected groups of more than one file, leaving out edges
/// between a module and its ancestors; each group sorted.
fn cycles(edges: &[Edge]) -> Vec<Vec<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b, _) in edges {
        if !is_ancestor(a, b) && !is_ancestor(b, a) {
            graph.entry(a).or_default().push(b);
            graph.entry(b).or_default();
        }
    }
    // Two passes of Kosaraju's algorithm.
    let nodes: Vec<&str> = graph.keys().copied().collect();
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for &n in &nodes {
        visit(n, &graph, &mut seen, &mut order);
    }
    let mut reverse: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, outs) in &graph {
        for b in outs {
            reverse.entry(b).or_default().push(a);
        }
    }
    let mut assigned = BTreeSet::new();
    let mut groups = Vec::new();
    for &n in order.iter().rev() {
        let mut group = Vec::new();
        visit(n, &reverse, &mut assigned, &mut group);
        if group.len() > 1 {
            let mut g: Vec<String> = group.iter().map(|s| s.to_string()).collect();
            g.sort();
            groups.push(g);
        }
    }
    groups.sort();
    groups
}

/// Depth-first from `n` (iteratively), pushing each node once it is done.
fn visit<'a>(
    n: &'a str,
    graph: &BTreeMap<&'a str, Vec<&'a str>>,
    seen: &mut BTreeSet<&'a str>,
    done: &mut Vec<&'a str>,
) {
    if !seen.insert(n) {
        return;
    }
    let mut stack: Vec<(&str, usize)> = vec![(n, 0)];
    while let Some((node, i)) = stack.pop() {
        let outs = graph.get(node).map(Vec::as_slice).unwrap_or(&[]);
        if let Some(&next) = outs.get(i) {
            stack.push((node, i + 1));
            if seen.insert(next) {
                stack.push((next, 0));
            }
        } else {
            done.push(node);
        }
    }
}

/// Every `.rs` file below `dir`, as (path below it with `/`, text), sorted.
pub fn read_tree_files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                if let (Ok(rel), Ok(text)) = (p.strip_prefix(dir), std::fs::read_to_string(&p)) {
                    let rel = rel.to_string_lossy().replace('\\', "/");
                    out.push((rel, text));
                }
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    const TOY: &[Layer] = &[("low", &["a"]), ("mid", &["b"]), ("high", &["c", ""])];

    #[test]
    fn kpv_core_is_layered() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/src");
        let files = read_tree_files(&src);
        assert!(files.len() > 50, "read {} files of {src:?}", files.len());
        let problems = check(&files, CORE);
        assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    }

    #[test]
    fn kpv_web_is_layered() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/src");
        let files = read_tree_files(&src);
        assert!(files.len() > 20, "read {} files of {src:?}", files.len());
        let problems = check(&files, WEB);
        assert!(problems.is_empty(), "\n{}", problems.join("\n"));
    }

    #[test]
    fn an_upward_import_is_named_with_both_ends_and_the_line() {
        let f = files(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            (
                "a.rs",
                "// uses crate::c in a comment only\nuse crate::c::Thing;\n",
            ),
            ("b.rs", "use crate::a;\n"),
            ("c.rs", "pub struct Thing;\n"),
        ]);
        assert_eq!(
            check(&f, TOY),
            vec!["upward import: `a` (layer low) uses `c` (layer high), line 2".to_string()]
        );
    }

    #[test]
    fn a_cycle_between_files_is_named_but_a_module_and_its_children_are_not() {
        let f = files(&[
            ("lib.rs", ""),
            (
                "b/mod.rs",
                "mod x;\nmod y;\npub use x::T;\nfn f() { self::y::g(); }\n",
            ),
            ("b/x.rs", "use super::y::G;\nuse super::f;\n"),
            ("b/y.rs", "use crate::b::x::T;\n"),
        ]);
        assert_eq!(
            check(&f, TOY),
            vec!["import cycle between files: b::x ↔ b::y".to_string()]
        );
    }

    #[test]
    fn tests_and_doc_links_are_not_imports() {
        let f = files(&[
            ("lib.rs", ""),
            (
                "a.rs",
                "/// See [`crate::c`].\npub fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\n",
            ),
            ("c.rs", "use crate::a::f;\n"),
        ]);
        assert_eq!(check(&f, TOY), Vec::<String>::new());
    }

    #[test]
    fn super_inside_an_inline_module_is_the_file_itself() {
        let f = files(&[
            ("lib.rs", ""),
            (
                "b.rs",
                "pub struct S;
mod codec {
    use super::S;
}
fn g() { super::c::h(); }
",
            ),
            (
                "c.rs",
                "pub fn h() {}
",
            ),
        ]);
        // `super::S` in `b::codec` is `b` (no import); `super::c` from `b`
        // is `c` (an upward import).
        assert_eq!(
            check(&f, TOY),
            vec!["upward import: `b` (layer mid) uses `c` (layer high), line 5".to_string()]
        );
    }

    #[test]
    fn an_undeclared_module_is_reported() {
        let f = files(&[("lib.rs", ""), ("zz.rs", "")]);
        assert_eq!(
            check(&f, &[("only", &["a", ""])]),
            vec!["zz.rs: module `zz` is in no declared layer".to_string()]
        );
    }

    #[test]
    fn grouped_and_relative_paths_resolve_to_modules() {
        assert_eq!(
            paths_on("use crate::{a, b::{c, d::E}};", ""),
            vec!["a", "b::c", "b::d::E"]
        );
        assert_eq!(
            paths_on("use super::super::x::Y;", "p::q::r"),
            vec!["p::x::Y"]
        );
        assert_eq!(paths_on("let v = self::z::f();", "m"), vec!["m::z::f"]);
        assert_eq!(module_of("http/mod.rs").as_deref(), Some("http"));
        assert_eq!(module_of("trace/types.rs").as_deref(), Some("trace::types"));
        assert_eq!(module_of("lib.rs").as_deref(), Some(""));
    }
}
