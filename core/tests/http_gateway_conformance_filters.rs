//! The Gateway API conformance suite's filter request tables that
//! `http_gateway_filters.rs` does not restate in full: request and response
//! header modifiers (every row, at rule level and at backendRef level),
//! per-backend header modifiers under weights, and request mirroring
//! (what the client gets, which copies are sent, and the mirrored share).
//! One test per upstream test, named in its comment.

mod gateway_support;
use gateway_support::*;
use std::collections::BTreeMap;

fn headers(pairs: &[(&str, &str)]) -> kpv_core::http::walk::Headers {
    pairs
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect()
}

/// The request-header-modifier route's rules; `at_backend` moves each
/// rule's filter onto its backendRef (HTTPRouteBackendRequestHeaderModifier).
fn request_header_route(at_backend: bool) -> String {
    let rules = [
        ("/set", "{set: [{name: X-Header-Set, value: set-overwrites-values}]}"),
        ("/add", "{add: [{name: X-Header-Add, value: add-appends-values}]}"),
        ("/remove", "{remove: [X-Header-Remove]}"),
        (
            "/multiple",
            "{set: [{name: X-Header-Set-1, value: header-set-1}, {name: X-Header-Set-2, value: header-set-2}], add: [{name: X-Header-Add-1, value: header-add-1}, {name: X-Header-Add-2, value: header-add-2}, {name: X-Header-Add-3, value: header-add-3}], remove: [X-Header-Remove-1, X-Header-Remove-2]}",
        ),
        (
            "/case-insensitivity",
            "{set: [{name: X-Header-Set, value: header-set}], add: [{name: X-Header-Add, value: header-add}], remove: [X-Header-Remove]}",
        ),
    ];
    let mut s = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: request-header-modifier, namespace: gateway-conformance-infra}\nspec:\n  parentRefs: [{name: same-namespace}]\n  rules:\n".to_string();
    for (path, m) in rules {
        let filter = format!("[{{type: RequestHeaderModifier, requestHeaderModifier: {m}}}]");
        if at_backend {
            s.push_str(&format!("    - matches: [{{path: {{type: PathPrefix, value: {path}}}}}]\n      backendRefs: [{{name: infra-backend-v1, port: 8080, filters: {filter}}}]\n"));
        } else {
            s.push_str(&format!("    - matches: [{{path: {{type: PathPrefix, value: {path}}}}}]\n      filters: {filter}\n      backendRefs: [{{name: infra-backend-v1, port: 8080}}]\n"));
        }
    }
    s
}

type HeaderRow = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [(&'static str, &'static str)],
);

/// (path, request headers, every header the backend receives).
const REQUEST_HEADER_TABLE: &[HeaderRow] = &[
    (
        "/set",
        &[("Some-Other-Header", "val")],
        &[
            ("Some-Other-Header", "val"),
            ("X-Header-Set", "set-overwrites-values"),
        ],
    ),
    (
        "/set",
        &[
            ("Some-Other-Header", "val"),
            ("X-Header-Set", "some-other-value"),
        ],
        &[
            ("Some-Other-Header", "val"),
            ("X-Header-Set", "set-overwrites-values"),
        ],
    ),
    (
        "/add",
        &[("Some-Other-Header", "val")],
        &[
            ("Some-Other-Header", "val"),
            ("X-Header-Add", "add-appends-values"),
        ],
    ),
    (
        "/add",
        &[
            ("Some-Other-Header", "val"),
            ("X-Header-Add", "some-other-value"),
        ],
        &[
            ("Some-Other-Header", "val"),
            ("X-Header-Add", "some-other-value,add-appends-values"),
        ],
    ),
    ("/remove", &[("X-Header-Remove", "val")], &[]),
    (
        "/multiple",
        &[
            ("X-Header-Set-2", "set-val-2"),
            ("X-Header-Add-2", "add-val-2"),
            ("X-Header-Remove-2", "remove-val-2"),
            ("Another-Header", "another-header-val"),
        ],
        &[
            ("X-Header-Set-1", "header-set-1"),
            ("X-Header-Set-2", "header-set-2"),
            ("X-Header-Add-1", "header-add-1"),
            ("X-Header-Add-2", "add-val-2,header-add-2"),
            ("X-Header-Add-3", "header-add-3"),
            ("Another-Header", "another-header-val"),
        ],
    ),
    (
        "/case-insensitivity",
        &[
            ("x-header-set", "original-val-set"),
            ("x-header-add", "original-val-add"),
            ("x-header-remove", "original-val-remove"),
            ("Another-Header", "another-header-val"),
        ],
        &[
            ("X-Header-Set", "header-set"),
            ("X-Header-Add", "original-val-add,header-add"),
            ("Another-Header", "another-header-val"),
        ],
    ),
];

/// HTTPRouteRequestHeaderModifier and HTTPRouteBackendRequestHeaderModifier:
/// the same table, with the filter on the rule and on the backendRef; the
/// backend receives exactly the headers listed (names case-insensitive).
#[test]
fn httproute_request_header_modifier_rule_and_backend() {
    for at_backend in [false, true] {
        let yaml = request_header_route(at_backend);
        for (path, sent, want) in REQUEST_HEADER_TABLE {
            let url: &'static str = Box::leak(format!("http://gw{path}").into_boxed_str());
            let d = decide(&yaml, "same-namespace", &with(url, sent), 1);
            assert_eq!(d.status, Some(200), "{path} {sent:?}");
            assert_eq!(
                d.request.headers,
                headers(want),
                "{path} {sent:?} (filter at backendRef: {at_backend})"
            );
        }
    }
}

/// HTTPRouteResponseHeaderModifier: every row, the backend's reply headers
/// through the filter; the last row modifies request and response at once.
#[test]
fn httproute_response_header_modifier() {
    let rules: &[(&str, &str)] = &[
        ("/set", "{set: [{name: X-Header-Set, value: set-overwrites-values}]}"),
        ("/add", "{add: [{name: X-Header-Add, value: add-appends-values}]}"),
        ("/remove", "{remove: [X-Header-Remove]}"),
        (
            "/multiple",
            "{set: [{name: X-Header-Set-1, value: header-set-1}, {name: X-Header-Set-2, value: header-set-2}], add: [{name: X-Header-Add-1, value: header-add-1}, {name: X-Header-Add-2, value: header-add-2}, {name: X-Header-Add-3, value: header-add-3}], remove: [X-Header-Remove-1, X-Header-Remove-2]}",
        ),
        (
            "/case-insensitivity",
            "{set: [{name: X-Header-Set, value: header-set}], add: [{name: X-Header-Add, value: header-add}, {name: x-lowercase-add, value: lowercase-add}, {name: x-Mixedcase-ADD-1, value: mixedcase-add-1}, {name: X-mixeDcase-add-2, value: mixedcase-add-2}, {name: X-UPPERCASE-ADD, value: uppercase-add}], remove: [X-Header-Remove]}",
        ),
    ];
    let mut yaml = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: response-header-modifier, namespace: gateway-conformance-infra}\nspec:\n  parentRefs: [{name: same-namespace}]\n  rules:\n".to_string();
    for (path, m) in rules {
        yaml.push_str(&format!("    - matches: [{{path: {{type: PathPrefix, value: {path}}}}}]\n      filters: [{{type: ResponseHeaderModifier, responseHeaderModifier: {m}}}]\n      backendRefs: [{{name: infra-backend-v1, port: 8080}}]\n"));
    }
    yaml.push_str("    - matches: [{path: {type: PathPrefix, value: /response-and-request-header-modifiers}}]\n      filters:\n        - {type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: X-Header-Set-1, value: header-set-1}, {name: X-Header-Set-2, value: header-set-2}], add: [{name: X-Header-Add-1, value: header-add-1}, {name: X-Header-Add-2, value: header-add-2}], remove: [X-Header-Remove-1, X-Header-Remove-2]}}\n        - {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}], add: [{name: X-Header-Add, value: header-val-1}, {name: X-Header-Add-Append, value: header-val-2}], remove: [X-Header-Remove]}}\n      backendRefs: [{name: infra-backend-v1, port: 8080}]\n");
    // (path, what the backend replies with, every header the client gets).
    let table: &[HeaderRow] = &[
        (
            "/set",
            &[("Some-Other-Header", "val")],
            &[
                ("Some-Other-Header", "val"),
                ("X-Header-Set", "set-overwrites-values"),
            ],
        ),
        (
            "/set",
            &[
                ("Some-Other-Header", "val"),
                ("X-Header-Set", "some-other-value"),
            ],
            &[
                ("Some-Other-Header", "val"),
                ("X-Header-Set", "set-overwrites-values"),
            ],
        ),
        (
            "/add",
            &[("Some-Other-Header", "val")],
            &[
                ("Some-Other-Header", "val"),
                ("X-Header-Add", "add-appends-values"),
            ],
        ),
        (
            "/add",
            &[
                ("Some-Other-Header", "val"),
                ("X-Header-Add", "some-other-value"),
            ],
            &[
                ("Some-Other-Header", "val"),
                ("X-Header-Add", "some-other-value,add-appends-values"),
            ],
        ),
        ("/remove", &[("X-Header-Remove", "val")], &[]),
        (
            "/multiple",
            &[
                ("X-Header-Set-2", "set-val-2"),
                ("X-Header-Add-2", "add-val-2"),
                ("X-Header-Remove-2", "remove-val-2"),
                ("Another-Header", "another-header-val"),
                ("X-Header-Remove-1", "val"),
            ],
            &[
                ("X-Header-Set-1", "header-set-1"),
                ("X-Header-Set-2", "header-set-2"),
                ("X-Header-Add-1", "header-add-1"),
                ("X-Header-Add-2", "add-val-2,header-add-2"),
                ("X-Header-Add-3", "header-add-3"),
                ("Another-Header", "another-header-val"),
            ],
        ),
        (
            "/case-insensitivity",
            &[
                ("x-header-set", "original-val-set"),
                ("x-header-add", "original-val-add"),
                ("x-header-remove", "original-val-remove"),
                ("Another-Header", "another-header-val"),
            ],
            &[
                ("X-Header-Set", "header-set"),
                ("X-Header-Add", "original-val-add,header-add"),
                ("X-Lowercase-Add", "lowercase-add"),
                ("X-Mixedcase-Add-1", "mixedcase-add-1"),
                ("X-Mixedcase-Add-2", "mixedcase-add-2"),
                ("X-Uppercase-Add", "uppercase-add"),
                ("Another-Header", "another-header-val"),
            ],
        ),
    ];
    for (path, reply, want) in table {
        let url: &'static str = Box::leak(format!("http://gw{path}").into_boxed_str());
        let d = decide(&yaml, "same-namespace", &get(url), 1);
        let reply: Vec<(String, String)> = reply
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(d.response_headers(&reply), headers(want), "{path}");
    }
    let d = decide(
        &yaml,
        "same-namespace",
        &with(
            "http://gw/response-and-request-header-modifiers",
            &[
                ("X-Header-Remove", "remove-val"),
                ("X-Header-Add-Append", "append-val-1"),
                ("X-Header-Echo", "echo"),
            ],
        ),
        1,
    );
    assert_eq!(
        d.request.headers,
        headers(&[
            ("X-Header-Add", "header-val-1"),
            ("X-Header-Set", "set-overwrites-values"),
            ("X-Header-Add-Append", "append-val-1,header-val-2"),
            ("X-Header-Echo", "echo"),
        ])
    );
    let reply: Vec<(String, String)> = [
        ("X-Header-Set-2", "set-val-2"),
        ("X-Header-Add-2", "add-val-2"),
        ("X-Header-Remove-2", "remove-val-2"),
        ("Another-Header", "another-header-val"),
        ("X-Header-Remove-1", "remove-val-1"),
        ("X-Header-Echo", "echo"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(
        d.response_headers(&reply),
        headers(&[
            ("X-Header-Set-1", "header-set-1"),
            ("X-Header-Set-2", "header-set-2"),
            ("X-Header-Add-1", "header-add-1"),
            ("X-Header-Add-2", "add-val-2,header-add-2"),
            ("Another-Header", "another-header-val"),
            ("X-Header-Echo", "echo"),
        ])
    );
}

/// HTTPRouteRequestHeaderModifierBackendWeights: each backendRef's own
/// filter runs only for requests sent to that backend; over 100 requests
/// both backends are chosen and each request's `Backend` header names the
/// backend that got it.
#[test]
fn httproute_request_header_modifier_backend_weights() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: request-header-modifier-backend-weights, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - backendRefs:
        - name: infra-backend-v1
          port: 8080
          weight: 10
          filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: Backend, value: infra-backend-v1}]}}]
        - name: infra-backend-v2
          port: 8080
          weight: 10
          filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: Backend, value: infra-backend-v2}]}}]
"#;
    let fixture = Fixture::new(yaml);
    let mut seen = BTreeMap::new();
    for seed in 0..100 {
        let d = fixture.decide("same-namespace", &get("http://gw/"), seed);
        let b = d.backend.expect("a backend");
        assert_eq!(
            d.request.headers.get("backend"),
            Some(&b.service.name),
            "seed {seed}"
        );
        *seen.entry(b.service.name).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), 2, "{seen:?}");
}

const MODIFY: &str = "{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}], add: [{name: X-Header-Add, value: header-val-1}, {name: X-Header-Add-Append, value: header-val-2}], remove: [X-Header-Remove]}}";

fn mirror_filter(backend: &str, share: &str) -> String {
    format!("{{type: RequestMirror, requestMirror: {{backendRef: {{name: {backend}, namespace: gateway-conformance-infra, port: 8080}}{share}}}}}")
}

/// A route whose rules each send to infra-backend-v1 with `filters`.
fn mirror_route(name: &str, rules: &[(&str, Vec<String>)]) -> String {
    let mut s = format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: same-namespace}}]\n  rules:\n");
    for (path, filters) in rules {
        s.push_str(&format!(
            "    - matches: [{{path: {{type: PathPrefix, value: {path}}}}}]\n      filters: [{}]\n",
            filters.join(", ")
        ));
        // The CRD refuses a RequestRedirect together with backendRefs.
        if !filters.iter().any(|f| f.contains("RequestRedirect")) {
            s.push_str("      backendRefs: [{name: infra-backend-v1, port: 8080, namespace: gateway-conformance-infra}]\n");
        }
    }
    s
}

/// (service name, sent) of each mirror copy.
fn mirrored(d: &kpv_core::http::Decision) -> Vec<(String, bool)> {
    d.mirrors
        .iter()
        .map(|m| (m.service.name.clone(), m.sent))
        .collect()
}

const MODIFY_SENT: &[(&str, &str)] = &[
    ("X-Header-Remove", "remove-val"),
    ("X-Header-Add-Append", "append-val-1"),
];
const MODIFIED: &[(&str, &str)] = &[
    ("X-Header-Add", "header-val-1"),
    ("X-Header-Add-Append", "append-val-1,header-val-2"),
    ("X-Header-Set", "set-overwrites-values"),
];

/// HTTPRouteRequestMirror and HTTPRouteRequestMultipleMirrors: the client
/// gets infra-backend-v1's answer; a copy goes to each mirror backend, and
/// the header modifier applies to the request as forwarded.
#[test]
fn httproute_request_mirror_and_multiple_mirrors() {
    let v2 = mirror_filter("infra-backend-v2", "");
    let v3 = mirror_filter("infra-backend-v3", "");
    let yaml = [
        mirror_route(
            "request-mirror",
            &[
                ("/mirror", vec![v2.clone()]),
                (
                    "/mirror-and-modify-headers",
                    vec![MODIFY.into(), v2.clone()],
                ),
            ],
        ),
        mirror_route(
            "request-multiple-mirrors",
            &[
                ("/multi-mirror", vec![v2.clone(), v3.clone()]),
                (
                    "/multi-mirror-and-modify-request-headers",
                    vec![MODIFY.into(), v2, v3],
                ),
            ],
        ),
    ]
    .join("---\n");
    let one = vec![("infra-backend-v2".to_string(), true)];
    let two = vec![
        ("infra-backend-v2".to_string(), true),
        ("infra-backend-v3".to_string(), true),
    ];
    let rows = [
        ("http://gw/mirror", false, &one),
        ("http://gw/mirror-and-modify-headers", true, &one),
        ("http://gw/multi-mirror", false, &two),
        (
            "http://gw/multi-mirror-and-modify-request-headers",
            true,
            &two,
        ),
    ];
    for (url, modify, want) in rows {
        let req = if modify {
            with(url, MODIFY_SENT)
        } else {
            get(url)
        };
        let d = decide(&yaml, "same-namespace", &req, 1);
        assert_eq!(d.status, Some(200), "{url}");
        assert_eq!(
            d.backend.as_ref().map(|b| b.service.name.as_str()),
            Some("infra-backend-v1"),
            "{url}"
        );
        assert_eq!(&mirrored(&d), want, "{url}");
        if modify {
            assert_eq!(d.request.headers, headers(MODIFIED), "{url}");
        }
        assert!(d.filters.contains(&"RequestMirror"), "{url}");
    }
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let (objects, _) = kpv_core::http::parse(&text);
    let rt = kpv_core::http::compile(&objects, &cluster);
    for s in &rt.route_status {
        let c: Vec<_> = s.conditions.iter().map(|c| (c.kind, c.status)).collect();
        assert_eq!(c, [("Accepted", "True"), ("ResolvedRefs", "True")]);
    }
}

/// HTTPRouteRequestPercentageMirror: `percent: 20`, `fraction: 25/50` and
/// `percent: 35` mirror that share of requests. Upstream sends 500 requests
/// and accepts a count within three binomial standard deviations of the
/// share; here 500 seeds stand for the 500 requests. The client's answer
/// never depends on the mirror.
#[test]
fn httproute_request_percentage_mirror() {
    let yaml = mirror_route(
        "request-percentage-mirror",
        &[
            (
                "/percent-mirror",
                vec![mirror_filter("infra-backend-v2", ", percent: 20")],
            ),
            (
                "/percent-mirror-fraction",
                vec![mirror_filter(
                    "infra-backend-v2",
                    ", fraction: {numerator: 25, denominator: 50}",
                )],
            ),
            (
                "/percent-mirror-and-modify-headers",
                vec![
                    MODIFY.into(),
                    mirror_filter("infra-backend-v2", ", percent: 35"),
                ],
            ),
        ],
    );
    let fixture = Fixture::new(&yaml);
    for (url, p) in [
        ("http://gw/percent-mirror", 0.20),
        ("http://gw/percent-mirror-fraction", 0.50),
        ("http://gw/percent-mirror-and-modify-headers", 0.35),
    ] {
        let n = 500.0;
        let mut sent = 0.0;
        for seed in 0..500 {
            let d = fixture.decide("same-namespace", &with(url, MODIFY_SENT), seed);
            assert_eq!(
                d.backend.as_ref().map(|b| b.service.name.as_str()),
                Some("infra-backend-v1"),
                "{url} seed {seed}"
            );
            let m = mirrored(&d);
            assert_eq!(m.len(), 1, "{url}");
            if m[0].1 {
                sent += 1.0;
            }
        }
        let margin = 3.0 * f64::sqrt(n * p * (1.0 - p));
        assert!(
            (sent - n * p).abs() <= margin,
            "{url}: {sent} of 500 mirrored, want {} ± {margin:.1}",
            n * p
        );
    }
}

/// A mirror whose backendRef does not resolve sends nothing, the client
/// still gets the backend's answer, and the route says ResolvedRefs False
/// with the mirror's field located. (The API: an invalid mirror backendRef
/// is dropped and ResolvedRefs is False.) A redirect forwards nothing, so
/// nothing is mirrored either.
#[test]
fn an_invalid_mirror_or_a_redirect_sends_no_copy() {
    let yaml = mirror_route(
        "bad-mirror",
        &[
            ("/missing", vec![mirror_filter("nonexistent", "")]),
            (
                "/redirect",
                vec![
                    mirror_filter("infra-backend-v2", ""),
                    "{type: RequestRedirect, requestRedirect: {hostname: example.org}}".into(),
                ],
            ),
        ],
    );
    let d = decide(&yaml, "same-namespace", &get("http://gw/missing"), 1);
    assert_eq!(d.status, Some(200));
    assert_eq!(mirrored(&d), [("nonexistent".to_string(), false)]);
    assert_eq!(d.mirrors[0].problem, Some("BackendNotFound"));
    let d = decide(&yaml, "same-namespace", &get("http://gw/redirect"), 1);
    assert_eq!(d.status, Some(302));
    assert!(d.mirrors.is_empty());
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let (objects, _) = kpv_core::http::parse(&text);
    let rt = kpv_core::http::compile(&objects, &cluster);
    let s = &rt.route_status[0];
    let c: Vec<_> = s
        .conditions
        .iter()
        .map(|c| (c.kind, c.status, c.reason))
        .collect();
    assert_eq!(
        c,
        [
            ("Accepted", "True", "Accepted"),
            ("ResolvedRefs", "False", "BackendNotFound")
        ]
    );
    let diags = kpv_core::http::report::diagnostics(&rt);
    assert!(
        diags.iter().any(|d| d.field.as_deref()
            == Some("spec.rules[0].filters[0].requestMirror.backendRef.name")),
        "{diags:#?}"
    );
}

/// The mirror filter's share is validated as the API server does.
#[test]
fn mirror_share_validation() {
    for (share, message) in [
        (
            ", percent: 20, fraction: {numerator: 1, denominator: 2}",
            "Only one of percent or fraction",
        ),
        (
            ", percent: 120",
            "spec.rules[0].filters[0].requestMirror.percent",
        ),
        (
            ", fraction: {numerator: 3, denominator: 2}",
            "numerator must be less than or equal to denominator",
        ),
    ] {
        let yaml = mirror_route(
            "bad",
            &[("/", vec![mirror_filter("infra-backend-v2", share)])],
        );
        let text = format!("{INFRA}\n---\n{yaml}");
        let (_, diags) = kpv_core::http::parse(&text);
        assert!(
            diags
                .iter()
                .any(|d| d.message.contains(message) || d.field.as_deref() == Some(message)),
            "{share}: {diags:#?}"
        );
    }
}

/// HTTPRouteRedirectPath: the rows `http_gateway_filters.rs` leaves out —
/// a path modifier with a hostname or a status, where the request's path
/// is the whole prefix.
#[test]
fn httproute_redirect_path_with_host_and_status() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: redirect-path, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /path-and-host}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org, path: {type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}}}]
    - matches: [{path: {type: PathPrefix, value: /path-and-status}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}, statusCode: 301}}]
    - matches: [{path: {type: PathPrefix, value: /full-path-and-host}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org, path: {type: ReplaceFullPath, replaceFullPath: /replacement-full}}}]
    - matches: [{path: {type: PathPrefix, value: /full-path-and-status}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /replacement-full}, statusCode: 301}}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (
                get("http://gw/path-and-host"),
                Redirect(302, "http://example.org/replacement-prefix"),
            ),
            (
                get("http://gw/path-and-status"),
                Redirect(301, "http://gw/replacement-prefix"),
            ),
            (
                get("http://gw/full-path-and-host"),
                Redirect(302, "http://example.org/replacement-full"),
            ),
            (
                get("http://gw/full-path-and-status"),
                Redirect(301, "http://gw/replacement-full"),
            ),
        ],
    );
}

/// (URL, headers sent, backend, path and Host it sees, headers modified?)
type RewriteRow = (
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static str,
    &'static str,
    &'static str,
    bool,
);

/// HTTPRouteRewritePath's rows with header modifiers beside the rewrite
/// (full path and prefix), and HTTPRouteRewriteHost's whole table: a
/// rewrite changes the Host the backend sees, per rule, with the headers
/// modified too; the longer prefix beats the catch-all rule.
#[test]
fn httproute_rewrite_path_and_host_with_header_modifiers() {
    let yaml = format!(
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: rewrite-path, namespace: gateway-conformance-infra}}
spec:
  parentRefs: [{{name: same-namespace}}]
  rules:
    - matches: [{{path: {{type: PathPrefix, value: /full/rewrite-path-and-modify-headers}}}}]
      filters: [{{type: URLRewrite, urlRewrite: {{path: {{type: ReplaceFullPath, replaceFullPath: /test}}}}}}, {MODIFY}]
      backendRefs: [{{name: infra-backend-v1, port: 8080}}]
    - matches: [{{path: {{type: PathPrefix, value: /prefix/rewrite-path-and-modify-headers}}}}]
      filters: [{{type: URLRewrite, urlRewrite: {{path: {{type: ReplacePrefixMatch, replacePrefixMatch: /prefix}}}}}}, {MODIFY}]
      backendRefs: [{{name: infra-backend-v1, port: 8080}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {{name: rewrite-host, namespace: gateway-conformance-infra}}
spec:
  hostnames: [rewrite.example]
  parentRefs: [{{name: same-namespace}}]
  rules:
    - matches: [{{path: {{type: PathPrefix, value: /one}}}}]
      filters: [{{type: URLRewrite, urlRewrite: {{hostname: one.example.org}}}}]
      backendRefs: [{{name: infra-backend-v1, port: 8080}}]
    - filters: [{{type: URLRewrite, urlRewrite: {{hostname: example.org}}}}]
      backendRefs: [{{name: infra-backend-v2, port: 8080}}]
    - matches: [{{path: {{type: PathPrefix, value: /rewrite-host-and-modify-headers}}}}]
      filters: [{{type: URLRewrite, urlRewrite: {{hostname: test.example.org}}}}, {MODIFY}]
      backendRefs: [{{name: infra-backend-v2, port: 8080}}]
"#
    );
    let sent: &[(&str, &str)] = &[
        ("X-Header-Remove", "remove-val"),
        ("X-Header-Add-Append", "append-val-1"),
        ("X-Header-Set", "set-val"),
    ];
    let rows: [RewriteRow; 5] = [
        (
            "http://gw/full/rewrite-path-and-modify-headers/test",
            sent,
            "infra-backend-v1",
            "/test",
            "gw",
            true,
        ),
        (
            "http://gw/prefix/rewrite-path-and-modify-headers/one",
            sent,
            "infra-backend-v1",
            "/prefix/one",
            "gw",
            true,
        ),
        (
            "http://rewrite.example/one",
            &[],
            "infra-backend-v1",
            "/one",
            "one.example.org",
            false,
        ),
        (
            "http://rewrite.example/two",
            &[],
            "infra-backend-v2",
            "/two",
            "example.org",
            false,
        ),
        (
            "http://rewrite.example/rewrite-host-and-modify-headers",
            MODIFY_SENT,
            "infra-backend-v2",
            "/rewrite-host-and-modify-headers",
            "test.example.org",
            true,
        ),
    ];
    for (url, sent, backend, path, host, modified) in rows {
        let d = decide(&yaml, "same-namespace", &with(url, sent), 1);
        assert_eq!(d.status, Some(200), "{url}");
        assert_eq!(
            d.backend.as_ref().map(|b| b.service.name.as_str()),
            Some(backend),
            "{url}"
        );
        assert_eq!(
            (d.request.path.as_str(), d.request.host.as_str()),
            (path, host),
            "{url}"
        );
        if modified {
            assert_eq!(d.request.headers, headers(MODIFIED), "{url}");
        }
    }
}

/// HTTPRouteBackendRequestRedirect and HTTPRouteBackendURLRewrite: a
/// RequestRedirect or URLRewrite filter on the backendRef acts as it would
/// on the rule (the path modifiers against the rule's prefix match).
#[test]
fn httproute_backend_request_redirect_and_url_rewrite() {
    let route = |name: &str, ty: &str, key: &str, full: &str, prefix: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{name: same-namespace}}]\n  rules:\n    - matches: [{{path: {{type: PathPrefix, value: /full}}}}]\n      backendRefs: [{{name: infra-backend-v1, port: 8080, filters: [{{type: {ty}, {key}: {{path: {{type: ReplaceFullPath, replaceFullPath: {full}}}}}}}]}}]\n    - matches: [{{path: {{type: PathPrefix, value: /prefix}}}}]\n      backendRefs: [{{name: infra-backend-v1, port: 8080, filters: [{{type: {ty}, {key}: {{path: {{type: ReplacePrefixMatch, replacePrefixMatch: {prefix}}}}}}}]}}]\n")
    };
    let redirect = route(
        "backend-request-redirect",
        "RequestRedirect",
        "requestRedirect",
        "/redirected-full",
        "/redirected-prefix",
    );
    check(
        &redirect,
        "same-namespace",
        &[
            (
                get("http://gw/full/original"),
                Redirect(302, "http://gw/redirected-full"),
            ),
            (
                get("http://gw/prefix/original"),
                Redirect(302, "http://gw/redirected-prefix/original"),
            ),
        ],
    );
    let rewrite = route(
        "backend-url-rewrite",
        "URLRewrite",
        "urlRewrite",
        "/rewritten-full",
        "/rewritten-prefix",
    );
    let f = Fixture::new(&rewrite);
    for (url, path) in [
        ("http://gw/full/original", "/rewritten-full"),
        ("http://gw/prefix/original", "/rewritten-prefix/original"),
    ] {
        let d = f.decide("same-namespace", &get(url), 1);
        assert_eq!(d.status, Some(200), "{url}");
        assert_eq!(
            d.backend.as_ref().map(|b| b.service.name.as_str()),
            Some("infra-backend-v1")
        );
        assert_eq!(d.request.path, path, "{url}");
    }
    for yaml in [&redirect, &rewrite] {
        let text = format!("{INFRA}\n---\n{yaml}");
        let (cluster, _) = kpv_core::Code::ALL.parse(&text);
        let (objects, _) = kpv_core::http::parse(&text);
        let rt = kpv_core::http::compile(&objects, &cluster);
        let c: Vec<_> = rt.route_status[0]
            .conditions
            .iter()
            .map(|c| (c.kind, c.status))
            .collect();
        assert_eq!(c, [("Accepted", "True"), ("ResolvedRefs", "True")]);
    }
}
