//! kube-proxy's iptables mode: the filter and nat rules `syncProxyRules`
//! writes (pkg/proxy/iptables/proxier.go), their `iptables-restore` text, and
//! a netfilter-faithful walk of a new connection's first packet.
//!
//! It compiles a [`ProxyInput`] into typed rules ([`rules`], built by
//! [`compile`]), renders them ([`render`]) and traces packets through them
//! ([`trace`]). It must never choose endpoints itself (that is
//! [`crate::net::proxy::topology`]'s job) nor draw randomness from anywhere but the
//! [`Chooser`].
//!
//! How a packet meets kube-proxy's chains (built-in chains in lower case are
//! only the jumps kube-proxy inserts; they are not part of the rendered text):
//!
//! ```text
//!   from an interface                         from a local process
//!         |                                           |
//!   nat PREROUTING                              nat OUTPUT
//!     -j KUBE-SERVICES                            -j KUBE-SERVICES
//!         |                                           |
//!         |   KUBE-SERVICES (nat)                     |
//!         |     ClusterIP   -> KUBE-SVC-X | KUBE-SVL-X (iTP Local)
//!         |     externalIP  -> KUBE-EXT-X
//!         |     LB IP       -> KUBE-FW-X (sourceRanges) | KUBE-EXT-X
//!         |     dst LOCAL   -> KUBE-NODEPORTS -> KUBE-EXT-X   (last rule)
//!         |   KUBE-FW-X  : allowed sources -> KUBE-EXT-X, else fall through
//!         |   KUBE-EXT-X : eTP Cluster: KUBE-MARK-MASQ, -> KUBE-SVC-X
//!         |                eTP Local:   pods / LOCAL src -> KUBE-SVC-X,
//!         |                             others -> KUBE-SVL-X
//!         |   KUBE-SVC-X : [off-cluster src -> KUBE-MARK-MASQ]
//!         |                [-m recent --rcheck -> KUBE-SEP-E (affinity)]
//!         |                -m statistic 1/n, 1/(n-1) ... -> KUBE-SEP-E
//!         |   KUBE-SEP-E : src == E -> KUBE-MARK-MASQ (hairpin); DNAT -> E
//!         |                                           |
//!      routing: local dst?                       filter OUTPUT
//!       /            \                             KUBE-FIREWALL
//!  filter INPUT    filter FORWARD                  KUBE-PROXY-FIREWALL (NEW)
//!   KUBE-FIREWALL   KUBE-PROXY-FIREWALL (NEW)      KUBE-SERVICES (NEW)
//!   KUBE-PROXY-FW   KUBE-FORWARD                      |
//!   KUBE-NODEPORTS  KUBE-SERVICES (NEW)          local dst? -> filter INPUT
//!   KUBE-EXT-SVCS   KUBE-EXTERNAL-SERVICES (NEW)
//!         \            /                              |
//!          nat POSTROUTING -> KUBE-POSTROUTING: marked 0x4000 -> MASQUERADE
//! ```
//!
//! filter KUBE-SERVICES / KUBE-EXTERNAL-SERVICES hold the REJECT ("has no
//! endpoints") and DROP ("has no local endpoints") rules; they only match
//! packets nat did not DNAT. KUBE-PROXY-FIREWALL drops LB traffic that KUBE-FW
//! let fall through. KUBE-NODEPORTS (filter) accepts health-check NodePorts.
//!
//! The masquerade mark is printed `0x4000` as in kube-proxy's unit tests;
//! real kube-proxy prints `0x00004000` (`%#08x`). The text is in the order the
//! upstream tests compare (`sortIPTablesRules`), since kube-proxy's own order
//! follows Go map iteration and is random.

pub mod compile;
pub mod render;
pub mod rules;
pub mod trace;

use super::*;

/// One node's compiled iptables rules.
pub struct IptablesDataplane {
    compiled: compile::Compiled,
    /// The `iptables-restore` text, written on first use: compiling (and
    /// tracing, which only needs line numbers) does not spell out 100,000s of
    /// rules nobody may read.
    text: std::sync::OnceLock<String>,
}

/// Compile a node's view into its iptables rules.
pub fn compile(input: &ProxyInput) -> IptablesDataplane {
    IptablesDataplane {
        compiled: compile::compile(input),
        text: std::sync::OnceLock::new(),
    }
}

impl IptablesDataplane {
    /// The typed tables (filter, then nat), in rendering order.
    pub fn tables(&self) -> &[rules::TableRules] {
        &self.compiled.tables
    }

    /// The built-in chains' jump rules (not part of the rendered text).
    pub fn hooks(&self) -> &[rules::HookChain] {
        &self.compiled.hooks
    }
}

impl Dataplane for IptablesDataplane {
    fn mode(&self) -> Mode {
        Mode::Iptables
    }

    fn render_text(&self) -> String {
        self.text
            .get_or_init(|| render::text(&self.compiled.tables))
            .clone()
    }

    #[cfg(feature = "json")]
    fn render_json(&self) -> serde_json::Value {
        let family = match self.compiled.family {
            crate::model::packet::IpFamily::V4 => "IPv4",
            crate::model::packet::IpFamily::V6 => "IPv6",
        };
        render::json(&self.compiled.tables, family)
    }

    fn process(
        &self,
        packet: &Packet,
        hook: Hook,
        state: &mut NodeState,
        chooser: &mut Chooser,
        _world: &dyn World,
        now_ms: u64,
    ) -> NodeOutcome {
        trace::process(&self.compiled, packet, hook, state, chooser, now_ms)
    }

    /// The `-A` rules of both tables.
    fn rule_count(&self) -> usize {
        self.compiled
            .tables
            .iter()
            .flat_map(|t| t.chains.iter())
            .map(|c| c.rules.len())
            .sum()
    }
}
