//! CoreDNS's answers for the cluster's zone, as its `kubernetes` plugin
//! gives them with the Corefile kubeadm installs (`pods insecure`,
//! `fallthrough in-addr.arpa ip6.arpa`, `ttl 30`): first what a name
//! denotes (the plugin's service entries), then the records of the type
//! asked, with NXDOMAIN for a name that does not exist and NOERROR without
//! records (NODATA) for one that exists with no record of that type.
//! Checked against the plugin's own table (`core/tests/dns_coredns.rs`).

use super::name::{self, Name};
use super::{CLUSTER_DOMAIN, TTL};
use crate::model::{Cluster, EndpointSlice, NamespacedName, ServiceType};
use std::net::IpAddr;

/// One entry the plugin finds for a name: an address (or, for an
/// ExternalName Service, a name) with a port, and the name an SRV record
/// points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub host: Host,
    /// `None` for an endpoint of a slice without ports and for Pod names.
    pub port: Option<u16>,
    /// `svc.ns.svc.<zone>.` for a ClusterIP, `label.svc.ns.svc.<zone>.`
    /// for an endpoint.
    pub target: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Host {
    Ip(IpAddr),
    /// An ExternalName Service's `externalName`, with a final dot.
    Name(String),
    /// A reverse name's answer: the name the address has.
    Ptr(String),
}

/// What the plugin finds for a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// NXDOMAIN: the name does not exist.
    NoName,
    /// The name exists; these are its entries (none: NODATA).
    Entries(Vec<Entry>),
    /// Not the plugin's: handed on to the upstream resolver (a name outside
    /// the zone, or a reverse name of an address it does not know).
    Upstream,
}

/// kubeadm's `clusterDNS` (the tenth address of its default service CIDR),
/// used when the input has no `kube-system/kube-dns` Service.
pub const DEFAULT_CLUSTER_DNS: &str = "10.96.0.10";

/// The cluster DNS Service's ClusterIPs (`kube-system/kube-dns`), else
/// kubeadm's default.
pub fn cluster_dns_ips(cluster: &Cluster) -> Vec<IpAddr> {
    let id = NamespacedName::new("kube-system", "kube-dns");
    match cluster.service(&id) {
        Some(s) if !s.cluster_ips.is_empty() => s.cluster_ips.clone(),
        _ => DEFAULT_CLUSTER_DNS.parse().into_iter().collect(),
    }
}

/// Whether a namespace exists: a Namespace object, any object in it, or
/// one every cluster has.
pub fn namespace_exists(cluster: &Cluster, ns: &str) -> bool {
    ["default", "kube-system", "kube-public", "kube-node-lease"].contains(&ns)
        || cluster.routing.namespaces.get(&ns.to_string()).is_some()
        || cluster.services.iter().any(|s| s.id.namespace == ns)
        || cluster.pods.iter().any(|p| p.id.namespace == ns)
}

/// The entries for `qname` (see the module's comment).
pub fn find(cluster: &Cluster, slices: &[EndpointSlice], qname: &str) -> Found {
    match name::parse(qname) {
        Name::Outside => Found::Upstream,
        Name::Version | Name::Empty => Found::Entries(Vec::new()),
        Name::Invalid => Found::NoName,
        Name::Namespace(ns) => exists(namespace_exists(cluster, &ns), Vec::new()),
        Name::Pod { namespace, dashed } => {
            if !namespace_exists(cluster, &namespace) {
                return Found::NoName;
            }
            match name::pod_address(&dashed) {
                Some(ip) => Found::Entries(vec![Entry {
                    host: Host::Ip(ip),
                    port: None,
                    target: format!("{dashed}.{namespace}.pod.{CLUSTER_DOMAIN}."),
                }]),
                None => Found::NoName,
            }
        }
        Name::Service {
            namespace,
            service,
            endpoint,
            port,
            protocol,
        } => {
            if !namespace_exists(cluster, &namespace) {
                return Found::NoName;
            }
            let id = crate::model::NamespacedName::new(namespace, service);
            let Some(svc) = cluster.service(&id) else {
                return Found::NoName;
            };
            let fqdn = name::service_fqdn(&id.namespace, &id.name);
            let wants = |pname: &str, pproto: &str| {
                let ok = |want: &Option<String>, have: &str| {
                    want.as_deref()
                        .is_none_or(|w| w == "*" || w == "any" || w.eq_ignore_ascii_case(have))
                };
                ok(&port, pname) && ok(&protocol, pproto)
            };
            let mut out = Vec::new();
            if svc.service_type == ServiceType::ExternalName {
                // No endpoints and no `_port._protocol` names.
                if endpoint.is_some() || port.is_some() || protocol.is_some() {
                    return Found::NoName;
                }
                let Some(target) = &svc.external_name else {
                    return Found::NoName;
                };
                out.push(Entry {
                    host: Host::Name(format!("{}.", target.trim_end_matches('.'))),
                    port: Some(0),
                    target: fqdn,
                });
            } else if svc.headless || endpoint.is_some() {
                for s in slices
                    .iter()
                    .filter(|s| s.id.namespace == id.namespace && s.service_name == id.name)
                {
                    for e in s
                        .endpoints
                        .iter()
                        .filter(|e| e.ready || svc.publish_not_ready_addresses)
                    {
                        for ip in &e.addresses {
                            let label = name::endpoint_label(e.hostname.as_deref(), *ip);
                            if endpoint.as_deref().is_some_and(|want| want != label) {
                                continue;
                            }
                            // A slice without ports still names its
                            // endpoints (port unknown, no SRV record).
                            for i in 0..s.ports.len().max(1) {
                                let p = s.ports.get(i);
                                let (pname, pproto) = p
                                    .map_or(("", ""), |p| (p.name.as_str(), p.protocol.as_lower()));
                                if wants(pname, pproto) {
                                    out.push(Entry {
                                        host: Host::Ip(*ip),
                                        port: p.map(|p| p.port),
                                        target: format!("{label}.{fqdn}"),
                                    });
                                }
                            }
                        }
                    }
                }
            } else {
                for p in &svc.ports {
                    if !wants(&p.name, p.protocol.as_lower()) {
                        continue;
                    }
                    for ip in &svc.cluster_ips {
                        out.push(Entry {
                            host: Host::Ip(*ip),
                            port: Some(p.port),
                            target: fqdn.clone(),
                        });
                    }
                }
            }
            // No entry at all: the name does not exist.
            exists(!out.is_empty(), out)
        }
    }
}

fn exists(yes: bool, entries: Vec<Entry>) -> Found {
    if yes {
        Found::Entries(entries)
    } else {
        Found::NoName
    }
}

/// The PTR entries of an address: the Service whose ClusterIP it is, else
/// every endpoint with it (under its Service); none: handed upstream.
fn find_reverse(cluster: &Cluster, slices: &[EndpointSlice], ip: IpAddr) -> Found {
    let names = reverse(cluster, slices, ip);
    if names.is_empty() {
        return Found::Upstream;
    }
    Found::Entries(
        names
            .into_iter()
            .map(|n| Entry {
                host: Host::Ptr(n.clone()),
                port: None,
                target: n,
            })
            .collect(),
    )
}

/// The names an address has: the Service whose ClusterIP it is, else every
/// endpoint with it (under its Service).
fn reverse(cluster: &Cluster, slices: &[EndpointSlice], ip: IpAddr) -> Vec<String> {
    if let Some(s) = cluster
        .services
        .iter()
        .find(|s| s.cluster_ips.contains(&ip))
    {
        return vec![name::service_fqdn(&s.id.namespace, &s.id.name)];
    }
    let mut out = Vec::new();
    for s in slices {
        let ready_only = cluster
            .services
            .iter()
            .find(|x| x.id.namespace == s.id.namespace && x.id.name == s.service_name)
            .is_some_and(|x| !x.publish_not_ready_addresses);
        for e in &s.endpoints {
            if (e.ready || !ready_only) && e.addresses.contains(&ip) {
                let label = name::endpoint_label(e.hostname.as_deref(), ip);
                out.push(format!(
                    "{label}.{}",
                    name::service_fqdn(&s.id.namespace, &s.service_name)
                ));
            }
        }
    }
    out
}

/// The record types `kpv dig` asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Qtype {
    A,
    Aaaa,
    Cname,
    Srv,
    Ptr,
    Txt,
    Ns,
    Soa,
}

impl Qtype {
    pub const ALL: [Qtype; 8] = [
        Qtype::A,
        Qtype::Aaaa,
        Qtype::Cname,
        Qtype::Srv,
        Qtype::Ptr,
        Qtype::Txt,
        Qtype::Ns,
        Qtype::Soa,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Qtype::A => "A",
            Qtype::Aaaa => "AAAA",
            Qtype::Cname => "CNAME",
            Qtype::Srv => "SRV",
            Qtype::Ptr => "PTR",
            Qtype::Txt => "TXT",
            Qtype::Ns => "NS",
            Qtype::Soa => "SOA",
        }
    }

    /// Case-insensitive, as dig reads it.
    pub fn parse(s: &str) -> Option<Qtype> {
        Qtype::ALL
            .into_iter()
            .find(|q| q.as_str().eq_ignore_ascii_case(s))
    }
}

/// One resource record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The owner name, with a final dot.
    pub name: String,
    pub ttl: u32,
    pub data: Data,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    A(IpAddr),
    Cname(String),
    Srv {
        weight: u16,
        port: u16,
        target: String,
    },
    Ptr(String),
    Txt(String),
    Ns(String),
    /// The zone's SOA (`ns.dns.<zone>. hostmaster.<zone>.`, refresh 7200,
    /// retry 1800, expire 86400, minimum the TTL). CoreDNS's serial is the
    /// time of the last change it saw; kpv has no clock and writes 1.
    Soa,
}

impl Data {
    /// The type as dig prints it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Data::A(ip) if ip.is_ipv6() => "AAAA",
            Data::A(_) => "A",
            Data::Cname(_) => "CNAME",
            Data::Srv { .. } => "SRV",
            Data::Ptr(_) => "PTR",
            Data::Txt(_) => "TXT",
            Data::Ns(_) => "NS",
            Data::Soa => "SOA",
        }
    }
}

/// The response's code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rcode {
    NoError,
    NxDomain,
    /// Handed to the upstream resolver: what it answers is outside the
    /// cluster and outside what kpv models.
    Upstream,
}

/// A response from the cluster's DNS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub rcode: Rcode,
    pub answer: Vec<Record>,
    /// Addresses of SRV targets (and the NS's).
    pub extra: Vec<Record>,
    /// A name outside the zone the answer's CNAME points at, which the
    /// upstream resolver would go on to resolve.
    pub upstream: Option<String>,
}

impl Response {
    fn of(rcode: Rcode) -> Response {
        Response {
            rcode,
            answer: Vec::new(),
            extra: Vec::new(),
            upstream: None,
        }
    }

    /// A resolver outside the cluster answers: kpv cannot know how.
    pub fn unknown() -> Response {
        Response::of(Rcode::Upstream)
    }

    /// NOERROR with no record: the name exists without this type.
    pub fn is_nodata(&self) -> bool {
        self.rcode == Rcode::NoError && self.answer.is_empty()
    }

    /// Negative answers carry the zone's SOA in their authority section.
    pub fn authority_soa(&self) -> bool {
        self.rcode == Rcode::NxDomain || self.is_nodata()
    }
}

/// How long a chain of CNAMEs inside the zone is followed.
const MAX_CNAME_CHAIN: usize = 8;

/// The response to `qname` of type `qtype`.
pub fn query(cluster: &Cluster, slices: &[EndpointSlice], qname: &str, qtype: Qtype) -> Response {
    if let Some(family) = match qtype {
        Qtype::A => Some(false),
        Qtype::Aaaa => Some(true),
        _ => None,
    } {
        return addresses(cluster, slices, qname, family);
    }
    let owner = format!("{}.", qname.trim_end_matches('.'));
    let apex = name::canonical(qname) == CLUSTER_DOMAIN;
    let found = match (qtype, name::reverse_address(qname)) {
        (Qtype::Ptr, Some(ip)) => find_reverse(cluster, slices, ip),
        _ => find(cluster, slices, qname),
    };
    let in_zone = name::parse(qname) != Name::Outside || name::in_reverse_zone(qname);
    let entries = match found {
        // The plugin answers SOA itself for any name of its zones: the
        // record at the apex, else no record.
        _ if qtype == Qtype::Soa && in_zone => Vec::new(),
        Found::Upstream => return Response::of(Rcode::Upstream),
        Found::NoName => return Response::of(Rcode::NxDomain),
        Found::Entries(e) => e,
    };
    let mut r = Response::of(Rcode::NoError);
    let rec = |name: &str, data: Data| Record {
        name: name.to_string(),
        ttl: TTL,
        data,
    };
    match qtype {
        Qtype::A | Qtype::Aaaa => {}
        Qtype::Cname | Qtype::Ptr => {
            for e in &entries {
                match (&e.host, qtype) {
                    (Host::Name(t), Qtype::Cname) => {
                        r.answer.push(rec(&owner, Data::Cname(t.clone())))
                    }
                    (Host::Ptr(n), Qtype::Ptr) => r.answer.push(rec(&owner, Data::Ptr(n.clone()))),
                    _ => {}
                }
            }
        }
        Qtype::Srv => srv_records(cluster, slices, &owner, &entries, &mut r),
        Qtype::Txt => {
            if name::parse(qname) == Name::Version {
                r.answer.push(Record {
                    name: owner,
                    ttl: 28800,
                    data: Data::Txt("1.1.0".into()),
                });
            }
        }
        Qtype::Ns => {
            if apex {
                let ns = format!("ns.dns.{CLUSTER_DOMAIN}.");
                r.answer.push(rec(&owner, Data::Ns(ns.clone())));
                for ip in cluster_dns_ips(cluster) {
                    r.extra.push(rec(&ns, Data::A(ip)));
                }
            }
        }
        Qtype::Soa => {
            if apex {
                r.answer.push(rec(&owner, Data::Soa));
            }
        }
    }
    r
}

/// The response to an A query (`v6`: AAAA) for `qname`: what a client's
/// address lookup needs, apart from the other record types.
pub fn addresses(cluster: &Cluster, slices: &[EndpointSlice], qname: &str, v6: bool) -> Response {
    let entries = match find(cluster, slices, qname) {
        Found::Upstream => return Response::of(Rcode::Upstream),
        Found::NoName => return Response::of(Rcode::NxDomain),
        Found::Entries(e) => e,
    };
    let mut r = Response::of(Rcode::NoError);
    let owner = format!("{}.", qname.trim_end_matches('.'));
    address_records(cluster, slices, &owner, &entries, v6, &mut r, 0);
    r
}

/// A (`v6`: AAAA) records of `entries` under `owner`; an ExternalName's CNAME
/// followed inside the zone (up to [`MAX_CNAME_CHAIN`]), else left to the
/// upstream resolver.
fn address_records(
    cluster: &Cluster,
    slices: &[EndpointSlice],
    owner: &str,
    entries: &[Entry],
    v6: bool,
    r: &mut Response,
    depth: usize,
) {
    for e in entries {
        match &e.host {
            Host::Ip(ip) => {
                if ip.is_ipv6() == v6 {
                    let data = Data::A(*ip);
                    if !r.answer.iter().any(|x| x.name == owner && x.data == data) {
                        r.answer.push(Record {
                            name: owner.to_string(),
                            ttl: TTL,
                            data,
                        });
                    }
                }
            }
            Host::Ptr(_) => {}
            Host::Name(target) => {
                let seen = r.answer.iter().any(|x| x.name == *target);
                r.answer.push(Record {
                    name: owner.to_string(),
                    ttl: TTL,
                    data: Data::Cname(target.clone()),
                });
                match find(cluster, slices, target) {
                    Found::Entries(next) if !seen && depth < MAX_CNAME_CHAIN => {
                        address_records(cluster, slices, target, &next, v6, r, depth + 1)
                    }
                    Found::Upstream => r.upstream = Some(target.clone()),
                    _ => {}
                }
            }
        }
    }
}

/// SRV records: one per entry with a port (the same target and port once),
/// weight `100 / entries` (at least 1), priority 0; the targets' addresses
/// in the extra section.
fn srv_records(
    cluster: &Cluster,
    slices: &[EndpointSlice],
    owner: &str,
    entries: &[Entry],
    r: &mut Response,
) {
    let n = u16::try_from(entries.len()).unwrap_or(u16::MAX).max(1);
    let weight = (100 / n).max(1);
    for e in entries {
        let Some(port) = e.port else { continue };
        let target = match &e.host {
            Host::Ip(_) => e.target.clone(),
            Host::Name(t) => t.clone(),
            Host::Ptr(_) => continue,
        };
        let srv = Data::Srv {
            weight,
            port,
            target: target.clone(),
        };
        if !r.answer.iter().any(|x| x.data == srv) {
            r.answer.push(Record {
                name: owner.to_string(),
                ttl: TTL,
                data: srv,
            });
        }
        match &e.host {
            Host::Ip(ip) => {
                let data = Data::A(*ip);
                if !r.extra.iter().any(|x| x.name == target && x.data == data) {
                    r.extra.push(Record {
                        name: target,
                        ttl: TTL,
                        data,
                    });
                }
            }
            Host::Name(t) => match find(cluster, slices, t) {
                Found::Entries(next) => {
                    let mut sub = Response::of(Rcode::NoError);
                    address_records(cluster, slices, t, &next, false, &mut sub, 1);
                    r.extra.extend(sub.answer);
                }
                Found::Upstream => r.upstream = Some(t.clone()),
                Found::NoName => {}
            },
            Host::Ptr(_) => {}
        }
    }
}
