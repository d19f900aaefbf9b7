//! Gateway API semantics, checked against the request tables of the Gateway
//! API conformance suite (`conformance/tests/httproute-*.go`): the routes
//! below restate those tests' manifests, the expectations their tables.
//! One `check` helper sends each request through `kpv_core::http::walk`.

use kpv_core::choose::Chooser;
use kpv_core::cli_http::{request, HttpArgs, HttpFrom};
use kpv_core::http::journey::ClusterBackends;
use kpv_core::http::walk::{Decision, Reason};
use kpv_core::http::{compile, walk, EntryPoint};

/// The conformance suite's shared infrastructure, restated: a namespace,
/// three backends on port 8080, a Gateway `same-namespace` (HTTP on 80,
/// routes from the same namespace), one on 8080 and one HTTPS on 443.
const INFRA: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.0.11}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: gateway-conformance-infra, labels: {gateway-conformance: infra}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: conformance}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: same-namespace, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: same-namespace-with-http-listener-on-8080, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners: [{name: http, port: 8080, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: same-namespace-with-https-listener, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - name: https
      port: 443
      protocol: HTTPS
      allowedRoutes: {namespaces: {from: Same}}
      tls: {certificateRefs: [{name: tls-validity-checks-certificate}]}
---
apiVersion: v1
kind: Secret
metadata: {name: tls-validity-checks-certificate, namespace: gateway-conformance-infra}
type: kubernetes.io/tls
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: infra-backend-v1, namespace: gateway-conformance-infra}
spec:
  replicas: 1
  selector: {matchLabels: {app: infra-backend-v1}}
  template:
    metadata: {labels: {app: infra-backend-v1}}
    spec: {containers: [{name: c, ports: [{containerPort: 3000}]}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: infra-backend-v2, namespace: gateway-conformance-infra}
spec:
  replicas: 1
  selector: {matchLabels: {app: infra-backend-v2}}
  template:
    metadata: {labels: {app: infra-backend-v2}}
    spec: {containers: [{name: c, ports: [{containerPort: 3000}]}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: infra-backend-v3, namespace: gateway-conformance-infra}
spec:
  replicas: 1
  selector: {matchLabels: {app: infra-backend-v3}}
  template:
    metadata: {labels: {app: infra-backend-v3}}
    spec: {containers: [{name: c, ports: [{containerPort: 3000}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: infra-backend-v1, namespace: gateway-conformance-infra}
spec: {selector: {app: infra-backend-v1}, ports: [{port: 8080, targetPort: 3000}]}
---
apiVersion: v1
kind: Service
metadata: {name: infra-backend-v2, namespace: gateway-conformance-infra}
spec: {selector: {app: infra-backend-v2}, ports: [{port: 8080, targetPort: 3000}]}
---
apiVersion: v1
kind: Service
metadata: {name: infra-backend-v3, namespace: gateway-conformance-infra}
spec: {selector: {app: infra-backend-v3}, ports: [{port: 8080, targetPort: 3000}]}
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: 10.244.0.0/16
"#;

const NS: &str = "gateway-conformance-infra";

#[derive(Debug)]
enum Want {
    Backend(&'static str),
    Status(u16),
    Redirect(u16, &'static str),
}
use Want::*;

struct Req {
    url: &'static str,
    method: &'static str,
    headers: &'static [(&'static str, &'static str)],
    sni: Option<&'static str>,
}

fn get(url: &'static str) -> Req {
    Req {
        url,
        method: "GET",
        headers: &[],
        sni: None,
    }
}

fn with(url: &'static str, headers: &'static [(&'static str, &'static str)]) -> Req {
    Req {
        url,
        method: "GET",
        headers,
        sni: None,
    }
}

fn method(
    url: &'static str,
    m: &'static str,
    headers: &'static [(&'static str, &'static str)],
) -> Req {
    Req {
        url,
        method: m,
        headers,
        sni: None,
    }
}

fn decide(yaml: &str, gateway: &str, r: &Req, seed: u64) -> Decision {
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, diags) = kpv_core::model::parse(&text);
    assert!(!kpv_core::diag::has_errors(&diags), "{diags:#?}");
    let (objects, hd) = kpv_core::http::parse(&text);
    assert!(!kpv_core::diag::has_errors(&hd), "{hd:#?}");
    let rt = compile(&objects, &cluster);
    let slices = kpv_core::controller::steady_slices(&cluster);
    let view = ClusterBackends {
        cluster: &cluster,
        slices: &slices,
    };
    let args = HttpArgs {
        url: r.url.to_string(),
        via: None,
        sni: r.sni.map(str::to_string),
        method: r.method.to_string(),
        headers: r
            .headers
            .iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
            .collect(),
        backend_headers: Vec::new(),
        from: HttpFrom::External,
        seed,
    };
    let req = request(&args).expect("valid request");
    let entry = EntryPoint::Gateway(kpv_core::model::NamespacedName::new(NS, gateway));
    walk(&rt, &entry, &req, &view, &mut Chooser::new(seed)).expect("the Gateway exists")
}

/// Send every request of a table; on failure, name the request and show the
/// rules compared.
fn check(yaml: &str, gateway: &str, table: &[(Req, Want)]) {
    for (r, want) in table {
        let d = decide(yaml, gateway, r, 1);
        let ok = match want {
            Backend(name) => {
                d.status == Some(200) && d.backend.as_ref().is_some_and(|b| b.service.name == *name)
            }
            Status(s) => d.status == Some(*s),
            Redirect(s, loc) => {
                d.status == Some(*s) && d.redirect.as_ref().is_some_and(|x| x.location == *loc)
            }
        };
        assert!(
            ok,
            "{} {} {:?}: want {want:?}, got {:?} {:?} {:?} {:?}\ncompared: {:#?}",
            r.method, r.url, r.headers, d.status, d.reason, d.backend, d.redirect, d.compared
        );
    }
}

const MATCHING: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /}}, {headers: [{name: version, value: one}]}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /v2}}, {headers: [{name: version, value: two}]}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
"#;

#[test]
fn httproute_matching() {
    check(
        MATCHING,
        "same-namespace",
        &[
            (get("http://gw/"), Backend("infra-backend-v1")),
            (get("http://gw/example"), Backend("infra-backend-v1")),
            (
                with("http://gw/", &[("Version", "one")]),
                Backend("infra-backend-v1"),
            ),
            (get("http://gw/v2"), Backend("infra-backend-v2")),
            (get("http://gw/v2/example"), Backend("infra-backend-v2")),
            (
                with("http://gw/", &[("Version", "two")]),
                Backend("infra-backend-v2"),
            ),
        ],
    );
}

#[test]
fn httproute_matching_across_routes() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching-part1, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  hostnames: [example.com, example.net]
  rules:
    - matches: [{path: {type: PathPrefix, value: /}}, {headers: [{name: version, value: one}]}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: matching-part2, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  hostnames: [example.com]
  rules:
    - matches: [{path: {type: PathPrefix, value: /v2}}, {headers: [{name: version, value: two}]}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://example.com/"), Backend("infra-backend-v1")),
            (
                get("http://example.com/example"),
                Backend("infra-backend-v1"),
            ),
            (
                get("http://example.net/example"),
                Backend("infra-backend-v1"),
            ),
            (
                with("http://example.com/example", &[("Version", "one")]),
                Backend("infra-backend-v1"),
            ),
            (get("http://example.com/v2"), Backend("infra-backend-v2")),
            (get("http://example.net/v2"), Backend("infra-backend-v1")),
            (
                get("http://example.com/v2/example"),
                Backend("infra-backend-v2"),
            ),
            (
                with("http://example.com/", &[("Version", "two")]),
                Backend("infra-backend-v2"),
            ),
        ],
    );
}

#[test]
fn httproute_header_matching() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: header-matching, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{headers: [{name: version, value: one}]}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{headers: [{name: version, value: two}]}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
    - matches: [{headers: [{name: version, value: two}, {name: color, value: orange}]}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{headers: [{name: color, value: blue}]}, {headers: [{name: color, value: green}]}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{headers: [{name: color, value: red}]}, {headers: [{name: color, value: yellow}]}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (
                with("http://gw/", &[("Version", "one")]),
                Backend("infra-backend-v1"),
            ),
            (
                with("http://gw/", &[("Version", "two")]),
                Backend("infra-backend-v2"),
            ),
            (
                with("http://gw/", &[("Version", "two"), ("Color", "orange")]),
                Backend("infra-backend-v1"),
            ),
            (
                with("http://gw/", &[("Version", "two"), ("Color", "blue")]),
                Backend("infra-backend-v2"),
            ),
            (with("http://gw/", &[("Color", "orange")]), Status(404)),
            (
                with("http://gw/", &[("Some-Other-Header", "one")]),
                Status(404),
            ),
            (
                with("http://gw/", &[("Color", "blue")]),
                Backend("infra-backend-v1"),
            ),
            (
                with("http://gw/", &[("Color", "green")]),
                Backend("infra-backend-v1"),
            ),
            (
                with("http://gw/", &[("Color", "red")]),
                Backend("infra-backend-v2"),
            ),
            (
                with("http://gw/", &[("Color", "yellow")]),
                Backend("infra-backend-v2"),
            ),
            (with("http://gw/", &[("Color", "purple")]), Status(404)),
        ],
    );
}

#[test]
fn httproute_query_param_matching() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: query-param-matching, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{queryParams: [{name: animal, value: whale}]}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{queryParams: [{name: animal, value: dolphin}]}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
    - matches: [{queryParams: [{name: animal, value: dolphin}, {name: color, value: blue}]}, {queryParams: [{name: ANIMAL, value: Whale}]}]
      backendRefs: [{name: infra-backend-v3, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /path1}, queryParams: [{name: animal, value: whale}]}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{headers: [{name: version, value: one}], queryParams: [{name: animal, value: whale}]}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /path2}, headers: [{name: version, value: two}], queryParams: [{name: animal, value: whale}]}]
      backendRefs: [{name: infra-backend-v3, port: 8080}]
    - matches:
        - {path: {type: PathPrefix, value: /path3}, queryParams: [{name: animal, value: shark}]}
        - {path: {type: PathPrefix, value: /path4}, headers: [{name: version, value: three}], queryParams: [{name: animal, value: kraken}]}
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /path5}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{queryParams: [{name: animal, value: hydra}]}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
    - matches: [{headers: [{name: version, value: four}]}]
      backendRefs: [{name: infra-backend-v3, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://gw/?animal=whale"), Backend("infra-backend-v1")),
            (
                get("http://gw/?animal=dolphin"),
                Backend("infra-backend-v2"),
            ),
            (
                get("http://gw/?animal=dolphin&color=blue"),
                Backend("infra-backend-v3"),
            ),
            (get("http://gw/?ANIMAL=Whale"), Backend("infra-backend-v3")),
            (
                get("http://gw/?animal=whale&otherparam=irrelevant"),
                Backend("infra-backend-v1"),
            ),
            (
                get("http://gw/?animal=dolphin&color=yellow"),
                Backend("infra-backend-v2"),
            ),
            (get("http://gw/?color=blue"), Status(404)),
            (get("http://gw/?animal=dog"), Status(404)),
            (get("http://gw/?animal=whaledolphin"), Status(404)),
            (get("http://gw/"), Status(404)),
            (
                get("http://gw/path1?animal=whale"),
                Backend("infra-backend-v1"),
            ),
            (
                with("http://gw/?animal=whale", &[("version", "one")]),
                Backend("infra-backend-v2"),
            ),
            (
                with("http://gw/path2?animal=whale", &[("version", "two")]),
                Backend("infra-backend-v3"),
            ),
            (
                get("http://gw/path3?animal=shark"),
                Backend("infra-backend-v1"),
            ),
            (
                with("http://gw/path4?animal=kraken", &[("version", "three")]),
                Backend("infra-backend-v1"),
            ),
            (get("http://gw/?animal=shark"), Status(404)),
            (get("http://gw/path4?animal=kraken"), Status(404)),
            (
                get("http://gw/path5?animal=hydra"),
                Backend("infra-backend-v1"),
            ),
            (
                with("http://gw/?animal=hydra", &[("version", "four")]),
                Backend("infra-backend-v3"),
            ),
        ],
    );
}

#[test]
fn httproute_method_matching() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: method-matching, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{method: POST}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{method: GET}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /path1}, method: GET}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{headers: [{name: version, value: one}], method: PUT}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /path2}, headers: [{name: version, value: two}], method: POST}]
      backendRefs: [{name: infra-backend-v3, port: 8080}]
    - matches:
        - {path: {type: PathPrefix, value: /path3}, method: PATCH}
        - {path: {type: PathPrefix, value: /path4}, headers: [{name: version, value: three}], method: DELETE}
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /path5}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{method: PATCH}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
    - matches: [{headers: [{name: version, value: four}]}]
      backendRefs: [{name: infra-backend-v3, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (
                method("http://gw/", "POST", &[]),
                Backend("infra-backend-v1"),
            ),
            (
                method("http://gw/", "GET", &[]),
                Backend("infra-backend-v2"),
            ),
            (method("http://gw/", "HEAD", &[]), Status(404)),
            (
                method("http://gw/path1", "GET", &[]),
                Backend("infra-backend-v1"),
            ),
            (
                method("http://gw/", "PUT", &[("version", "one")]),
                Backend("infra-backend-v2"),
            ),
            (
                method("http://gw/path2", "POST", &[("version", "two")]),
                Backend("infra-backend-v3"),
            ),
            (
                method("http://gw/path3", "PATCH", &[]),
                Backend("infra-backend-v1"),
            ),
            (
                method("http://gw/path4", "DELETE", &[("version", "three")]),
                Backend("infra-backend-v1"),
            ),
            (method("http://gw/", "PUT", &[]), Status(404)),
            (method("http://gw/path4", "DELETE", &[]), Status(404)),
            (
                method("http://gw/path5", "PATCH", &[]),
                Backend("infra-backend-v1"),
            ),
            (
                method("http://gw/", "PATCH", &[("version", "four")]),
                Backend("infra-backend-v2"),
            ),
        ],
    );
}

#[test]
fn httproute_hostname_intersection() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: httproute-hostname-intersection, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: listener-1, port: 80, protocol: HTTP, hostname: very.specific.com}
    - {name: listener-2, port: 80, protocol: HTTP, hostname: "*.wildcard.io"}
    - {name: listener-3, port: 80, protocol: HTTP, hostname: "*.anotherwildcard.io"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: specific-host-matches-listener-specific-host, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-hostname-intersection}]
  hostnames: [non.matching.com, "*.nonmatchingwildcard.io", very.specific.com]
  rules: [{matches: [{path: {type: PathPrefix, value: /s1}}], backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: specific-host-matches-listener-wildcard-host, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-hostname-intersection}]
  hostnames: [non.matching.com, wildcard.io, foo.wildcard.io, bar.wildcard.io, foo.bar.wildcard.io]
  rules: [{matches: [{path: {type: PathPrefix, value: /s2}}], backendRefs: [{name: infra-backend-v2, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wildcard-host-matches-listener-specific-host, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-hostname-intersection}]
  hostnames: [non.matching.com, "*.specific.com"]
  rules: [{matches: [{path: {type: PathPrefix, value: /s3}}], backendRefs: [{name: infra-backend-v3, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wildcard-host-matches-listener-wildcard-host, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-hostname-intersection}]
  hostnames: ["*.anotherwildcard.io"]
  rules: [{matches: [{path: {type: PathPrefix, value: /s4}}], backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: no-intersecting-hosts, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-hostname-intersection}]
  hostnames: [specific.but.wrong.com, wildcard.io]
  rules: [{matches: [{path: {type: PathPrefix, value: /s5}}], backendRefs: [{name: infra-backend-v2, port: 8080}]}]
"#;
    let g = "httproute-hostname-intersection";
    check(
        yaml,
        g,
        &[
            (
                get("http://very.specific.com/s1"),
                Backend("infra-backend-v1"),
            ),
            // A port in the Host header takes no part in matching.
            (
                with(
                    "http://very.specific.com/s1",
                    &[("Host", "very.specific.com:1234")],
                ),
                Backend("infra-backend-v1"),
            ),
            (get("http://non.matching.com/s1"), Status(404)),
            (get("http://foo.nonmatchingwildcard.io/s1"), Status(404)),
            (get("http://foo.wildcard.io/s1"), Status(404)),
            (
                get("http://very.specific.com/non-matching-prefix"),
                Status(404),
            ),
            (
                get("http://foo.wildcard.io/s2"),
                Backend("infra-backend-v2"),
            ),
            (
                get("http://bar.wildcard.io/s2"),
                Backend("infra-backend-v2"),
            ),
            (
                get("http://foo.bar.wildcard.io/s2"),
                Backend("infra-backend-v2"),
            ),
            (get("http://non.matching.com/s2"), Status(404)),
            (get("http://wildcard.io/s2"), Status(404)),
            (get("http://very.specific.com/s2"), Status(404)),
            (
                get("http://very.specific.com/s3"),
                Backend("infra-backend-v3"),
            ),
            (get("http://non.matching.com/s3"), Status(404)),
            (get("http://foo.specific.com/s3"), Status(404)),
            (get("http://foo.wildcard.io/s3"), Status(404)),
            (
                get("http://foo.anotherwildcard.io/s4"),
                Backend("infra-backend-v1"),
            ),
            (
                get("http://bar.anotherwildcard.io/s4"),
                Backend("infra-backend-v1"),
            ),
            (
                get("http://foo.bar.anotherwildcard.io/s4"),
                Backend("infra-backend-v1"),
            ),
            (get("http://anotherwildcard.io/s4"), Status(404)),
            (get("http://foo.wildcard.io/s4"), Status(404)),
            (get("http://very.specific.com/s4"), Status(404)),
            (get("http://specific.but.wrong.com/s5"), Status(404)),
            (get("http://wildcard.io/s5"), Status(404)),
        ],
    );
}

#[test]
fn httproute_listener_hostname_matching() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: httproute-listener-hostname-matching, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: listener-1, port: 80, protocol: HTTP, hostname: bar.com}
    - {name: listener-2, port: 80, protocol: HTTP, hostname: foo.bar.com}
    - {name: listener-3, port: 80, protocol: HTTP, hostname: "*.bar.com"}
    - {name: listener-4, port: 80, protocol: HTTP, hostname: "*.foo.com"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: backend-v1, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-listener-hostname-matching, sectionName: listener-1}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: backend-v2, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-listener-hostname-matching, sectionName: listener-2}]
  rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: backend-v3, namespace: gateway-conformance-infra}
spec:
  parentRefs:
    - {name: httproute-listener-hostname-matching, sectionName: listener-3}
    - {name: httproute-listener-hostname-matching, sectionName: listener-4}
  rules: [{backendRefs: [{name: infra-backend-v3, port: 8080}]}]
"#;
    check(
        yaml,
        "httproute-listener-hostname-matching",
        &[
            (get("http://bar.com/"), Backend("infra-backend-v1")),
            (get("http://foo.bar.com/"), Backend("infra-backend-v2")),
            (get("http://baz.bar.com/"), Backend("infra-backend-v3")),
            (get("http://boo.bar.com/"), Backend("infra-backend-v3")),
            (
                get("http://multiple.prefixes.bar.com/"),
                Backend("infra-backend-v3"),
            ),
            (
                get("http://multiple.prefixes.foo.com/"),
                Backend("infra-backend-v3"),
            ),
            (get("http://foo.com/"), Status(404)),
            (get("http://no.matching.host/"), Status(404)),
        ],
    );
}

#[test]
fn httproute_redirect_port_and_scheme() {
    let rule = |path: &str, extra: &str| {
        format!("    - matches: [{{path: {{type: PathPrefix, value: {path}}}}}]\n      filters: [{{type: RequestRedirect, requestRedirect: {{hostname: example.org{extra}}}}}]\n")
    };
    let route = |name: &str, parent: &str, rules: &[(&str, &str)]| {
        let mut s = format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: {parent}}}]\n  rules:\n");
        for (p, e) in rules {
            s.push_str(&rule(p, e));
        }
        s
    };
    let yaml = [
        route(
            "http-route-for-listener-on-port-80",
            "same-namespace",
            &[
                ("/scheme-nil-and-port-nil", ""),
                ("/scheme-nil-and-port-80", ", port: 80"),
                ("/scheme-nil-and-port-8080", ", port: 8080"),
                ("/scheme-https-and-port-nil", ", scheme: https"),
                ("/scheme-https-and-port-443", ", scheme: https, port: 443"),
                ("/scheme-https-and-port-8443", ", scheme: https, port: 8443"),
            ],
        ),
        route(
            "http-route-for-listener-on-port-8080",
            "same-namespace-with-http-listener-on-8080",
            &[
                ("/scheme-nil-and-port-nil", ""),
                ("/scheme-nil-and-port-80", ", port: 80"),
                ("/scheme-https-and-port-nil", ", scheme: https"),
            ],
        ),
        route(
            "http-route-for-listener-on-port-443",
            "same-namespace-with-https-listener",
            &[
                ("/scheme-nil-and-port-nil", ""),
                ("/scheme-nil-and-port-443", ", port: 443"),
                ("/scheme-nil-and-port-8443", ", port: 8443"),
                ("/scheme-http-and-port-nil", ", scheme: http"),
                ("/scheme-http-and-port-80", ", scheme: http, port: 80"),
                ("/scheme-http-and-port-8080", ", scheme: http, port: 8080"),
            ],
        ),
    ]
    .join("---\n");
    check(
        &yaml,
        "same-namespace",
        &[
            (
                get("http://gw/scheme-nil-and-port-nil"),
                Redirect(302, "http://example.org/scheme-nil-and-port-nil"),
            ),
            (
                get("http://gw/scheme-nil-and-port-80"),
                Redirect(302, "http://example.org/scheme-nil-and-port-80"),
            ),
            (
                get("http://gw/scheme-nil-and-port-8080"),
                Redirect(302, "http://example.org:8080/scheme-nil-and-port-8080"),
            ),
            (
                get("http://gw/scheme-https-and-port-nil"),
                Redirect(302, "https://example.org/scheme-https-and-port-nil"),
            ),
            (
                get("http://gw/scheme-https-and-port-443"),
                Redirect(302, "https://example.org/scheme-https-and-port-443"),
            ),
            (
                get("http://gw/scheme-https-and-port-8443"),
                Redirect(302, "https://example.org:8443/scheme-https-and-port-8443"),
            ),
        ],
    );
    check(
        &yaml,
        "same-namespace-with-http-listener-on-8080",
        &[
            (
                get("http://gw:8080/scheme-nil-and-port-nil"),
                Redirect(302, "http://example.org:8080/scheme-nil-and-port-nil"),
            ),
            (
                get("http://gw:8080/scheme-nil-and-port-80"),
                Redirect(302, "http://example.org/scheme-nil-and-port-80"),
            ),
            (
                get("http://gw:8080/scheme-https-and-port-nil"),
                Redirect(302, "https://example.org/scheme-https-and-port-nil"),
            ),
        ],
    );
    check(
        &yaml,
        "same-namespace-with-https-listener",
        &[
            (
                get("https://example.org/scheme-nil-and-port-nil"),
                Redirect(302, "https://example.org/scheme-nil-and-port-nil"),
            ),
            (
                get("https://example.org/scheme-nil-and-port-443"),
                Redirect(302, "https://example.org/scheme-nil-and-port-443"),
            ),
            (
                get("https://example.org/scheme-nil-and-port-8443"),
                Redirect(302, "https://example.org:8443/scheme-nil-and-port-8443"),
            ),
            (
                get("https://example.org/scheme-http-and-port-nil"),
                Redirect(302, "http://example.org/scheme-http-and-port-nil"),
            ),
            (
                get("https://example.org/scheme-http-and-port-80"),
                Redirect(302, "http://example.org/scheme-http-and-port-80"),
            ),
            (
                get("https://example.org/scheme-http-and-port-8080"),
                Redirect(302, "http://example.org:8080/scheme-http-and-port-8080"),
            ),
        ],
    );
}

#[test]
fn httproute_redirect_path_host_and_status() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: redirect-path, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /original-prefix}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}}}]
    - matches: [{path: {type: PathPrefix, value: /full}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /full-path-replacement}}}]
    - matches: [{path: {type: PathPrefix, value: /hostname-redirect}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org}}]
    - matches: [{path: {type: PathPrefix, value: /host-and-status}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org, statusCode: 301}}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (
                get("http://gw/original-prefix/lemon"),
                Redirect(302, "http://gw/replacement-prefix/lemon"),
            ),
            (
                get("http://gw/full/path/original"),
                Redirect(302, "http://gw/full-path-replacement"),
            ),
            (
                get("http://gw/hostname-redirect"),
                Redirect(302, "http://example.org/hostname-redirect"),
            ),
            (
                get("http://gw/host-and-status"),
                Redirect(301, "http://example.org/host-and-status"),
            ),
        ],
    );
}

#[test]
fn httproute_rewrite_path_and_host() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: rewrite-path, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /prefix/one}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /one}}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /strip-prefix}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /full/one}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: /one}}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /host}}]
      filters: [{type: URLRewrite, urlRewrite: {hostname: example.org}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
"#;
    for (url, path, host) in [
        ("http://gw/prefix/one/two", "/one/two", "gw"),
        ("http://gw/strip-prefix/three", "/three", "gw"),
        ("http://gw/strip-prefix", "/", "gw"),
        ("http://gw/full/one/two", "/one", "gw"),
        ("http://gw/host/x", "/host/x", "example.org"),
    ] {
        let d = decide(yaml, "same-namespace", &get(url), 1);
        assert_eq!(d.status, Some(200), "{url}");
        assert_eq!(d.request.path, path, "{url}");
        assert_eq!(d.request.host, host, "{url}");
    }
}

#[test]
fn httproute_request_and_response_header_modifiers() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: request-header-modifier, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /set}}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}]}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /add}}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {add: [{name: X-Header-Add, value: add-appends-values}]}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /remove}}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {remove: [X-Header-Remove]}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /response}}]
      filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}], add: [{name: X-Header-Add, value: add-appends-values}], remove: [X-Header-Remove]}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
"#;
    let d = decide(
        yaml,
        "same-namespace",
        &with(
            "http://gw/set",
            &[
                ("Some-Other-Header", "val"),
                ("X-Header-Set", "some-other-value"),
            ],
        ),
        1,
    );
    assert_eq!(
        d.request.headers.get("x-header-set").map(String::as_str),
        Some("set-overwrites-values")
    );
    assert_eq!(
        d.request
            .headers
            .get("some-other-header")
            .map(String::as_str),
        Some("val")
    );
    let d = decide(
        yaml,
        "same-namespace",
        &with("http://gw/add", &[("X-Header-Add", "some-other-value")]),
        1,
    );
    assert_eq!(
        d.request.headers.get("x-header-add").map(String::as_str),
        Some("some-other-value,add-appends-values")
    );
    let d = decide(
        yaml,
        "same-namespace",
        &with("http://gw/remove", &[("X-Header-Remove", "val")]),
        1,
    );
    assert!(!d.request.headers.contains_key("x-header-remove"));
    let d = decide(yaml, "same-namespace", &get("http://gw/response"), 1);
    let backend = [
        ("X-Header-Set".to_string(), "original".to_string()),
        ("X-Header-Add".to_string(), "original".to_string()),
        ("X-Header-Remove".to_string(), "gone".to_string()),
    ];
    let got = d.response_headers(&backend);
    assert_eq!(
        got.get("x-header-set").map(String::as_str),
        Some("set-overwrites-values")
    );
    assert_eq!(
        got.get("x-header-add").map(String::as_str),
        Some("original,add-appends-values")
    );
    assert!(!got.contains_key("x-header-remove"));
}

#[test]
fn httproute_weight_shares_and_zero_weight() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: weighted-backends, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - backendRefs:
        - {name: infra-backend-v1, port: 8080, weight: 70}
        - {name: infra-backend-v2, port: 8080, weight: 30}
        - {name: infra-backend-v3, port: 8080, weight: 0}
"#;
    let mut counts = std::collections::BTreeMap::new();
    for seed in 0..1000 {
        let d = decide(yaml, "same-namespace", &get("http://gw/"), seed);
        let name = d.backend.map(|b| b.service.name).unwrap_or_default();
        *counts.entry(name).or_insert(0) += 1;
    }
    let v1 = counts.get("infra-backend-v1").copied().unwrap_or(0);
    let v2 = counts.get("infra-backend-v2").copied().unwrap_or(0);
    assert!(!counts.contains_key("infra-backend-v3"), "{counts:?}");
    assert!((630..=770).contains(&v1), "{counts:?}");
    assert!((230..=370).contains(&v2), "{counts:?}");
}

#[test]
fn invalid_backends_get_500_and_empty_backends_get_503() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /nonexistent}}]
      backendRefs: [{name: nonexistent, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /unknown-kind}}]
      backendRefs: [{group: unknownkind.example.com, kind: NonExistent, name: infra-backend-v1}]
    - matches: [{path: {type: PathPrefix, value: /no-backends}}]
    - matches: [{path: {type: PathPrefix, value: /all-zero}}]
      backendRefs: [{name: infra-backend-v1, port: 8080, weight: 0}]
    - matches: [{path: {type: PathPrefix, value: /cross-namespace}}]
      backendRefs: [{name: web-backend, namespace: gateway-conformance-web-backend, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /empty}}]
      backendRefs: [{name: empty, port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: empty, namespace: gateway-conformance-infra}
spec: {selector: {app: nobody}, ports: [{port: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-backend, namespace: gateway-conformance-web-backend}
spec: {selector: {app: nobody}, ports: [{port: 8080}]}
"#;
    for (url, status, reason) in [
        (
            "http://gw/nonexistent",
            500,
            Reason::InvalidBackend {
                reason: "BackendNotFound",
            },
        ),
        (
            "http://gw/unknown-kind",
            500,
            Reason::InvalidBackend {
                reason: "InvalidKind",
            },
        ),
        ("http://gw/no-backends", 500, Reason::NoBackends),
        ("http://gw/all-zero", 500, Reason::NoBackends),
        (
            "http://gw/cross-namespace",
            500,
            Reason::InvalidBackend {
                reason: "RefNotPermitted",
            },
        ),
        ("http://gw/empty", 503, Reason::NoReadyEndpoints),
    ] {
        let d = decide(yaml, "same-namespace", &get(url), 1);
        assert_eq!((d.status, &d.reason), (Some(status), &reason), "{url}");
    }
}

#[test]
fn reference_grant_permits_a_cross_namespace_backend() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reference-grant, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: web-backend, namespace: gateway-conformance-web-backend, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: reference-grant, namespace: gateway-conformance-web-backend}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: gateway-conformance-infra}]
  to: [{group: "", kind: Service, name: web-backend}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web-backend, namespace: gateway-conformance-web-backend}
spec:
  replicas: 1
  selector: {matchLabels: {app: web-backend}}
  template:
    metadata: {labels: {app: web-backend}}
    spec: {containers: [{name: c, ports: [{containerPort: 3000}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: web-backend, namespace: gateway-conformance-web-backend}
spec: {selector: {app: web-backend}, ports: [{port: 8080, targetPort: 3000}]}
"#;
    check(
        yaml,
        "same-namespace",
        &[(get("http://gw/"), Backend("web-backend"))],
    );
    // The grant for another Service name does not cover this one.
    let other = yaml.replace("name: web-backend}]\n---", "name: other}]\n---");
    check(
        &other,
        "same-namespace",
        &[(get("http://gw/"), Status(500))],
    );
}

#[test]
fn https_listener_by_sni_and_misdirected_requests() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: two-https, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: a, port: 443, protocol: HTTPS, hostname: a.example.com, tls: {certificateRefs: [{name: tls-validity-checks-certificate}]}}
    - {name: b, port: 443, protocol: HTTPS, hostname: b.example.com, tls: {certificateRefs: [{name: tls-validity-checks-certificate}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: two-https, sectionName: a}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: two-https, sectionName: b}]
  rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]
"#;
    let sni =
        |url: &'static str, sni: &'static str, host: &'static [(&'static str, &'static str)]| Req {
            url,
            method: "GET",
            headers: host,
            sni: Some(sni),
        };
    check(
        yaml,
        "two-https",
        &[
            (get("https://a.example.com/"), Backend("infra-backend-v1")),
            (get("https://b.example.com/"), Backend("infra-backend-v2")),
            (
                sni(
                    "https://a.example.com/",
                    "a.example.com",
                    &[("Host", "b.example.com")],
                ),
                Status(421),
            ),
        ],
    );
    let d = decide(yaml, "two-https", &get("https://c.example.com/"), 1);
    assert_eq!((d.status, d.reason), (None, Reason::TlsHandshakeFailed));
    let d = decide(yaml, "two-https", &get("http://a.example.com/"), 1);
    assert_eq!((d.status, d.reason), (None, Reason::NoListener));
}

#[test]
fn route_status_reasons_and_attached_routes() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: hosts, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: only, port: 80, protocol: HTTP, hostname: foo.com}
    - {name: all, port: 8080, protocol: HTTP, hostname: bar.com, allowedRoutes: {namespaces: {from: All}}}
    - {name: selected, port: 8081, protocol: HTTP, allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {gateway-conformance: infra}}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ok, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: hosts, sectionName: only}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wrong-host, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: hosts, sectionName: only}]
  hostnames: [bar.com]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wrong-section, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: hosts, sectionName: nope}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wrong-port, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: hosts, sectionName: only, port: 8080}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: elsewhere, namespace: other}
spec:
  parentRefs: [{name: hosts, namespace: gateway-conformance-infra}]
  rules: [{backendRefs: [{name: missing, port: 8080}]}]
"#;
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::model::parse(&text);
    let (objects, _) = kpv_core::http::parse(&text);
    let rt = compile(&objects, &cluster);
    let reason = |route: &str| -> Vec<(&str, &str)> {
        rt.route_status
            .iter()
            .filter(|s| s.route.name == route)
            .flat_map(|s| s.conditions.iter().map(|c| (c.kind, c.reason)))
            .collect()
    };
    assert_eq!(
        reason("ok"),
        [("Accepted", "Accepted"), ("ResolvedRefs", "ResolvedRefs")]
    );
    assert_eq!(
        reason("wrong-host")[0],
        ("Accepted", "NoMatchingListenerHostname")
    );
    assert_eq!(reason("wrong-section")[0], ("Accepted", "NoMatchingParent"));
    assert_eq!(reason("wrong-port")[0], ("Accepted", "NoMatchingParent"));
    // From namespace `other`: only the `all` listener takes it (the
    // selector wants the infra label); its backend does not exist.
    assert_eq!(
        reason("elsewhere"),
        [
            ("Accepted", "Accepted"),
            ("ResolvedRefs", "BackendNotFound")
        ]
    );
    let Some(kpv_core::http::model::Table::Gateway(g)) =
        rt.tables
            .get(&EntryPoint::Gateway(kpv_core::model::NamespacedName::new(
                NS, "hosts",
            )))
    else {
        panic!("no table for the Gateway");
    };
    let attached: Vec<usize> = g.listeners.iter().map(|l| l.attached_routes).collect();
    assert_eq!(attached, [1, 1, 0]);
}

/// Ties between routes go to the oldest, then to `namespace/name` order;
/// within a route, to the first rule.
#[test]
fn ties_go_to_the_oldest_route_then_by_name_then_rule_order() {
    let route = |name: &str, created: &str, backend: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: gateway-conformance-infra{created}}}\nspec:\n  parentRefs: [{{name: same-namespace}}]\n  rules:\n    - matches: [{{path: {{type: PathPrefix, value: /same}}}}]\n      backendRefs: [{{name: {backend}, port: 8080}}]\n    - matches: [{{path: {{type: PathPrefix, value: /same}}}}]\n      backendRefs: [{{name: infra-backend-v3, port: 8080}}]\n")
    };
    let older = [
        route(
            "b",
            ", creationTimestamp: \"2024-01-01T00:00:00Z\"",
            "infra-backend-v1",
        ),
        route(
            "a",
            ", creationTimestamp: \"2025-01-01T00:00:00Z\"",
            "infra-backend-v2",
        ),
    ]
    .join("---\n");
    check(
        &older,
        "same-namespace",
        &[(get("http://gw/same"), Backend("infra-backend-v1"))],
    );
    let same_time = [
        route(
            "b",
            ", creationTimestamp: \"2024-01-01T00:00:00Z\"",
            "infra-backend-v1",
        ),
        route(
            "a",
            ", creationTimestamp: \"2024-01-01T00:00:00Z\"",
            "infra-backend-v2",
        ),
    ]
    .join("---\n");
    check(
        &same_time,
        "same-namespace",
        &[(get("http://gw/same"), Backend("infra-backend-v2"))],
    );
    // A more specific hostname beats everything below it in the order.
    let hosts = format!(
        "{}---\n{}",
        route("wild", "", "infra-backend-v1").replace(
            "  parentRefs",
            "  hostnames: [\"*.example.com\"]\n  parentRefs"
        ),
        route("exact", "", "infra-backend-v2")
            .replace(
                "  parentRefs",
                "  hostnames: [foo.example.com]\n  parentRefs"
            )
            .replace("value: /same}", "value: /}")
    );
    check(
        &hosts,
        "same-namespace",
        &[(
            get("http://foo.example.com/same"),
            Backend("infra-backend-v2"),
        )],
    );
}

#[test]
fn a_gateway_without_its_class_is_not_programmed() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: orphan, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: missing
  listeners: [{name: http, port: 80, protocol: HTTP}]
"#;
    let text = format!("{INFRA}\n---\n{yaml}");
    let mut cluster = kpv_core::model::parse(&text).0;
    let rt = compile(&cluster.routing.clone(), &cluster);
    let proxies = kpv_core::http::controller::place_proxies(&mut cluster, &rt);
    let orphan = EntryPoint::Gateway(kpv_core::model::NamespacedName::new(NS, "orphan"));
    assert!(proxies.iter().all(|p| p.entry != orphan), "{proxies:#?}");
    assert!(proxies.iter().any(|p| p.entry != orphan && p.synthesized));
}

#[test]
fn conflicted_listeners_take_no_requests() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: twice, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: one, port: 80, protocol: HTTP, hostname: foo.com}
    - {name: two, port: 80, protocol: HTTP, hostname: foo.com}
    - {name: three, port: 80, protocol: HTTP, hostname: bar.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: all, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: twice}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
"#;
    check(
        yaml,
        "twice",
        &[
            (get("http://foo.com/"), Status(404)),
            (get("http://bar.com/"), Backend("infra-backend-v1")),
        ],
    );
}

#[test]
fn an_https_listener_needs_a_tls_secret_it_may_use() {
    let yaml = |cert_ref: &str, grant: &str| {
        format!(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: tls, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: https, port: 443, protocol: HTTPS, tls: {{certificateRefs: [{cert_ref}]}}}}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: r, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: tls}}]\n  rules: [{{backendRefs: [{{name: infra-backend-v1, port: 8080}}]}}]\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: elsewhere, namespace: certs}}\ntype: kubernetes.io/tls\n{grant}"
        )
    };
    let grant = "---\napiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\nmetadata: {name: g, namespace: certs}\nspec:\n  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: gateway-conformance-infra}]\n  to: [{group: \"\", kind: Secret}]\n";
    for (cert_ref, grant, problem) in [
        ("{name: tls-validity-checks-certificate}", "", None),
        ("{name: missing}", "", Some("InvalidCertificateRef")),
        (
            "{name: elsewhere, namespace: certs}",
            "",
            Some("RefNotPermitted"),
        ),
        ("{name: elsewhere, namespace: certs}", grant, None),
    ] {
        let y = yaml(cert_ref, grant);
        let text = format!("{INFRA}\n---\n{y}");
        let (cluster, diags) = kpv_core::model::parse(&text);
        assert!(!kpv_core::diag::has_errors(&diags), "{diags:#?}");
        let rt = compile(&cluster.routing, &cluster);
        let warned: Vec<String> = kpv_core::http::status::diagnostics(&rt)
            .into_iter()
            .map(|d| d.message)
            .collect();
        let d = decide(&y, "tls", &get("https://any.example/"), 1);
        match problem {
            None => {
                assert_eq!(d.status, Some(200), "{cert_ref}: {:?}", d.reason);
                assert!(warned.is_empty(), "{warned:?}");
            }
            Some(p) => {
                assert_eq!(
                    (d.status, &d.reason),
                    (None, &Reason::TlsHandshakeFailed),
                    "{cert_ref}"
                );
                assert!(
                    warned.iter().any(|w| w.contains(p)),
                    "{cert_ref}: {warned:?}"
                );
            }
        }
    }
}

#[test]
fn allowed_route_kinds_and_namespaces_decide_attachment() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: kinds, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: grpc-only, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: GRPCRoute}]}}
    - {name: same, port: 8080, protocol: HTTP}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: kinds, sectionName: grpc-only}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: other-ns, namespace: elsewhere}
spec:
  parentRefs: [{name: kinds, namespace: gateway-conformance-infra, sectionName: same}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
"#;
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::model::parse(&text);
    let rt = compile(&cluster.routing, &cluster);
    let accepted: Vec<(&str, &str)> = rt
        .route_status
        .iter()
        .map(|s| (s.route.name.as_str(), s.conditions[0].reason))
        .collect();
    assert_eq!(
        accepted,
        [
            ("r", "NotAllowedByListeners"),
            ("other-ns", "NotAllowedByListeners")
        ]
    );
    check(yaml, "kinds", &[(get("http://gw/"), Status(404))]);
}
