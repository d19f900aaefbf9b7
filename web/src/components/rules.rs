//! The node's rules as the node prints them (`iptables-save`, `ipvsadm`,
//! `nft list`, Cilium's maps), the rule the focused packet is at
//! highlighted, with the Maglev view above them. Only the full app has it.

use super::panels::keep_in_view;
use super::t;
use crate::state::Store;
use leptos::prelude::*;

/// The node's rules as the node prints them, the current rule highlighted.
#[component]
pub fn RulesView() -> impl IntoView {
    let store = expect_context::<Store>();
    // The rule the focused packet is at now (or last passed), and on which node.
    let matched = Memo::new(move |_| {
        let hop = store.current_hop()?;
        store
            .with_focused_trace(|trace| {
                // None for a trace with no hops, such as one from a deleted Pod.
                let h = trace.rule_hop_until(hop)?;
                let s = h.step.as_ref()?;
                Some((h.node.clone(), s.line, s.compared, trace.rules_compared))
            })
            .flatten()
    });
    let shown_node = store.rules_shown;
    let text = move || {
        let node = shown_node.get();
        store.rules.with(|r| {
            r.as_ref()
                .filter(|r| Some(&r.node) == node.as_ref())
                .map(|r| r.text.clone())
        })
    };
    let matched_line = move || {
        matched
            .get()
            .filter(|m| m.0 == shown_node.get())
            .and_then(|m| m.1)
    };
    let pre = NodeRef::<leptos::html::Pre>::new();
    keep_in_view(pre, ".rule-line.matched", move || {
        matched_line().map(|l| l as i64)
    });
    view! {
        <section class="panel rules-panel">
            <h2>{t("panel.rules")}</h2>
            <div class="tabs" role="tablist">
                {move || store.parsed.with(|(c, _)| c.nodes.iter().map(|nd| {
                    let name = nd.name.clone();
                    let name2 = name.clone();
                    let name3 = name.clone();
                    let testid = format!("rules-node-{name}");
                    view! {
                        <button role="tab" data-testid=testid
                            aria-selected=move || (shown_node.get().as_deref() == Some(name2.as_str())).to_string()
                            on:click=move |_| store.rules_node.set(Some(name3.clone()))>{name}</button>
                    }
                }).collect_view())}
            </div>
            <p class="small muted">
                {move || matched.get().map(|m| format!("{}: {} ({})", t("rules.compared")(), m.3, m.2)).unwrap_or_default()}
            </p>
            <super::modewait::ModeWait modes=Signal::derive(move || vec![store.mode.get()]) id="rules-mode" />
            <super::maglev::MaglevView />
            <pre data-testid="rules-view" class="rules" node_ref=pre data-mode=move || store.mode.get().as_str()
                aria-busy=move || store.mode_wait().is_some().to_string()>
                {move || match text() {
                    // The mode's code on its way: the line above says so.
                    None if store.mode_wait().is_some() => ().into_any(),
                    None => view! { <span class="muted">{t("empty.rules")}</span> }.into_any(),
                    Some(text) => {
                        // Three nodes, however long the ruleset: the text before the
                        // matched line, the line itself, and the rest.
                        let m = matched_line();
                        let (before, line, after) = split_at_line(&text, m);
                        view! {
                            {before.to_string()}
                            {line.map(|l| view! {
                                <span class="rule-line matched" data-matched="true" data-line=m.unwrap_or(0).to_string()>{l.to_string()}</span>
                            })}
                            {after.to_string()}
                        }.into_any()
                    }
                }}
            </pre>
        </section>
    }
}

/// `text` around its 0-based line `m`: (before, the line with its newline, after).
fn split_at_line(text: &str, m: Option<usize>) -> (&str, Option<&str>, &str) {
    let Some(m) = m else {
        return (text, None, "");
    };
    let mut start = 0;
    for _ in 0..m {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return (text, None, ""),
        }
    }
    if start >= text.len() {
        return (text, None, "");
    }
    let end = text[start..]
        .find('\n')
        .map(|i| start + i + 1)
        .unwrap_or(text.len());
    (&text[..start], Some(&text[start..end]), &text[end..])
}

#[cfg(test)]
mod tests {
    use super::split_at_line;

    #[test]
    fn a_ruleset_splits_around_its_matched_line() {
        let t = "a\nbb\nccc\n";
        assert_eq!(split_at_line(t, Some(1)), ("a\n", Some("bb\n"), "ccc\n"));
        assert_eq!(split_at_line(t, Some(0)), ("", Some("a\n"), "bb\nccc\n"));
        assert_eq!(split_at_line(t, Some(2)), ("a\nbb\n", Some("ccc\n"), ""));
        assert_eq!(split_at_line(t, Some(3)), (t, None, ""));
        assert_eq!(split_at_line(t, None), (t, None, ""));
        assert_eq!(split_at_line("x\ny", Some(1)), ("x\n", Some("y"), ""));
    }
}
