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
    nginx_regex(rt, &mut out);
    out
}

/// ingress-nginx's regular expressions: an Ingress its admission webhook
/// denies (an error: it is not created), a location nginx cannot load (an
/// error: the controller's reload fails) or kpv cannot read, and the parts
/// of a rewrite target kpv does not expand.
fn nginx_regex(rt: &RoutingTable, out: &mut Vec<crate::util::diag::Diagnostic>) {
    use crate::util::diag::Diagnostic;
    use crate::util::regex::Problem;
    for t in rt.tables.values() {
        let Table::Ingress(t) = t else { continue };
        for denied in &t.denied {
            for (rule, index, path, ty) in &denied.paths {
                let mut d = Diagnostic::error(format!(
                    "ingress-nginx's admission webhook denies this Ingress: {} (strict-validate-path-type is on by default)",
                    super::render::denied_path_text(path, *ty)
                ))
                .with_hint("a regular expression needs pathType: ImplementationSpecific");
                d.object = Some(format!("Ingress/{}", denied.ingress));
                d.field = Some(format!("spec.rules[{rule}].http.paths[{index}].path"));
                out.push(d);
            }
        }
        for h in t.hosts.iter().filter(|h| h.regex_by.is_some()) {
            for p in &h.paths {
                let field = format!("spec.rules[{}].http.paths[{}].path", p.rule, p.index);
                let mut d = match p.regex.as_ref().map(|l| &l.matcher) {
                    None | Some(Ok(_)) => continue,
                    Some(Err(e)) => match e.problem {
                        Problem::Invalid(_) => Diagnostic::error(format!(
                            "nginx cannot load `location ~* \"^{}\"`: {e}; the controller's reload fails",
                            p.path
                        )),
                        _ => Diagnostic::warning(format!(
                            "kpv cannot read the regular expression `{}`: {e}; in kpv it matches nothing",
                            p.path
                        )),
                    },
                };
                d.object = Some(format!("Ingress/{}", p.ingress));
                d.field = Some(field);
                out.push(d);
            }
            for p in &h.paths {
                let Some(target) = &p.rewrite else { continue };
                let vars = super::nginx_regex::variables(target);
                let absolute = target.starts_with("http://") || target.starts_with("https://");
                if vars.is_empty() && !absolute {
                    continue;
                }
                let what = if absolute {
                    "nginx answers a rewrite to an absolute URL with a 302 redirect; kpv forwards the rewritten text as the path".to_string()
                } else {
                    format!(
                        "kpv does not expand nginx variables ({}); it forwards them as written",
                        vars.iter()
                            .map(|v| format!("${v}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let mut d = Diagnostic::warning(format!("rewrite-target `{target}`: {what}"));
                d.object = Some(format!("Ingress/{}", p.ingress));
                d.field = Some("metadata.annotations".into());
                if !out.contains(&d) {
                    out.push(d);
                }
            }
        }
    }
}

/// The ingress-nginx annotations kpv reads (`service-upstream`,
/// `ssl-redirect`, `use-regex`, `rewrite-target`); any other of its
/// annotations on an Ingress it serves is named as not modelled.
const NGINX_PREFIX: &str = "nginx.ingress.kubernetes.io/";
const NGINX_MODELLED: [&str; 4] = [
    "service-upstream",
    "ssl-redirect",
    super::nginx_regex::USE_REGEX,
    super::nginx_regex::REWRITE_TARGET,
];

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
        for (key, _) in ing.meta.annotations.iter() {
            let Some(name) = key.strip_prefix(NGINX_PREFIX) else {
                continue;
            };
            if NGINX_MODELLED.contains(&name) {
                continue;
            }
            let mut d = crate::util::diag::Diagnostic::warning(format!(
                "annotation {key} is not modelled: kpv routes as if it were absent"
            ));
            d.object = Some(format!("Ingress/{}", ing.meta.id));
            d.field = Some("metadata.annotations".into());
            out.push(d);
        }
    }
}
