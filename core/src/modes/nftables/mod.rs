//! kube-proxy's nftables mode (placeholder until the mode is implemented).

use super::*;

pub struct NftablesDataplane {
    input: ProxyInput,
}

pub fn compile(input: &ProxyInput) -> NftablesDataplane {
    NftablesDataplane {
        input: input.clone(),
    }
}

impl Dataplane for NftablesDataplane {
    fn mode(&self) -> Mode {
        Mode::Nftables
    }
    fn render_text(&self) -> String {
        format!("# {} services\n", self.input.services.len())
    }
    fn render_json(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
    fn process(
        &self,
        _: &Packet,
        _: Hook,
        _: &mut NodeState,
        _: &mut Chooser,
        _: &dyn World,
        _: u64,
    ) -> NodeOutcome {
        NodeOutcome {
            verdict: Verdict::None,
            candidates: Vec::new(),
            masquerade: false,
            steps: Vec::new(),
            rules_compared: 0,
        }
    }
    fn rule_count(&self) -> usize {
        0
    }
}
