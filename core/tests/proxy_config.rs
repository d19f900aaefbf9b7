//! KubeProxyConfiguration settings are modelled or warned about, never
//! silently dropped and never blocking: detectLocalMode by interface,
//! sync periods, userspace's portRange.

use kpv_core::model::{Cluster, DetectLocalMode, Mode};
use kpv_core::util::diag::{Diagnostic, Severity};

fn parse(yaml: &str) -> (Cluster, Vec<Diagnostic>) {
    kpv_core::Code::ALL.parse(yaml)
}

fn config(lines: &str) -> String {
    format!("apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n{lines}---\napiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nspec: {{podCIDR: 10.244.1.0/24}}\n---\n")
}

fn warning_at<'a>(diags: &'a [Diagnostic], field: &str) -> Option<&'a Diagnostic> {
    diags
        .iter()
        .find(|d| d.severity == Severity::Warning && d.field.as_deref() == Some(field))
}

#[test]
fn detect_local_modes_are_modelled_or_warned() {
    // (lines, mode kpv uses, warned?)
    let cases: &[(&str, DetectLocalMode, bool)] = &[
        (
            "detectLocalMode: ClusterCIDR\nclusterCIDR: 10.244.0.0/16\n",
            DetectLocalMode::ClusterCidr,
            false,
        ),
        (
            "detectLocalMode: NodeCIDR\n",
            DetectLocalMode::NodeCidr,
            false,
        ),
        (
            "detectLocalMode: InterfaceNamePrefix\ndetectLocal: {interfaceNamePrefix: veth}\n",
            DetectLocalMode::NodeCidr,
            true,
        ),
        (
            "detectLocalMode: BridgeInterface\ndetectLocal: {bridgeInterface: cbr0}\n",
            DetectLocalMode::NodeCidr,
            true,
        ),
        (
            "detectLocalMode: InterfaceNamePrefix\n",
            DetectLocalMode::NodeCidr,
            true,
        ),
    ];
    for (lines, want, warned) in cases {
        let (c, diags) = parse(&config(lines));
        assert!(
            !kpv_core::util::diag::has_errors(&diags),
            "{lines}: {diags:#?}"
        );
        assert_eq!(c.proxy.detect_local_mode, *want, "{lines}");
        assert_eq!(
            warning_at(&diags, "detectLocalMode").is_some(),
            *warned,
            "{lines}: {diags:#?}"
        );
    }
    let (_, diags) = parse(&config("detectLocalMode: Magic\n"));
    assert!(
        diags.iter().any(|d| d.is_error()
            && d.message.contains("Unsupported value: \"Magic\"")
            && d.field.as_deref() == Some("detectLocalMode")),
        "{diags:#?}"
    );
}

#[test]
fn sync_periods_are_read() {
    // (lines, minSyncPeriod kpv uses, syncPeriod warned?)
    let cases: &[(&str, Option<u64>, bool)] = &[
        ("", None, false),
        ("iptables: {minSyncPeriod: 5s}\n", Some(5000), false),
        (
            "iptables: {minSyncPeriod: 0s, syncPeriod: 30s}\n",
            Some(0),
            true,
        ),
        (
            "mode: nftables\nnftables: {minSyncPeriod: 250ms}\n",
            Some(250),
            false,
        ),
        (
            "mode: ipvs\nipvs: {minSyncPeriod: 1m0s}\n",
            Some(60_000),
            false,
        ),
        // The other mode's section does not apply.
        ("mode: ipvs\niptables: {minSyncPeriod: 5s}\n", None, false),
        ("minSyncPeriod: 2s\nsyncPeriod: 1m\n", Some(2000), true),
    ];
    for (lines, want, warned) in cases {
        let (c, diags) = parse(&config(lines));
        assert!(
            !kpv_core::util::diag::has_errors(&diags),
            "{lines}: {diags:#?}"
        );
        assert_eq!(c.proxy.min_sync_period_ms, *want, "{lines}");
        let w = diags.iter().any(|d| {
            d.severity == Severity::Warning
                && d.field
                    .as_deref()
                    .is_some_and(|f| f.ends_with("syncPeriod") && !f.ends_with("minSyncPeriod"))
        });
        assert_eq!(w, *warned, "{lines}: {diags:#?}");
    }
    let (_, diags) = parse(&config("iptables: {minSyncPeriod: soon}\n"));
    assert!(
        diags
            .iter()
            .any(|d| d.is_error() && d.message.contains("not a duration")),
        "{diags:#?}"
    );
}

#[test]
fn min_sync_period_is_kube_proxys_lag() {
    // A Pod turns not-ready at t=10 s; kube-proxy's rules follow it after
    // the controller's 100 ms and minSyncPeriod.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: a}}\nspec:\n  nodeName: n1\n  containers:\n  - name: c\n    image: x\n    readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 1, failureThreshold: 1}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: {app: a}, ports: [{port: 80}]}\n";
    for (lines, lag) in [("", 1000u64), ("iptables: {minSyncPeriod: 5s}\n", 5000)] {
        let (c, _) = parse(&format!("{}{pod}", config(lines)));
        let change = kpv_core::net::controller::AppChange {
            pod: kpv_core::model::NamespacedName::new("default", "p"),
            at_ms: 10_000,
            state: kpv_core::net::controller::AppState::Down,
        };
        let timing = kpv_core::net::controller::Timing::default();
        let ready_in_rules = |t: u64| {
            let s =
                kpv_core::net::controller::snapshot(&c, std::slice::from_ref(&change), timing, t);
            s.proxy_slices
                .iter()
                .flat_map(|x| &x.endpoints)
                .any(|e| e.ready)
        };
        let stored = |t: u64| {
            let s =
                kpv_core::net::controller::snapshot(&c, std::slice::from_ref(&change), timing, t);
            s.slices.iter().flat_map(|x| &x.endpoints).any(|e| e.ready)
        };
        // Find when the API's slice turns not-ready; the rules follow `lag` later.
        let Some(t0) = (10_000..20_000).step_by(50).find(|t| !stored(*t)) else {
            panic!("the slice never turned not-ready")
        };
        assert!(
            ready_in_rules(t0 + lag - 100),
            "{lines}: rules still ready before the lag"
        );
        assert!(
            !ready_in_rules(t0 + lag + 100),
            "{lines}: rules follow after the lag"
        );
        // A packet traced at those times meets the rules the diagram shows.
        let delivered = |t: u64| {
            let target = kpv_core::session::replay::targets(&c, None)
                .into_iter()
                .find(|t| t.kind == kpv_core::session::replay::TargetKind::ClusterIp)
                .unwrap_or_else(|| panic!("a ClusterIP"));
            let packets = [kpv_core::session::replay::SentPacket {
                id: 0,
                at_ms: t,
                request: kpv_core::session::replay::request(
                    &target,
                    kpv_core::session::replay::default_origin(&c, &target),
                    0,
                ),
                seed: 1,
            }];
            let traces = kpv_core::session::replay::replay(&kpv_core::session::replay::Inputs {
                code: kpv_core::session::replay::Code::ALL,
                cluster: &c,
                mode: c.proxy.mode,
                scheduler: None,
                timing,
                changes: std::slice::from_ref(&change),
                packets: &packets,
            });
            traces.first().is_some_and(|t| !t.endpoints.is_empty())
        };
        assert!(
            delivered(t0 + lag - 100),
            "{lines}: the replay's rules lag too"
        );
        assert!(
            !delivered(t0 + lag + 100),
            "{lines}: the replay's rules follow"
        );
    }
}

#[test]
fn userspace_port_range_is_used_and_its_exhaustion_said() {
    let svc = |i: usize| {
        format!("apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec: {{clusterIP: 10.96.0.{}, ports: [{{port: 80}}]}}\n---\n", 10 + i)
    };
    // (portRange, Services, listeners expected to get a port, warned?)
    let cases: &[(&str, usize, usize, bool)] = &[
        ("portRange: 30100-30104\n", 3, 3, false),
        ("portRange: 30100-30101\n", 3, 2, true),
        ("portRange: 40000-40000\n", 1, 1, false),
        ("", 3, 3, false),
    ];
    for (range, n, served, warned) in cases {
        let yaml = format!(
            "{}{}",
            config(&format!("mode: userspace\n{range}")),
            (0..*n).map(svc).collect::<String>()
        );
        let (c, diags) = parse(&yaml);
        assert!(
            !kpv_core::util::diag::has_errors(&diags),
            "{range}: {diags:#?}"
        );
        assert_eq!(c.proxy.mode, Mode::Userspace);
        assert_eq!(
            warning_at(&diags, "portRange").is_some(),
            *warned,
            "{range}: {diags:#?}"
        );
        let slices = kpv_core::net::controller::steady_slices(&c);
        let input = kpv_core::net::proxy::build_input(
            &c,
            &slices,
            "n1",
            kpv_core::model::packet::IpFamily::V4,
        )
        .unwrap_or_else(|| panic!("input"));
        let dp = kpv_core::net::modes::userspace::compile(&input);
        let ports: Vec<u16> = dp.listeners().iter().filter_map(|l| l.proxy_port).collect();
        assert_eq!(ports.len(), *served, "{range}");
        if let Some((a, b)) = c.proxy.port_range {
            assert!(
                ports.iter().all(|p| (a..=b).contains(p)),
                "{range}: {ports:?}"
            );
            for l in dp.listeners().iter().filter(|l| l.proxy_port.is_none()) {
                assert!(
                    l.skipped
                        .as_deref()
                        .is_some_and(|s| s.contains(&format!("portRange {a}-{b}"))),
                    "{:?}",
                    l.skipped
                );
            }
        }
    }
    // Another mode ignores portRange, and says so.
    let (_, diags) = parse(&config("mode: iptables\nportRange: 30100-30104\n"));
    assert!(warning_at(&diags, "portRange").is_some(), "{diags:#?}");
}
