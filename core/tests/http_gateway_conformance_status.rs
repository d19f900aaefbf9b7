//! The Gateway API conformance suite's status tests, restated: what the
//! controller writes on listeners (supportedKinds, Accepted, ResolvedRefs,
//! Programmed, attachedRoutes) and Gateways (Accepted, Programmed) for
//! attached routes, disallowed and invalid route kinds, unsupported
//! protocols, unusable certificates and Secret ReferenceGrants. One test per
//! upstream test, named in its comment. (Upstream checks the conditions it
//! names and that supportedKinds holds the kinds it lists; so do these.)

mod gateway_support;
use gateway_support::*;
use kpv_core::http::table::{GatewayTable, Table};
use kpv_core::http::{compile, EntryPoint, RoutingTable};
use kpv_core::model::NamespacedName;

fn table(yaml: &str) -> RoutingTable {
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let (objects, _) = kpv_core::http::parse(&text);
    compile(&objects, &cluster)
}

fn gateway<'t>(rt: &'t RoutingTable, name: &str) -> &'t GatewayTable {
    match rt
        .tables
        .get(&EntryPoint::Gateway(NamespacedName::new(NS, name)))
    {
        Some(Table::Gateway(g)) => g,
        _ => panic!("no Gateway {name}"),
    }
}

/// One listener's (attachedRoutes, supportedKinds, [(type, status, reason)]).
type Listener = (
    usize,
    Vec<&'static str>,
    Vec<(&'static str, &'static str, &'static str)>,
);

fn listeners(rt: &RoutingTable, name: &str) -> Vec<Listener> {
    gateway(rt, name)
        .listeners
        .iter()
        .map(|l| {
            (
                l.attached_routes,
                l.status.supported_kinds.clone(),
                l.status
                    .conditions
                    .iter()
                    .map(|c| (c.kind, c.status, c.reason))
                    .collect(),
            )
        })
        .collect()
}

fn has(l: &Listener, kind: &str, status: &str, reason: Option<&str>) -> bool {
    l.2.iter()
        .any(|(k, s, r)| *k == kind && *s == status && reason.is_none_or(|x| x == *r))
}

fn route_conditions(
    rt: &RoutingTable,
    route: &str,
) -> Vec<(&'static str, &'static str, &'static str)> {
    rt.route_status
        .iter()
        .filter(|s| s.route.name == route)
        .flat_map(|s| s.conditions.iter().map(|c| (c.kind, c.status, c.reason)))
        .collect()
}

fn gateway_conditions(
    rt: &RoutingTable,
    name: &str,
) -> Vec<(&'static str, &'static str, &'static str)> {
    gateway(rt, name)
        .conditions
        .iter()
        .map(|c| (c.kind, c.status, c.reason))
        .collect()
}

fn route(name: &str, gateway: &str, extra: &str, backend: &str) -> String {
    format!("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  parentRefs: [{{kind: Gateway, name: {gateway}, namespace: gateway-conformance-infra{extra}}}]\n  rules: [{{backendRefs: [{{name: {backend}, port: 8080}}]}}]\n---\n")
}

const ONLY_INFRA: &str = "allowedRoutes: {kinds: [{kind: HTTPRoute}], namespaces: {from: Selector, selector: {matchLabels: {kubernetes.io/metadata.name: gateway-conformance-infra}}}}";

/// GatewayWithAttachedRoutes and GatewayWithAttachedRoutesWithPort8080:
/// attachedRoutes counts accepted routes only (not one refused for its
/// hostname), also on a listener whose certificate does not resolve, and
/// only on the listener a sectionName picks.
#[test]
fn gateway_with_attached_routes() {
    let yaml = [
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: gateway-with-one-attached-route, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: http, port: 80, protocol: HTTP, {ONLY_INFRA}}}]\n---\n"),
        route("http-route-1", "gateway-with-one-attached-route", "", "infra-backend-v1"),
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: gateway-with-two-attached-routes, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: http, port: 80, protocol: HTTP, hostname: foo.example.com, {ONLY_INFRA}}}]\n---\n"),
        route("http-route-2", "gateway-with-two-attached-routes", "", "infra-backend-v1"),
        route("http-route-3", "gateway-with-two-attached-routes", "", "infra-backend-v1"),
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: http-route-not-accepted, namespace: gateway-conformance-infra}\nspec:\n  hostnames: [not-accepted.test.com]\n  parentRefs: [{kind: Gateway, name: gateway-with-two-attached-routes, namespace: gateway-conformance-infra}]\n  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]\n---\n".to_string(),
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: unresolved-gateway-with-one-attached-unresolved-route, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: tls, port: 443, protocol: HTTPS, {ONLY_INFRA}, tls: {{certificateRefs: [{{group: \"\", kind: Secret, name: does-not-exist}}], mode: Terminate}}}}]\n---\n"),
        route("http-route-4", "unresolved-gateway-with-one-attached-unresolved-route", ", sectionName: tls", "does-not-exist"),
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gateway-with-two-listeners-and-one-attached-route, namespace: gateway-conformance-infra}\nspec:\n  gatewayClassName: conformance\n  listeners:\n    - {name: http-unattached, port: 8080, protocol: HTTP, allowedRoutes: {kinds: [{kind: HTTPRoute}], namespaces: {from: All}}}\n    - {name: http, port: 80, protocol: HTTP, allowedRoutes: {kinds: [{kind: HTTPRoute}], namespaces: {from: All}}}\n---\n".to_string(),
        route("http-route-4-port-8080", "gateway-with-two-listeners-and-one-attached-route", ", sectionName: http", "infra-backend-v1"),
    ]
    .concat();
    let rt = table(&yaml);
    let ok = |gw: &str, attached: &[usize]| {
        let ls = listeners(&rt, gw);
        assert_eq!(ls.iter().map(|l| l.0).collect::<Vec<_>>(), attached, "{gw}");
        for l in &ls {
            assert!(l.1.contains(&"HTTPRoute"), "{gw}: {l:?}");
            assert!(has(l, "Accepted", "True", None), "{gw}: {l:?}");
            assert!(has(l, "ResolvedRefs", "True", None), "{gw}: {l:?}");
        }
    };
    ok("gateway-with-one-attached-route", &[1]);
    ok("gateway-with-two-attached-routes", &[2]);
    ok("gateway-with-two-listeners-and-one-attached-route", &[0, 1]);
    assert_eq!(
        route_conditions(&rt, "http-route-not-accepted")[0],
        ("Accepted", "False", "NoMatchingListenerHostname")
    );
    let ls = listeners(&rt, "unresolved-gateway-with-one-attached-unresolved-route");
    assert_eq!(ls[0].0, 1);
    assert!(ls[0].1.contains(&"HTTPRoute"));
    assert!(has(&ls[0], "Programmed", "False", None), "{ls:?}");
    assert!(has(&ls[0], "ResolvedRefs", "False", None), "{ls:?}");
    assert_eq!(
        route_conditions(&rt, "http-route-4")[1],
        ("ResolvedRefs", "False", "BackendNotFound")
    );
}

/// HTTPRouteDisallowedKind: a TLS listener that admits only TLSRoutes
/// refuses an HTTPRoute (NotAllowedByListeners) and counts none.
#[test]
fn httproute_disallowed_kind() {
    let yaml = [
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: tlsroutes-only, namespace: gateway-conformance-infra}\nspec:\n  gatewayClassName: conformance\n  listeners: [{name: tls, port: 443, protocol: TLS, tls: {mode: Passthrough}, allowedRoutes: {namespaces: {from: Same}, kinds: [{kind: TLSRoute}]}}]\n---\n".to_string(),
        route("disallowed-kind", "tlsroutes-only", "", "infra-backend-v1"),
    ]
    .concat();
    let rt = table(&yaml);
    assert_eq!(
        route_conditions(&rt, "disallowed-kind"),
        [
            ("Accepted", "False", "NotAllowedByListeners"),
            ("ResolvedRefs", "True", "ResolvedRefs")
        ]
    );
    let ls = listeners(&rt, "tlsroutes-only");
    assert_eq!(ls[0].0, 0);
    assert_eq!(ls[0].1, ["TLSRoute"]);
    // And an HTTPRoute named explicitly on a TLS listener is not carried.
    let yaml = yaml.replace("kinds: [{kind: TLSRoute}]", "kinds: [{kind: HTTPRoute}]");
    let rt = table(&yaml);
    assert_eq!(
        route_conditions(&rt, "disallowed-kind")[0],
        ("Accepted", "False", "NotAllowedByListeners")
    );
    let ls = listeners(&rt, "tlsroutes-only");
    assert!(has(
        &ls[0],
        "ResolvedRefs",
        "False",
        Some("InvalidRouteKinds")
    ));
    assert!(ls[0].1.is_empty(), "{ls:?}");
}

/// GatewayInvalidRouteKind: a kind no protocol carries makes ResolvedRefs
/// False (InvalidRouteKinds); supportedKinds keeps only the valid ones.
#[test]
fn gateway_invalid_route_kind() {
    let gw = |name: &str, kinds: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: http, port: 80, protocol: HTTP, allowedRoutes: {{namespaces: {{from: All}}, kinds: {kinds}}}}}]\n---\n")
    };
    let yaml = [
        gw("gateway-only-invalid-route-kind", "[{kind: InvalidRoute}]"),
        gw(
            "gateway-supported-and-invalid-route-kind",
            "[{kind: InvalidRoute}, {kind: HTTPRoute}]",
        ),
        route(
            "r",
            "gateway-supported-and-invalid-route-kind",
            "",
            "infra-backend-v1",
        ),
    ]
    .concat();
    let rt = table(&yaml);
    let only = listeners(&rt, "gateway-only-invalid-route-kind");
    assert!(only[0].1.is_empty(), "{only:?}");
    assert!(has(
        &only[0],
        "ResolvedRefs",
        "False",
        Some("InvalidRouteKinds")
    ));
    assert_eq!(only[0].0, 0);
    let both = listeners(&rt, "gateway-supported-and-invalid-route-kind");
    assert_eq!(both[0].1, ["HTTPRoute"]);
    assert!(has(
        &both[0],
        "ResolvedRefs",
        "False",
        Some("InvalidRouteKinds")
    ));
    // (Upstream attaches no route here; an HTTPRoute still attaches to the
    // kind the listener supports.)
    assert_eq!(both[0].0, 1);
}

/// GatewayListenerUnsupportedProtocol: a listener with a protocol the API
/// does not define is not Accepted (UnsupportedProtocol, no kinds); the
/// Gateway is Accepted False when no listener is valid, True (with
/// ListenersNotValid) when some are.
#[test]
fn gateway_listener_unsupported_protocol() {
    let yaml = "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gateway-only-unsupported-protocols, namespace: gateway-conformance-infra}\nspec:\n  gatewayClassName: conformance\n  listeners: [{name: invalid, port: 1111, protocol: INVALID}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gateway-supported-and-unsupported-protocols, namespace: gateway-conformance-infra}\nspec:\n  gatewayClassName: conformance\n  listeners:\n    - {name: http, port: 80, protocol: HTTP}\n    - {name: invalid, port: 1111, protocol: INVALID}\n";
    let rt = table(yaml);
    assert_eq!(
        gateway_conditions(&rt, "gateway-only-unsupported-protocols")[0],
        ("Accepted", "False", "ListenersNotValid")
    );
    let only = listeners(&rt, "gateway-only-unsupported-protocols");
    assert!(only[0].1.is_empty());
    assert!(has(
        &only[0],
        "Accepted",
        "False",
        Some("UnsupportedProtocol")
    ));
    assert_eq!(
        gateway_conditions(&rt, "gateway-supported-and-unsupported-protocols")[0],
        ("Accepted", "True", "ListenersNotValid")
    );
    let both = listeners(&rt, "gateway-supported-and-unsupported-protocols");
    assert!(both[0].1.contains(&"HTTPRoute"));
    assert!(has(&both[0], "Accepted", "True", Some("Accepted")));
    assert!(both[1].1.is_empty());
    assert!(has(
        &both[1],
        "Accepted",
        "False",
        Some("UnsupportedProtocol")
    ));
    // The valid listener still takes requests.
    let with_route = format!(
        "{yaml}---\n{}",
        route(
            "r",
            "gateway-supported-and-unsupported-protocols",
            "",
            "infra-backend-v1"
        )
    );
    check(
        &with_route,
        "gateway-supported-and-unsupported-protocols",
        &[(get("http://gw/"), Backend("infra-backend-v1"))],
    );
}

/// GatewayInvalidTLSConfiguration: a certificateRef to a missing Secret, of
/// another group, or of another kind is ResolvedRefs False,
/// InvalidCertificateRef, and HTTPS on it fails the handshake. (Its fourth
/// case, a Secret whose bytes are not a certificate, needs the certificate
/// bytes, which kpv never reads.)
#[test]
fn gateway_invalid_tls_configuration() {
    let gw = |name: &str, r: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: https, port: 443, protocol: HTTPS, allowedRoutes: {{namespaces: {{from: All}}}}, tls: {{certificateRefs: [{r}]}}}}]\n---\n")
    };
    let cases = [
        (
            "gateway-certificate-nonexistent-secret",
            "{group: \"\", kind: Secret, name: nonexistent-certificate}",
        ),
        (
            "gateway-certificate-unsupported-group",
            "{group: wrong.group.company.io, kind: Secret, name: tls-validity-checks-certificate}",
        ),
        (
            "gateway-certificate-unsupported-kind",
            "{group: \"\", kind: WrongKind, name: tls-validity-checks-certificate}",
        ),
    ];
    let yaml: String = cases.iter().map(|(n, r)| gw(n, r)).collect();
    let rt = table(&yaml);
    for (name, _) in cases {
        let ls = listeners(&rt, name);
        assert_eq!(ls[0].0, 0, "{name}");
        assert!(ls[0].1.contains(&"HTTPRoute"), "{name}");
        assert!(
            has(
                &ls[0],
                "ResolvedRefs",
                "False",
                Some("InvalidCertificateRef")
            ),
            "{name}: {ls:?}"
        );
        let req = Req {
            url: "https://example.org/",
            method: "GET",
            headers: &[],
            sni: None,
        };
        let d = decide(&yaml, name, &req, 1);
        assert_eq!(d.status, None, "{name}: the handshake fails");
    }
}

/// GatewaySecretMissingReferenceGrant, GatewaySecretInvalidReferenceGrant,
/// GatewaySecretReferenceGrantAllInNamespace and
/// GatewaySecretReferenceGrantSpecific: a certificate in another namespace
/// needs a ReferenceGrant from Gateways of this namespace to that Secret (or
/// to every Secret there); any grant wrong in one way leaves RefNotPermitted.
#[test]
fn gateway_secret_reference_grants() {
    let gw = |name: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: https, port: 443, protocol: HTTPS, allowedRoutes: {{namespaces: {{from: All}}}}, tls: {{certificateRefs: [{{group: \"\", kind: Secret, name: certificate, namespace: gateway-conformance-web-backend}}]}}}}]\n---\n")
    };
    let grant = |name: &str, ns: &str, from: (&str, &str, &str), to: (&str, &str, Option<&str>)| {
        let to_name = to.2.map(|n| format!(", name: {n}")).unwrap_or_default();
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: ReferenceGrant\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  from: [{{group: \"{}\", kind: {}, namespace: {}}}]\n  to: [{{group: \"{}\", kind: {}{to_name}}}]\n---\n", from.0, from.1, from.2, to.0, to.1)
    };
    let secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: certificate, namespace: gateway-conformance-web-backend}\ntype: kubernetes.io/tls\n---\n";
    let g = "gateway.networking.k8s.io";
    let infra = "gateway-conformance-infra";
    let web = "gateway-conformance-web-backend";
    let gw_from = (g, "Gateway", infra);
    let cert = ("", "Secret", Some("certificate"));
    let wrong = [
        grant(
            "reference-grant-wrong-namespace",
            "gateway-conformance-app-backend",
            gw_from,
            cert,
        ),
        grant(
            "reference-grant-wrong-from-group",
            web,
            ("not-the-group-youre-looking-for", "Gateway", infra),
            cert,
        ),
        grant(
            "reference-grant-wrong-from-kind",
            web,
            (g, "HTTPRoute", infra),
            cert,
        ),
        grant(
            "reference-grant-wrong-from-namespace",
            web,
            (g, "Gateway", "not-the-namespace-youre-looking-for"),
            cert,
        ),
        grant(
            "reference-grant-wrong-to-group",
            web,
            gw_from,
            (
                "not-the-group-youre-looking-for",
                "Secret",
                Some("not-the-certificate-youre-looking-for"),
            ),
        ),
        grant(
            "reference-grant-wrong-to-kind",
            web,
            gw_from,
            ("", "Service", Some("certificate")),
        ),
        grant(
            "reference-grant-wrong-to-name",
            web,
            gw_from,
            ("", "Secret", Some("not-the-certificate-youre-looking-for")),
        ),
    ]
    .concat();
    let cases = [
        (
            "gateway-secret-missing-reference-grant",
            String::new(),
            false,
        ),
        ("gateway-secret-invalid-reference-grant", wrong, false),
        (
            "gateway-secret-reference-grant-all-in-namespace",
            grant("reference-grant", web, gw_from, ("", "Secret", None)),
            true,
        ),
        (
            "gateway-secret-reference-grant-specific",
            grant("reference-grant", web, gw_from, cert),
            true,
        ),
    ];
    for (name, grants, ok) in cases {
        let yaml = [secret.to_string(), gw(name), grants].concat();
        let rt = table(&yaml);
        let ls = listeners(&rt, name);
        if ok {
            assert!(has(&ls[0], "ResolvedRefs", "True", None), "{name}: {ls:?}");
            assert!(has(&ls[0], "Programmed", "True", None), "{name}: {ls:?}");
            assert_eq!(
                gateway_conditions(&rt, name),
                [
                    ("Accepted", "True", "Accepted"),
                    ("Programmed", "True", "Programmed")
                ]
            );
        } else {
            assert!(
                has(&ls[0], "ResolvedRefs", "False", Some("RefNotPermitted")),
                "{name}: {ls:?}"
            );
        }
    }
}
/// GatewayNameMaximumLength: a Gateway named with the full 253 characters
/// is Accepted and Programmed, and the proxy Service a controller creates
/// for it still has a valid name (a DNS label of at most 63 characters, cut
/// as Envoy Gateway cuts it); requests reach the backend through it.
#[test]
fn gateway_name_maximum_length() {
    let prefix = "gateway-name-maximum-length-";
    let name = format!("{prefix}{}", "a".repeat(253 - prefix.len()));
    let yaml = format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: http, port: 80, protocol: HTTP}}]\n---\n{}",
        route("r", &name, "", "infra-backend-v1")
    );
    let rt = table(&yaml);
    assert_eq!(
        gateway_conditions(&rt, &name),
        [
            ("Accepted", "True", "Accepted"),
            ("Programmed", "True", "Programmed")
        ]
    );
    check(
        &yaml,
        &name,
        &[(get("http://gw/"), Backend("infra-backend-v1"))],
    );
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let prepared = kpv_core::http::prepare(&cluster);
    let proxy = prepared
        .proxies
        .iter()
        .find(|p| p.entry == EntryPoint::Gateway(NamespacedName::new(NS, name.clone())))
        .expect("a proxy for the Gateway");
    let svc = &proxy.service.name;
    assert!(svc.len() <= 63, "{svc}");
    assert!(
        svc.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !svc.ends_with('-'),
        "{svc}"
    );
    // Envoy Gateway's own name for it: `envoy-`, the first 48 characters of
    // `NAMESPACE-NAME`, and 8 hex digits of sha256("NAMESPACE/NAME").
    assert_eq!(
        svc,
        "envoy-gateway-conformance-infra-gateway-name-maximum-l-fcff1947"
    );
    assert!(prepared.cluster.service(&proxy.service).is_some());
}
/// GatewayModifyListeners, as two inputs (before and after the change): a
/// listener added takes traffic and its routes; a listener removed stops
/// taking traffic and the remaining one keeps its route.
#[test]
fn gateway_modify_listeners() {
    let https = "{name: https, port: 443, protocol: HTTPS, hostname: secure.test.com, allowedRoutes: {namespaces: {from: All}}, tls: {certificateRefs: [{group: \"\", kind: Secret, name: tls-validity-checks-certificate, namespace: gateway-conformance-infra}]}}";
    let http_listener = |host: &str| {
        format!("{{name: http, port: 80, protocol: HTTP{host}, allowedRoutes: {{namespaces: {{from: All}}}}}}")
    };
    let gw = |name: &str, listeners: &[String]| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{}]\n---\n{}", listeners.join(", "), route("http-route", name, "", "infra-backend-v1"))
    };
    let secure = Req {
        url: "https://secure.test.com/",
        method: "GET",
        headers: &[],
        sni: None,
    };
    // Adding a listener.
    let before = gw("gateway-add-listener", &[https.to_string()]);
    let after = gw(
        "gateway-add-listener",
        &[
            https.to_string(),
            http_listener(", hostname: data.test.com"),
        ],
    );
    let rt = table(&before);
    assert_eq!(
        listeners(&rt, "gateway-add-listener")
            .iter()
            .map(|l| l.0)
            .collect::<Vec<_>>(),
        [1]
    );
    assert_eq!(
        decide(
            &before,
            "gateway-add-listener",
            &get("http://data.test.com/"),
            1
        )
        .status,
        None,
        "no listener on port 80 yet"
    );
    let rt = table(&after);
    let ls = listeners(&rt, "gateway-add-listener");
    assert_eq!(ls.iter().map(|l| l.0).collect::<Vec<_>>(), [1, 1]);
    for l in &ls {
        assert!(has(l, "Accepted", "True", None) && has(l, "ResolvedRefs", "True", None));
    }
    check(
        &after,
        "gateway-add-listener",
        &[(get("http://data.test.com/"), Backend("infra-backend-v1"))],
    );
    check(
        &after,
        "gateway-add-listener",
        &[(secure, Backend("infra-backend-v1"))],
    );
    // Removing one.
    let before = gw(
        "gateway-remove-listener",
        &[https.to_string(), http_listener("")],
    );
    let after = gw("gateway-remove-listener", &[http_listener("")]);
    let secure = Req {
        url: "https://secure.test.com/",
        method: "GET",
        headers: &[],
        sni: None,
    };
    assert_eq!(
        decide(&before, "gateway-remove-listener", &secure, 1).status,
        Some(200)
    );
    assert_eq!(
        decide(&after, "gateway-remove-listener", &secure, 1).status,
        None,
        "no HTTPS listener any more"
    );
    let rt = table(&after);
    let ls = listeners(&rt, "gateway-remove-listener");
    assert_eq!(ls.iter().map(|l| l.0).collect::<Vec<_>>(), [1]);
    check(
        &after,
        "gateway-remove-listener",
        &[(get("http://any.test.com/"), Backend("infra-backend-v1"))],
    );
}

/// GatewayInvalidParametersRef: `infrastructure.parametersRef` naming
/// something the controller does not have is Accepted False
/// (InvalidParameters), and the Gateway takes no traffic; an EnvoyProxy
/// that exists in the Gateway's namespace is accepted.
#[test]
fn gateway_invalid_parameters_ref() {
    let gw = |name: &str, r: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: {name}, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  listeners: [{{name: http, port: 80, protocol: HTTP}}]\n  infrastructure: {{parametersRef: {r}}}\n---\n{}", route(&format!("{name}-route"), name, "", "infra-backend-v1"))
    };
    let yaml = [
        gw(
            "gateway-invalid-parameters-ref",
            "{group: invalid.io, kind: InvalidParameters, name: invalid}",
        ),
        gw(
            "gateway-missing-envoy-proxy",
            "{group: gateway.envoyproxy.io, kind: EnvoyProxy, name: missing}",
        ),
        gw(
            "gateway-with-envoy-proxy",
            "{group: gateway.envoyproxy.io, kind: EnvoyProxy, name: custom}",
        ),
        "apiVersion: gateway.envoyproxy.io/v1alpha1\nkind: EnvoyProxy\nmetadata: {name: custom, namespace: gateway-conformance-infra}\nspec: {}\n".into(),
    ]
    .concat();
    let rt = table(&yaml);
    for name in [
        "gateway-invalid-parameters-ref",
        "gateway-missing-envoy-proxy",
    ] {
        assert_eq!(
            gateway_conditions(&rt, name)[0],
            ("Accepted", "False", "InvalidParameters"),
            "{name}"
        );
        let d = decide(&yaml, name, &get("http://gw/"), 1);
        assert_eq!(d.status, None, "{name}: nothing listens");
    }
    assert_eq!(
        gateway_conditions(&rt, "gateway-with-envoy-proxy"),
        [
            ("Accepted", "True", "Accepted"),
            ("Programmed", "True", "Programmed")
        ]
    );
    check(
        &yaml,
        "gateway-with-envoy-proxy",
        &[(get("http://gw/"), Backend("infra-backend-v1"))],
    );
    let diags = kpv_core::http::report::diagnostics(&rt);
    assert!(
        diags.iter().any(|d| d.object.as_deref()
            == Some("Gateway/gateway-conformance-infra/gateway-invalid-parameters-ref")
            && d.field.as_deref() == Some("spec.infrastructure.parametersRef")),
        "{diags:#?}"
    );
}

/// GatewayOptionalAddressValue: an address entry with a type and no value
/// is valid; the Gateway is Accepted and Programmed and gets an address
/// from its controller. (GatewayStaticAddresses, which asks for specific
/// addresses, is not modelled: kpv's controllers always assign one from
/// the load-balancer range.)
#[test]
fn gateway_optional_address_value() {
    let yaml = "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gateway-without-address-value, namespace: gateway-conformance-infra}\nspec:\n  gatewayClassName: conformance\n  addresses: [{type: IPAddress}]\n  listeners: [{name: http, port: 8080, protocol: HTTP}]\n";
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let prepared = kpv_core::http::prepare(&cluster);
    let id = NamespacedName::new(NS, "gateway-without-address-value");
    let g = match prepared.table.tables.get(&EntryPoint::Gateway(id.clone())) {
        Some(Table::Gateway(g)) => g,
        _ => panic!("no table"),
    };
    let c: Vec<_> = g.conditions.iter().map(|c| (c.kind, c.status)).collect();
    assert_eq!(c, [("Accepted", "True"), ("Programmed", "True")]);
    let proxy = prepared
        .proxies
        .iter()
        .find(|p| p.entry == EntryPoint::Gateway(id.clone()))
        .expect("a proxy");
    assert!(proxy.address.is_some(), "an address is assigned");
}

/// GatewayStaticAddresses (Extended), its three steps as three inputs: an
/// address of an unsupported type makes the Gateway not Accepted
/// (UnsupportedAddress); without it, an address the controller cannot give
/// (outside its load-balancer range) leaves it Accepted but not Programmed
/// (AddressNotUsable); with only a usable one, it is programmed and its
/// proxy's load balancer has that address.
#[test]
fn gateway_static_addresses() {
    let gw = |addresses: &str| {
        format!("apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {{name: gateway-static-addresses, namespace: gateway-conformance-infra}}\nspec:\n  gatewayClassName: conformance\n  addresses: [{addresses}]\n  listeners: [{{name: http, port: 8080, protocol: HTTP}}]\n---\n{}", route("r", "gateway-static-addresses", "", "infra-backend-v1"))
    };
    let invalid = "{type: test/fake-invalid-type, value: \"fake address teehee!\"}";
    let unusable = "{type: IPAddress, value: 192.0.2.77}";
    let usable = "{type: IPAddress, value: 203.0.113.77}";
    let name = "gateway-static-addresses";
    let steps = [
        (
            format!("{invalid}, {unusable}, {usable}"),
            ("Accepted", "False", "UnsupportedAddress"),
            ("Programmed", "False", "Invalid"),
        ),
        (
            format!("{unusable}, {usable}"),
            ("Accepted", "True", "Accepted"),
            ("Programmed", "False", "AddressNotUsable"),
        ),
        (
            usable.to_string(),
            ("Accepted", "True", "Accepted"),
            ("Programmed", "True", "Programmed"),
        ),
    ];
    for (addresses, accepted, programmed) in steps {
        let yaml = gw(&addresses);
        let rt = table(&yaml);
        assert_eq!(
            gateway_conditions(&rt, name),
            [accepted, programmed],
            "{addresses}"
        );
        let warned = kpv_core::http::report::diagnostics(&rt).iter().any(|d| {
            d.field.as_deref() == Some("spec.addresses")
                && (d.message.contains(accepted.2) || d.message.contains(programmed.2))
        });
        assert_eq!(warned, programmed.1 == "False", "{addresses}");
        let d = decide(&yaml, name, &get("http://gw:8080/"), 1);
        let served = programmed.1 == "True";
        assert_eq!(d.status.is_some(), served, "{addresses}");
        if served {
            let text = format!("{INFRA}\n---\n{yaml}");
            let (cluster, _) = kpv_core::Code::ALL.parse(&text);
            let prepared = kpv_core::http::prepare(&cluster);
            let proxy = prepared
                .proxies
                .iter()
                .find(|p| p.entry == EntryPoint::Gateway(NamespacedName::new(NS, name)))
                .expect("a proxy");
            assert_eq!(
                proxy.address.map(|a| a.to_string()).as_deref(),
                Some("203.0.113.77")
            );
        }
    }
}
