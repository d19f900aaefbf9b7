//! The Gateway API conformance suite's HTTPRouteCORS test (Extended): its
//! four routes restated and every row of its table — preflight requests
//! answered by the proxy with the CORS headers, actual requests forwarded
//! with the origin echoed, origins that do not match left alone.

mod gateway_support;
use gateway_support::*;
use kpv_core::http::walk::Reason;

const ROUTES: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors-multiple-origins-methods-headers, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - filters:
        - type: CORS
          cors:
            allowOrigins: ["https://www.foo.com", "https://*.bar.com"]
            allowMethods: [GET, OPTIONS]
            allowHeaders: [x-header-1, x-header-2]
            exposeHeaders: [x-header-3, x-header-4]
            allowCredentials: true
            maxAge: 3600
      matches: [{path: {type: PathPrefix, value: /cors-1}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors-wildcard-methods, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - filters: [{type: CORS, cors: {allowOrigins: ["https://www.foo.com"], allowMethods: ["*"]}}]
      matches: [{path: {type: PathPrefix, value: /cors-2}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors-wildcard-origin, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - filters: [{type: CORS, cors: {allowOrigins: ["*"], allowMethods: [PUT], allowCredentials: false}}]
      matches: [{path: {type: PathPrefix, value: /cors-wildcard-origin}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors-wildcard-methods-headers, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - filters: [{type: CORS, cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"], allowCredentials: true}}]
      matches: [{path: {type: PathPrefix, value: /cors-wildcard-methods-headers}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - filters: [{type: CORS, cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"], allowCredentials: false}}]
      matches: [{path: {type: PathPrefix, value: /cors-wildcard-methods-headers-unauth}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
"#;

/// One row: the request, the statuses upstream accepts, each header with
/// the values it accepts, and the headers that must be absent.
struct Row {
    path: &'static str,
    method: &'static str,
    headers: &'static [(&'static str, &'static str)],
    statuses: &'static [u16],
    valid: &'static [(&'static str, &'static [&'static str])],
    absent: &'static [&'static str],
}

const PREFLIGHT_1: &[(&str, &[&str])] = &[
    (
        "access-control-allow-methods",
        &["GET, OPTIONS", "OPTIONS, GET"],
    ),
    (
        "access-control-allow-headers",
        &["x-header-1, x-header-2", "x-header-2, x-header-1"],
    ),
    (
        "access-control-expose-headers",
        &["x-header-3, x-header-4", "x-header-4, x-header-3"],
    ),
    ("access-control-max-age", &["3600"]),
    ("access-control-allow-credentials", &["true"]),
];

const ASK: &[(&str, &str)] = &[
    ("access-control-request-method", "GET"),
    ("access-control-request-headers", "x-header-1, x-header-2"),
];

fn rows() -> Vec<Row> {
    let ok = &[200, 204][..];
    let preflight_from = |origin: &'static str| -> &'static [(&'static str, &'static str)] {
        Box::leak(
            [("Origin", origin)]
                .iter()
                .chain(ASK)
                .copied()
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        )
    };
    let with_origin = |origin: &'static str,
                       rest: &'static [(&'static str, &'static [&'static str])]|
     -> &'static [(&'static str, &'static [&'static str])] {
        let o: &'static [&'static str] = Box::leak(vec![origin].into_boxed_slice());
        Box::leak(
            [("access-control-allow-origin", o)]
                .iter()
                .chain(rest)
                .copied()
                .collect::<Vec<_>>()
                .into_boxed_slice(),
        )
    };
    vec![
        // Preflight from an exact origin, a wildcard origin, a wildcard
        // origin with more labels, and an origin that does not match.
        Row {
            path: "/cors-1",
            method: "OPTIONS",
            headers: preflight_from("https://www.foo.com"),
            statuses: ok,
            valid: with_origin("https://www.foo.com", PREFLIGHT_1),
            absent: &[],
        },
        Row {
            path: "/cors-1",
            method: "OPTIONS",
            headers: preflight_from("https://www.bar.com"),
            statuses: ok,
            valid: with_origin("https://www.bar.com", PREFLIGHT_1),
            absent: &[],
        },
        Row {
            path: "/cors-1",
            method: "OPTIONS",
            headers: preflight_from("https://xpto.www.bar.com"),
            statuses: ok,
            valid: with_origin("https://xpto.www.bar.com", PREFLIGHT_1),
            absent: &[],
        },
        Row {
            path: "/cors-1",
            method: "OPTIONS",
            headers: &[
                ("Origin", "https://foobar.com"),
                ("access-control-request-method", "GET"),
            ],
            statuses: &[200, 204, 403],
            valid: &[],
            absent: &["access-control-allow-origin"],
        },
        // Actual requests.
        Row {
            path: "/cors-1",
            method: "GET",
            headers: preflight_from("https://www.foo.com"),
            statuses: &[200],
            valid: with_origin("https://www.foo.com", &[]),
            absent: &[],
        },
        Row {
            path: "/cors-1",
            method: "GET",
            headers: preflight_from("https://www.bar.com"),
            statuses: &[200],
            valid: with_origin("https://www.bar.com", &[]),
            absent: &[],
        },
        Row {
            path: "/cors-1",
            method: "GET",
            headers: &[
                ("Origin", "https://foobar.com"),
                ("access-control-request-method", "GET"),
            ],
            statuses: &[200],
            valid: &[],
            absent: &["access-control-allow-origin"],
        },
        // allowMethods `*`, without credentials (asked twice upstream).
        Row {
            path: "/cors-2",
            method: "OPTIONS",
            headers: &[
                ("Origin", "https://www.foo.com"),
                ("access-control-request-method", "POST"),
            ],
            statuses: ok,
            valid: with_origin(
                "https://www.foo.com",
                &[("access-control-allow-methods", &["POST", "*"])],
            ),
            absent: &["access-control-allow-credentials"],
        },
        // Origin `*`: echo (or `*`), with and without a port.
        Row {
            path: "/cors-wildcard-origin",
            method: "OPTIONS",
            headers: &[
                ("Origin", "https://foobar.com"),
                ("access-control-request-method", "PUT"),
            ],
            statuses: ok,
            valid: &[
                ("access-control-allow-origin", &["https://foobar.com", "*"]),
                ("access-control-allow-methods", &["PUT"]),
            ],
            absent: &["access-control-allow-credentials"],
        },
        Row {
            path: "/cors-wildcard-origin",
            method: "OPTIONS",
            headers: &[
                ("Origin", "https://foobar.com:12345"),
                ("access-control-request-method", "PUT"),
            ],
            statuses: ok,
            valid: &[
                (
                    "access-control-allow-origin",
                    &["https://foobar.com:12345", "*"],
                ),
                ("access-control-allow-methods", &["PUT"]),
            ],
            absent: &["access-control-allow-credentials"],
        },
        Row {
            path: "/cors-wildcard-origin",
            method: "PUT",
            headers: &[("Origin", "https://foobar.com:12345")],
            statuses: &[200],
            valid: &[(
                "access-control-allow-origin",
                &["https://foobar.com:12345", "*"],
            )],
            absent: &[],
        },
        Row {
            path: "/cors-wildcard-origin",
            method: "PUT",
            headers: &[("Origin", "https://foobar.com")],
            statuses: &[200],
            valid: &[("access-control-allow-origin", &["https://foobar.com", "*"])],
            absent: &["access-control-allow-credentials"],
        },
        // Everything `*`, with and without credentials.
        Row {
            path: "/cors-wildcard-methods-headers",
            method: "OPTIONS",
            headers: &[
                ("Origin", "https://other.foo.com"),
                ("access-control-request-method", "PUT"),
                ("access-control-request-headers", "x-header-1, x-header-2"),
            ],
            statuses: ok,
            valid: &[
                ("access-control-allow-origin", &["https://other.foo.com"]),
                ("access-control-allow-methods", &["PUT"]),
                (
                    "access-control-allow-headers",
                    &["x-header-1, x-header-2", "x-header-2, x-header-1"],
                ),
                ("access-control-allow-credentials", &["true"]),
            ],
            absent: &[],
        },
        Row {
            path: "/cors-wildcard-methods-headers-unauth",
            method: "OPTIONS",
            headers: &[
                ("Origin", "https://other.foo.com"),
                ("access-control-request-method", "PUT"),
                ("access-control-request-headers", "x-header-1, x-header-2"),
            ],
            statuses: ok,
            valid: &[
                (
                    "access-control-allow-origin",
                    &["https://other.foo.com", "*"],
                ),
                ("access-control-allow-methods", &["PUT", "*"]),
                (
                    "access-control-allow-headers",
                    &["x-header-1, x-header-2", "x-header-2, x-header-1", "*"],
                ),
            ],
            absent: &["access-control-allow-credentials"],
        },
        Row {
            path: "/cors-wildcard-methods-headers",
            method: "GET",
            headers: &[("Origin", "https://other.foo.com")],
            statuses: &[200],
            valid: &[
                ("access-control-allow-origin", &["https://other.foo.com"]),
                ("access-control-allow-credentials", &["true"]),
            ],
            absent: &[],
        },
        Row {
            path: "/cors-wildcard-methods-headers-unauth",
            method: "GET",
            headers: &[("Origin", "https://other.foo.com")],
            statuses: &[200],
            valid: &[(
                "access-control-allow-origin",
                &["https://other.foo.com", "*"],
            )],
            absent: &["access-control-allow-credentials"],
        },
    ]
}

/// HTTPRouteCORS, every row; a preflight from an allowed origin is
/// answered by the proxy (no backend), everything else is forwarded.
#[test]
fn httproute_cors() {
    let f = Fixture::new(ROUTES);
    for r in rows() {
        let url: &'static str = Box::leak(format!("http://gw{}", r.path).into_boxed_str());
        let d = f.decide("same-namespace", &method(url, r.method, r.headers), 1);
        let what = format!("{} {} {:?}", r.method, r.path, r.headers);
        let status = d.status.unwrap_or(0);
        assert!(r.statuses.contains(&status), "{what}: status {status}");
        let got = d.response_headers(&[]);
        for (k, values) in r.valid {
            let v = got.get(*k).map(String::as_str).unwrap_or("(absent)");
            assert!(
                values.contains(&v),
                "{what}: {k} is {v}, want one of {values:?}"
            );
        }
        for k in r.absent {
            assert!(!got.contains_key(*k), "{what}: {k} present: {got:?}");
        }
        let answered = d.reason == Reason::CorsPreflight;
        assert_eq!(
            answered,
            r.method == "OPTIONS" && !r.valid.is_empty(),
            "{what}: {:?}",
            d.reason
        );
        assert_eq!(d.backend.is_none(), answered, "{what}");
        assert!(d.filters.contains(&"CORS"), "{what}");
    }
}

/// Without an Origin header the filter changes nothing, and the backend's
/// own headers pass through an actual request's answer.
#[test]
fn cors_leaves_requests_without_an_origin_alone() {
    let f = Fixture::new(ROUTES);
    let d = f.decide("same-namespace", &get("http://gw/cors-1"), 1);
    assert_eq!(d.status, Some(200));
    assert!(d.response_modifiers.is_empty());
    let d = f.decide(
        "same-namespace",
        &with("http://gw/cors-1", &[("Origin", "https://www.foo.com")]),
        1,
    );
    let got = d.response_headers(&[("X-From-Backend".into(), "yes".into())]);
    assert_eq!(got.get("x-from-backend").map(String::as_str), Some("yes"));
    assert_eq!(
        got.get("access-control-expose-headers").map(String::as_str),
        Some("x-header-3, x-header-4")
    );
}
