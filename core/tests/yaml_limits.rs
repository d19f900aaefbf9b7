//! The YAML reader against hostile and careless input: what aliases may
//! expand to (nodes and bytes, paid before they are copied), keys written
//! twice, merge keys, YAML 1.1 integers as kubectl reads them, and syntax
//! errors reported where the unclosed collection was opened.

use kpv_core::util::diag::{Diagnostic, Severity, Span};
use kpv_core::yaml::{footprint, parse_stream, Document, Footprint, Limits, Node};
use proptest::prelude::*;

fn parse(src: &str) -> (Vec<Document>, Vec<Diagnostic>) {
    parse_stream(src, &Limits::default())
}

fn total(docs: &[Document]) -> Footprint {
    docs.iter().fold(Footprint::default(), |a, d| {
        let f = footprint(&d.root);
        Footprint {
            nodes: a.nodes + f.nodes,
            text_bytes: a.text_bytes + f.text_bytes,
        }
    })
}

fn is_limit(d: &Diagnostic) -> bool {
    d.message.starts_with("YAML expands to more than")
}

/// A document that expands past a limit is refused with one error, where the
/// expansion crossed it, and nothing of it is returned.
#[test]
fn expansion_bombs_are_refused_from_every_side() {
    // One 100 KB scalar aliased 1,000 times: few nodes, 100 MB of text.
    let big = "x".repeat(100_000);
    let mut scalar_bomb = format!("big: &s {big}\nlist: [");
    let mut alias_columns = Vec::new();
    for i in 0..1000 {
        if i > 0 {
            scalar_bomb.push_str(", ");
        }
        alias_columns.push(scalar_bomb.len() - scalar_bomb.rfind('\n').unwrap_or(0));
        scalar_bomb.push_str("*s");
    }
    scalar_bomb.push_str("]\n");

    // "Billion laughs": ten levels of ten aliases of the level below.
    let mut laughs = String::from("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let p = i - 1;
        laughs.push_str(&format!(
            "l{i}: &l{i} [{}]\n",
            vec![format!("*l{p}"); 10].join(", ")
        ));
    }

    // The same through merge keys: each level merges the one below ten times
    // under new keys.
    let mut merges = String::from("m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n");
    for i in 1..12 {
        let p = i - 1;
        let entries: Vec<String> = (0..10).map(|k| format!("k{k}: *m{p}")).collect();
        merges.push_str(&format!(
            "m{i}: &m{i} {{<<: *m{p}, {}}}\n",
            entries.join(", ")
        ));
    }

    // Aliases used as mapping keys expand too.
    let mut keys = String::from("k0: &k0 [a, b, c, d, e, f, g, h, i, j]\n");
    for i in 1..10 {
        let p = i - 1;
        let entries: Vec<String> = (0..10).map(|k| format!("? *k{p}\n  : {k}")).collect();
        keys.push_str(&format!("k{i}: &k{i}\n  {}\n", entries.join("\n  ")));
    }

    // Anchors nested 60 deep around one 1 MB scalar: each anchor keeps its
    // own copy, 60 MB in all, though no alias is ever used.
    let mb = "y".repeat(1 << 20);
    let nested = format!(
        "{}&n60 {mb}{}\n",
        (0..60).map(|i| format!("&n{i} [")).collect::<String>(),
        "]".repeat(60)
    );

    // A share link carries at most a few KB: this one is 1.4 KB, and
    // expands to 262 MB.
    let mut link_sized = String::from("a: &a \"");
    link_sized.push_str(&"z".repeat(1000));
    link_sized.push_str("\"\n");
    for (c, p) in [
        ('b', 'a'),
        ('c', 'b'),
        ('d', 'c'),
        ('e', 'd'),
        ('f', 'e'),
        ('g', 'f'),
    ] {
        link_sized.push_str(&format!(
            "{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        ));
    }
    assert!(link_sized.len() < 2048, "{}", link_sized.len());

    for (name, src, want) in [
        (
            "scalar aliased 1000 times",
            scalar_bomb.as_str(),
            "MiB of text",
        ),
        ("billion laughs", laughs.as_str(), "values"),
        ("merge keys", merges.as_str(), "values"),
        ("alias keys", keys.as_str(), "values"),
        ("nested anchors", nested.as_str(), "MiB of text"),
        ("share-link sized", link_sized.as_str(), "MiB of text"),
    ] {
        let (docs, diags) = parse(src);
        assert!(
            docs.is_empty(),
            "{name}: a refused document is not returned"
        );
        let errors: Vec<&Diagnostic> = diags.iter().filter(|d| d.is_error()).collect();
        assert_eq!(errors.len(), 1, "{name}: {diags:?}");
        let e = errors[0];
        assert!(
            is_limit(e) && e.message.contains(want),
            "{name}: {}",
            e.message
        );
        assert!(e.span.is_some_and(|s| s.line >= 1), "{name}: {e:?}");
        assert_eq!(e.document, 0, "{name}");
    }

    // The scalar bomb is refused at the first alias that does not fit:
    // 32 MiB of text holds the scalar, its anchored copy and 333 aliases.
    let (_, diags) = parse(&scalar_bomb);
    let per = 100_000usize;
    let fits = Limits::default().max_text_bytes / per - 2;
    assert_eq!(fits, 333);
    assert_eq!(
        diags[0].span,
        Some(Span {
            line: 2,
            column: alias_columns[fits]
        }),
        "refused at alias number {}",
        fits + 1
    );
}

/// Anchors used as they are in real manifests stay far inside the limits.
#[test]
fn ordinary_anchors_and_merges_parse() {
    let mut src = String::from("common: &labels {app: web, tier: front, team: blue}\nitems:\n");
    for i in 0..500 {
        src.push_str(&format!(
            "- name: svc-{i}\n  labels: *labels\n  more:\n    <<: *labels\n    tier: back\n"
        ));
    }
    let (docs, diags) = parse(&src);
    assert!(diags.is_empty(), "{diags:?}");
    let items = docs[0]
        .root
        .get("items")
        .and_then(Node::as_seq)
        .unwrap_or(&[]);
    assert_eq!(items.len(), 500);
    let more = &items[499].get("more");
    assert_eq!(
        more.and_then(|m| m.get("tier")).and_then(Node::as_str),
        Some("back")
    );
    assert_eq!(
        more.and_then(|m| m.get("team")).and_then(Node::as_str),
        Some("blue")
    );
    assert!(more.and_then(|m| m.get("<<")).is_none());
}

/// A small set of anchors and aliases, and what it expands to, computed
/// apart from the parser.
#[derive(Clone, Debug)]
enum Def {
    Scalar(usize),
    Seq(Vec<usize>),
    Map(Vec<usize>),
}

fn program() -> impl Strategy<Value = Vec<Def>> {
    let def = prop_oneof![
        (0usize..40_000).prop_map(Def::Scalar),
        prop::collection::vec(any::<prop::sample::Index>(), 0..12)
            .prop_map(|v| Def::Seq(v.into_iter().map(|i| i.index(usize::MAX)).collect())),
        prop::collection::vec(any::<prop::sample::Index>(), 0..12)
            .prop_map(|v| Def::Map(v.into_iter().map(|i| i.index(usize::MAX)).collect())),
    ];
    prop::collection::vec(def, 1..9)
}

/// The YAML text of a program (each definition may alias the earlier ones)
/// and the footprint of its fully expanded tree and of its anchored copies.
fn render(defs: &[Def]) -> (String, Footprint, Footprint) {
    let mut src = String::from("defs:\n");
    let mut sizes: Vec<(u64, u64)> = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        let pick = |r: usize| if i == 0 { None } else { Some(r % i) };
        let (n, t) = match d {
            Def::Scalar(len) => {
                src.push_str(&format!("- &d{i} \"{}\"\n", "s".repeat(*len)));
                (1u64, *len as u64)
            }
            Def::Seq(refs) => {
                let refs: Vec<usize> = refs.iter().filter_map(|r| pick(*r)).collect();
                let items: Vec<String> = refs.iter().map(|r| format!("*d{r}")).collect();
                src.push_str(&format!("- &d{i} [{}]\n", items.join(", ")));
                refs.iter().fold((1u64, 0u64), |(n, t), r| {
                    (n.saturating_add(sizes[*r].0), t.saturating_add(sizes[*r].1))
                })
            }
            Def::Map(refs) => {
                let refs: Vec<usize> = refs.iter().filter_map(|r| pick(*r)).collect();
                let items: Vec<String> = refs
                    .iter()
                    .enumerate()
                    .map(|(k, r)| format!("k{k:02}: *d{r}"))
                    .collect();
                src.push_str(&format!("- &d{i} {{{}}}\n", items.join(", ")));
                refs.iter().fold((1u64, 0u64), |(n, t), r| {
                    let (vn, vt) = sizes[*r];
                    (
                        n.saturating_add(vn).saturating_add(1),
                        t.saturating_add(vt).saturating_add(3),
                    )
                })
            }
        };
        sizes.push((n, t));
    }
    let sum = |f: &dyn Fn(&(u64, u64)) -> u64| sizes.iter().map(f).fold(0u64, u64::saturating_add);
    // The root mapping, its key `defs` and the list: three nodes, 4 bytes.
    let tree = Footprint {
        nodes: usize::try_from(sum(&|s| s.0).saturating_add(3)).unwrap_or(usize::MAX),
        text_bytes: usize::try_from(sum(&|s| s.1).saturating_add(4)).unwrap_or(usize::MAX),
    };
    let copies = Footprint {
        nodes: usize::try_from(sum(&|s| s.0)).unwrap_or(usize::MAX),
        text_bytes: usize::try_from(sum(&|s| s.1)).unwrap_or(usize::MAX),
    };
    (src, tree, copies)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Any input is parsed within the limits: what is returned never holds
    /// more nodes or text than they allow, so never more heap than
    /// `max_heap_bytes`; an input whose expansion (with its anchored
    /// copies) fits is returned whole, and one whose expansion alone does
    /// not fit is refused with the limit's message.
    #[test]
    fn any_yaml_is_parsed_with_bounded_memory(defs in program()) {
        let limits = Limits { max_nodes: 5_000, max_text_bytes: 300_000, ..Limits::default() };
        let (src, tree, copies) = render(&defs);
        let (docs, diags) = parse_stream(&src, &limits);
        let got = total(&docs);
        prop_assert!(got.nodes <= limits.max_nodes && got.text_bytes <= limits.max_text_bytes, "{got:?}");
        prop_assert!(got.heap_bytes() <= limits.max_heap_bytes());
        let fits = |f: Footprint| f.nodes <= limits.max_nodes && f.text_bytes <= limits.max_text_bytes;
        let with_copies = Footprint {
            nodes: tree.nodes.saturating_add(copies.nodes),
            text_bytes: tree.text_bytes.saturating_add(copies.text_bytes),
        };
        if fits(with_copies) {
            prop_assert!(diags.is_empty(), "{diags:?}");
            prop_assert_eq!(got, tree);
        }
        if !fits(tree) {
            prop_assert!(docs.is_empty());
            prop_assert!(diags.iter().any(is_limit), "{diags:?}");
        }
    }
}

/// A key written twice: reported at the second, with go-yaml's words and
/// the first one's line; the later value is kept, as `kubectl apply -f`
/// keeps it.
#[test]
fn duplicate_keys_are_reported_at_the_second() {
    for (name, src, key, at, first_line, path, kept) in [
        (
            "top level",
            "kind: Service\nkind: Pod\n",
            "kind",
            (2, 1),
            1,
            &["kind"][..],
            "Pod",
        ),
        (
            "nested",
            "spec:\n  ports:\n  - port: 80\n    port: 81\n",
            "port",
            (4, 5),
            3,
            &["spec", "ports", "0", "port"][..],
            "81",
        ),
        (
            "flow",
            "a: {x: 1, y: 2, x: 3}\n",
            "x",
            (1, 17),
            1,
            &["a", "x"][..],
            "3",
        ),
        (
            "quoted and plain",
            "\"a\": 1\na: 2\n",
            "a",
            (2, 1),
            1,
            &["a"][..],
            "2",
        ),
        (
            "empty keys",
            ": 1\n\"\": 2\n",
            "",
            (2, 1),
            1,
            &[""][..],
            "2",
        ),
    ] {
        let (docs, diags) = parse(src);
        assert_eq!(diags.len(), 1, "{name}: {diags:?}");
        let d = &diags[0];
        assert_eq!(d.severity, Severity::Warning, "{name}");
        assert_eq!(
            d.span,
            Some(Span {
                line: at.0,
                column: at.1
            }),
            "{name}"
        );
        assert!(
            d.message.starts_with(&format!(
                "mapping key {key:?} already defined at line {first_line}"
            )),
            "{name}: {}",
            d.message
        );
        // The later value is the one read.
        let value = path.iter().try_fold(&docs[0].root, |n, step| match *step {
            "0" => n.as_seq().and_then(|s| s.first()),
            k => n.get(k),
        });
        assert_eq!(value.and_then(Node::as_str), Some(kept), "{name}");
    }
    // Three times: both later ones point at the first.
    let (_, diags) = parse("a: 1\nb: 2\na: 3\na: 4\n");
    let lines: Vec<usize> = diags
        .iter()
        .filter_map(|d| d.span.map(|s| s.line))
        .collect();
    assert_eq!(lines, vec![3, 4]);
    assert!(diags
        .iter()
        .all(|d| d.message.contains("already defined at line 1")));
    // The same key in different mappings, or merged in, is no duplicate.
    for ok in [
        "- name: a\n- name: b\n",
        "a: {x: 1}\nb: {x: 1}\n",
        "base: &b {x: 1}\nuse:\n  <<: *b\n  x: 2\n",
        "a: 1\nA: 2\n",
        "1: a\n01: b\n",
    ] {
        let (_, diags) = parse(ok);
        assert!(diags.is_empty(), "{ok:?}: {diags:?}");
    }
}

/// Duplicate keys reach the cluster's diagnostics with their document.
#[test]
fn duplicate_keys_reach_the_model() {
    let src = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: 80\n  ports:\n  - port: 81\n";
    let (cluster, diags) = kpv_core::Code::ALL.parse(src);
    let dup: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| d.message.contains("mapping key"))
        .collect();
    assert_eq!(dup.len(), 1, "{diags:?}");
    assert_eq!(dup[0].document, 1);
    assert_eq!(
        dup[0].span,
        Some(Span {
            line: 12,
            column: 3
        })
    );
    assert!(
        dup[0]
            .to_string()
            .starts_with("warning: document 2, line 12, column 3"),
        "{}",
        dup[0]
    );
    let ports: Vec<u16> = cluster
        .services
        .iter()
        .flat_map(|s| s.ports.iter().map(|p| p.port))
        .collect();
    assert_eq!(ports, vec![81]);
}

#[test]
fn merge_keys_follow_yaml_1_1() {
    let src = "\
a: &a {x: 1, y: 1, z: 1}
b: &b {x: 2, w: 2}
one:
  <<: *a
  x: own
many:
  x: own
  <<: [*b, *a]
quoted:
  \"<<\": *a
";
    let (docs, diags) = parse(src);
    assert!(diags.is_empty(), "{diags:?}");
    let root = &docs[0].root;
    let get = |m: &str, k: &str| root.get(m).and_then(|n| n.get(k)).and_then(Node::as_str);
    // The mapping's own key wins wherever it is written.
    assert_eq!(get("one", "x"), Some("own"));
    assert_eq!(get("many", "x"), Some("own"));
    // An earlier merged mapping wins over a later one.
    assert_eq!(get("many", "w"), Some("2"));
    assert_eq!(get("many", "y"), Some("1"));
    assert_eq!(get("one", "z"), Some("1"));
    // A quoted `<<` is an ordinary key.
    assert!(root.get("quoted").and_then(|q| q.get("<<")).is_some());
    for bad in [
        "a:\n  <<: 1\n",
        "a:\n  <<: [1, 2]\n",
        "a: &a [1]\nb:\n  <<: *a\n",
    ] {
        let (_, diags) = parse(bad);
        assert_eq!(diags.len(), 1, "{bad:?}: {diags:?}");
        assert!(diags[0].is_error());
        assert_eq!(
            diags[0].message, "map merge requires map or sequence of maps as the value",
            "{bad:?}"
        );
    }
}

/// Merge keys in a manifest give the object its merged fields (no "unknown
/// field `<<`").
#[test]
fn merge_keys_reach_the_model() {
    let src = "\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {addresses: [{type: InternalIP, address: 10.0.0.1}]}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: &sel {app: web}
  ports:
  - &p {name: a, port: 80, protocol: TCP}
  - <<: *p
    name: b
    port: 81
---
apiVersion: v1
kind: Service
metadata:
  name: web2
spec:
  selector:
    <<: {app: web}
  ports:
  - port: 82
";
    let (cluster, diags) = kpv_core::Code::ALL.parse(src);
    assert!(
        !diags
            .iter()
            .any(|d| d.message.contains("<<") || d.is_error()),
        "{diags:?}"
    );
    let ports: Vec<u16> = cluster
        .services
        .iter()
        .flat_map(|s| s.ports.iter().map(|p| p.port))
        .collect();
    assert_eq!(ports, vec![80, 81, 82]);
}

/// Unquoted YAML 1.1 integers read as kubectl reads them; quoted or
/// `!!str`-tagged ones stay text.
#[test]
fn yaml_1_1_integers_in_a_tree() {
    let (docs, diags) = parse(
        "a: 010\nb: 0x1F90\nc: 1_000\nd: +12\ne: 0o10\nf: \"010\"\ng: !!str 010\nh: 08\ni: '0x1F90'\nj: on\nk: \"on\"\n",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let r = &docs[0].root;
    let int = |k: &str| r.get(k).and_then(Node::as_int);
    for (k, want) in [
        ("a", Some(8)),
        ("b", Some(8080)),
        ("c", Some(1000)),
        ("d", Some(12)),
        ("e", Some(8)),
        ("f", None),
        ("g", None),
        ("h", Some(8)),
        ("i", None),
    ] {
        assert_eq!(int(k), want, "{k}");
    }
    assert_eq!(r.get("j").and_then(Node::as_bool), Some(true));
    assert_eq!(r.get("k").and_then(Node::as_bool), None);
    // The text stays as written: strings are not rewritten.
    assert_eq!(r.get("a").and_then(Node::as_str), Some("010"));
}

/// An unclosed `[` or `{` is reported where it was opened (as kubectl
/// does), not where the parser gave up; other errors inside a flow
/// collection stay where they are.
#[test]
fn unclosed_flow_collections_are_reported_where_opened() {
    for (src, at, what) in [
        ("a: [1, 2\nb: c\n", (1, 4), "flow sequence"),
        ("a: [1, 2\n", (1, 4), "flow sequence"),
        ("a: {x: 1\nb: c\n", (1, 4), "flow mapping"),
        ("ports: [{port: 80}\nx: 1\n", (1, 8), "flow sequence"),
        (
            "a:\n  b: [\n    1,\n    2\n  c: d\n",
            (2, 6),
            "flow sequence",
        ),
        ("x: 1\ny: [1,\n  2,\n  3\n", (2, 4), "flow sequence"),
        ("a: [b, {c: d]\n", (1, 8), "flow mapping"),
        ("- [a\n- b\n", (1, 3), "flow sequence"),
        ("a: [1, 2\n# c\n---\nb: 1\n", (1, 4), "flow sequence"),
        ("{a: 1", (1, 1), "flow mapping"),
        // After text the parser counts in bytes (a block scalar in Korean),
        // and after a byte-order mark.
        (
            "n: |\n  한국어 ☕\n  more\na: [1, 2\nb: c\n",
            (4, 4),
            "flow sequence",
        ),
        (
            "n: \"한국어\"\na: {x: [1, 2]\nb: c\n",
            (2, 4),
            "flow mapping",
        ),
        ("\u{feff}a: [1, 2\nb: c\n", (1, 5), "flow sequence"),
        ("a: 1\r\nb: [1, 2\r\nc: d\r\n", (2, 4), "flow sequence"),
        // Nothing after the bracket: the parser meets the end of the input.
        ("kind: [\n", (1, 7), "flow sequence"),
        ("a: {b: 1,\n", (1, 4), "flow mapping"),
        ("a:\n  - [\n", (2, 5), "flow sequence"),
    ] {
        let (_, diags) = parse(src);
        assert_eq!(diags.len(), 1, "{src:?}: {diags:?}");
        let d = &diags[0];
        assert_eq!(
            d.span,
            Some(Span {
                line: at.0,
                column: at.1
            }),
            "{src:?}: {}",
            d.message
        );
        assert!(
            d.message
                .contains(&format!("the {what} opened here is not closed")),
            "{src:?}: {}",
            d.message
        );
    }
    for (src, at) in [
        ("a: [1, @bad, 3]\n", (1, 8)),
        ("ports: [\n  80,\n  @x\n]\n", (3, 3)),
        ("a: [\"x, 2]\n", (1, 5)),
        ("a: [1, 2]]\n", (1, 10)),
    ] {
        let (_, diags) = parse(src);
        assert_eq!(diags.len(), 1, "{src:?}: {diags:?}");
        assert_eq!(
            diags[0].span,
            Some(Span {
                line: at.0,
                column: at.1
            }),
            "{src:?}: {}",
            diags[0].message
        );
        assert!(
            !diags[0].message.contains("not closed"),
            "{src:?}: {}",
            diags[0].message
        );
    }
}

/// Diagnostics of a later document carry its index, and messages count
/// documents from 1.
#[test]
fn documents_are_numbered_from_one_in_messages() {
    for (src, doc) in [
        ("a: [1\n", 0),
        ("a: 1\n---\nb: [1\n", 1),
        ("a: 1\n---\nb: 2\n---\nc: 3\nc: 4\n", 2),
        ("---\n---\nx: *nope\n", 1),
    ] {
        let (_, diags) = parse(src);
        assert!(!diags.is_empty(), "{src:?}");
        for d in &diags {
            assert_eq!(d.document, doc, "{src:?}: {d:?}");
            assert!(
                d.to_string()
                    .contains(&format!("document {}, line", doc + 1)),
                "{d}"
            );
        }
    }
}
