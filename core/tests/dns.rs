//! Cluster DNS in a trace, as CoreDNS answers: a headless Service's name
//! gives only ready endpoints (unless it publishes not-ready addresses), an
//! ExternalName Service's name gives a CNAME (and kube-proxy has no rules
//! for it), and unknown names are NXDOMAIN.

use kpv_core::model::packet::{IpFamily, Protocol};
use kpv_core::model::{Cluster, Mode, NamespacedName};
use kpv_core::net::controller::steady_slices;
use kpv_core::net::dns::{resolve, resolver, Answer};

/// A Pod's resolver settings in `ns` (no DNS fields written).
fn conf(c: &Cluster, ns: &str) -> resolver::ResolvConf {
    resolver::resolv_conf(c, ns)
}
use kpv_core::net::trace::{trace, Dest, HopKind, Origin, Outcome, Request, Sim, WorldState};
use kpv_core::util::choose::Chooser;
use std::net::IpAddr;

/// Three Pods of app=db: db-0 ready, db-1 reporting NotReady, db-2 ready;
/// a client Pod; the headless Service `db` and others per case.
fn cluster(extra: &str) -> Cluster {
    let (c, diags) = kpv_core::Code::ALL.parse(&cluster_yaml(extra));
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    c
}

/// The objects of [`cluster`], as text.
fn cluster_yaml(extra: &str) -> String {
    let pod = |name: &str, ip: &str, ready: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{app: db, pod: {name}}}\nspec:\n  nodeName: n1\n  containers: [{{name: c, image: db, ports: [{{containerPort: 5432}}]}}]\nstatus:\n  phase: Running\n  podIP: {ip}\n  conditions: [{{type: Ready, status: \"{ready}\"}}]\n---\n")
    };
    let yaml = format!(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nspec: {{podCIDR: 10.244.1.0/24}}\nstatus:\n  addresses: [{{type: InternalIP, address: 192.168.0.2}}]\n---\n{}{}{}apiVersion: v1\nkind: Pod\nmetadata: {{name: client, labels: {{app: client}}}}\nspec: {{nodeName: n1, containers: [{{name: c, image: curl}}]}}\nstatus: {{phase: Running, podIP: 10.244.1.50}}\n---\n{extra}",
        pod("db-0", "10.244.1.10", "True"),
        pod("db-1", "10.244.1.5", "False"),
        pod("db-2", "10.244.1.12", "True"),
    );
    yaml
}

fn headless(extra_spec: &str) -> String {
    format!("apiVersion: v1\nkind: Service\nmetadata: {{name: db}}\nspec:\n  clusterIP: None\n  selector: {{app: db}}\n  ports: [{{port: 5432}}]\n{extra_spec}---\n")
}

const EXTERNAL: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: payments}\nspec:\n  type: ExternalName\n  externalName: api.payments.example.com.\n---\n";

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap_or_else(|_| panic!("bad test IP {s}"))
}

#[test]
fn headless_names_answer_ready_endpoints_only() {
    // (Service spec extra, expected records)
    let cases: &[(&str, &[&str])] = &[
        ("", &["10.244.1.10", "10.244.1.12"]),
        (
            "  publishNotReadyAddresses: true\n",
            &["10.244.1.10", "10.244.1.12", "10.244.1.5"],
        ),
    ];
    for (extra, want) in cases {
        let c = cluster(&headless(extra));
        let slices = steady_slices(&c);
        let Answer::Address {
            ip: first,
            all,
            fqdn,
        } = resolve(&c, &slices, "db", &conf(&c, "default"), &[IpFamily::V4])
        else {
            panic!("{extra}: no address")
        };
        let mut want: Vec<IpAddr> = want.iter().map(|s| ip(s)).collect();
        want.sort();
        assert_eq!(all, want, "{extra}");
        assert_eq!(first, want[0]);
        assert_eq!(fqdn, "db.default.svc.cluster.local");
    }
    // The lowest address is the NotReady db-1: it must not be the answer.
    let c = cluster(&headless(""));
    let slices = steady_slices(&c);
    let sim = Sim::new(
        &c,
        &slices,
        Mode::Iptables,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let t = trace(
        &sim,
        &Request {
            origin: Origin::Pod {
                pod: NamespacedName::new("default", "client"),
            },
            dst: Dest::Name("db".into()),
            port: 5432,
            protocol: Protocol::Tcp,
            src_port: 40000,
            keep_open: false,
        },
        &mut WorldState::default(),
        &mut Chooser::new(1),
        60_000,
    );
    let answer = t.hops.iter().find_map(|h| match &h.what {
        HopKind::Dns { answer, .. } => Some(*answer),
        _ => None,
    });
    assert_eq!(answer, Some(ip("10.244.1.10")), "{:#?}", t.outcome);
}

#[test]
fn headless_without_ready_endpoints_is_nxdomain() {
    // (Services, name asked from namespace default)
    let cases = [
        // Selects no Pod.
        (headless("").replace("app: db}", "app: nothing}"), "db"),
        // Selects only the NotReady db-1.
        (
            headless("").replace("selector: {app: db}", "selector: {app: db, pod: db-1}"),
            "db",
        ),
        // The same name in a namespace without Pods.
        (
            headless("").replace(
                "metadata: {name: db}",
                "metadata: {name: db, namespace: other}",
            ),
            "db.other",
        ),
        // A name that is no Service.
        (headless(""), "cache"),
    ];
    for (yaml, name) in &cases {
        let c = cluster(yaml);
        let slices = steady_slices(&c);
        assert_eq!(
            resolve(&c, &slices, name, &conf(&c, "default"), &[IpFamily::V4]),
            Answer::NoSuchName,
            "{name}\n{yaml}"
        );
    }
}

#[test]
fn external_names_answer_with_a_cname() {
    let c = cluster(EXTERNAL);
    let slices = steady_slices(&c);
    for name in [
        "payments",
        "payments.default",
        "payments.default.svc.cluster.local",
    ] {
        assert_eq!(
            resolve(&c, &slices, name, &conf(&c, "default"), &[IpFamily::V4]),
            Answer::Cname {
                fqdn: "payments.default.svc.cluster.local".into(),
                target: "api.payments.example.com".into(),
            },
            "{name}"
        );
    }
    // From another namespace the short name is another Service: NXDOMAIN.
    assert_eq!(
        resolve(&c, &slices, "payments", &conf(&c, "other"), &[IpFamily::V4]),
        Answer::NoSuchName
    );
    // In a trace, every mode: the CNAME is the outcome, no rule is walked.
    for mode in Mode::ALL {
        let sim = Sim::new(
            &c,
            &slices,
            mode,
            None,
            kpv_core::net::modes::Compilers::ALL,
        );
        let t = trace(
            &sim,
            &Request {
                origin: Origin::Pod {
                    pod: NamespacedName::new("default", "client"),
                },
                dst: Dest::Name("payments".into()),
                port: 443,
                protocol: Protocol::Tcp,
                src_port: 40000,
                keep_open: false,
            },
            &mut WorldState::default(),
            &mut Chooser::new(1),
            60_000,
        );
        assert_eq!(
            t.outcome,
            Outcome::ExternalName {
                name: "payments.default.svc.cluster.local".into(),
                target: "api.payments.example.com".into(),
            },
            "{mode:?}"
        );
        assert_eq!(t.rules_compared, 0);
    }
}

#[test]
fn clusterip_names_answer_the_primary_address() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  clusterIP: 10.96.0.20\n  selector: {app: db}\n  ports: [{port: 80}]\n---\n";
    let c = cluster(svc);
    let slices = steady_slices(&c);
    for (name, from) in [
        ("web.shop", "default"),
        ("web", "shop"),
        ("web.shop.svc", "x"),
    ] {
        match resolve(&c, &slices, name, &conf(&c, from), &[IpFamily::V4]) {
            Answer::Address { ip: got, .. } => assert_eq!(got, ip("10.96.0.20"), "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    assert_eq!(
        resolve(&c, &slices, "web", &conf(&c, "default"), &[IpFamily::V4]),
        Answer::NoSuchName
    );
}

#[test]
fn statefulset_pods_have_their_own_names() {
    let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {podCIDR: 10.244.1.0/24}\n---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, namespace: shop}\nspec:\n  serviceName: web\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: nginx}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  clusterIP: None\n  selector: {app: web}\n  ports: [{port: 80}]\n";
    let (c, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let slices = steady_slices(&c);
    let pod_ip = |name: &str| {
        c.pods
            .iter()
            .find(|p| p.id.name == name)
            .and_then(|p| p.ips.first().copied())
            .unwrap_or_else(|| panic!("{name}"))
    };
    // (name, from namespace, expected Pod)
    let cases = [
        ("web-0.web", "shop", Some("web-0")),
        ("web-2.web.shop", "default", Some("web-2")),
        ("web-1.web.shop.svc.cluster.local", "default", Some("web-1")),
        ("web-3.web", "shop", None),
        ("web-0.other", "shop", None),
    ];
    for (name, from, want) in cases {
        match (
            resolve(&c, &slices, name, &conf(&c, from), &[IpFamily::V4]),
            want,
        ) {
            (Answer::Address { ip: got, fqdn, .. }, Some(pod)) => {
                assert_eq!(got, pod_ip(pod), "{name}");
                assert_eq!(fqdn, format!("{pod}.web.shop.svc.cluster.local"));
            }
            (Answer::NoSuchName, None) => {}
            (other, want) => panic!("{name}: {other:?}, wanted {want:?}"),
        }
    }
    // The Service name itself answers every ready Pod.
    let Answer::Address { all, .. } =
        resolve(&c, &slices, "web", &conf(&c, "shop"), &[IpFamily::V4])
    else {
        panic!("web")
    };
    assert_eq!(all.len(), 3);
}

fn kpv(args: &[&str], input: &str) -> kpv_core::cli::Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match kpv_core::cli::parse_args(&args) {
        Ok(cmd) => {
            let texts: Vec<String> = cmd.files().iter().map(|_| input.to_string()).collect();
            kpv_core::cli::run(&cmd, &texts, cmd.files())
        }
        Err(e) => kpv_core::cli::Output {
            stdout: String::new(),
            stderr: e,
            code: 2,
        },
    }
}

/// `kpv dig` asks as the Pod's resolver does: a short name through the
/// search list (NXDOMAIN and NODATA go on, records end the search).
#[test]
fn dig_shows_the_search_a_pod_does() {
    let input = cluster_yaml(&format!(
        "{}apiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: prod}}\nspec:\n  clusterIP: 10.96.0.20\n  selector: {{app: db}}\n  ports: [{{name: http, port: 80}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: tool, namespace: team}}\nspec: {{nodeName: n1, containers: [{{name: c, image: curl}}]}}\nstatus: {{phase: Running, podIP: 10.244.1.60}}\n",
        headless("")
    ));
    let out = kpv(
        &["dig", "in.yaml", "web.prod", "--from", "pod:team/tool"],
        &input,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let asked: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with(";; ") && l.contains(" IN "))
        .collect();
    assert_eq!(
        asked,
        [
            ";; web.prod.team.svc.cluster.local. IN A: NXDOMAIN",
            ";; web.prod.svc.cluster.local. IN A: NOERROR",
        ]
    );
    assert!(out.stdout.contains(
        "search team.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5"
    ));
    assert!(out
        .stdout
        .contains("web.prod.svc.cluster.local.\t30\tIN\tA\t10.96.0.20"));
    // SRV by port name, PTR by -x, and JSON.
    let out = kpv(
        &[
            "dig",
            "in.yaml",
            "_http._tcp.web.prod.svc.cluster.local.",
            "srv",
        ],
        &input,
    );
    assert!(
        out.stdout
            .contains("IN\tSRV\t0 100 80 web.prod.svc.cluster.local."),
        "{}",
        out.stdout
    );
    let out = kpv(&["dig", "in.yaml", "-x", "10.244.1.12"], &input);
    assert!(
        out.stdout
            .contains("PTR\t10-244-1-12.db.default.svc.cluster.local."),
        "{}",
        out.stdout
    );
    let out = kpv(&["dig", "in.yaml", "db", "--format", "json"], &input);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_default();
    assert_eq!(v["queries"][0]["rcode"], "NOERROR", "{}", out.stdout);
    assert_eq!(v["queries"][0]["answer"].as_array().map(Vec::len), Some(2));
    // Bad use is said, with how to fix it.
    for (args, says) in [
        (vec!["dig", "in.yaml"], "then the name to look up"),
        (
            vec!["dig", "in.yaml", "db", "--from", "node"],
            "pod:NAMESPACE/NAME",
        ),
        (vec!["dig", "in.yaml", "-x", "nope"], "not an IP address"),
        (
            vec!["dig", "in.yaml", "db", "--from", "pod:x/y"],
            "no such Pod",
        ),
    ] {
        let out = kpv(&args, &input);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.contains(says), "{args:?}: {}", out.stderr);
    }
}

/// A trace's DNS hop names the search domain that answered; a name whose
/// case differs answers the same; a dual-stack Service asked from an
/// IPv4-only Pod gives its IPv4 address.
#[test]
fn traces_resolve_as_the_pod_would() {
    let svc = "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  ipFamilyPolicy: RequireDualStack\n  ipFamilies: [IPv6, IPv4]\n  clusterIPs: [\"fd00:10:96::20\", 10.96.0.20]\n  selector: {app: db}\n  ports: [{port: 5432}]\n---\n";
    let c = cluster(svc);
    let slices = steady_slices(&c);
    for name in ["web", "WEB.default", "web.default.svc.cluster.local."] {
        match resolve(&c, &slices, name, &conf(&c, "default"), &[IpFamily::V4]) {
            Answer::Address { ip: got, fqdn, all } => {
                assert_eq!(got, ip("10.96.0.20"), "{name}");
                assert_eq!(all.len(), 2);
                assert!(
                    fqdn.eq_ignore_ascii_case("web.default.svc.cluster.local"),
                    "{fqdn}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // A dual-stack client prefers IPv6 (RFC 6724's default precedence).
    let Answer::Address { ip: got, .. } = resolve(
        &c,
        &slices,
        "web",
        &conf(&c, "default"),
        &[IpFamily::V4, IpFamily::V6],
    ) else {
        panic!("web")
    };
    assert_eq!(got, ip("fd00:10:96::20"));
}

/// A Pod with its own resolver settings, from `spec_extra` (YAML lines
/// under `spec:`).
fn pod_with(spec_extra: &str) -> String {
    cluster_yaml(&format!(
        "{}apiVersion: v1\nkind: Pod\nmetadata: {{name: tool, namespace: team}}\nspec:\n  nodeName: n1\n  containers: [{{name: c, image: curl}}]\n{spec_extra}status: {{phase: Running, podIP: 10.244.1.60}}\n",
        headless("")
    ))
}

/// `dnsPolicy` and `dnsConfig` give the resolv.conf the kubelet writes:
/// `None` with its own search list and ndots, `Default` and host-network
/// `ClusterFirst` start from the node's settings (unknown, so nothing kpv
/// can answer), `ClusterFirstWithHostNet` asks cluster DNS.
#[test]
fn dns_policy_and_config_shape_the_pod_resolver() {
    let none = "  dnsPolicy: None\n  dnsConfig:\n    nameservers: [10.96.0.10]\n    searches: [default.svc.cluster.local.]\n    options: [{name: ndots, value: \"2\"}, {name: edns0}]\n";
    let out = kpv(
        &["dig", "in.yaml", "db", "--from", "pod:team/tool"],
        &pod_with(none),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "(dnsPolicy None), /etc/resolv.conf:\nnameserver 10.96.0.10\nsearch default.svc.cluster.local\noptions ndots:2\n"
        ),
        "{}",
        out.stdout
    );
    assert!(out
        .stdout
        .contains(";; db.default.svc.cluster.local. IN A: NOERROR"));
    // With ndots 2, a name with two dots is asked as written first.
    let out = kpv(
        &[
            "dig",
            "in.yaml",
            "db.default.svc",
            "--from",
            "pod:team/tool",
        ],
        &pod_with(none),
    );
    let first = out.stdout.lines().find(|l| l.contains(" IN A: "));
    assert_eq!(first, Some(";; db.default.svc. IN A: FORWARDED"));
    for (extra, cluster_dns) in [
        ("  dnsPolicy: Default\n", false),
        ("  hostNetwork: true\n", false),
        (
            "  hostNetwork: true\n  dnsPolicy: ClusterFirstWithHostNet\n",
            true,
        ),
    ] {
        let input = pod_with(extra);
        let out = kpv(
            &["dig", "in.yaml", "db.default", "--from", "pod:team/tool"],
            &input,
        );
        assert_eq!(
            out.stdout
                .contains(";; db.default.svc.cluster.local. IN A: NOERROR"),
            cluster_dns,
            "{extra}: {}",
            out.stdout
        );
        let (c, _) = kpv_core::Code::ALL.parse(&input);
        let slices = steady_slices(&c);
        let Some(pod) = c.pods.iter().find(|p| p.id.name == "tool") else {
            panic!("tool")
        };
        let conf = resolver::pod_resolv_conf(&c, pod);
        assert_eq!(conf.cluster_dns, cluster_dns, "{extra}");
        let answer = resolve(&c, &slices, "db.default", &conf, &[IpFamily::V4]);
        assert_eq!(
            matches!(answer, Answer::Address { .. }),
            cluster_dns,
            "{extra}: {answer:?}"
        );
    }
}

/// The API server refuses what `validatePodDNSConfig` refuses, in its words.
#[test]
fn bad_dns_settings_are_refused() {
    let cases = [
        ("  dnsPolicy: ClusterFirts\n", "Unsupported value: \"ClusterFirts\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\""),
        ("  dnsPolicy: None\n", "Required value: must provide `dnsConfig` when `dnsPolicy` is None"),
        ("  dnsPolicy: None\n  dnsConfig: {searches: [a.b]}\n", "must provide at least one DNS nameserver when `dnsPolicy` is None"),
        ("  dnsConfig: {nameservers: [1.1.1.1, 1.1.1.2, 1.1.1.3, 1.1.1.4]}\n", "must not have more than 3 nameservers"),
        ("  dnsConfig: {nameservers: [dns.example]}\n", "Invalid value: \"dns.example\": must be a valid IP address"),
        ("  dnsConfig: {searches: [Bad_Domain]}\n", "Invalid value: \"Bad_Domain\": a lowercase RFC 1123 subdomain"),
        ("  dnsConfig: {options: [{value: \"2\"}]}\n", "Required value: Option.Name must not be empty"),
    ];
    for (extra, says) in cases {
        let (_, diags) = kpv_core::Code::ALL.parse(&pod_with(extra));
        let errors: Vec<String> = diags
            .iter()
            .filter(|d| d.is_error())
            .map(|d| d.message.clone())
            .collect();
        assert!(
            errors.iter().any(|m| m.contains(says)),
            "{extra}: {errors:#?}"
        );
    }
    let many: Vec<String> = (0..33).map(|i| format!("d{i}.example")).collect();
    let (_, diags) = kpv_core::Code::ALL.parse(&pod_with(&format!(
        "  dnsConfig: {{searches: [{}]}}\n",
        many.join(", ")
    )));
    assert!(diags.iter().any(|d| d.is_error()
        && d.message
            .contains("must not have more than 32 search paths")));
}
