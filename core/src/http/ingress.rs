//! Ingress semantics for one request: the certificate by SNI among the
//! hosts under `spec.tls` (else the controller's own), ingress-nginx's
//! default 308 from HTTP to HTTPS for a TLS host, the host rules by the
//! Host header (exact, then a one-label wildcard, then rules without a
//! host), the paths longest first with Exact before Prefix at equal length,
//! then the defaultBackend, else the controller's 404. On an ingress-nginx
//! host with regular expressions, the paths are nginx's `~*` locations in
//! its order and a `rewrite-target` rewrites what goes upstream
//! ([`super::nginx_regex`]). Decides only; no text.

use super::matching::{implementation_specific_matches, ingress_host_matches, prefix_matches};
use super::objects::PathType;
use super::table::{HostEntry, IngressTable, RoutingTable};
use super::values::{
    BackendView, Compared, Decision, EntryPoint, Reason, Redirect, RouteRef, Scheme,
};

fn host_entry<'t>(t: &'t IngressTable, host: &str) -> Option<&'t HostEntry> {
    t.hosts.iter().find(|h| match &h.host {
        Some(rule) => ingress_host_matches(rule, host),
        None => true,
    })
}

pub(super) fn path_matches(path_type: PathType, rule: &str, path: &str) -> bool {
    match path_type {
        PathType::Exact => rule == path,
        PathType::Prefix => prefix_matches(rule, path),
        PathType::ImplementationSpecific => implementation_specific_matches(rule, path),
    }
}

pub(super) fn walk(
    table: &RoutingTable,
    t: &IngressTable,
    entry: &EntryPoint,
    read: &super::normalize::Read,
    view: &dyn BackendView,
) -> Decision {
    let req = &read.matched;
    let mut d = Decision::read(entry.clone(), read);
    if req.scheme == Scheme::Https {
        let name = req.sni.as_deref().unwrap_or(&req.host);
        let secret = t
            .hosts
            .iter()
            .filter(|h| {
                h.host
                    .as_deref()
                    .is_some_and(|x| ingress_host_matches(x, name))
            })
            .find_map(|h| h.tls_secret.clone());
        match secret {
            Some(s) if table.objects.secrets.get(&s) == Some(&true) => d.tls_certificate = Some(s),
            _ => d.default_certificate = true,
        }
    }
    let host = host_entry(t, &req.host);
    if let Some(h) = host {
        if req.scheme == Scheme::Http && h.ssl_redirect {
            let q = if req.query.is_empty() {
                String::new()
            } else {
                format!("?{}", req.query)
            };
            d.redirect = Some(Redirect {
                status: 308,
                location: format!(
                    "https://{}{}{q}",
                    super::url::host_in_url(&req.host),
                    req.path
                ),
            });
            return d.answer(308, Reason::HttpsRedirect);
        }
        for p in &h.paths {
            let matched = match &p.regex {
                Some(location) => location.matches(&req.path),
                None => path_matches(p.path_type, &p.path, &req.path),
            };
            let route = RouteRef {
                kind: "Ingress",
                name: p.ingress.clone(),
                rule: p.rule,
                index: p.index,
            };
            d.compared.push(Compared {
                route: route.clone(),
                matched,
            });
            if !matched {
                continue;
            }
            d.route = Some(route);
            if let Some(r) = p
                .regex
                .as_ref()
                .and_then(|l| l.rewrite(&req.path, &req.query))
            {
                d.filters.push(super::nginx_regex::REWRITE_TARGET);
                d.request.path = r.path;
                d.request.query = r.query;
            }
            return match &p.backend {
                Some(target) => d.send_to(view, target, (1, 1), p.service_upstream, Reason::Routed),
                None => d.answer(503, Reason::ServiceNotFound),
            };
        }
    }
    let default = host
        .and_then(|h| h.default_backend.as_ref())
        .or(t.default_backend.as_ref());
    match default {
        Some((_, target)) => d.send_to(view, target, (1, 1), false, Reason::DefaultBackend),
        None => d.answer(404, Reason::ControllerDefaultBackend),
    }
}
