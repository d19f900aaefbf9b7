//! Cluster DNS as text: records and responses in dig's presentation
//! format, as `kpv dig` prints them.

use super::resolver::ResolvConf;
use super::zone::{Data, Qtype, Rcode, Record, Response};
use super::{CLUSTER_DOMAIN, TTL};

/// One record: `name TTL IN TYPE data`.
pub fn record(r: &Record) -> String {
    let data = match &r.data {
        Data::A(ip) => ip.to_string(),
        Data::Cname(t) | Data::Ptr(t) | Data::Ns(t) => t.clone(),
        Data::Srv {
            weight,
            port,
            target,
        } => format!("0 {weight} {port} {target}"),
        Data::Txt(t) => format!("\"{t}\""),
        Data::Soa => soa_data(),
    };
    format!("{}\t{}\tIN\t{}\t{data}", r.name, r.ttl, r.data.type_name())
}

/// The zone's SOA record as its data reads (serial 1: see [`Data::Soa`]).
fn soa_data() -> String {
    format!("ns.dns.{CLUSTER_DOMAIN}. hostmaster.{CLUSTER_DOMAIN}. 1 7200 1800 86400 {TTL}")
}

/// The response code as dig prints it.
pub fn rcode(r: &Response) -> &'static str {
    match r.rcode {
        Rcode::NoError => "NOERROR",
        Rcode::NxDomain => "NXDOMAIN",
        Rcode::Upstream => "FORWARDED",
    }
}

/// One query and its response, in dig's sections.
pub fn response(qname: &str, qtype: Qtype, r: &Response) -> String {
    let mut s = format!(";; {qname} IN {}: {}", qtype.as_str(), rcode(r));
    if r.is_nodata() {
        s.push_str(" (no record of this type: the name exists)");
    }
    s.push('\n');
    let section = |s: &mut String, title: &str, records: &[Record]| {
        if !records.is_empty() {
            s.push_str(&format!(";; {title} SECTION:\n"));
            for x in records {
                s.push_str(&record(x));
                s.push('\n');
            }
        }
    };
    section(&mut s, "ANSWER", &r.answer);
    if r.authority_soa() {
        s.push_str(";; AUTHORITY SECTION:\n");
        s.push_str(&format!(
            "{CLUSTER_DOMAIN}.\t{TTL}\tIN\tSOA\t{}\n",
            soa_data()
        ));
    }
    section(&mut s, "ADDITIONAL", &r.extra);
    if r.rcode == Rcode::Upstream {
        s.push_str(match super::name::parse(qname) {
            super::name::Name::Outside => ";; not a name of the cluster's zone: CoreDNS forwards it to the node's resolver, outside what kpv models\n",
            _ => ";; no Service or endpoint has this address: CoreDNS falls through to the node's resolver, outside what kpv models\n",
        });
    }
    if let Some(t) = &r.upstream {
        s.push_str(&format!(
            ";; {t} is outside the cluster: CoreDNS asks the node's resolver for it, outside what kpv models\n"
        ));
    }
    s
}

/// A Pod's resolver settings, as its `/etc/resolv.conf` has them.
pub fn resolv_conf(conf: &ResolvConf) -> String {
    let mut s = String::new();
    if conf.from_node {
        s.push_str("# the node's own /etc/resolv.conf first (not in the input), then:\n");
    }
    for n in &conf.nameservers {
        s.push_str(&format!("nameserver {n}\n"));
    }
    if !conf.search.is_empty() {
        s.push_str(&format!("search {}\n", conf.search.join(" ")));
    }
    s.push_str(&format!("options ndots:{}\n", conf.ndots));
    if !conf.cluster_dns {
        s.push_str(
            "# the first nameserver is not cluster DNS: its answers are outside what kpv models\n",
        );
    }
    s
}
