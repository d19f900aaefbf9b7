//! Nouns in lesson text that point at the diagram.
//!
//! A lesson step may mark a noun with what it names on the diagram:
//! `[[pod:alpaca|the first alpaca Pod]]`, `[[step:KUBE-SVC|KUBE-SVC]]`,
//! `[[node:worker-3|worker-3]]`, `[[lb|the load balancer]]`. The words after
//! `|` are shown as they are (in either language; the markup never depends
//! on the words around it, so it works the same in Korean and English), the
//! part before `|` names the element. [`segments`] splits a text into plain
//! runs and nouns; [`resolve`] finds what a noun names in a cluster (a Pod by
//! name prefix, as lesson settings do). Text that only looks like markup
//! (an unclosed `[[`, an unknown kind) stays plain text: reading never fails;
//! the lesson check reports it ([`problems`]). No words are made here.

use crate::model::{Cluster, NamespacedName};
use crate::view::pipeline;

/// What a marked noun names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NounRef {
    /// The first Pod whose name starts with this.
    Pod(String),
    Node(String),
    Service(String),
    LoadBalancer,
    Client,
    /// A pipeline step by its stable name (`KUBE-SVC`, `nft-services-map`).
    Step(String),
}

/// A run of lesson text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment<'a> {
    Text(&'a str),
    Noun { target: NounRef, words: &'a str },
}

/// An element of the diagram, as the app finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DiagramRef {
    Pod(NamespacedName),
    Node(String),
    Service(NamespacedName),
    LoadBalancer,
    Client,
    Step(String),
}

fn parse_ref(s: &str) -> Option<NounRef> {
    let s = s.trim();
    match s {
        "lb" => return Some(NounRef::LoadBalancer),
        "client" => return Some(NounRef::Client),
        _ => {}
    }
    let (kind, name) = s.split_once(':')?;
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let name = name.to_string();
    Some(match kind.trim() {
        "pod" => NounRef::Pod(name),
        "node" => NounRef::Node(name),
        "svc" => NounRef::Service(name),
        "step" => NounRef::Step(name),
        _ => return None,
    })
}

/// Split `text` into plain runs and marked nouns, in order. Markup that does
/// not parse is left in the plain text.
pub fn segments(text: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut plain_from = 0;
    let mut at = 0;
    while let Some(open) = text[at..].find("[[").map(|i| at + i) {
        let Some(close) = text[open + 2..].find("]]").map(|i| open + 2 + i) else {
            break;
        };
        let inner = &text[open + 2..close];
        let parsed = inner
            .split_once('|')
            .and_then(|(r, w)| Some((parse_ref(r)?, w)))
            .filter(|(_, w)| !w.trim().is_empty() && !w.contains("[["));
        match parsed {
            Some((target, words)) => {
                if plain_from < open {
                    out.push(Segment::Text(&text[plain_from..open]));
                }
                out.push(Segment::Noun { target, words });
                plain_from = close + 2;
                at = close + 2;
            }
            None => at = open + 2,
        }
    }
    if plain_from < text.len() {
        out.push(Segment::Text(&text[plain_from..]));
    }
    out
}

/// The text as a reader sees it: markup replaced by its words.
pub fn plain(text: &str) -> String {
    segments(text)
        .into_iter()
        .map(|s| match s {
            Segment::Text(t) => t,
            Segment::Noun { words, .. } => words,
        })
        .collect()
}

/// Whether `key` is a pipeline step's stable name in some mode.
pub fn is_step(key: &str) -> bool {
    use crate::model::Mode;
    const HOOKS: [&str; 6] = [
        "OUTPUT",
        "INPUT",
        "FORWARD",
        "KUBE-NODEPORTS",
        "KUBE-EXT",
        "KUBE-FW",
    ];
    HOOKS.contains(&key)
        || Mode::ALL
            .into_iter()
            .any(|m| pipeline::skeleton(m).contains(&key))
}

/// The diagram element a noun names in `cluster`, if any.
pub fn resolve(cluster: &Cluster, noun: &NounRef) -> Option<DiagramRef> {
    match noun {
        NounRef::Pod(prefix) => cluster
            .pods
            .iter()
            .find(|p| p.id.name.starts_with(prefix.as_str()))
            .map(|p| DiagramRef::Pod(p.id.clone())),
        NounRef::Node(name) => cluster
            .nodes
            .iter()
            .find(|n| n.name == *name)
            .map(|n| DiagramRef::Node(n.name.clone())),
        NounRef::Service(name) => cluster
            .services
            .iter()
            .find(|s| s.id.name == *name)
            .map(|s| DiagramRef::Service(s.id.clone())),
        NounRef::LoadBalancer => cluster
            .services
            .iter()
            .any(|s| {
                s.service_type == crate::model::ServiceType::LoadBalancer
                    && s.load_balancer_addresses().next().is_some()
            })
            .then_some(DiagramRef::LoadBalancer),
        NounRef::Client => Some(DiagramRef::Client),
        NounRef::Step(key) => is_step(key).then(|| DiagramRef::Step(key.clone())),
    }
}

/// What is wrong with the markup in `text` for `cluster`: nouns naming
/// nothing, and `[[` that is not read as a noun. Messages in English (the
/// lesson author's check).
pub fn problems(cluster: &Cluster, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let segs = segments(text);
    for s in &segs {
        match s {
            Segment::Noun { target, words } => {
                if resolve(cluster, target).is_none() {
                    out.push(format!(
                        "the noun `{words}` names nothing on the diagram: {target:?}"
                    ));
                }
            }
            Segment::Text(t) => {
                if t.contains("[[") {
                    out.push(format!(
                        "`[[` not read as a noun (write `[[kind:name|words]]`, kind one of pod, node, svc, step, or `[[lb|words]]`, `[[client|words]]`): {t:?}"
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_split_nouns_from_text_in_any_language() {
        let cases: &[(&str, Vec<Segment>)] = &[
            ("no nouns", vec![Segment::Text("no nouns")]),
            (
                "see [[pod:alpaca|the first alpaca Pod]] now",
                vec![
                    Segment::Text("see "),
                    Segment::Noun {
                        target: NounRef::Pod("alpaca".into()),
                        words: "the first alpaca Pod",
                    },
                    Segment::Text(" now"),
                ],
            ),
            (
                "[[step:KUBE-SVC|KUBE-SVC]] 체인이 [[lb|로드 밸런서]]를",
                vec![
                    Segment::Noun {
                        target: NounRef::Step("KUBE-SVC".into()),
                        words: "KUBE-SVC",
                    },
                    Segment::Text(" 체인이 "),
                    Segment::Noun {
                        target: NounRef::LoadBalancer,
                        words: "로드 밸런서",
                    },
                    Segment::Text("를"),
                ],
            ),
            ("open [[pod:a|x", vec![Segment::Text("open [[pod:a|x")]),
            (
                "bad [[zz:a|x]] kind",
                vec![Segment::Text("bad [[zz:a|x]] kind")],
            ),
            (
                "empty [[pod:a|]] words [[node:n|n]]",
                vec![
                    Segment::Text("empty [[pod:a|]] words "),
                    Segment::Noun {
                        target: NounRef::Node("n".into()),
                        words: "n",
                    },
                ],
            ),
        ];
        for (text, want) in cases {
            assert_eq!(&segments(text), want, "{text}");
        }
    }

    #[test]
    fn plain_keeps_only_the_words() {
        assert_eq!(
            plain("[[client|클라이언트]]가 [[svc:web|web]]에"),
            "클라이언트가 web에"
        );
        assert_eq!(plain("a [[b"), "a [[b");
    }

    #[test]
    fn step_names_are_those_the_pipeline_draws() {
        for k in [
            "KUBE-SVC",
            "KUBE-SEP",
            "nft-services-map",
            "kube-proxy-process",
            "FORWARD",
        ] {
            assert!(is_step(k), "{k}");
        }
        assert!(!is_step("KUBE-NOPE"));
    }
}
