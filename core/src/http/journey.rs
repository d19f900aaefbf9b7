//! An HTTP request's whole journey, built from [`crate::net::trace`]'s stages:
//! the client's connection to the entry point's address (DNS for the host,
//! the cloud load balancer, a NodePort, kube-proxy's rules in any mode) up
//! to the controller's proxy Pod; there TLS ends and the routing decision
//! is made ([`super::walk`]); then a **new** connection from the proxy
//! Pod's IP straight to an endpoint Pod's IP and target port (or, with
//! ingress-nginx `service-upstream` / Envoy Gateway Service routing, to
//! the ClusterIP and through kube-proxy again); then the reply. Hops are
//! typed values; words are the renderers'.

use super::proxies::ProxyWorkload;
use super::table::{EntryPoint, RoutingTable};
use super::values::ChosenBackend;
use super::walk::{add_forwarded, walk, BackendView, Decision, HttpRequest};
use crate::model::packet::{Packet, Protocol};
use crate::model::{Cluster, EndpointSlice, NamespacedName, PortRef};
use crate::net::trace::Place;
use crate::net::trace::{
    self, Dest, Hop, HopKind, Origin, Outcome, Request, Sim, Trace, WorldState,
};
use crate::util::choose::Chooser;
use serde::Serialize;
use std::net::{IpAddr, SocketAddr};

/// What the proxy does, as a hop of the journey.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ProxyStep {
    /// TLS ends at the proxy with this certificate (`None`: the
    /// controller's own default certificate).
    TlsTerminate {
        sni: String,
        certificate: Option<NamespacedName>,
    },
    /// The routing decision (its details are the journey's `decision`).
    Route { status: Option<u16> },
    /// The proxy opens a new connection to the backend.
    Connect {
        from: SocketAddr,
        to: SocketAddr,
        via_cluster_ip: bool,
    },
    /// The proxy answers the client itself (redirect, 404, 421, 500, 503).
    Respond { status: u16 },
}

/// One hop: the network's (as `kpv trace` prints them) or the proxy's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)]
pub enum JourneyHop {
    Net(Hop),
    Proxy { place: Place, step: ProxyStep },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Journey {
    pub entry: EntryPoint,
    pub proxy: ProxyWorkload,
    /// The proxy Pod that took the connection.
    pub proxy_pod: Option<NamespacedName>,
    /// The address the proxy saw the client connection come from.
    pub peer: Option<IpAddr>,
    /// `None` when the connection never reached a proxy Pod.
    pub decision: Option<Decision>,
    /// The client's connection (its reply hop is at the journey's end).
    pub to_proxy: Trace,
    /// The proxy's new connection to the backend.
    pub to_backend: Option<Trace>,
    /// The Pod that served the request.
    pub pod: Option<NamespacedName>,
    /// The address the backend Pod saw the proxy's connection come from.
    pub backend_peer: Option<SocketAddr>,
    pub hops: Vec<JourneyHop>,
}

/// Services and their ready endpoints, from the cluster and its slices.
pub struct ClusterBackends<'a> {
    pub cluster: &'a Cluster,
    pub slices: &'a [EndpointSlice],
}

impl ClusterBackends<'_> {
    fn port_name(&self, svc: &NamespacedName, port: u16) -> Option<String> {
        let s = self.cluster.service(svc)?;
        s.ports
            .iter()
            .find(|p| p.port == port)
            .map(|p| p.name.clone())
    }

    /// Ready endpoint addresses (IP and port) of a Service port, sorted.
    pub fn endpoints(&self, svc: &NamespacedName, port: u16) -> Vec<SocketAddr> {
        let Some(name) = self.port_name(svc, port) else {
            return Vec::new();
        };
        let mut out: Vec<SocketAddr> = self
            .slices
            .iter()
            .filter(|sl| sl.id.namespace == svc.namespace && sl.service_name == svc.name)
            .flat_map(|sl| {
                let p = sl.ports.iter().find(|p| p.name == name).map(|p| p.port);
                sl.endpoints
                    .iter()
                    .filter(|e| e.ready)
                    .filter_map(move |e| Some(SocketAddr::new(*e.addresses.first()?, p?)))
            })
            .collect();
        crate::util::order::sort(&mut out);
        out.dedup();
        out
    }
}

impl BackendView for ClusterBackends<'_> {
    fn service_port(&self, service: &NamespacedName, port: &PortRef) -> Option<u16> {
        let s = self.cluster.service(service)?;
        s.ports
            .iter()
            .find(|p| match port {
                PortRef::Number(n) => p.port == *n,
                PortRef::Name(n) => p.name == *n,
            })
            .map(|p| p.port)
    }

    fn ready_endpoints(&self, service: &NamespacedName, port: u16) -> usize {
        self.endpoints(service, port).len()
    }
}

/// Where the request starts and its seed.
pub struct Start {
    pub origin: Origin,
    pub seed: u64,
}

/// Trace one HTTP request through `proxy` (whose Service is in
/// `cluster`; `sim` compiled from it).
pub fn journey(
    sim: &Sim<'_>,
    slices: &[EndpointSlice],
    rt: &RoutingTable,
    proxy: &ProxyWorkload,
    req: &HttpRequest,
    start: &Start,
) -> Journey {
    let cluster = sim.cluster;
    let mut net = Net {
        sim,
        state: WorldState::default(),
        chooser: Chooser::new(start.seed),
    };
    let mut out = Journey {
        entry: proxy.entry.clone(),
        proxy: proxy.clone(),
        proxy_pod: None,
        peer: None,
        decision: None,
        to_proxy: empty_trace(sim, start),
        to_backend: None,
        pod: None,
        backend_peer: None,
        hops: Vec::new(),
    };
    let Some((addr, port)) = entry_address(cluster, proxy, req, &start.origin) else {
        return out;
    };
    let mut t1 = net.connect(start.origin.clone(), addr, port, 40000);
    if req.authority.parse::<IpAddr>().is_err() {
        dns_first(&mut t1, &req.authority, addr, port);
    }
    let reply = match t1.hops.last() {
        Some(h) if matches!(h.what, HopKind::Reply { .. }) => t1.hops.pop(),
        _ => None,
    };
    out.hops
        .extend(t1.hops.iter().cloned().map(JourneyHop::Net));
    let (pod, seen) = match &t1.outcome {
        Outcome::Delivered {
            pod: Some(pod),
            source,
            ..
        } if proxy.pods.contains(pod) => (pod.clone(), *source),
        _ => {
            out.to_proxy = t1;
            return out;
        }
    };
    out.proxy_pod = Some(pod.clone());
    out.peer = Some(seen.ip());
    let place = Place::Pod(pod.clone());
    if req.scheme == super::walk::Scheme::Https {
        // Filled in from the decision below (the certificate is chosen by SNI).
        out.hops.push(JourneyHop::Proxy {
            place: place.clone(),
            step: ProxyStep::TlsTerminate {
                sni: req.sni.clone().unwrap_or_else(|| req.host.clone()),
                certificate: None,
            },
        });
    }
    let view = ClusterBackends { cluster, slices };
    let Some(mut d) = walk(rt, &proxy.entry, req, &view, &mut net.chooser) else {
        out.to_proxy = t1;
        return out;
    };
    add_forwarded(&mut d, &proxy.implementation, seen.ip(), req.scheme);
    settle_tls(&mut out.hops, &d);
    out.hops.push(JourneyHop::Proxy {
        place: place.clone(),
        step: ProxyStep::Route { status: d.status },
    });
    let proxy_ip = cluster.pod(&pod).and_then(|p| p.ips.first().copied());
    let backend = d.backend.clone().filter(|_| d.status == Some(200));
    match (backend, proxy_ip) {
        (Some(b), Some(from_ip)) => {
            net.backend_leg(&mut out, &view, &b, &pod, from_ip);
        }
        _ => {
            if let Some(status) = d.status {
                out.hops.push(JourneyHop::Proxy {
                    place,
                    step: ProxyStep::Respond { status },
                });
            }
        }
    }
    if d.status.is_some() {
        out.hops.extend(reply.map(JourneyHop::Net));
    }
    out.decision = Some(d);
    out.to_proxy = t1;
    out
}

/// Where the client connects: the load balancer's address; without one, a
/// client outside uses a node's NodePort, one inside the ClusterIP.
fn entry_address(
    cluster: &Cluster,
    proxy: &ProxyWorkload,
    req: &HttpRequest,
    origin: &Origin,
) -> Option<(IpAddr, u16)> {
    let svc = cluster.service(&proxy.service);
    let node_port = svc
        .and_then(|s| s.ports.iter().find(|p| p.port == req.port))
        .and_then(|p| p.node_port)
        .zip(
            cluster
                .nodes
                .first()
                .and_then(|n| n.primary_ip(crate::model::packet::IpFamily::V4)),
        );
    match (proxy.address, origin, node_port) {
        (Some(lb), _, _) => Some((lb, req.port)),
        (None, Origin::External { .. }, Some((np, ip))) => Some((ip, np)),
        _ => svc
            .and_then(|s| s.cluster_ips.first().copied())
            .map(|ip| (ip, req.port)),
    }
}

/// The host's DNS record points at the entry point's address: a DNS hop
/// before the client's first packet.
fn dns_first(t1: &mut Trace, name: &str, addr: IpAddr, port: u16) {
    let p = t1.hops.first().map_or(
        Packet::new(
            SocketAddr::new(addr, 40000),
            SocketAddr::new(addr, port),
            Protocol::Tcp,
        ),
        |h| h.before,
    );
    t1.hops.insert(
        0,
        Hop {
            place: t1.hops.first().map_or(Place::Client, |h| h.place.clone()),
            what: HopKind::Dns {
                name: name.to_string(),
                answer: addr,
            },
            before: p,
            after: p,
            step: None,
            node: None,
        },
    );
}

/// The TLS hop takes the certificate the decision chose by SNI, or goes
/// when the handshake itself failed (no TLS ended here).
fn settle_tls(hops: &mut Vec<JourneyHop>, d: &Decision) {
    if d.reason == super::walk::Reason::TlsHandshakeFailed {
        if let Some(JourneyHop::Proxy {
            step: ProxyStep::TlsTerminate { .. },
            ..
        }) = hops.last()
        {
            hops.pop();
        }
    }
    if let Some(JourneyHop::Proxy {
        step: ProxyStep::TlsTerminate { certificate, .. },
        ..
    }) = hops.last_mut()
    {
        *certificate = d.tls_certificate.clone();
    }
}

/// The network a journey's connections cross, with the state and the
/// random choices they share.
struct Net<'s, 'c> {
    sim: &'s Sim<'c>,
    state: WorldState,
    chooser: Chooser,
}

impl Net<'_, '_> {
    fn connect(&mut self, origin: Origin, addr: IpAddr, port: u16, src_port: u16) -> Trace {
        let req = Request {
            origin,
            dst: Dest::Ip(addr),
            port,
            protocol: Protocol::Tcp,
            src_port,
            keep_open: false,
        };
        trace::trace(self.sim, &req, &mut self.state, &mut self.chooser, 0)
    }

    /// The proxy Pod's new connection to the backend: an endpoint Pod's
    /// address, or the Service's ClusterIP when the proxy routes to it.
    fn backend_leg(
        &mut self,
        out: &mut Journey,
        view: &ClusterBackends<'_>,
        b: &ChosenBackend,
        pod: &NamespacedName,
        from_ip: IpAddr,
    ) {
        let svc = view.cluster.service(&b.service);
        let cluster_ip = svc.and_then(|s| s.cluster_ips.first().copied());
        let to = match (b.via_cluster_ip, cluster_ip) {
            (true, Some(ip)) => Some(SocketAddr::new(ip, b.port)),
            _ => {
                let eps = view.endpoints(&b.service, b.port);
                (!eps.is_empty()).then(|| eps[self.chooser.below(eps.len())])
            }
        };
        let Some(to) = to else { return };
        let from = SocketAddr::new(from_ip, 50000);
        out.hops.push(JourneyHop::Proxy {
            place: Place::Pod(pod.clone()),
            step: ProxyStep::Connect {
                from,
                to,
                via_cluster_ip: b.via_cluster_ip && cluster_ip.is_some(),
            },
        });
        let origin = Origin::Pod { pod: pod.clone() };
        let t2 = self.connect(origin, to.ip(), to.port(), 50000);
        if let Outcome::Delivered {
            pod: served,
            source,
            ..
        } = &t2.outcome
        {
            out.pod = served.clone();
            out.backend_peer = Some(*source);
        }
        out.hops
            .extend(t2.hops.iter().cloned().map(JourneyHop::Net));
        out.to_backend = Some(t2);
    }
}

fn empty_trace(sim: &Sim<'_>, start: &Start) -> Trace {
    Trace::new(
        Request {
            origin: start.origin.clone(),
            dst: Dest::Name(String::new()),
            port: 0,
            protocol: Protocol::Tcp,
            src_port: 40000,
            keep_open: false,
        },
        sim.mode,
    )
}
