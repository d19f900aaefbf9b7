//! The userspace proxier's iptables rules, typed: which chains exist, which
//! rules each Service port gets, how one rule is printed the way
//! `iptables-save` prints it, and whether a packet matches it.
//!
//! The rules are built the way `pkg/proxy/userspace/proxier.go` builds them
//! (`iptablesInit`, `openOnePortal`, `openNodePort` and the `*PortalArgs`
//! helpers); this module never decides which endpoints a Service uses and
//! never prints anything but single rules.

use crate::model::packet::{IpFamily, Packet, Protocol};
use crate::net::proxy::ServicePortName;
use std::net::{IpAddr, SocketAddr};

/// `nat` or `filter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Table {
    Nat,
    Filter,
}

impl Table {
    pub fn name(self) -> &'static str {
        match self {
            Table::Nat => "nat",
            Table::Filter => "filter",
        }
    }
}

/// Every chain the userspace proxier writes to. The order of the variants is
/// the order `iptables-save` prints them in: built-in chains first, then the
/// user chains alphabetically (libiptc keeps user chains sorted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Chain {
    Prerouting,
    Input,
    Output,
    NodePortContainer,
    NodePortHost,
    NodePortNonLocal,
    PortalsContainer,
    PortalsHost,
}

impl Chain {
    pub fn name(self) -> &'static str {
        match self {
            Chain::Prerouting => "PREROUTING",
            Chain::Input => "INPUT",
            Chain::Output => "OUTPUT",
            Chain::NodePortContainer => "KUBE-NODEPORT-CONTAINER",
            Chain::NodePortHost => "KUBE-NODEPORT-HOST",
            Chain::NodePortNonLocal => "KUBE-NODEPORT-NON-LOCAL",
            Chain::PortalsContainer => "KUBE-PORTALS-CONTAINER",
            Chain::PortalsHost => "KUBE-PORTALS-HOST",
        }
    }

    pub fn table(self) -> Table {
        match self {
            Chain::Input | Chain::NodePortNonLocal => Table::Filter,
            _ => Table::Nat,
        }
    }

    pub fn is_builtin(self) -> bool {
        matches!(self, Chain::Prerouting | Chain::Input | Chain::Output)
    }

    /// `nat PREROUTING`, `filter KUBE-NODEPORT-NON-LOCAL`: the `table_chain`
    /// of a [`crate::net::modes::Step`].
    pub fn label(self) -> String {
        format!("{} {}", self.table().name(), self.name())
    }
}

/// One `-m` match, in the order the proxier appends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// `-m comment --comment <text>`.
    Comment(String),
    /// `-m tcp --dport N` (the protocol's own match module).
    Dport(Protocol, u16),
    /// `-m physdev ! --physdev-is-in`: did not enter through a bridge port.
    NotPhysdevIsIn,
    /// `-m addrtype --dst-type LOCAL`.
    DstLocal,
    /// `-m state --state NEW`.
    StateNew,
}

/// What a rule does when it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Jump(Chain),
    /// `-j REDIRECT --to-ports N`: to the primary address of the incoming
    /// interface.
    Redirect(u16),
    /// `-j DNAT --to-destination ip:port`.
    Dnat(SocketAddr),
    Accept,
}

/// Why a per-service rule exists (for the JSON form and for tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Portal {
    /// The jump rules of `iptablesInit`.
    Infrastructure,
    ClusterIp,
    ExternalIp,
    LoadBalancerIp,
    NodePort,
}

/// One rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub chain: Chain,
    /// `-d ip/32`.
    pub dst: Option<IpAddr>,
    /// `-p tcp`.
    pub protocol: Option<Protocol>,
    pub matches: Vec<Match>,
    pub target: Target,
    /// The Service port this rule proxies (None for the jump rules).
    pub service: Option<ServicePortName>,
    pub portal: Portal,
}

/// What a rule can ask about a packet besides its header.
#[derive(Clone, Copy, Debug)]
pub struct MatchContext {
    /// Entered the node through a bridge port (a Pod of this node behind the
    /// CNI bridge): `--physdev-is-in` true.
    pub physdev_is_in: bool,
    /// The destination is one of the node's own addresses.
    pub dst_local: bool,
}

impl Rule {
    /// The rule as `iptables-save` prints it: `-A CHAIN`, then the IP header
    /// matches (`-d`, `-p`), then every `-m` match in order, then the target.
    pub fn render(&self) -> String {
        let mut s = format!("-A {}", self.chain.name());
        if let Some(ip) = self.dst {
            s.push_str(&format!(" -d {}/{}", ip, IpFamily::of(&ip).host_bits()));
        }
        if let Some(p) = self.protocol {
            s.push_str(&format!(" -p {}", p.as_lower()));
        }
        for m in &self.matches {
            match m {
                Match::Comment(c) => {
                    s.push_str(" -m comment --comment ");
                    s.push_str(&save_string(c));
                }
                Match::Dport(p, port) => {
                    s.push_str(&format!(" -m {} --dport {}", p.as_lower(), port));
                }
                Match::NotPhysdevIsIn => s.push_str(" -m physdev ! --physdev-is-in"),
                Match::DstLocal => s.push_str(" -m addrtype --dst-type LOCAL"),
                Match::StateNew => s.push_str(" -m state --state NEW"),
            }
        }
        match &self.target {
            Target::Jump(c) => s.push_str(&format!(" -j {}", c.name())),
            Target::Redirect(port) => s.push_str(&format!(" -j REDIRECT --to-ports {port}")),
            Target::Dnat(to) => s.push_str(&format!(" -j DNAT --to-destination {to}")),
            Target::Accept => s.push_str(" -j ACCEPT"),
        }
        s
    }

    /// Does the first packet of a new connection match this rule?
    pub fn matches(&self, pkt: &Packet, ctx: MatchContext) -> bool {
        if let Some(ip) = self.dst {
            if pkt.dst.ip() != ip {
                return false;
            }
        }
        if let Some(p) = self.protocol {
            if pkt.protocol != p {
                return false;
            }
        }
        self.matches.iter().all(|m| match m {
            Match::Comment(_) => true,
            Match::Dport(p, port) => pkt.protocol == *p && pkt.dst.port() == *port,
            Match::NotPhysdevIsIn => !ctx.physdev_is_in,
            Match::DstLocal => ctx.dst_local,
            // process() only sees the first packet of a new connection.
            Match::StateNew => true,
        })
    }
}

/// `xtables_save_string`: bare when only `[A-Za-z0-9_-]`, else double-quoted
/// with `"`, `\` and `'` escaped.
pub fn save_string(value: &str) -> String {
    let bare = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        return value.to_string();
    }
    let mut s = String::with_capacity(value.len() + 2);
    s.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '\\' | '\'') {
            s.push('\\');
        }
        s.push(c);
    }
    s.push('"');
    s
}

const CLUSTER_IPS_COMMENT: &str = "handle ClusterIPs; NOTE: this must be before the NodePort rules";
const NODEPORTS_COMMENT: &str =
    "handle service NodePorts; NOTE: this must be the last rule in the chain";
const NON_LOCAL_COMMENT: &str = "Ensure that non-local NodePort traffic can flow";

/// `iptablesInit`: the five jump rules, in the order they end up in their
/// chains (portal jumps prepended, NodePort jumps appended).
pub fn jump_rules() -> Vec<Rule> {
    let jump = |chain, matches: Vec<Match>, to| Rule {
        chain,
        dst: None,
        protocol: None,
        matches,
        target: Target::Jump(to),
        service: None,
        portal: Portal::Infrastructure,
    };
    let portals = || vec![Match::Comment(CLUSTER_IPS_COMMENT.into())];
    let nodeports = || vec![Match::DstLocal, Match::Comment(NODEPORTS_COMMENT.into())];
    vec![
        jump(Chain::Prerouting, portals(), Chain::PortalsContainer),
        jump(Chain::Prerouting, nodeports(), Chain::NodePortContainer),
        jump(Chain::Output, portals(), Chain::PortalsHost),
        jump(Chain::Output, nodeports(), Chain::NodePortHost),
        jump(
            Chain::Input,
            vec![Match::Comment(NON_LOCAL_COMMENT.into())],
            Chain::NodePortNonLocal,
        ),
    ]
}

/// Everything the proxier needs to write one Service port's rules.
pub struct PortalSpec<'a> {
    pub name: &'a ServicePortName,
    pub protocol: Protocol,
    pub cluster_ip: IpAddr,
    pub port: u16,
    pub external_ips: &'a [IpAddr],
    pub load_balancer_ips: &'a [IpAddr],
    pub node_port: u16,
    pub proxy_port: u16,
    /// `proxier.hostIP`: where from-host traffic is DNATed (listenIP is
    /// 0.0.0.0, so `ChooseHostInterface()`: the node's primary address).
    pub host_ip: IpAddr,
}

/// `openPortal`: the rules of one Service port, in the order the proxier
/// appends them (ClusterIP, each externalIP, each LB ingress IP, NodePort).
pub fn service_rules(s: &PortalSpec) -> Vec<Rule> {
    // iptablesCommonPortalArgs
    let common = |chain, dst: Option<IpAddr>, dport, physdev: bool, local: bool, target, portal| {
        let mut matches = vec![
            Match::Comment(s.name.to_string()),
            Match::Dport(s.protocol, dport),
        ];
        if physdev {
            matches.push(Match::NotPhysdevIsIn);
        }
        if local {
            matches.push(Match::DstLocal);
        }
        Rule {
            chain,
            dst,
            protocol: Some(s.protocol),
            matches,
            target,
            service: Some(s.name.clone()),
            portal,
        }
    };
    // listenIP is 0.0.0.0: from-container traffic is REDIRECTed, from-host
    // traffic DNATed to hostIP.
    let redirect = || Target::Redirect(s.proxy_port);
    let dnat = || Target::Dnat(SocketAddr::new(s.host_ip, s.proxy_port));
    let mut rules = Vec::new();
    let mut one_portal = |ip: IpAddr, external: bool, portal: Portal| {
        rules.push(common(
            Chain::PortalsContainer,
            Some(ip),
            s.port,
            external,
            false,
            redirect(),
            portal,
        ));
        if external {
            rules.push(common(
                Chain::PortalsContainer,
                Some(ip),
                s.port,
                false,
                true,
                redirect(),
                portal,
            ));
            rules.push(common(
                Chain::PortalsHost,
                Some(ip),
                s.port,
                false,
                true,
                dnat(),
                portal,
            ));
        } else {
            rules.push(common(
                Chain::PortalsHost,
                Some(ip),
                s.port,
                false,
                false,
                dnat(),
                portal,
            ));
        }
    };
    one_portal(s.cluster_ip, false, Portal::ClusterIp);
    for ip in s.external_ips {
        one_portal(*ip, true, Portal::ExternalIp);
    }
    for ip in s.load_balancer_ips {
        one_portal(*ip, false, Portal::LoadBalancerIp);
    }
    if s.node_port != 0 {
        rules.push(common(
            Chain::NodePortContainer,
            None,
            s.node_port,
            false,
            false,
            redirect(),
            Portal::NodePort,
        ));
        rules.push(common(
            Chain::NodePortHost,
            None,
            s.node_port,
            false,
            false,
            dnat(),
            Portal::NodePort,
        ));
        // iptablesNonLocalNodePortArgs matches the *proxy* port: the packet
        // reaches filter INPUT after the nat REDIRECT rewrote it.
        let mut accept = common(
            Chain::NodePortNonLocal,
            None,
            s.proxy_port,
            false,
            false,
            Target::Accept,
            Portal::NodePort,
        );
        accept.matches.push(Match::StateNew);
        rules.push(accept);
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_string_quotes_like_iptables_save() {
        assert_eq!(save_string("abc-1_2"), "abc-1_2");
        assert_eq!(save_string("default/web:http"), "\"default/web:http\"");
        assert_eq!(save_string("a\"b"), "\"a\\\"b\"");
        assert_eq!(save_string(""), "\"\"");
    }
}
