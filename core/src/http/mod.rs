//! HTTP routing in front of Services: Ingress and the Gateway API.
//!
//! Shaped like [`crate::net::modes`]: the routing objects ([`objects`]) are
//! compiled once into a typed routing table per entry point ([`table`]:
//! an IngressClass's merged Ingress rules, a Gateway's listeners with the
//! HTTPRoute matches attached to each, in the order the controller
//! evaluates them); [`walk`] sends one request through a table and returns
//! the decision with every rule it compared; [`render`] prints the tables
//! for `kpv routes`; [`journey`] strings the client's connection to the
//! controller's proxy Pod (through kube-proxy, via [`crate::net::trace`]'s
//! stages) and the proxy's new connection to the backend together.
//!
//! Everything here is pure and deterministic (weighted picks go through the
//! seeded [`crate::util::choose::Chooser`]); decisions are typed values, and only
//! the renderers write text. It never reads certificate bytes; the only
//! regular expressions it evaluates are ingress-nginx's, with PCRE's syntax
//! as nginx reads it ([`nginx_regex`]; the Gateway API's
//! `RegularExpression` matches are reported, not guessed); and it never
//! edits the kube-proxy model's objects except to add the
//! controller workload a real controller would have created.

mod addresses;
mod gateway;
mod ingress;
pub mod journey;
pub mod matching;
pub mod nginx_regex;
pub mod normalize;
pub mod objects;
pub mod proxies;
pub mod render;
pub mod report;
pub mod send;
pub mod status;
pub mod table;
pub mod url;
pub mod values;
pub mod walk;

pub use objects::{parse, parse_files, Objects};
pub use table::{compile, EntryPoint, RoutingTable};
pub use walk::{walk, Decision, HttpRequest, Scheme};

/// A cluster made ready for HTTP requests: the controllers' proxies placed
/// (found or added, see [`proxies`]) and the routing tables compiled
/// against the cluster that has them.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    pub cluster: crate::model::Cluster,
    pub table: RoutingTable,
    pub proxies: Vec<proxies::ProxyWorkload>,
}

/// Place the proxies and compile the tables (decide once; then any number
/// of [`journey::journey`]s or [`walk()`]s read the result).
pub fn prepare(cluster: &crate::model::Cluster) -> Prepared {
    let mut cluster = cluster.clone();
    let first = compile(&cluster.routing, &cluster);
    let proxies = proxies::place_proxies(&mut cluster, &first);
    let table = compile(&cluster.routing, &cluster);
    Prepared {
        cluster,
        table,
        proxies,
    }
}

/// Does an entry point's table name this host?
pub fn names_host(rt: &RoutingTable, entry: &EntryPoint, host: &str) -> bool {
    use matching::{gateway_host_matches, ingress_host_matches};
    match rt.tables.get(entry) {
        Some(table::Table::Ingress(t)) => t.hosts.iter().any(|h| {
            h.host
                .as_deref()
                .is_some_and(|x| ingress_host_matches(x, host))
        }),
        Some(table::Table::Gateway(g)) => g.listeners.iter().any(|l| {
            l.listener
                .hostname
                .as_deref()
                .is_some_and(|x| gateway_host_matches(x, host))
                || l.matches
                    .iter()
                    .any(|m| m.hostnames.iter().any(|x| gateway_host_matches(x, host)))
        }),
        None => false,
    }
}

/// The proxy a request for `host` (the URL's host) goes to: the one whose
/// address it is, else the one whose table names it, else the only one
/// there is. `None` when that is not exactly one.
pub fn proxy_for_host<'p>(
    rt: &RoutingTable,
    proxies: &'p [proxies::ProxyWorkload],
    host: &str,
) -> Option<&'p proxies::ProxyWorkload> {
    let by_host: Vec<&proxies::ProxyWorkload> = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => proxies.iter().filter(|p| p.address == Some(ip)).collect(),
        Err(_) => proxies
            .iter()
            .filter(|p| names_host(rt, &p.entry, host))
            .collect(),
    };
    match (by_host.as_slice(), proxies) {
        ([one], _) => Some(one),
        ([], [only]) => Some(only),
        _ => None,
    }
}
