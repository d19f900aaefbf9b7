//! Words for a trace's hops and a node's pipeline steps, in each language.
//!
//! kpv-core returns structured hops ([`Hop`], [`HopKind`], [`StepAction`])
//! and pipeline boxes ([`Chip`], box keys); this module turns them into the
//! one-line summaries the event list, the caption, the packet card and the
//! pipeline strip show. Only literal rule text, chain and object names and
//! addresses stay as they are; every other word comes from [`crate::i18n`].

use crate::i18n::{reason_key, tr, Lang};
use kpv_core::model::{Cluster, ProbeAction};
use kpv_core::net::controller::events::EventKind;
use kpv_core::net::controller::ProbeKind;
use kpv_core::net::modes::StepAction;
use kpv_core::net::trace::{Hop, HopKind, ReplyVia};
use kpv_core::view::pipeline::Chip;

/// A chain or object name cut to `max` characters with an ellipsis (the
/// whole name goes in a tooltip).
pub fn short(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_string();
    }
    let mut s: String = name.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// A generated object name cut to `max` characters in its middle, so its
/// own suffix stays (`alpaca-prod-7c…-8sqmn`: the Pod, not its template's
/// hash); a name without one is cut at its end.
pub fn short_middle(name: &str, max: usize) -> String {
    let n = name.chars().count();
    if n <= max {
        return name.to_string();
    }
    match name.rfind('-') {
        Some(i) if name[i..].chars().count() + 4 <= max => {
            let tail = &name[i..];
            let head: String = name
                .chars()
                .take(max.saturating_sub(tail.chars().count() + 1))
                .collect();
            format!("{head}…{tail}")
        }
        _ => short(name, max),
    }
}

/// The pipeline box keys [`step_name`] names in words (the rest are drawn
/// as they are).
pub const DESCRIBED: &[&str] = &[
    "ipvs-virtual-server",
    "ipvs-real-server",
    "kube-ipvs0",
    "nft-services-map",
    "nft-external",
    "nft-firewall",
    "nft-service-chain",
    "nft-endpoint-chain",
    "kube-proxy-process",
    "kube-proxy-dial",
    "bpf-hook",
    "lb-service",
    "lb-select",
    "lb-backend",
    "lb-nat",
    "rules",
    "listener",
    "route",
    "rule",
    "filters",
    "backend",
];

/// The words for a pipeline box key (hooks and chain families keep their
/// kernel names; the rest are described).
pub fn step_name(l: Lang, key: &str) -> String {
    match key {
        "kube-ipvs0" => "kube-ipvs0 → INPUT".into(),
        "rules" => tr(l, "hop.rule").into(),
        "listener" | "route" | "rule" | "filters" | "backend" => {
            crate::hops_http::step_name(l, key).into()
        }
        // A described step's words are the `step.<key>` entry; hooks and
        // chain families keep their kernel names.
        k => match crate::i18n::entries().find(|(e, _, _)| e.strip_prefix("step.") == Some(k)) {
            Some((e, _, _)) => tr(l, e).into(),
            None => k.to_string(),
        },
    }
}

/// A chip's words: what the box did to the packet.
pub fn chip_text(l: Lang, c: &Chip) -> String {
    match c {
        Chip::Dnat { to } => format!("DNAT → {to}"),
        Chip::Redirect { to } => format!("REDIRECT → :{}", to.port()),
        Chip::MarkMasq => tr(l, "chip.mark").into(),
        Chip::Masquerade { to } => format!("MASQ → {}", to.ip()),
        Chip::Dsr { service } => format!("DSR · {service}"),
        Chip::Pick { chosen, among } => tr(l, "chip.pick")
            .replace("{n}", &among.to_string())
            .replace("{ep}", &chosen.to_string()),
        Chip::Dial { to, answered } => format!(
            "{} {to} {}",
            tr(l, "chip.dial"),
            if *answered { "✔" } else { "✖" }
        ),
        Chip::Drop => "DROP".into(),
        Chip::Reject => "REJECT".into(),
        Chip::Accept => "ACCEPT".into(),
        Chip::Tls { .. } | Chip::Status { .. } => crate::hops_http::chip_text(l, c),
    }
}

/// The chain a rule hop is in, without its table prefix.
fn chain(h: &Hop) -> String {
    h.step
        .as_ref()
        .map(|s| {
            let c = s.table_chain.as_str();
            ["nat ", "filter ", "chain ", "map "]
                .iter()
                .find_map(|p| c.strip_prefix(p))
                .unwrap_or(c)
                .to_string()
        })
        .unwrap_or_default()
}

/// One hop in plain words: what happened, in the chosen language.
pub fn summary(l: Lang, h: &Hop) -> String {
    let w = |k: &'static str| tr(l, k).to_string();
    match &h.what {
        HopKind::Dns { name, answer } => w("sum.dns")
            .replace("{name}", name)
            .replace("{ip}", &answer.to_string()),
        HopKind::Send => w("sum.send").replace("{dst}", &h.after.dst.to_string()),
        HopKind::LoadBalancer {
            node,
            healthy_nodes,
            total_nodes,
        } => w("sum.lb")
            .replace("{node}", node)
            .replace("{ok}", &healthy_nodes.to_string())
            .replace("{n}", &total_nodes.to_string()),
        HopKind::Arrive { node } => w("sum.arrive").replace("{node}", node),
        HopKind::Established { endpoint } => {
            w("sum.established").replace("{ep}", &endpoint.to_string())
        }
        HopKind::Masquerade { to } => w("sum.masquerade").replace("{src}", &to.to_string()),
        HopKind::PodNetwork { to, .. } => w("sum.pod-network").replace("{node}", to),
        HopKind::Deliver => w("sum.deliver")
            .replace("{ep}", &h.after.dst.to_string())
            .replace("{src}", &h.after.src.ip().to_string()),
        HopKind::NoAnswer => w("sum.no-answer").replace("{ep}", &h.after.dst.to_string()),
        HopKind::Drop { reason } => format!("DROP: {}", tr(l, reason_key(*reason))),
        HopKind::Reject { reason } => format!("REJECT: {}", tr(l, reason_key(*reason))),
        HopKind::Reply { via } => match via {
            ReplyVia::Conntrack => w("sum.reply"),
            ReplyVia::Dsr => {
                w("sum.reply-dsr").replace("{node}", h.node.as_deref().unwrap_or_default())
            }
            ReplyVia::Socket => w("sum.reply-socket"),
        },
        HopKind::Http(p) => crate::hops_http::summary(l, h, p),
        HopKind::Rule => {
            let Some(s) = &h.step else {
                return w("hop.rule");
            };
            let c = chain(h);
            match &s.action {
                StepAction::Jump { to } => w("sum.jump").replace("{chain}", &c).replace("{to}", to),
                StepAction::MarkMasq => w("sum.mark").replace("{chain}", &c),
                StepAction::Dnat { to } => w("sum.dnat")
                    .replace("{chain}", &c)
                    .replace("{ep}", &to.to_string()),
                StepAction::Redirect { to } => w("sum.redirect")
                    .replace("{chain}", &c)
                    .replace("{port}", &to.port().to_string()),
                StepAction::Lookup { matched } => w("sum.lookup")
                    .replace("{chain}", &c)
                    .replace("{what}", matched),
                StepAction::Choose { chosen, among, .. } => w("sum.choose")
                    .replace("{chain}", &c)
                    .replace("{n}", &among.to_string())
                    .replace("{ep}", &chosen.to_string()),
                StepAction::Connect { to, answered } => w(if *answered {
                    "sum.connect-ok"
                } else {
                    "sum.connect-failed"
                })
                .replace("{ep}", &to.to_string()),
                StepAction::Accept => w("sum.accept").replace("{chain}", &c),
                StepAction::Drop => w("sum.drop").replace("{chain}", &c),
                StepAction::Reject => w("sum.reject").replace("{chain}", &c),
                StepAction::Return => w("sum.return").replace("{chain}", &c),
                StepAction::Snat { to } => w("sum.masquerade").replace("{src}", &to.to_string()),
                StepAction::Dsr { service } => w("sum.dsr")
                    .replace("{chain}", &c)
                    .replace("{svc}", &service.to_string()),
            }
        }
    }
}

/// An event as `kubectl get events`, `kubectl get endpoints --watch` and
/// `kubectl get pods --watch` print it (their output is English in every
/// language, as the tools print it), and kube-proxy's sync in the chosen
/// language. Returns (source, line).
pub fn event_line(l: Lang, cluster: &Cluster, e: &EventKind) -> (String, String) {
    match e {
        EventKind::ProbeFailed {
            pod,
            probe,
            action,
            timed_out,
            run,
            threshold,
        } => {
            let kind = match probe {
                ProbeKind::Readiness => "Readiness",
                ProbeKind::Liveness => "Liveness",
                ProbeKind::Startup => "Startup",
            };
            let ip = cluster
                .pod(pod)
                .and_then(|p| p.ips.first().copied())
                .map(|i| i.to_string())
                .unwrap_or_default();
            // Named ports as the kubelet resolves them, against the Pod.
            let port = |p: &kpv_core::model::PortRef| {
                cluster
                    .pod(pod)
                    .and_then(|x| x.resolve_port(p, kpv_core::model::packet::Protocol::Tcp))
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| p.to_string())
            };
            // A down app does not answer: the kubelet's client gives up
            // after timeoutSeconds, in its own words per probe action.
            let secs = cluster
                .pod(pod)
                .and_then(|p| probe.of(p))
                .map_or(1, |p| p.timeout_seconds.max(1));
            let why = match (action, timed_out) {
                (ProbeAction::HttpGet { path, port: pr }, true) => format!(
                    "Get \"http://{ip}:{}{path}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                    port(pr)
                ),
                (ProbeAction::HttpGet { .. }, false) => {
                    "HTTP probe failed with statuscode: 503".to_string()
                }
                (ProbeAction::TcpSocket { port: pr }, true) => {
                    format!("dial tcp {ip}:{}: i/o timeout", port(pr))
                }
                (ProbeAction::TcpSocket { port: pr }, false) => {
                    format!("dial tcp {ip}:{}: connect: connection refused", port(pr))
                }
                (ProbeAction::Grpc { port }, true) => format!(
                    "timeout: failed to connect service \"{ip}:{port}\" within {secs}s: context deadline exceeded"
                ),
                (ProbeAction::Grpc { .. }, false) => {
                    "service unhealthy (responded with \"NOT_SERVING\")".into()
                }
                (ProbeAction::Exec { command }, true) => {
                    format!("command \"{}\" timed out", command.join(" "))
                }
                (ProbeAction::Exec { .. }, false) => "command exited with code 1".into(),
            };
            (
                format!("Warning Unhealthy pod/{} ({run}/{threshold})", pod.name),
                format!("{kind} probe failed: {why}"),
            )
        }
        EventKind::Restarted {
            pod,
            container,
            probe,
        } => (
            format!("Normal Killing pod/{}", pod.name),
            format!(
                "Container {container} failed {} probe, will be restarted",
                if *probe == ProbeKind::Startup {
                    "startup"
                } else {
                    "liveness"
                }
            ),
        ),
        EventKind::Ready {
            pod,
            ready,
            restarts,
        } => (
            "kubectl get pods --watch".into(),
            format!(
                "{}   {}   Running   {restarts}",
                pod.name,
                if *ready { "1/1" } else { "0/1" }
            ),
        ),
        EventKind::Endpoints { service, after, .. } => (
            "kubectl get endpoints --watch".into(),
            format!(
                "{}   {}",
                service.name,
                if after.is_empty() {
                    "<none>".to_string()
                } else {
                    after
                        .iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                }
            ),
        ),
        EventKind::ProxySynced { service, endpoints } => (
            "kube-proxy".into(),
            tr(l, "event.synced")
                .replace("{svc}", &service.to_string())
                .replace("{n}", &endpoints.to_string()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kpv_core::model::Mode;
    use kpv_core::net::controller::steady_slices;
    use kpv_core::net::trace::{trace, Sim};
    use kpv_core::session::replay;
    use kpv_core::util::choose::Chooser;

    /// Lower-case words of three or more ASCII letters outside names: English
    /// prose. Tokens with a dash, slash, dot, colon or digit are names
    /// (chains, objects, addresses) and stay as they are.
    fn english_words(s: &str) -> Vec<String> {
        s.split_whitespace()
            .filter(|tok| {
                !tok.chars()
                    .any(|c| "-/.:@_".contains(c) || c.is_ascii_digit())
            })
            .flat_map(|tok| tok.split(|c: char| !c.is_ascii_alphabetic()))
            .filter(|w| w.len() >= 3 && w.chars().all(|c| c.is_ascii_lowercase()))
            .map(str::to_string)
            .collect()
    }

    /// A chip's words fit the room kpv-core gives it (`Chip::chars`, in
    /// monospace columns; a Hangul syllable takes 1/0.62 of a column), in
    /// both languages, with the longest values a chip carries.
    #[test]
    fn chip_words_fit_the_room_kpv_core_gives_them() {
        use kpv_core::view::pipeline::Chip;
        let v4: std::net::SocketAddr = "255.255.255.255:65535".parse().unwrap();
        let v6: std::net::SocketAddr = "[fd00:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"
            .parse()
            .unwrap();
        let cert = kpv_core::model::NamespacedName {
            namespace: "default".into(),
            name: "testhost-tls".into(),
        };
        for a in [v4, v6] {
            let chips = [
                Chip::Dnat { to: a },
                Chip::Redirect { to: a },
                Chip::MarkMasq,
                Chip::Masquerade { to: a },
                Chip::Pick {
                    chosen: a,
                    among: 12,
                },
                Chip::Dial {
                    to: a,
                    answered: true,
                },
                Chip::Drop,
                Chip::Reject,
                Chip::Accept,
                Chip::Tls {
                    sni: "testhost.com".into(),
                    certificate: Some(cert.clone()),
                },
                Chip::Tls {
                    sni: "testhost.com".into(),
                    certificate: None,
                },
                Chip::Status { status: 503 },
                Chip::Dsr { service: a },
            ];
            for c in &chips {
                for l in Lang::ALL {
                    let text = chip_text(l, c);
                    let cols = crate::measure::drawn_width(&text, 1.0) / 0.62;
                    assert!(
                        cols <= c.chars() as f64 + 0.01,
                        "{l:?} {text:?}: {cols} columns, room for {}",
                        c.chars()
                    );
                }
            }
        }
    }

    #[test]
    fn korean_summaries_have_no_english_prose_in_any_mode() {
        let yaml = include_str!("../../tests/scenarios/loadbalancer-cluster.yaml");
        let (cluster, _) = kpv_core::Code::ALL.parse(yaml);
        let slices = steady_slices(&cluster);
        // Words that are names, not prose: object names, chain parts.
        let names: Vec<String> = cluster
            .pods
            .iter()
            .map(|p| p.id.name.clone())
            .chain(cluster.services.iter().map(|s| s.id.name.clone()))
            .chain(cluster.nodes.iter().map(|n| n.name.clone()))
            .collect();
        let allowed = |w: &str| {
            names.iter().any(|n| n.contains(w))
                || [
                    "default",
                    "tcp",
                    "http",
                    "nodeports",
                    "ips",
                    "services",
                    "masquerading",
                ]
                .contains(&w)
                || w.starts_with("endpoint")
                || w.starts_with("service")
                || w.starts_with("external")
                || w.starts_with("mark")
                || w.starts_with("filter")
                || w.starts_with("nat")
                || w.starts_with("firewall")
                || w.starts_with("check")
                || w.starts_with("prerouting")
                || w.starts_with("postrouting")
                || w.starts_with("forward")
                || w.starts_with("local")
                || w.starts_with("listener")
                || [
                    "eth",
                    "bpf",
                    "host",
                    "sock",
                    "lxc",
                    "select",
                    "conntrack",
                    "ipvs",
                    "dnat",
                    "masq",
                    "kube",
                    "proxy",
                    "goto",
                    "jump",
                    "tcp",
                    "udp",
                ]
                .contains(&w)
        };
        for mode in Mode::ALL {
            let sim = Sim::new(&cluster, &slices, mode, None, kpv_core::Code::ALL.compilers);
            for target in replay::targets(&cluster, kpv_core::Code::ALL.replay().http) {
                let origin = replay::default_origin(&cluster, &target);
                let t = trace(
                    &sim,
                    &replay::request(&target, origin, 0),
                    &mut Default::default(),
                    &mut Chooser::new(1),
                    0,
                );
                for h in &t.hops {
                    let ko = summary(Lang::Ko, h);
                    let bad: Vec<String> = english_words(&ko)
                        .into_iter()
                        .filter(|w| !allowed(w))
                        .collect();
                    assert!(bad.is_empty(), "{mode:?}: {ko:?} has {bad:?}");
                    assert_ne!(ko, summary(Lang::En, h), "{mode:?}: not translated: {ko}");
                }
            }
        }
    }

    #[test]
    fn short_names_keep_their_start_and_mark_the_cut() {
        assert_eq!(short("KUBE-SVC-XGLOHA7QRQ3V22RZ", 12), "KUBE-SVC-XG…");
        assert_eq!(short("KUBE-SEP", 12), "KUBE-SEP");
        assert_eq!(short("가나다라마", 3), "가나…");
        // (In English some words are their keys: "listener".)
        for k in DESCRIBED {
            assert_ne!(step_name(Lang::Ko, k), *k, "{k} is named in words");
        }
        assert_eq!(
            short_middle("alpaca-prod-7c6f65895c-8sqmn", 18),
            "alpaca-prod…-8sqmn"
        );
        assert_eq!(
            short_middle("alpaca-prod-7c6f65895c-8sqmn", 28),
            "alpaca-prod-7c6f65895c-8sqmn"
        );
        assert_eq!(short_middle("web-3", 4), "web…");
        assert_eq!(short_middle("averyveryverylongname", 8), "averyve…");
    }
}
