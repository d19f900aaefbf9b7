//! The Gateway API conformance suite's listener tests, one test per
//! upstream test (named in each test's comment): listener isolation, port
//! matching, parentRefs that name no listener, one route on two Gateways,
//! and HTTPS listeners (SNI, certificates, 421 for misdirected requests).
//! The routes restate the upstream manifests; the expectations are their
//! tables, every row.

mod gateway_support;
use gateway_support::*;

/// GatewayHTTPListenerIsolation: a request is routed only by the routes of
/// the most specific listener for its host, never by another listener's.
#[test]
fn gateway_http_listener_isolation() {
    let route = |listener: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: attaches-to-{listener}, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: http-listener-isolation, namespace: gateway-conformance-infra, sectionName: {listener}}}]\n  rules:\n    - matches: [{{path: {{type: PathPrefix, value: /{listener}}}}}]\n      backendRefs: [{{name: infra-backend-v1, port: 8080}}]\n---\n")
    };
    let listeners = [
        "empty-hostname",
        "wildcard-example-com",
        "wildcard-foo-example-com",
        "abc-foo-example-com",
    ];
    let mut yaml = r#"apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: http-listener-isolation, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: empty-hostname, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
    - {name: wildcard-example-com, port: 80, protocol: HTTP, hostname: "*.example.com", allowedRoutes: {namespaces: {from: All}}}
    - {name: wildcard-foo-example-com, port: 80, protocol: HTTP, hostname: "*.foo.example.com", allowedRoutes: {namespaces: {from: All}}}
    - {name: abc-foo-example-com, port: 80, protocol: HTTP, hostname: abc.foo.example.com, allowedRoutes: {namespaces: {from: All}}}
---
"#
    .to_string();
    for l in listeners {
        yaml.push_str(&route(l));
    }
    // Host → the one listener whose route it reaches.
    let hosts = [
        ("bar.com", "empty-hostname"),
        ("bar.example.com", "wildcard-example-com"),
        ("bar.foo.example.com", "wildcard-foo-example-com"),
        ("abc.foo.example.com", "abc-foo-example-com"),
    ];
    for (host, own) in hosts {
        for l in listeners {
            let url: &'static str = Box::leak(format!("http://{host}/{l}").into_boxed_str());
            let want = if l == own {
                Backend("infra-backend-v1")
            } else {
                Status(404)
            };
            check(&yaml, "http-listener-isolation", &[(get(url), want)]);
        }
    }
    for l in listeners {
        assert_eq!(
            conditions(&yaml, &format!("attaches-to-{l}")),
            ACCEPTED_AND_RESOLVED
        );
    }
    assert_eq!(attached(&yaml, "http-listener-isolation"), [1, 1, 1, 1]);
}

/// HTTPRouteListenerPortMatching: a parentRef's `port` attaches the route
/// to every listener on that port (and with sectionName, to that one).
#[test]
fn httproute_listener_port_matching() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: httproute-listener-port-matching, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: listener-1, port: 80, protocol: HTTP, hostname: foo.com, allowedRoutes: {namespaces: {from: Same}}}
    - {name: listener-2, port: 8080, protocol: HTTP, hostname: foo.com, allowedRoutes: {namespaces: {from: Same}}}
    - {name: listener-3, port: 8080, protocol: HTTP, hostname: bar.com, allowedRoutes: {namespaces: {from: Same}}}
    - {name: listener-4, port: 8090, protocol: HTTP, hostname: foo.com, allowedRoutes: {namespaces: {from: Same}}}
    - {name: listener-5, port: 8090, protocol: HTTP, hostname: bar.com, allowedRoutes: {namespaces: {from: Same}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: backend-v1, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-listener-port-matching, namespace: gateway-conformance-infra, port: 80}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: backend-v2, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-listener-port-matching, namespace: gateway-conformance-infra, port: 8080}]
  rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: backend-v3, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: httproute-listener-port-matching, namespace: gateway-conformance-infra, port: 8090, sectionName: listener-4}]
  rules: [{backendRefs: [{name: infra-backend-v3, port: 8080}]}]
"#;
    check(
        yaml,
        "httproute-listener-port-matching",
        &[
            (get("http://foo.com/"), Backend("infra-backend-v1")),
            (get("http://foo.com:8080/"), Backend("infra-backend-v2")),
            (get("http://bar.com:8080/"), Backend("infra-backend-v2")),
            (get("http://foo.com:8090/"), Backend("infra-backend-v3")),
            (get("http://bar.com:8090/"), Status(404)),
        ],
    );
    for r in ["backend-v1", "backend-v2", "backend-v3"] {
        assert_eq!(conditions(yaml, r), ACCEPTED_AND_RESOLVED, "{r}");
    }
    assert_eq!(
        attached(yaml, "httproute-listener-port-matching"),
        [1, 1, 1, 1, 0]
    );
}

/// HTTPRouteInvalidParentRefNotMatchingListenerPort,
/// HTTPRouteInvalidParentRefNotMatchingSectionName and
/// HTTPRouteInvalidParentRefSectionNameNotMatchingPort: a parentRef whose
/// port or sectionName names no listener (or names one on another port) is
/// NoMatchingParent, its refs still resolve, nothing attaches.
#[test]
fn httproute_invalid_parent_refs_not_matching_a_listener() {
    let route = |name: &str, gateway: &str, extra: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: {gateway}, namespace: gateway-conformance-infra{extra}}}]\n  rules: [{{backendRefs: [{{name: infra-backend-v1, kind: Service, port: 8080}}]}}]\n---\n")
    };
    let yaml = [
        r#"apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gateway-with-one-not-matching-port-and-section-name-route, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: http, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: HTTPRoute}], namespaces: {from: All}}}
---
"#
        .to_string(),
        route(
            "httproute-listener-not-matching-route-port",
            "same-namespace",
            ", port: 81",
        ),
        route(
            "httproute-listener-not-matching-section-name",
            "same-namespace",
            ", port: 80, sectionName: http1",
        ),
        route(
            "httproute-listener-section-name-not-matching-port",
            "gateway-with-one-not-matching-port-and-section-name-route",
            ", sectionName: http, port: 81",
        ),
    ]
    .concat();
    for r in [
        "httproute-listener-not-matching-route-port",
        "httproute-listener-not-matching-section-name",
        "httproute-listener-section-name-not-matching-port",
    ] {
        assert_eq!(
            conditions(&yaml, r),
            [
                ("Accepted", "False", "NoMatchingParent"),
                ("ResolvedRefs", "True", "ResolvedRefs")
            ],
            "{r}"
        );
    }
    assert_eq!(attached(&yaml, "same-namespace"), [0]);
    assert_eq!(
        attached(
            &yaml,
            "gateway-with-one-not-matching-port-and-section-name-route"
        ),
        [0]
    );
}

/// HTTPRouteMultipleGateways: one route attached to two Gateways routes on
/// both, beside each Gateway's own route.
#[test]
fn httproute_multiple_gateways() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: all-namespaces, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: multiple-gateways-shared-route, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}, {name: all-namespaces}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /shared}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: same-namespace-dedicated-route, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: all-namespaces-dedicated-route, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: all-namespaces}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs: [{name: infra-backend-v3, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://gw/shared"), Backend("infra-backend-v1")),
            (get("http://gw/"), Backend("infra-backend-v2")),
        ],
    );
    check(
        yaml,
        "all-namespaces",
        &[
            (get("http://gw/shared"), Backend("infra-backend-v1")),
            (get("http://gw/"), Backend("infra-backend-v3")),
        ],
    );
    assert_eq!(
        conditions(yaml, "multiple-gateways-shared-route"),
        [ACCEPTED_AND_RESOLVED, ACCEPTED_AND_RESOLVED].concat()
    );
    assert_eq!(attached(yaml, "same-namespace"), [2]);
    assert_eq!(attached(yaml, "all-namespaces"), [2]);
}

/// The suite's HTTPS Gateway with its four listeners: no hostname, a
/// hostname, a wildcard, and a hostname the wildcard also covers.
const HTTPS_LISTENERS: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: https-listeners, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - {name: https, port: 443, protocol: HTTPS, allowedRoutes: {namespaces: {from: Same}}, tls: {certificateRefs: [{group: "", kind: Secret, name: tls-validity-checks-certificate, namespace: gateway-conformance-infra}]}}
    - {name: https-with-hostname, port: 443, hostname: second-example.org, protocol: HTTPS, allowedRoutes: {namespaces: {from: Same}}, tls: {certificateRefs: [{group: "", kind: Secret, name: tls-validity-checks-certificate, namespace: gateway-conformance-infra}]}}
    - {name: https-with-wildcard-hostname, port: 443, hostname: "*.wildcard.org", protocol: HTTPS, allowedRoutes: {namespaces: {from: Same}}, tls: {certificateRefs: [{group: "", kind: Secret, name: tls-validity-checks-certificate, namespace: gateway-conformance-infra}]}}
    - {name: https-with-hostname-matching-wildcard, port: 443, hostname: fourth-example.wildcard.org, protocol: HTTPS, allowedRoutes: {namespaces: {from: Same}}, tls: {certificateRefs: [{group: "", kind: Secret, name: tls-validity-checks-certificate, namespace: gateway-conformance-infra}]}}
"#;

fn tls(host: &str, sni: &str, path: &str) -> Req {
    Req {
        url: Box::leak(format!("https://{host}{path}").into_boxed_str()),
        method: "GET",
        headers: &[],
        sni: Some(Box::leak(sni.to_string().into_boxed_str())),
    }
}

/// HTTPRouteHTTPSListener: on HTTPS the listener (by SNI, here the Host)
/// and the route's hostnames decide, and the certificate is presented.
#[test]
fn httproute_https_listener() {
    let yaml = format!(
        "{HTTPS_LISTENERS}---{}",
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: httproute-https-test, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: https-listeners}]
  hostnames: [example.org]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: httproute-https-test-no-hostname, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: https-listeners, sectionName: https-with-hostname}]
  rules: [{backendRefs: [{name: infra-backend-v2, port: 8080}]}]
"#
    );
    let f = Fixture::new(&yaml);
    for (host, status, backend) in [
        ("example.org", 200, Some("infra-backend-v1")),
        ("unknown-example.org", 404, None),
        ("second-example.org", 200, Some("infra-backend-v2")),
    ] {
        let d = f.decide("https-listeners", &tls(host, host, "/"), 1);
        assert_eq!(d.status, Some(status), "{host}");
        assert_eq!(
            d.backend.as_ref().map(|b| b.service.name.as_str()),
            backend,
            "{host}"
        );
        assert_eq!(
            d.tls_certificate.as_ref().map(|c| c.name.as_str()),
            Some("tls-validity-checks-certificate"),
            "{host}"
        );
    }
}

/// HTTPRouteHTTPSListenerDetectMisdirectedRequests: the TLS server name
/// picks the listener; a Host header that another listener would take is
/// 421 Misdirected Request, whatever the routes. Every row of upstream's
/// table.
#[test]
fn httproute_https_listener_detect_misdirected_requests() {
    let route = |n: usize, section: &str, hostnames: &str, backend: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: https-listener-detect-misdirected-requests-test-{n}, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: https-listeners, sectionName: {section}}}]\n{hostnames}  rules:\n    - matches: [{{path: {{type: PathPrefix, value: /detect-misdirected-requests}}}}]\n      backendRefs: [{{name: {backend}, port: 8080}}]\n---\n")
    };
    let yaml = [
        HTTPS_LISTENERS.to_string(),
        "---\n".into(),
        route(
            1,
            "https",
            "  hostnames: [example.org]\n",
            "infra-backend-v1",
        ),
        route(2, "https-with-hostname", "", "infra-backend-v2"),
        route(3, "https-with-wildcard-hostname", "", "infra-backend-v3"),
        route(
            4,
            "https-with-hostname-matching-wildcard",
            "",
            "infra-backend-v1",
        ),
    ]
    .concat();
    let f = Fixture::new(&yaml);
    let v1 = Some("infra-backend-v1");
    let v2 = Some("infra-backend-v2");
    let v3 = Some("infra-backend-v3");
    let table = [
        ("example.org", "example.org", 200, v1),
        ("example.org", "second-example.org", 421, None),
        ("example.org", "unknown-example.org", 404, None),
        ("second-example.org", "second-example.org", 200, v2),
        ("second-example.org", "example.org", 421, None),
        ("second-example.org", "unknown-example.org", 421, None),
        (
            "third-example.wildcard.org",
            "third-example.wildcard.org",
            200,
            v3,
        ),
        (
            "third-example.wildcard.org",
            "fith-example.wildcard.org",
            200,
            v3,
        ),
        (
            "third-example.wildcard.org",
            "fourth-example.wildcard.org",
            421,
            None,
        ),
        (
            "third-example.wildcard.org",
            "second-example.org",
            421,
            None,
        ),
        (
            "third-example.wildcard.org",
            "unknown-example.org",
            421,
            None,
        ),
        (
            "fourth-example.wildcard.org",
            "fourth-example.wildcard.org",
            200,
            v1,
        ),
        (
            "fourth-example.wildcard.org",
            "fith-example.wildcard.org",
            421,
            None,
        ),
        ("unknown-example.org", "example.org", 200, v1),
        ("unknown-example.org", "unknown-example.org", 404, None),
    ];
    for (sni, host, status, backend) in table {
        let d = f.decide(
            "https-listeners",
            &tls(host, sni, "/detect-misdirected-requests"),
            1,
        );
        assert_eq!(d.status, Some(status), "SNI {sni}, Host {host}");
        assert_eq!(
            d.backend.as_ref().map(|b| b.service.name.as_str()),
            backend,
            "SNI {sni}, Host {host}"
        );
    }
}
