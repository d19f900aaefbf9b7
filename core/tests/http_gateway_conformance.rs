//! The Gateway API conformance suite's remaining HTTP request tables, one
//! test per upstream test (`conformance/tests/<name>.go`, named in each
//! test's comment): exact paths and match order, the simplest routes,
//! cross-namespace attachment, redirects by scheme, port and status, named
//! rules, rules without backends, invalid references and Service types
//! (listeners and HTTPS are in `http_gateway_conformance_listeners.rs`). The routes restate the upstream
//! manifests; the expectations are their tables, extended where the
//! upstream test checks only part of the answer (the whole `Location`).

mod gateway_support;
use gateway_support::*;

/// HTTPRouteExactPathMatching: Exact is the whole path, case-sensitive,
/// trailing slash included.
#[test]
fn httproute_exact_path_matching() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: exact-matching, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: Exact, value: /one}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: Exact, value: /two}}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://gw/one"), Backend("infra-backend-v1")),
            (get("http://gw/two"), Backend("infra-backend-v2")),
            (get("http://gw/"), Status(404)),
            (get("http://gw/one/example"), Status(404)),
            (get("http://gw/two/"), Status(404)),
            (get("http://gw/Two"), Status(404)),
        ],
    );
}

/// HTTPRoutePathMatchOrder: Exact before any prefix, then the longest
/// prefix, whatever the rule order.
#[test]
fn httproute_path_match_order() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: path-matching-order, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: Exact, value: /match}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: Exact, value: /match/exact}}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
    - matches: [{path: {type: Exact, value: /match/exact/one}}]
      backendRefs: [{name: infra-backend-v3, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /match/}}]
      backendRefs: [{name: infra-backend-v3, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /match/prefix/}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /match/prefix/one}}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (
                get("http://gw/match/exact/one"),
                Backend("infra-backend-v3"),
            ),
            (get("http://gw/match/exact"), Backend("infra-backend-v2")),
            (get("http://gw/match"), Backend("infra-backend-v1")),
            (
                get("http://gw/match/prefix/one/any"),
                Backend("infra-backend-v2"),
            ),
            (
                get("http://gw/match/prefix/any"),
                Backend("infra-backend-v1"),
            ),
            (get("http://gw/match/any"), Backend("infra-backend-v3")),
        ],
    );
}

/// HTTPRouteSimpleSameNamespace: a rule without matches takes every path.
#[test]
fn httproute_simple_same_namespace() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: gateway-conformance-infra-test, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://gw/"), Backend("infra-backend-v1")),
            (get("http://gw/any/path?q=1"), Backend("infra-backend-v1")),
        ],
    );
    assert_eq!(
        conditions(yaml, "gateway-conformance-infra-test"),
        ACCEPTED_AND_RESOLVED
    );
}

/// HTTPRouteCrossNamespace: a route in a namespace the listener's selector
/// admits attaches to a Gateway in another namespace and reaches its own
/// namespace's Service (no ReferenceGrant needed for that).
#[test]
fn httproute_cross_namespace() {
    let yaml = format!(
        "{BACKEND_NAMESPACES}---{}",
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cross-namespace, namespace: gateway-conformance-web-backend}
spec:
  parentRefs: [{name: backend-namespaces, namespace: gateway-conformance-infra}]
  rules: [{backendRefs: [{name: web-backend, port: 8080}]}]
"#
    );
    check(
        &yaml,
        "backend-namespaces",
        &[(get("http://gw/"), Backend("web-backend"))],
    );
    let d = decide(&yaml, "backend-namespaces", &get("http://gw/"), 1);
    let b = d.backend.expect("a backend");
    assert_eq!(b.service.namespace, "gateway-conformance-web-backend");
    assert_eq!(conditions(&yaml, "cross-namespace"), ACCEPTED_AND_RESOLVED);
}

/// HTTPRouteRedirectScheme: the scheme's own port, so none is written.
#[test]
fn httproute_redirect_scheme() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: redirect-scheme, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /scheme}}]
      filters: [{type: RequestRedirect, requestRedirect: {scheme: https}}]
    - matches: [{path: {type: PathPrefix, value: /scheme-and-host}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org, scheme: https}}]
    - matches: [{path: {type: PathPrefix, value: /scheme-and-status}}]
      filters: [{type: RequestRedirect, requestRedirect: {scheme: https, statusCode: 301}}]
    - matches: [{path: {type: PathPrefix, value: /scheme-and-host-and-status}}]
      filters: [{type: RequestRedirect, requestRedirect: {scheme: https, statusCode: 302, hostname: example.org}}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://gw/scheme"), Redirect(302, "https://gw/scheme")),
            (
                get("http://gw/scheme-and-host"),
                Redirect(302, "https://example.org/scheme-and-host"),
            ),
            (
                get("http://gw/scheme-and-status"),
                Redirect(301, "https://gw/scheme-and-status"),
            ),
            (
                get("http://gw/scheme-and-host-and-status"),
                Redirect(302, "https://example.org/scheme-and-host-and-status"),
            ),
        ],
    );
}

/// HTTPRouteRedirectPort: a port that is not the scheme's is written.
#[test]
fn httproute_redirect_port() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: redirect-port, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /port}}]
      filters: [{type: RequestRedirect, requestRedirect: {port: 8083}}]
    - matches: [{path: {type: PathPrefix, value: /port-and-host}}]
      filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org, port: 8083}}]
    - matches: [{path: {type: PathPrefix, value: /port-and-status}}]
      filters: [{type: RequestRedirect, requestRedirect: {port: 8083, statusCode: 301}}]
    - matches: [{path: {type: PathPrefix, value: /port-and-host-and-status}}]
      filters: [{type: RequestRedirect, requestRedirect: {port: 8083, hostname: example.org, statusCode: 302}}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://gw/port"), Redirect(302, "http://gw:8083/port")),
            (
                get("http://gw/port-and-host"),
                Redirect(302, "http://example.org:8083/port-and-host"),
            ),
            (
                get("http://gw/port-and-status"),
                Redirect(301, "http://gw:8083/port-and-status"),
            ),
            (
                get("http://gw/port-and-host-and-status"),
                Redirect(302, "http://example.org:8083/port-and-host-and-status"),
            ),
        ],
    );
}

/// HTTPRoute303Redirect, HTTPRoute307Redirect, HTTPRoute308Redirect: the
/// status codes beyond 301/302 (Extended), for any method.
#[test]
fn httproute_303_307_308_redirects() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: status-redirects, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /see-other}}]
      filters: [{type: RequestRedirect, requestRedirect: {statusCode: 303}}]
    - matches: [{path: {type: PathPrefix, value: /temporary}}]
      filters: [{type: RequestRedirect, requestRedirect: {statusCode: 307}}]
    - matches: [{path: {type: PathPrefix, value: /permanent}}]
      filters: [{type: RequestRedirect, requestRedirect: {statusCode: 308}}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (
                method("http://gw/see-other", "POST", &[]),
                Redirect(303, "http://gw/see-other"),
            ),
            (
                method("http://gw/temporary", "POST", &[]),
                Redirect(307, "http://gw/temporary"),
            ),
            (
                method("http://gw/permanent", "POST", &[]),
                Redirect(308, "http://gw/permanent"),
            ),
        ],
    );
}

/// HTTPRouteNamedRule: a rule's `name` is accepted and changes nothing.
#[test]
fn httproute_named_rule() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: http-named-rules, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - name: named-rule
      matches: [{path: {type: PathPrefix, value: /named}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /unnamed}}]
      backendRefs: [{name: infra-backend-v2, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://gw/named"), Backend("infra-backend-v1")),
            (get("http://gw/unnamed"), Backend("infra-backend-v2")),
        ],
    );
    assert_eq!(conditions(yaml, "http-named-rules"), ACCEPTED_AND_RESOLVED);
}

/// HTTPRouteNoBackendRefs (`httproute-omitted-backendrefs`): a rule whose
/// backendRefs are omitted or empty answers 500, and the route stays
/// Accepted with ResolvedRefs True.
#[test]
fn httproute_no_backend_refs() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: omitted-backendrefs, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: Exact, value: /omitted-no-forward}}]
    - matches: [{path: {type: Exact, value: /empty-no-forward}}]
      backendRefs: []
    - matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[
            (get("http://gw/forward"), Backend("infra-backend-v1")),
            (get("http://gw/omitted-no-forward"), Status(500)),
            (get("http://gw/empty-no-forward"), Status(500)),
        ],
    );
    assert_eq!(
        conditions(yaml, "omitted-backendrefs"),
        ACCEPTED_AND_RESOLVED
    );
}

/// HTTPRouteInvalidBackendRefUnknownKind: ResolvedRefs False InvalidKind,
/// still Accepted, and its requests get 500.
#[test]
fn httproute_invalid_backend_ref_unknown_kind() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid-backend-ref-unknown-kind, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - backendRefs: [{group: unknownkind.example.com, kind: NonExistent, name: infra-backend-v1, port: 8080}]
"#;
    check(
        yaml,
        "same-namespace",
        &[(get("http://gw/v2"), Status(500))],
    );
    assert_eq!(
        conditions(yaml, "invalid-backend-ref-unknown-kind"),
        [
            ("Accepted", "True", "Accepted"),
            ("ResolvedRefs", "False", "InvalidKind")
        ]
    );
}

/// HTTPRouteInvalidCrossNamespaceBackendRef: another namespace's Service
/// without a ReferenceGrant: RefNotPermitted and 500.
#[test]
fn httproute_invalid_cross_namespace_backend_ref() {
    let yaml = format!(
        "{BACKEND_NAMESPACES}---{}",
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid-cross-namespace-backend-ref, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: web-backend, namespace: gateway-conformance-web-backend, port: 8080}]}]
"#
    );
    check(&yaml, "same-namespace", &[(get("http://gw/"), Status(500))]);
    assert_eq!(
        conditions(&yaml, "invalid-cross-namespace-backend-ref"),
        [
            ("Accepted", "True", "Accepted"),
            ("ResolvedRefs", "False", "RefNotPermitted")
        ]
    );
}

/// HTTPRouteInvalidNonExistentBackendRef: BackendNotFound and 500.
#[test]
fn httproute_invalid_nonexistent_backend_ref() {
    let yaml = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid-nonexistent-backend-ref, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: nonexistent, namespace: gateway-conformance-infra, port: 8080}]}]
"#;
    check(yaml, "same-namespace", &[(get("http://gw/"), Status(500))]);
    assert_eq!(
        conditions(yaml, "invalid-nonexistent-backend-ref"),
        [
            ("Accepted", "True", "Accepted"),
            ("ResolvedRefs", "False", "BackendNotFound")
        ]
    );
}

/// HTTPRouteInvalidReferenceGrant: seven ReferenceGrants, each wrong in one
/// way (its namespace, from group/kind/namespace, to group/kind/name), and
/// none of them permits the reference.
#[test]
fn httproute_invalid_reference_grant() {
    let grant = |name: &str, ns: &str, from: (&str, &str, &str), to: (&str, &str, &str)| {
        format!(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: ReferenceGrant\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  from: [{{group: \"{}\", kind: {}, namespace: {}}}]\n  to: [{{group: \"{}\", kind: {}, name: {}}}]\n---\n",
            from.0, from.1, from.2, to.0, to.1, to.2
        )
    };
    let gw = "gateway.networking.k8s.io";
    let infra = "gateway-conformance-infra";
    let web = "gateway-conformance-web-backend";
    let ok_from = (gw, "HTTPRoute", infra);
    let ok_to = ("", "Service", "web-backend");
    let yaml = [
        BACKEND_NAMESPACES.to_string(),
        "---\n".into(),
        grant("reference-grant-wrong-namespace", infra, ok_from, ok_to),
        grant(
            "reference-grant-wrong-from-group",
            web,
            ("not-the-group-youre-looking-for", "HTTPRoute", infra),
            ok_to,
        ),
        grant(
            "reference-grant-wrong-from-kind",
            web,
            (gw, "Gateway", infra),
            ok_to,
        ),
        grant(
            "reference-grant-wrong-from-namespace",
            web,
            (gw, "HTTPRoute", "not-the-namespace-youre-looking-for"),
            ok_to,
        ),
        grant(
            "reference-grant-wrong-to-group",
            web,
            ok_from,
            ("not-the-group-youre-looking-for", "Service", "web-backend"),
        ),
        grant(
            "reference-grant-wrong-to-kind",
            web,
            ok_from,
            ("", "Secret", "web-backend"),
        ),
        grant(
            "reference-grant-wrong-to-name",
            web,
            ok_from,
            ("", "Service", "not-the-service-youre-looking-for"),
        ),
        r#"apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: reference-grant, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: web-backend, namespace: gateway-conformance-web-backend, port: 8080}]}]
"#
        .into(),
    ]
    .concat();
    check(&yaml, "same-namespace", &[(get("http://gw/"), Status(500))]);
    assert_eq!(
        conditions(&yaml, "reference-grant"),
        [
            ("Accepted", "True", "Accepted"),
            ("ResolvedRefs", "False", "RefNotPermitted")
        ]
    );
}

/// HTTPRoutePartiallyInvalidViaInvalidReferenceGrant: the grant names only
/// app-backend-v1, so the rule to app-backend-v2 answers 500 while the
/// other rule still routes; the route reports RefNotPermitted.
#[test]
fn httproute_partially_invalid_via_invalid_reference_grant() {
    let yaml = [
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: gateway-conformance-app-backend, labels: {gateway-conformance: backend}}\n---\n".to_string(),
        backend("gateway-conformance-app-backend", "app-backend-v1"),
        backend("gateway-conformance-app-backend", "app-backend-v2"),
        r#"apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: invalid-reference-grant, namespace: gateway-conformance-app-backend}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: gateway-conformance-infra}]
  to: [{group: "", kind: Service, name: app-backend-v1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid-reference-grant, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /v2}}]
      backendRefs: [{name: app-backend-v2, namespace: gateway-conformance-app-backend, port: 8080}]
    - backendRefs: [{name: app-backend-v1, namespace: gateway-conformance-app-backend, port: 8080}]
"#
        .into(),
    ]
    .concat();
    check(
        &yaml,
        "same-namespace",
        &[
            (get("http://gw/v2"), Status(500)),
            (get("http://gw/"), Backend("app-backend-v1")),
        ],
    );
    assert_eq!(
        conditions(&yaml, "invalid-reference-grant"),
        [
            ("Accepted", "True", "Accepted"),
            ("ResolvedRefs", "False", "RefNotPermitted")
        ]
    );
}

/// HTTPRouteInvalidCrossNamespaceParentRef: a listener that admits routes
/// from its own namespace only refuses one from another namespace
/// (NotAllowedByListeners), its refs still resolve, and the listener
/// counts no attached route.
#[test]
fn httproute_invalid_cross_namespace_parent_ref() {
    let yaml = format!(
        "{BACKEND_NAMESPACES}---{}",
        r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: invalid-cross-namespace-parent-ref, namespace: gateway-conformance-web-backend}
spec:
  parentRefs: [{name: same-namespace, namespace: gateway-conformance-infra}]
  rules: [{backendRefs: [{name: web-backend, port: 8080}]}]
"#
    );
    assert_eq!(
        conditions(&yaml, "invalid-cross-namespace-parent-ref"),
        [
            ("Accepted", "False", "NotAllowedByListeners"),
            ("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    assert_eq!(attached(&yaml, "same-namespace"), [0]);
    check(&yaml, "same-namespace", &[(get("http://gw/"), Status(404))]);
}

/// HTTPRouteServiceTypes: a Service with hand-written EndpointSlices, a
/// headless Service, and a headless one with hand-written slices are all
/// backends (upstream fills the slices with infra-backend-v1's Pod
/// address; here an address in the Pod network). An empty hand-written
/// slice gives no ready endpoint: 503.
#[test]
fn httproute_service_types() {
    let slice = |service: &str, family: &str, addr: Option<&str>| {
        let endpoints = addr
            .map(|a| {
                format!("endpoints: [{{addresses: [\"{a}\"], conditions: {{ready: true}}}}]\n")
            })
            .unwrap_or_default();
        format!("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {{name: {service}-{}, namespace: gateway-conformance-infra, labels: {{kubernetes.io/service-name: {service}}}}}\naddressType: {family}\nports: [{{name: first-port, port: 3000, protocol: TCP}}]\n{endpoints}---\n", family.to_ascii_lowercase())
    };
    let service = |name: &str, headless: bool, selector: bool| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n{}{}  ports: [{{name: first-port, protocol: TCP, port: 8080, targetPort: 3000}}]\n---\n",
            if headless { "  clusterIP: None\n" } else { "" },
            if selector { "  selector: {app: infra-backend-v1}\n" } else { "" }
        )
    };
    let pod_ip = Some("10.244.1.77");
    let base = [
        r#"apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: service-types, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  rules:
    - matches: [{path: {type: Exact, value: /manual-endpointslices}}]
      backendRefs: [{name: manual-endpointslices, port: 8080}]
    - matches: [{path: {type: Exact, value: /headless}}]
      backendRefs: [{name: headless, port: 8080}]
    - matches: [{path: {type: Exact, value: /headless-manual-endpointslices}}]
      backendRefs: [{name: headless-manual-endpointslices, port: 8080}]
---
"#
        .to_string(),
        service("manual-endpointslices", false, false),
        service("headless", true, true),
        service("headless-manual-endpointslices", true, false),
    ]
    .concat();
    let filled = [
        base.clone(),
        slice("manual-endpointslices", "IPv4", pod_ip),
        slice("manual-endpointslices", "IPv6", None),
        slice("headless-manual-endpointslices", "IPv4", pod_ip),
        slice("headless-manual-endpointslices", "IPv6", None),
    ]
    .concat();
    check(
        &filled,
        "same-namespace",
        &[
            (
                get("http://gw/manual-endpointslices"),
                Backend("manual-endpointslices"),
            ),
            (get("http://gw/headless"), Backend("headless")),
            (
                get("http://gw/headless-manual-endpointslices"),
                Backend("headless-manual-endpointslices"),
            ),
        ],
    );
    assert_eq!(conditions(&filled, "service-types"), ACCEPTED_AND_RESOLVED);
    let empty = [
        base,
        slice("manual-endpointslices", "IPv4", None),
        slice("headless-manual-endpointslices", "IPv4", None),
    ]
    .concat();
    check(
        &empty,
        "same-namespace",
        &[
            (get("http://gw/manual-endpointslices"), Status(503)),
            (get("http://gw/headless"), Backend("headless")),
            (get("http://gw/headless-manual-endpointslices"), Status(503)),
        ],
    );
}
