//! `kpv http`, `kpv routes` and `kpv check --format json` on the two HTTP
//! presets (tests/scenarios/ingress.yaml, gateway-api.yaml) and the
//! article's Ingress, through the CLI's pure entry point.

use kpv_core::cli::{parse_args, run, Output};
use serde_json::Value;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Run `kpv` with `files` (paths under the repository) and other arguments.
fn kpv_texts(texts: &[String], names: &[&str], args: &[&str]) -> Output {
    let mut all: Vec<String> = vec![args[0].to_string()];
    all.extend(names.iter().map(|s| s.to_string()));
    all.extend(args[1..].iter().map(|s| s.to_string()));
    match parse_args(&all) {
        Ok(cmd) => run(
            &cmd,
            texts,
            &names.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        ),
        Err(e) => Output {
            stdout: String::new(),
            stderr: e,
            code: 2,
        },
    }
}

fn kpv(files: &[&str], args: &[&str]) -> Output {
    let texts: Vec<String> = files.iter().map(|f| read(f)).collect();
    kpv_texts(&texts, files, args)
}

fn json(o: &Output) -> Value {
    assert_eq!(o.code, 0, "{}", o.stderr);
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

const ING: &str = "tests/scenarios/ingress.yaml";
const GW: &str = "tests/scenarios/gateway-api.yaml";

fn hop_kinds(v: &Value) -> Vec<String> {
    v["hops"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|h| h["what"]["kind"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn https_through_the_ingress_ends_tls_at_the_proxy_and_opens_a_second_connection() {
    let v = json(&kpv(
        &[ING],
        &["http", "https://testhost.com/anything", "--format", "json"],
    ));
    assert_eq!(v["status"], 200);
    assert_eq!(v["backend"], "default/service-test:80");
    assert!(
        v["pod"]
            .as_str()
            .is_some_and(|p| p.starts_with("default/test-")),
        "{}",
        v["pod"]
    );
    assert_eq!(v["tls_certificate"], "default/my-ssl-secret");
    assert_eq!(
        v["route"],
        serde_json::json!({"kind": "Ingress", "name": "default/test-ingress", "rule": 0, "match": 0})
    );
    assert_eq!(v["listener"], Value::Null);
    assert_eq!(v["redirect"], Value::Null);
    assert_eq!(v["request"]["method"], "GET");
    assert_eq!(v["request"]["host"], "testhost.com");
    assert_eq!(v["request"]["path"], "/anything");
    assert_eq!(v["request"]["query"], "");
    // Under externalTrafficPolicy: Cluster the proxy saw a node's address.
    let xff = v["request"]["headers"]["x-forwarded-for"]
        .as_str()
        .unwrap_or("");
    assert!(xff.starts_with("192.168.49."), "{xff}");
    assert_eq!(v["request"]["headers"]["x-real-ip"], xff);
    let kinds = hop_kinds(&v);
    let order: Vec<&str> = [
        "dns",
        "send",
        "load-balancer",
        "arrive",
        "deliver",
        "tls-terminate",
        "route",
        "connect",
        "send",
        "deliver",
        "reply",
        "reply",
    ]
    .to_vec();
    let mut it = kinds.iter();
    for want in order {
        assert!(it.any(|k| k == want), "no `{want}` in order in {kinds:?}");
    }
    // The second connection leaves the proxy Pod's IP for the endpoint Pod
    // itself, not the ClusterIP.
    let connect = v["hops"]
        .as_array()
        .and_then(|a| a.iter().find(|h| h["what"]["kind"] == "connect"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(connect["what"]["via_cluster_ip"], false);
    // The backend's peer is the proxy Pod, not the client or a node.
    assert_eq!(v["backend_peer"], connect["what"]["from"]);
    let to = connect["what"]["to"].as_str().unwrap_or("");
    assert!(to.starts_with("10.244.") && to.ends_with(":8080"), "{to}");
    let from = connect["what"]["from"].as_str().unwrap_or("");
    assert!(
        from.starts_with(v["proxy"]["pod"].as_str().map(|_| "10.244.").unwrap_or("?")),
        "{from}"
    );
}

#[test]
fn the_ingress_preset_answers_its_header_comment() {
    for (url, status, backend) in [
        (
            "https://testhost.com/",
            200,
            Some("default/service-test:80"),
        ),
        (
            "https://testhost.com/api/v1",
            200,
            Some("default/service-api:80"),
        ),
        ("http://testhost.com/", 308, None),
        (
            "http://api.testhost.com/",
            200,
            Some("default/service-api:80"),
        ),
    ] {
        let v = json(&kpv(&[ING], &["http", url, "--format", "json"]));
        assert_eq!(v["status"], status, "{url}");
        assert_eq!(v["backend"].as_str(), backend, "{url}");
    }
    let v = json(&kpv(
        &[ING],
        &["http", "http://testhost.com/x?a=1", "--format", "json"],
    ));
    assert_eq!(
        v["redirect"],
        serde_json::json!({"status": 308, "location": "https://testhost.com/x?a=1"})
    );
    assert_eq!(
        v["response"]["headers"]["location"],
        "https://testhost.com/x?a=1"
    );
    let o = kpv(
        &[ING],
        &[
            "http",
            "http://other.example/",
            "--via",
            "ingressclass/nginx",
            "--format",
            "json",
        ],
    );
    assert_eq!(json(&o)["status"], 404);
}

#[test]
fn the_gateway_preset_answers_its_header_comment() {
    let v = json(&kpv(
        &[GW],
        &[
            "http",
            "https://www.example.com/",
            "-H",
            "env: canary",
            "--format",
            "json",
        ],
    ));
    assert_eq!(v["status"], 200);
    assert_eq!(v["backend"], "default/store-v2:8080");
    assert_eq!(v["listener"], "default/web/https");
    assert_eq!(v["tls_certificate"], "default/example-cert");
    assert_eq!(v["route"]["kind"], "HTTPRoute");
    assert_eq!(v["route"]["name"], "default/store");
    assert_eq!(v["request"]["headers"]["env"], "canary");
    let v = json(&kpv(
        &[GW],
        &[
            "http",
            "http://www.example.com/store?x=1",
            "--format",
            "json",
        ],
    ));
    assert_eq!(v["status"], 301);
    assert_eq!(v["listener"], "default/web/http");
    assert_eq!(
        v["redirect"]["location"],
        "https://www.example.com/store?x=1"
    );
    assert_eq!(v["pod"], Value::Null);
    let v = json(&kpv(
        &[GW],
        &[
            "http",
            "https://www.example.com/",
            "--backend-header",
            "X-App: home",
            "--format",
            "json",
        ],
    ));
    assert_eq!(v["backend"], "default/home:80");
    assert_eq!(v["response"]["headers"]["x-served-by"], "home");
    assert_eq!(v["response"]["headers"]["x-app"], "home");
    // The weighted split: over seeds both backends serve /store, v1 most.
    let (mut v1, mut v2) = (0, 0);
    for seed in 1..=60 {
        let s = seed.to_string();
        let v = json(&kpv(
            &[GW],
            &[
                "http",
                "https://www.example.com/store",
                "--seed",
                &s,
                "--format",
                "json",
            ],
        ));
        match v["backend"].as_str() {
            Some("default/store-v1:8080") => v1 += 1,
            Some("default/store-v2:8080") => v2 += 1,
            other => panic!("seed {seed}: {other:?}"),
        }
    }
    assert!(v1 > v2 && v2 > 0, "v1 {v1}, v2 {v2}");
}

#[test]
fn every_mode_carries_the_request_to_the_proxy() {
    for mode in ["iptables", "ipvs", "nftables"] {
        let v = json(&kpv(
            &[GW],
            &[
                "http",
                "https://www.example.com/",
                "--mode",
                mode,
                "--format",
                "json",
            ],
        ));
        assert_eq!(v["status"], 200, "{mode}");
        assert_eq!(v["backend"], "default/home:80", "{mode}");
        assert!(
            hop_kinds(&v).iter().any(|k| k == "rule"),
            "{mode}: no kube-proxy rule hop"
        );
    }
}

#[test]
fn local_traffic_policy_shows_the_client_and_service_upstream_goes_via_the_cluster_ip() {
    let text = read(ING).replace(
        "  type: LoadBalancer\n  clusterIP: 10.96.50.50\n",
        "  type: LoadBalancer\n  externalTrafficPolicy: Local\n  clusterIP: 10.96.50.50\n",
    );
    let v = json(&kpv_texts(
        &[text],
        &["in.yaml"],
        &["http", "https://testhost.com/", "--format", "json"],
    ));
    assert_eq!(v["request"]["headers"]["x-forwarded-for"], "198.51.100.7");
    assert_eq!(v["request"]["headers"]["x-real-ip"], "198.51.100.7");
    let text = read(ING).replace(
        "  name: test-ingress\n  namespace: default\n",
        "  name: test-ingress\n  namespace: default\n  annotations:\n    nginx.ingress.kubernetes.io/service-upstream: \"true\"\n",
    );
    let v = json(&kpv_texts(
        &[text],
        &["in.yaml"],
        &["http", "https://testhost.com/", "--format", "json"],
    ));
    let connect = v["hops"]
        .as_array()
        .and_then(|a| a.iter().find(|h| h["what"]["kind"] == "connect"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(connect["what"]["via_cluster_ip"], true);
    assert_eq!(connect["what"]["to"], "10.96.10.10:80");
    assert_eq!(v["status"], 200);
    assert!(v["pod"]
        .as_str()
        .is_some_and(|p| p.starts_with("default/test-")));
}

#[test]
fn the_articles_ingress_as_printed_reaches_the_backend() {
    let files = [
        "tests/http/article-ingress.yaml",
        "tests/http/article-cluster.yaml",
    ];
    let o = kpv(
        &files,
        &["http", "https://testhost.com/anything", "--format", "json"],
    );
    assert!(
        o.stderr.contains("removed in Kubernetes 1.22"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("kpv added one as a controller would"),
        "{}",
        o.stderr
    );
    let v = json(&o);
    assert_eq!(v["status"], 200);
    assert_eq!(v["backend"], "default/service-test:80");
    assert_eq!(v["tls_certificate"], "default/my-ssl-secret");
    assert_eq!(v["proxy"]["synthesized"], true);
    assert_eq!(v["route"]["name"], "default/test-ingress");
    let text = kpv(&files, &["http", "https://testhost.com/anything"]);
    assert_eq!(text.code, 0);
    assert!(text.stdout.contains("TLS terminated"), "{}", text.stdout);
    assert!(
        text.stdout.contains("straight to the endpoint Pod"),
        "{}",
        text.stdout
    );
}

#[test]
fn routes_prints_each_table_in_evaluation_order() {
    let o = kpv(&[GW], &["routes"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let store = o.stdout.find("PathPrefix /store").unwrap_or(usize::MAX);
    let canary = o.stdout.find("header:env=canary").unwrap_or(usize::MAX);
    let home = o
        .stdout
        .find("PathPrefix / → default/home")
        .unwrap_or(usize::MAX);
    assert!(store < canary && canary < home, "{}", o.stdout);
    let v = json(&kpv(&[GW], &["routes", "--format", "json"]));
    let listeners = &v["entry_points"][0]["listeners"];
    assert_eq!(listeners[1]["name"], "https");
    assert_eq!(listeners[1]["matches"][0]["route"], "default/store");
    assert_eq!(listeners[1]["matches"][0]["rule"], 1);
    assert_eq!(listeners[1]["matches"][0]["backends"][0]["weight"], 90);
    let v = json(&kpv(&[ING], &["routes", "--format", "json"]));
    assert_eq!(v["entry_points"][0]["entry"], "ingressclass/nginx");
    let hosts = &v["entry_points"][0]["hosts"];
    assert_eq!(hosts[1]["host"], "testhost.com");
    assert_eq!(hosts[1]["paths"][0]["path"], "/api");
    assert_eq!(hosts[1]["https_redirect"], true);
}

#[test]
fn check_json_reports_route_conditions_listeners_and_ingress_addresses() {
    let v = json(&kpv(&[GW], &["check", "--format", "json"]));
    let routes = v["routes"].as_array().cloned().unwrap_or_default();
    assert_eq!(routes.len(), 2);
    for r in &routes {
        assert_eq!(r["kind"], "HTTPRoute");
        assert_eq!(
            r["conditions"][0],
            serde_json::json!({"type": "Accepted", "status": "True", "reason": "Accepted"})
        );
        assert_eq!(r["conditions"][1]["reason"], "ResolvedRefs");
    }
    assert_eq!(routes[0]["parent"], "default/web/http");
    let attached: Vec<i64> = v["listeners"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|l| l["attached_routes"].as_i64())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(attached, [1, 1]);
    let v = json(&kpv(&[ING], &["check", "--format", "json"]));
    assert_eq!(v["ingresses"][0]["address"], "203.0.113.20");
    assert_eq!(v["ingresses"][0]["class"], "nginx");
    assert_eq!(v["ok"], true);
}

#[test]
fn usage_errors_say_what_is_wrong() {
    let both = read(ING)
        + "\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\nspec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: web}\nspec: {gatewayClassName: eg, listeners: [{name: http, port: 80, protocol: HTTP}]}\n";
    for (args, want) in [
        (
            vec!["http", "--via", "gateway/x"],
            "use gateway/NAMESPACE/NAME or ingressclass/NAME",
        ),
        (vec!["http", "-H", "nocolon"], "write 'Name: value'"),
        (
            vec!["routes", "--via", "ingressclass/nginx"],
            "takes no --via",
        ),
    ] {
        let o = kpv(&[ING], &args);
        assert_ne!(o.code, 0, "{args:?}");
        assert!(o.stderr.contains(want), "{args:?}: {}", o.stderr);
    }
    let o = kpv(&[ING], &["http"]);
    assert!(o.stderr.contains("needs a URL"), "{}", o.stderr);
    let no_file = parse_args(&["http".to_string(), "https://x/".to_string()]);
    assert!(no_file.is_err_and(|e| e.contains("needs at least one YAML file")));
    let o = kpv_texts(&[both], &["in.yaml"], &["http", "http://nowhere.example/"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("gateway/default/web") && o.stderr.contains("ingressclass/nginx"),
        "{}",
        o.stderr
    );
    let o = kpv(
        &[ING],
        &["http", "http://x/", "--via", "gateway/default/none"],
    );
    assert!(o.stderr.contains("no such entry point"), "{}", o.stderr);
}

#[test]
fn status_conditions_are_reported_as_warnings_and_gateways_have_addresses() {
    let text = read(GW).replace("      sectionName: https\n", "      sectionName: nope\n");
    let v = json(&kpv_texts(
        &[text],
        &["in.yaml"],
        &["check", "--format", "json"],
    ));
    let store = v["routes"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["name"] == "default/store"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(store["conditions"][0]["reason"], "NoMatchingParent");
    let warned = v["diagnostics"].as_array().is_some_and(|a| {
        a.iter().any(|d| {
            d["object"] == "HTTPRoute/default/store"
                && d["severity"] == "warning"
                && d["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("NoMatchingParent"))
        })
    });
    assert!(warned, "{}", v["diagnostics"]);
    let v = json(&kpv(&[GW], &["check", "--format", "json"]));
    assert_eq!(
        v["gateways"][0],
        serde_json::json!({
            "name": "default/web",
            "address": "203.0.113.30",
            "conditions": [
                {"type": "Accepted", "status": "True", "reason": "Accepted"},
                {"type": "Programmed", "status": "True", "reason": "Programmed"},
            ],
        })
    );
}

#[test]
fn envoy_gateway_service_routing_goes_through_the_cluster_ip() {
    let text = read(GW).replace(
        "spec:\n  controllerName: gateway.envoyproxy.io/gatewayclass-controller\n",
        "spec:\n  controllerName: gateway.envoyproxy.io/gatewayclass-controller\n  parametersRef:\n    group: gateway.envoyproxy.io\n    kind: EnvoyProxy\n    name: service-routing\n    namespace: envoy-gateway-system\n---\napiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyProxy\nmetadata:\n  name: service-routing\n  namespace: envoy-gateway-system\nspec:\n  routingType: Service\n",
    );
    let v = json(&kpv_texts(
        &[text],
        &["in.yaml"],
        &["http", "https://www.example.com/", "--format", "json"],
    ));
    let connect = v["hops"]
        .as_array()
        .and_then(|a| a.iter().find(|h| h["what"]["kind"] == "connect"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(connect["what"]["via_cluster_ip"], true);
    assert_eq!(connect["what"]["to"], "10.96.20.3:80");
    assert_eq!(v["pod"], "default/home-a");
}

#[test]
fn a_pod_inside_the_cluster_reaches_the_gateway_too() {
    let v = json(&kpv(
        &[GW],
        &[
            "http",
            "https://www.example.com/",
            "--from",
            "pod:default/store-v1-a",
            "--format",
            "json",
        ],
    ));
    assert_eq!(v["status"], 200);
    assert_eq!(v["hops"][0]["what"]["kind"], "dns");
    assert!(
        !hop_kinds(&v).iter().any(|k| k == "load-balancer"),
        "{:?}",
        hop_kinds(&v)
    );
    // The proxy's Service has externalTrafficPolicy Local (Envoy Gateway's
    // default): kube-proxy sends Pod traffic for the load balancer's address
    // to the cluster-wide chain without masquerading ("pod traffic for ...
    // external destinations"), so the proxy sees the Pod's own 10.244.1.20.
    assert_eq!(v["proxy"]["peer"], "10.244.1.20");
    assert_eq!(v["request"]["headers"]["x-forwarded-for"], "10.244.1.20");
}

#[test]
fn headless_services_and_hand_written_slices_are_backends_too() {
    let extra = r#"
---
apiVersion: v1
kind: Service
metadata: {name: headless, namespace: default}
spec: {clusterIP: None, selector: {app: home}, ports: [{name: http, port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: manual, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: manual-1, namespace: default, labels: {kubernetes.io/service-name: manual}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: [10.244.2.21]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: extra, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https}]
  hostnames: [www.example.com]
  rules:
    - matches: [{path: {type: PathPrefix, value: /headless}}]
      backendRefs: [{name: headless, port: 80}]
    - matches: [{path: {type: PathPrefix, value: /manual}}]
      backendRefs: [{name: manual, port: 80}]
"#;
    let text = read(GW) + extra;
    for (url, backend, pod_ip) in [
        (
            "https://www.example.com/headless",
            "default/headless:80",
            "10.244.1.21:8080",
        ),
        (
            "https://www.example.com/manual",
            "default/manual:80",
            "10.244.2.21:8080",
        ),
    ] {
        let v = json(&kpv_texts(
            std::slice::from_ref(&text),
            &["in.yaml"],
            &["http", url, "--format", "json"],
        ));
        assert_eq!(v["status"], 200, "{url}: {}", v["reason"]);
        assert_eq!(v["backend"], backend, "{url}");
        let connect = v["hops"]
            .as_array()
            .and_then(|a| a.iter().find(|h| h["what"]["kind"] == "connect"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(connect["what"]["to"], pod_ip, "{url}");
    }
}

#[test]
fn a_nodeport_controller_is_reached_on_a_nodes_port() {
    let text = read(ING)
        .replace(
            "  type: LoadBalancer\n  clusterIP: 10.96.50.50\n",
            "  type: NodePort\n  clusterIP: 10.96.50.50\n",
        )
        .replace(
            "status:\n  loadBalancer:\n    ingress:\n      - ip: 203.0.113.20\n",
            "",
        );
    let v = json(&kpv_texts(
        &[text],
        &["in.yaml"],
        &["http", "https://testhost.com/", "--format", "json"],
    ));
    assert_eq!(v["status"], 200);
    assert!(!hop_kinds(&v).iter().any(|k| k == "load-balancer"));
    let send = v["hops"]
        .as_array()
        .and_then(|a| a.iter().find(|h| h["what"]["kind"] == "send"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(send["before"]["dst"], "192.168.49.11:30443");
}

/// A RequestMirror filter: `kpv http` says whether this request's copy is
/// sent (the share drawn from the seed), in text and JSON, and `kpv routes`
/// shows the filter with its share; the client's answer is the backend's.
#[test]
fn kpv_http_reports_request_mirrors() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec: {gatewayClassName: eg, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: web}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /half}}]
      filters: [{type: RequestMirror, requestMirror: {backendRef: {name: shadow, port: 80}, percent: 50}}]
      backendRefs: [{name: app, port: 80}]
    - filters: [{type: RequestMirror, requestMirror: {backendRef: {name: shadow, port: 80}}}]
      backendRefs: [{name: app, port: 80}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec: {replicas: 1, selector: {matchLabels: {app: app}}, template: {metadata: {labels: {app: app}}, spec: {containers: [{name: c, ports: [{containerPort: 8080}]}]}}}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {selector: {app: app}, ports: [{port: 80, targetPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: shadow}
spec: {selector: {app: app}, ports: [{port: 80, targetPort: 8080}]}
"#;
    let texts = vec![yaml.to_string()];
    let o = kpv_texts(&texts, &["m.yaml"], &["http", "http://web.example/all"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("mirror: default/shadow:80 sent a copy (its answer is dropped)"),
        "{}",
        o.stdout
    );
    let mut sent = Vec::new();
    for seed in ["1", "2", "3", "4", "5", "6", "7", "8"] {
        let o = kpv_texts(
            &texts,
            &["m.yaml"],
            &[
                "http",
                "http://web.example/half",
                "--seed",
                seed,
                "--format",
                "json",
            ],
        );
        let v = json(&o);
        assert_eq!(v["status"], 200);
        assert_eq!(v["backend"], "default/app:80");
        assert_eq!(v["mirrors"][0]["backend"], "default/shadow:80");
        assert_eq!(v["mirrors"][0]["fraction"], serde_json::json!([50, 100]));
        sent.push(v["mirrors"][0]["sent"] == true);
    }
    assert!(sent.contains(&true) && sent.contains(&false), "{sent:?}");
    let o = kpv_texts(&texts, &["m.yaml"], &["routes"]);
    assert!(
        o.stdout
            .contains("RequestMirror to shadow:80 (50/100 of requests)"),
        "{}",
        o.stdout
    );
}
