//! The routing table's status, as `kpv check` reports it: the conditions
//! a controller would write that say something is wrong, as located
//! warnings. Reads a compiled table; decides nothing.

use super::status::supported_kinds;
use super::table::{RoutingTable, Table};

/// The status conditions a controller would write, as warnings: a
/// parentRef not Accepted, a backendRef not resolved, an HTTPS listener
/// whose certificate does not resolve. Object and field are given (the
/// parentRef, the first backendRef that does not resolve, the listener);
/// [`crate::model::locate_diagnostics`] turns them into positions.
pub fn diagnostics(rt: &RoutingTable) -> Vec<crate::util::diag::Diagnostic> {
    use crate::util::diag::Diagnostic;
    let mut out = Vec::new();
    for s in &rt.route_status {
        for c in s.conditions.iter().filter(|c| c.status == "False") {
            let mut d = Diagnostic::warning(format!(
                "{}: False ({}) for parent {}{}",
                c.kind,
                c.reason,
                s.gateway,
                s.section
                    .as_ref()
                    .map(|x| format!(" section {x}"))
                    .unwrap_or_default()
            ));
            d.object = Some(format!("HTTPRoute/{}", s.route));
            d.field = Some(match (c.kind, &s.unresolved) {
                ("Accepted", _) | (_, None) => format!("spec.parentRefs[{}]", s.parent_index),
                (_, Some(field)) => field.clone(),
            });
            out.push(d);
        }
    }
    for t in rt.tables.values() {
        if let Table::Gateway(g) = t {
            for c in g.conditions.iter().filter(|c| c.status == "False") {
                let (why, field) = match c.reason {
                    "InvalidParameters" => (
                        "the controller has no such parameters object, so it does not program this Gateway",
                        "spec.infrastructure.parametersRef",
                    ),
                    "UnsupportedAddress" => (
                        "the controller takes only IPAddress addresses",
                        "spec.addresses",
                    ),
                    "AddressNotUsable" => (
                        "the controller cannot give this address (kpv's load balancers take theirs from 203.0.113.0/24, unused)",
                        "spec.addresses",
                    ),
                    _ => continue,
                };
                let mut d = Diagnostic::warning(format!("{}: False ({}): {why}", c.kind, c.reason));
                d.object = Some(format!("Gateway/{}", g.gateway));
                d.field = Some(field.into());
                out.push(d);
            }
            for (i, l) in g.listeners.iter().enumerate() {
                let conflict = l
                    .status
                    .conditions
                    .iter()
                    .find(|c| c.kind == "Conflicted" && c.status == "True")
                    .map(|c| c.reason);
                if let Some(reason) = conflict {
                    let why = if reason == "ProtocolConflict" {
                        "another listener on the same port speaks a protocol that cannot share it (HTTP beside HTTPS)"
                    } else {
                        "another listener has the same port, protocol and hostname"
                    };
                    let mut d = Diagnostic::warning(format!(
                        "listener `{}`: Conflicted True ({reason}): {why}; neither is programmed",
                        l.listener.name
                    ));
                    d.object = Some(format!("Gateway/{}", g.gateway));
                    d.field = Some(format!("spec.listeners[{i}]"));
                    out.push(d);
                }
                let not_accepted = l
                    .status
                    .conditions
                    .iter()
                    .any(|c| c.kind == "Accepted" && c.status == "False");
                if not_accepted {
                    let mut d = Diagnostic::warning(format!(
                        "listener `{}`: Accepted False (UnsupportedProtocol): the Gateway API defines HTTP, HTTPS, TLS, TCP and UDP",
                        l.listener.name
                    ));
                    d.object = Some(format!("Gateway/{}", g.gateway));
                    d.field = Some(format!("spec.listeners[{i}].protocol"));
                    out.push(d);
                }
                if l.certificate_problem.is_none() && supported_kinds(&l.listener).1 {
                    let mut d = Diagnostic::warning(format!(
                        "listener `{}`: ResolvedRefs False (InvalidRouteKinds): allowedRoutes.kinds names a kind its protocol does not carry; supported: {}",
                        l.listener.name,
                        if l.status.supported_kinds.is_empty() {
                            "none".to_string()
                        } else {
                            l.status.supported_kinds.join(", ")
                        }
                    ));
                    d.object = Some(format!("Gateway/{}", g.gateway));
                    d.field = Some(format!("spec.listeners[{i}].allowedRoutes.kinds"));
                    out.push(d);
                }
                if let Some(reason) = l.certificate_problem {
                    let mut d = Diagnostic::warning(format!(
                        "listener `{}`: ResolvedRefs False ({reason}); HTTPS on it fails the handshake",
                        l.listener.name
                    ));
                    d.object = Some(format!("Gateway/{}", g.gateway));
                    d.field = Some(format!("spec.listeners[{i}].tls.certificateRefs"));
                    out.push(d);
                }
            }
        }
    }
    let defaults = rt
        .objects
        .ingress_classes
        .iter()
        .filter(|c| c.is_default)
        .count();
    if let (true, Some(chosen)) = (
        defaults > 1,
        super::table::default_ingress_class(&rt.objects),
    ) {
        let mut d = Diagnostic::warning(format!(
            "{defaults} IngressClasses are marked default: the DefaultIngressClass admission plugin gives an Ingress without a class the newest, `{}`",
            chosen.name()
        ))
        .with_hint("mark only one IngressClass with ingressclass.kubernetes.io/is-default-class: \"true\"");
        d.object = Some(format!("IngressClass/{}", chosen.name()));
        out.push(d);
    }
    nginx_annotations(rt, &mut out);
    out
}

/// The ingress-nginx annotations kpv reads (`service-upstream`,
/// `ssl-redirect`); any other of its annotations on an Ingress it serves
/// is named as not modelled, with what the controller would do for the two
/// that change routing most.
const NGINX_PREFIX: &str = "nginx.ingress.kubernetes.io/";
const NGINX_MODELLED: [&str; 2] = ["service-upstream", "ssl-redirect"];

fn nginx_annotations(rt: &RoutingTable, out: &mut Vec<crate::util::diag::Diagnostic>) {
    use super::table::{ingress_class_of, Implementation};
    for ing in &rt.objects.ingresses {
        let served_by_nginx = ingress_class_of(&rt.objects, ing)
            .and_then(|c| rt.tables.get(&super::EntryPoint::IngressClass(c)))
            .is_some_and(|t| {
                matches!(t, Table::Ingress(i) if i.served && i.implementation == Implementation::IngressNginx)
            });
        if !served_by_nginx {
            continue;
        }
        for (key, value) in ing.meta.annotations.iter() {
            let Some(name) = key.strip_prefix(NGINX_PREFIX) else {
                continue;
            };
            if NGINX_MODELLED.contains(&name) {
                continue;
            }
            let what = match name {
                "rewrite-target" => format!(
                    "ingress-nginx would rewrite the path it forwards to `{value}` (capture groups of the path's regular expression) and match every path of the host as a regular expression; kpv forwards the path as sent and matches by pathType"
                ),
                "use-regex" => "ingress-nginx would match every path of this host as a case-insensitive regular expression; kpv matches by pathType".to_string(),
                _ => "kpv routes as if it were absent".to_string(),
            };
            let mut d = crate::util::diag::Diagnostic::warning(format!(
                "annotation {key} is not modelled: {what}"
            ));
            d.object = Some(format!("Ingress/{}", ing.meta.id));
            d.field = Some("metadata.annotations".into());
            out.push(d);
        }
    }
}
