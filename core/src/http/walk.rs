//! One HTTP request through one entry point's routing table: the decision
//! (status, listener, certificate, route/rule/match, filters, backend) and
//! every rule compared on the way, as typed values. The Ingress and Gateway
//! API halves are in [`super::ingress`] and [`super::gateway`]; this file
//! holds the request, the decision and what both share (headers, backends,
//! the forwarded-for headers). Pure: weighted picks use the caller's
//! seeded chooser; endpoint readiness comes from a [`BackendView`].

use super::table::{Implementation, RoutingTable, ServiceTarget, Table};
pub use super::values::{
    BackendView, ChosenBackend, Compared, Decision, EntryPoint, ForwardedRequest, Headers,
    HttpRequest, Mirror, Reason, Redirect, RouteRef, Scheme,
};
use crate::util::choose::Chooser;
use std::net::IpAddr;

/// The request's headers as the backend gets them (names lower case,
/// repeats comma-joined).
pub fn header_map(headers: &[(String, String)]) -> Headers {
    let mut out = Headers::new();
    for (k, v) in headers {
        let k = k.to_ascii_lowercase();
        if k == "host" {
            continue;
        }
        match out.get_mut(&k) {
            Some(x) => {
                x.push(',');
                x.push_str(v);
            }
            None => {
                out.insert(k, v.clone());
            }
        }
    }
    out
}

impl Decision {
    /// The decision on a request as its proxy `read` it: unless a filter
    /// rewrites it, the backend gets the path the proxy forwards.
    pub(super) fn read(entry: EntryPoint, read: &super::normalize::Read) -> Decision {
        let mut d = Decision::new(entry, &read.matched);
        if read.matched.path != read.client_path {
            d.matched_path = Some(read.matched.path.clone());
        }
        d.request.path = read.forwarded_path.clone();
        d
    }

    pub(super) fn new(entry: EntryPoint, req: &HttpRequest) -> Decision {
        Decision {
            entry,
            status: None,
            reason: Reason::NoMatchingRoute,
            listener: None,
            tls_certificate: None,
            default_certificate: false,
            route: None,
            redirect: None,
            backend: None,
            filters: Vec::new(),
            mirrors: Vec::new(),
            request: ForwardedRequest {
                method: req.method.clone(),
                host: req.host_header(),
                path: req.path.clone(),
                query: req.query.clone(),
                headers: header_map(&req.headers),
            },
            response_modifiers: Vec::new(),
            compared: Vec::new(),
            matched_path: None,
        }
    }

    /// The headers the client gets: the redirect's `location`, or the
    /// backend's reply headers through the ResponseHeaderModifier filters.
    pub fn response_headers(&self, backend: &[(String, String)]) -> Headers {
        if let Some(r) = &self.redirect {
            return Headers::from([("location".to_string(), r.location.clone())]);
        }
        if self.status != Some(200) {
            return Headers::new();
        }
        // A preflight answered by the proxy carries only the CORS headers.
        let mut h = if self.reason == Reason::CorsPreflight {
            Headers::new()
        } else {
            header_map(backend)
        };
        for m in &self.response_modifiers {
            super::gateway::modify(&mut h, m);
        }
        h
    }

    /// End with `status` and `reason`.
    pub(super) fn answer(mut self, status: u16, reason: Reason) -> Decision {
        self.status = Some(status);
        self.reason = reason;
        self
    }

    /// Send to a Service port: 503 without ready endpoints (and, for an
    /// Ingress, without the Service or port, as ingress-nginx answers).
    pub(super) fn send_to(
        mut self,
        view: &dyn BackendView,
        target: &ServiceTarget,
        weights: (u32, u32),
        via_cluster_ip: bool,
        reason: Reason,
    ) -> Decision {
        let Some(port) = view.service_port(&target.service, &target.port) else {
            return self.answer(503, Reason::ServiceNotFound);
        };
        self.backend = Some(ChosenBackend {
            service: target.service.clone(),
            port,
            weight: weights.0,
            total_weight: weights.1,
            via_cluster_ip,
        });
        if view.ready_endpoints(&target.service, port) == 0 {
            return self.answer(503, Reason::NoReadyEndpoints);
        }
        self.answer(200, reason)
    }
}

/// The forwarded-for headers the proxy adds, from the address it saw the
/// connection come from: ingress-nginx (without `use-forwarded-headers`)
/// sets `X-Forwarded-For` and `X-Real-IP` to it; Envoy appends it to
/// `X-Forwarded-For`. Both set `X-Forwarded-Proto`.
pub fn add_forwarded(d: &mut Decision, imp: &Implementation, peer: IpAddr, scheme: Scheme) {
    let h = &mut d.request.headers;
    match imp {
        Implementation::IngressNginx | Implementation::Other(_) => {
            h.insert("x-forwarded-for".into(), peer.to_string());
            h.insert("x-real-ip".into(), peer.to_string());
        }
        Implementation::EnvoyGateway => {
            let v = match h.get("x-forwarded-for") {
                Some(x) => format!("{x},{peer}"),
                None => peer.to_string(),
            };
            h.insert("x-forwarded-for".into(), v);
        }
    }
    h.insert("x-forwarded-proto".into(), scheme.as_str().into());
}

/// Decide where `req` goes through `entry`'s table.
pub fn walk(
    table: &RoutingTable,
    entry: &EntryPoint,
    req: &HttpRequest,
    view: &dyn BackendView,
    chooser: &mut Chooser,
) -> Option<Decision> {
    use super::normalize::read;
    let t = table.tables.get(entry)?;
    let imp = match t {
        Table::Ingress(t) => &t.implementation,
        Table::Gateway(t) => &t.implementation,
    };
    let Some(read) = read(imp, req) else {
        return Some(Decision::new(entry.clone(), req).answer(400, Reason::BadRequest));
    };
    Some(match t {
        Table::Ingress(t) => super::ingress::walk(table, t, entry, &read, view),
        Table::Gateway(t) => super::gateway::walk(table, t, entry, &read, view, chooser),
    })
}
