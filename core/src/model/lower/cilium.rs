//! Cilium's settings as a cluster has them: the `cilium-config` ConfigMap in
//! `kube-system` (the agent's flags, one key per flag), the
//! `service.cilium.io/*` annotations of Services and the
//! `service.cilium.io/weight` annotation of EndpointSlices.
//!
//! Values are checked as the agent checks them, and an invalid one is
//! refused in the agent's own words (cilium/cilium `pkg/loadbalancer/
//! config.go`, `pkg/maglev`, `pkg/loadbalancer/reflectors/conversions.go`).
//! Keys kpv does not model are ignored with one note listing them.

use super::validate::Ctx;
use super::{Builder, RawObject};
use crate::model::cilium::{
    CiliumConfig, CiliumService, DsrDispatch, Exposure, LbAlgorithm, LbMode, NodeExposure,
    Requirement, MAGLEV_TABLE_SIZES,
};
use crate::yaml::Node as Y;

/// The ConfigMap kpv reads Cilium's settings from.
pub(super) fn is_cilium_config(o: &RawObject) -> bool {
    let meta = o.node.get("metadata");
    let field = |k: &str| meta.and_then(|m| m.get(k)).and_then(Y::as_str);
    o.kind == "ConfigMap"
        && field("name") == Some("cilium-config")
        && field("namespace") == Some("kube-system")
}

impl Builder {
    /// `kube-system/cilium-config`: the agent's load-balancer flags.
    pub(super) fn cilium_config(&mut self, o: &RawObject) {
        let given_before = self.cluster.cilium.given;
        let mut c = self.ctx(o, "ConfigMap/cilium-config".into());
        if given_before {
            c.err(
                &o.node,
                "",
                "more than one kube-system/cilium-config; this one is ignored",
                "",
            );
            return;
        }
        let mut cfg = CiliumConfig {
            given: true,
            ..CiliumConfig::default()
        };
        let data = o.node.get("data");
        let mut ignored: Vec<String> = Vec::new();
        if let Some(crate::yaml::Value::Map(entries)) = data.map(|d| &d.value) {
            for (k, v) in entries {
                let key = k.as_str().unwrap_or("");
                let field = format!("data.{key}");
                let Some(text) = value_text(&mut c, v, &field) else {
                    continue;
                };
                if !read_key(&mut c, &mut cfg, key, &text, v, &field) {
                    ignored.push(key.to_string());
                }
            }
        }
        if !cfg.kube_proxy_replacement {
            // Without kube-proxy replacement the socket load balancer is
            // only on when asked for.
            let asked = data
                .and_then(|d| d.get("bpf-lb-sock"))
                .and_then(Y::as_str)
                .and_then(parse_bool);
            cfg.socket_lb = asked.unwrap_or(false);
        }
        if cfg.mode == LbMode::Hybrid && cfg.mode_annotation {
            if let Some(v) = data.and_then(|d| d.get("bpf-lb-mode")) {
                c.err(
                    v,
                    "data.bpf-lb-mode",
                    "The value --bpf-lb-mode=hybrid is not supported as default under annotation mode",
                    "",
                );
            }
            cfg.mode = LbMode::Snat;
        }
        if let Some(first) = ignored.first() {
            let at = data.and_then(|d| d.get(first)).unwrap_or(&o.node);
            c.warn(
                at,
                "data",
                format!(
                    "cilium-config: {} changes nothing kpv models and is ignored",
                    ignored.join(", ")
                ),
                "",
            );
        }
        drop(c);
        // With kube-proxy replacement on, Cilium is the cluster's mode
        // (unless a KubeProxyConfiguration says which kube-proxy runs).
        if !self.cluster.proxy_config_given && cfg.kube_proxy_replacement {
            self.cluster.proxy.mode = crate::model::Mode::Cilium;
        }
        self.cluster.cilium = cfg;
    }
}

/// A data value's text. The API server stores data as strings: kubectl
/// refuses an unquoted `true` or `1021`, so say so (and read it anyway).
fn value_text(c: &mut Ctx<'_>, v: &Y, field: &str) -> Option<String> {
    let text = v.as_str()?.to_string();
    if v.as_bool().is_some() || v.as_int().is_some() {
        c.err(
            v,
            field,
            format!("ConfigMap data values are strings: kubectl refuses the unquoted `{text}`"),
            "quote it",
        );
    }
    Some(text)
}

/// Go's `strconv.ParseBool`.
fn parse_bool(s: &str) -> Option<bool> {
    // `1 t T TRUE true True`, then the same for false.
    let words = ["1", "t", "T", "TRUE", "true", "True"];
    let falses = ["0", "f", "F", "FALSE", "false", "False"];
    if words.contains(&s) {
        Some(true)
    } else {
        falses.contains(&s).then_some(false)
    }
}

/// The boolean flags kpv models, and the setting each one sets.
type Slot = fn(&mut CiliumConfig) -> &mut bool;
const FLAGS: &[(&str, Slot)] = &[
    ("kube-proxy-replacement", |c| &mut c.kube_proxy_replacement),
    ("bpf-lb-algorithm-annotation", |c| {
        &mut c.algorithm_annotation
    }),
    ("bpf-lb-mode-annotation", |c| &mut c.mode_annotation),
    ("bpf-lb-sock", |c| &mut c.socket_lb),
    ("bpf-lb-sock-hostns-only", |c| &mut c.socket_lb_hostns_only),
    ("enable-health-check-nodeport", |c| {
        &mut c.health_check_node_port
    }),
    ("bpf-lb-external-clusterip", |c| &mut c.external_clusterip),
    ("bpf-lb-source-range-all-types", |c| {
        &mut c.source_range_all_types
    }),
    ("enable-service-topology", |c| &mut c.service_topology),
    ("bpf-lb-enable-wildcard-entries", |c| {
        &mut c.wildcard_entries
    }),
    ("enable-external-ips", |c| &mut c.external_ips),
];

/// Reads one key into `cfg`; false when kpv does not model it.
fn read_key(
    c: &mut Ctx<'_>,
    cfg: &mut CiliumConfig,
    key: &str,
    text: &str,
    v: &Y,
    field: &str,
) -> bool {
    let invalid = || format!("Invalid value for --{key}: {text}");
    let result: Result<(), (String, &str)> = if let Some((_, slot)) =
        FLAGS.iter().find(|(k, _)| *k == key)
    {
        parse_bool(text).map(|b| *slot(cfg) = b).ok_or_else(|| {
            (
                format!("invalid argument \"{text}\" for \"--{key}\" flag: strconv.ParseBool: parsing \"{text}\": invalid syntax"),
                "write \"true\" or \"false\"",
            )
        })
    } else {
        match key {
            // `node-port-algorithm` is the flag's older name.
            "bpf-lb-algorithm" | "node-port-algorithm" => LbAlgorithm::parse(text)
                .map(|a| cfg.algorithm = a)
                .ok_or_else(|| (invalid(), "use random or maglev")),
            "bpf-lb-mode" => LbMode::parse(text)
                .map(|m| cfg.mode = m)
                .ok_or_else(|| (invalid(), "use snat, dsr or hybrid")),
            "bpf-lb-dsr-dispatch" => DsrDispatch::parse(text)
                .map(|d| cfg.dsr_dispatch = d)
                .ok_or_else(|| (invalid(), "use opt, ipip or geneve")),
            "bpf-lb-maglev-table-size" => text
                .parse::<u32>()
                .ok()
                .filter(|m| MAGLEV_TABLE_SIZES.contains(m))
                .map(|m| cfg.maglev_table_size = m)
                .ok_or_else(|| {
                    (
                        format!(
                            "{}, supported values are: [{}]",
                            invalid(),
                            MAGLEV_TABLE_SIZES.map(|m| m.to_string()).join(" ")
                        ),
                        "",
                    )
                }),
            "bpf-lb-maglev-hash-seed" => maglev_seed(text)
                .map(|seed| cfg.maglev_seed = seed)
                .map_err(|m| (m, "")),
            "node-port-range" => node_port_range(text)
                .map(|r| cfg.node_port_range = r)
                .map_err(|m| (m, "write e.g. \"30000,32767\"")),
            _ => return false,
        }
    };
    if let Err((msg, hint)) = result {
        c.err(v, field, msg, hint);
    }
    if key == "kube-proxy-replacement" && cfg.kube_proxy_replacement {
        cfg.socket_lb = true;
    }
    true
}

/// `node-port-range`: `min,max`, as the agent parses it.
fn node_port_range(text: &str) -> Result<(u16, u16), String> {
    let parts: Vec<&str> = text.split(',').collect();
    let [lo, hi] = parts[..] else {
        return Err("parse NodePort range: unable to parse min/max port range".into());
    };
    let port = |which: &str, v: &str| {
        v.trim().parse::<u16>().map_err(|_| {
            format!(
                "parse NodePort range: unable to parse {which} port value: invalid syntax in `{v}`"
            )
        })
    };
    let (lo, hi) = (port("min", lo)?, port("max", hi)?);
    if hi <= lo {
        return Err(format!(
            "parse NodePort range: max port value, {hi}, is less than or equal to min port value, {lo}"
        ));
    }
    Ok((lo, hi))
}

/// The Murmur3 seed of `bpf-lb-maglev-hash-seed`: base64 of 12 bytes, of
/// which the first four (big-endian) seed the permutations.
fn maglev_seed(text: &str) -> Result<u32, String> {
    // Standard base64, padded: 4 characters carry 3 bytes.
    let sextet = |b: u8| match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let body = text.trim_end_matches('=');
    let pad = text.len() - body.len();
    let bits: Option<Vec<u8>> = body.bytes().map(sextet).collect();
    let (Some(bits), true) = (bits, text.len() % 4 == 0 && pad <= 2) else {
        return Err(format!(
            "cannot decode base64 Maglev hash seed \"{text}\": illegal base64 data"
        ));
    };
    let len = text.len() / 4 * 3 - pad;
    if len != 12 {
        return Err(format!("decoded hash seed is {len} bytes (not 12 bytes)"));
    }
    // The first four bytes are the first 32 of the first 36 bits.
    let first = bits
        .iter()
        .take(6)
        .fold(0u64, |acc, s| (acc << 6) | u64::from(*s));
    Ok((first >> 4) as u32)
}

/// A Service's `service.cilium.io/*` annotations. Invalid values are
/// ignored as the agent ignores them, with its warning.
pub(super) fn service_annotations(c: &mut Ctx<'_>, n: &Y) -> CiliumService {
    let mut out = CiliumService::default();
    let Some(annotations) = n.get("metadata").and_then(|m| m.get("annotations")) else {
        return out;
    };
    for (key, read, hint) in ANNOTATIONS {
        let Some(v) = annotations.get(key) else {
            continue;
        };
        let text = v.as_str().unwrap_or("");
        // Cilium logs an invalid value and goes on as if it were not there.
        if !read(&mut out, text) {
            c.warn(
                v,
                &format!("metadata.annotations.{key}"),
                format!("Ignoring annotation: value \"{text}\" is not supported for \"{key}\""),
                hint,
            );
        }
    }
    out
}

/// Reads one annotation's value into the Service's settings; false when
/// the value is not one Cilium knows.
type Reader = fn(&mut CiliumService, &str) -> bool;

/// The annotations Cilium honours, in the order it reads them (a node
/// selector wins over `service.cilium.io/node`), with a hint for a bad
/// value.
const ANNOTATIONS: &[(&str, Reader, &str)] = &[
    (
        "service.cilium.io/lb-algorithm",
        |o, t| {
            o.algorithm = LbAlgorithm::parse(t);
            o.algorithm.is_some()
        },
        "use random or maglev",
    ),
    (
        "service.cilium.io/forwarding-mode",
        |o, t| {
            o.dsr = match t.to_ascii_lowercase().as_str() {
                "dsr" => Some(true),
                "snat" | "hybrid" => Some(false),
                _ => None,
            };
            o.dsr.is_some()
        },
        "use dsr or snat",
    ),
    (
        "service.cilium.io/type",
        |o, t| {
            o.exposure = match t {
                "ClusterIP" => Some(Exposure::ClusterIp),
                "NodePort" => Some(Exposure::NodePort),
                "LoadBalancer" => Some(Exposure::LoadBalancer),
                _ => None,
            };
            o.exposure.is_some()
        },
        "use ClusterIP, NodePort or LoadBalancer",
    ),
    (
        "service.cilium.io/node-selector",
        |o, t| {
            o.node = node_selector(t).map(NodeExposure::Selector);
            o.node.is_some()
        },
        "",
    ),
    (
        "service.cilium.io/node",
        |o, t| {
            if o.node.is_none() {
                o.node = Some(NodeExposure::Label(t.to_string()));
            }
            true
        },
        "",
    ),
    (
        "service.cilium.io/src-ranges-policy",
        |o, t| {
            o.source_ranges_deny = t.eq_ignore_ascii_case("deny");
            true
        },
        "",
    ),
    // The older topology-aware-hints, when given, has the last word.
    (
        "service.kubernetes.io/topology-mode",
        |o, t| {
            o.topology_annotation = !matches!(t, "" | "disabled" | "Disabled");
            true
        },
        "",
    ),
    (
        "service.kubernetes.io/topology-aware-hints",
        |o, t| {
            o.topology_annotation = !matches!(t, "" | "disabled" | "Disabled");
            true
        },
        "",
    ),
];

/// An equality-based label selector (`k=v`, `k==v`, `k!=v`, `k`, `!k`,
/// joined by commas); `None` when it is not one.
fn node_selector(text: &str) -> Option<Vec<Requirement>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let req = if let Some((k, v)) = part.split_once("!=") {
            Requirement::NotEquals(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
            Requirement::Equals(k.trim().into(), v.trim().into())
        } else if let Some(k) = part.strip_prefix('!') {
            Requirement::Absent(k.trim().into())
        } else {
            Requirement::Exists(part.into())
        };
        let key = match &req {
            Requirement::Equals(k, _)
            | Requirement::NotEquals(k, _)
            | Requirement::Exists(k)
            | Requirement::Absent(k) => k,
        };
        if key.is_empty() || key.contains(char::is_whitespace) || key.contains(['(', ')']) {
            return None;
        }
        out.push(req);
    }
    Some(out)
}

/// An EndpointSlice's `service.cilium.io/weight`.
pub(super) fn slice_weight(c: &mut Ctx<'_>, n: &Y) -> Option<u16> {
    let v = n
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get("service.cilium.io/weight"))?;
    let text = v.as_str().unwrap_or("");
    match text.trim().parse::<u16>() {
        Ok(w) => Some(w),
        Err(_) => {
            c.warn(
                v,
                "metadata.annotations.service.cilium.io/weight",
                format!(
                    "Cilium ignores weight `{text}`: a weight is a whole number from 0 to 65535"
                ),
                "0 puts the slice's endpoints in maintenance",
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(data: &str) -> (CiliumConfig, Vec<String>) {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cilium-config, namespace: kube-system}}\ndata:\n{data}"
        );
        let (c, d) = crate::Code::ALL.parse(&text);
        let messages = d
            .iter()
            .map(|d| d.message.clone())
            .filter(|m| !m.starts_with("no Node objects given"))
            .collect();
        (c.cilium, messages)
    }

    #[test]
    fn the_maglev_seed_is_read_as_the_agent_reads_it() {
        assert_eq!(maglev_seed("JLfvgnHc2kaSUFaI"), Ok(0x24b7_ef82));
        assert_eq!(
            maglev_seed("JLfvgnHc"),
            Err("decoded hash seed is 6 bytes (not 12 bytes)".into())
        );
        assert!(maglev_seed("JLfvgnHc2kaSUF*I").is_err_and(|e| e.contains("illegal base64")));
    }

    #[test]
    fn flags_are_read_and_bad_values_refused_in_the_agent_s_words() {
        let (cfg, diags) = parsed(
            "  kube-proxy-replacement: \"true\"\n  bpf-lb-algorithm: \"maglev\"\n  bpf-lb-mode: \"dsr\"\n  bpf-lb-sock-hostns-only: \"True\"\n",
        );
        assert!(diags.is_empty(), "{diags:?}");
        assert!(cfg.given && cfg.kube_proxy_replacement && cfg.socket_lb);
        assert_eq!(
            (cfg.algorithm, cfg.mode),
            (LbAlgorithm::Maglev, LbMode::Dsr)
        );
        assert!(cfg.socket_lb_hostns_only);
        let (cfg, diags) = parsed(
            "  bpf-lb-algorithm: \"ring\"\n  bpf-lb-maglev-table-size: \"1000\"\n  bpf-lb-sock: \"yes\"\n  node-port-range: \"32000,31000\"\n  tunnel-protocol: \"vxlan\"\n",
        );
        assert_eq!(cfg.algorithm, LbAlgorithm::Random);
        assert_eq!(cfg.maglev_table_size, 16381);
        let want = [
            "Invalid value for --bpf-lb-algorithm: ring",
            "Invalid value for --bpf-lb-maglev-table-size: 1000, supported values are: [251 509 1021 2039 4093 8191 16381 32749 65521 131071]",
            "invalid argument \"yes\" for \"--bpf-lb-sock\" flag: strconv.ParseBool: parsing \"yes\": invalid syntax",
            "parse NodePort range: max port value, 31000, is less than or equal to min port value, 32000",
            "cilium-config: tunnel-protocol changes nothing kpv models and is ignored",
        ];
        for w in want {
            assert!(diags.iter().any(|d| d == w), "{w:?} not in {diags:?}");
        }
    }

    #[test]
    fn service_annotations_are_read_and_bad_values_ignored_with_a_warning() {
        let (cluster, diags) = crate::Code::ALL.parse(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  annotations:\n    service.cilium.io/lb-algorithm: maglev\n    service.cilium.io/forwarding-mode: DSR\n    service.cilium.io/type: Bogus\n    service.cilium.io/node: edge\n    service.kubernetes.io/topology-mode: Auto\n    service.kubernetes.io/topology-aware-hints: disabled\nspec: {ports: [{port: 80}]}\n",
        );
        let Some(s) = cluster.services.first() else {
            panic!("the Service")
        };
        assert_eq!(s.cilium.algorithm, Some(LbAlgorithm::Maglev));
        assert_eq!(s.cilium.dsr, Some(true));
        assert_eq!(s.cilium.exposure, None);
        assert_eq!(s.cilium.node, Some(NodeExposure::Label("edge".into())));
        assert!(!s.cilium.topology_annotation);
        assert!(diags.iter().any(|d| d.message
            == "Ignoring annotation: value \"Bogus\" is not supported for \"service.cilium.io/type\""));
    }

    #[test]
    fn kube_proxy_replacement_makes_cilium_the_cluster_s_mode() {
        let (cluster, _) = crate::Code::ALL.parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cilium-config, namespace: kube-system}\ndata: {kube-proxy-replacement: \"true\"}\n",
        );
        assert_eq!(cluster.proxy.mode, crate::model::Mode::Cilium);
        let (cluster, diags) = crate::Code::ALL.parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\ndata: {kube-proxy-replacement: \"true\"}\n",
        );
        assert_eq!(cluster.proxy.mode, crate::model::Mode::Iptables);
        assert!(!cluster.cilium.given);
        assert!(diags
            .iter()
            .any(|d| d.message.contains("`ConfigMap` is not modelled")));
    }
}
