//! Requests read as curl writes them and as the proxies read them: URLs per
//! RFC 3986 (fragment never sent, userinfo as Basic credentials and never
//! in the Host, one port, IDN hosts as A-labels), header lines that cannot
//! forge another header, and Envoy Gateway's path normalisation, trailing-dot
//! Hosts, duplicate Hosts and IPv6 redirect locations.

mod gateway_support;
use gateway_support::*;
use kpv_core::http::send::{parse_request, RequestField, RequestProblem};
use kpv_core::http::walk::{HttpRequest, Reason};

fn read(url: &str, headers: &str) -> HttpRequest {
    parse_request("GET", url, headers).expect("a valid request")
}

fn problem(url: &str, headers: &str) -> (RequestField, usize, RequestProblem) {
    let e = parse_request("GET", url, headers).expect_err("refused");
    (e.field, e.column, e.problem)
}

#[test]
fn urls_as_curl_sends_them() {
    let r = read("https://testhost.com/api#frag", "");
    assert_eq!((r.path.as_str(), r.query.as_str()), ("/api", ""));
    let r = read("https://user@testhost.com/a?b=1#c", "");
    assert_eq!(
        (r.host.as_str(), r.authority.as_str()),
        ("testhost.com", "testhost.com")
    );
    assert_eq!(r.sni.as_deref(), Some("testhost.com"));
    assert_eq!(
        r.headers,
        [("authorization".to_string(), "Basic dXNlcjo=".to_string())]
    );
    // A header the user gives wins over the URL's credentials.
    let r = read("http://user:pw@testhost.com/", "Authorization: Bearer t");
    assert_eq!(
        r.headers,
        [("authorization".to_string(), "Bearer t".to_string())]
    );
    let r = read("https://bücher.testhost.com/", "");
    assert_eq!(r.host, "xn--bcher-kva.testhost.com");
    assert_eq!(r.sni.as_deref(), Some("xn--bcher-kva.testhost.com"));
    assert_eq!(
        problem("https://host:443:443/", ""),
        (RequestField::Url, 9, RequestProblem::BadAuthority)
    );
    assert_eq!(r.url(), "https://xn--bcher-kva.testhost.com/");
}

#[test]
fn header_lines_cannot_forge_another_header() {
    assert_eq!(
        problem("http://h/", "X-A: 1\rHost: evil"),
        (RequestField::Header(1), 7, RequestProblem::HeaderBadValue)
    );
    assert_eq!(
        problem("http://h/", "X-B: ok\nX-A: a\u{0}b"),
        (RequestField::Header(2), 7, RequestProblem::HeaderBadValue)
    );
    // Tabs are allowed; CRLF line ends are line ends.
    let r = read("http://h/", "X-A: a\tb\r\nX-B: c\r\n");
    assert_eq!(r.headers.len(), 2);
    // The CLI's -H with a line break in it is refused, not split in two.
    let e = HttpRequest::from_url(
        "http://h/",
        "GET",
        &[("X-A".into(), "1\nHost: api.testhost.com".into())],
        None,
    )
    .expect_err("refused");
    assert!(
        e.contains("header 1") && !e.contains("api.testhost.com"),
        "{e}"
    );
    // A second Host header is kept for the proxy to refuse.
    let r = read("http://h/", "Host: a.com\nHost: b.com");
    assert_eq!(r.host, "a.com");
    assert_eq!(r.headers, [("host".to_string(), "b.com".to_string())]);
}

const ROUTES: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: hygiene, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  hostnames: [testhost.com]
  rules:
    - matches: [{path: {type: PathPrefix, value: /api}}]
      backendRefs: [{name: infra-backend-v1, port: 8080}]
    - matches: [{path: {type: PathPrefix, value: /old}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}}}]
    - backendRefs: [{name: infra-backend-v2, port: 8080}]
"#;

#[test]
fn envoy_gateway_normalises_paths_and_forwards_the_normal_form() {
    let f = Fixture::new(ROUTES);
    for url in [
        "http://testhost.com/public/../api/x",
        "http://testhost.com//api/x",
        "http://testhost.com/%61pi/x",
    ] {
        let d = f.decide("same-namespace", &get(url), 1);
        let b = d.backend.as_ref().map(|b| b.service.name.as_str());
        assert_eq!(
            (d.status, b),
            (Some(200), Some("infra-backend-v1")),
            "{url}"
        );
        assert_eq!(d.request.path, "/api/x", "{url}");
        assert_eq!(d.matched_path.as_deref(), Some("/api/x"), "{url}");
    }
    let d = f.decide("same-namespace", &get("http://testhost.com/api/x"), 1);
    assert_eq!(d.matched_path, None);
}

#[test]
fn envoy_gateway_keeps_a_trailing_dot_and_refuses_two_hosts() {
    let f = Fixture::new(ROUTES);
    let d = f.decide("same-namespace", &get("http://testhost.com./api"), 1);
    assert_eq!(d.status, Some(404));
    let d = f.decide(
        "same-namespace",
        &with(
            "http://testhost.com/api",
            &[("Host", "testhost.com"), ("Host", "x.com")],
        ),
        1,
    );
    assert_eq!((d.status, d.reason), (Some(400), Reason::BadRequest));
}

#[test]
fn a_redirect_to_an_ipv6_host_brackets_it() {
    let yaml = ROUTES.replace("  hostnames: [testhost.com]\n", "");
    let f = Fixture::new(&yaml);
    let d = f.decide("same-namespace", &get("http://[2001:db8::1]/old/x"), 1);
    assert_eq!(d.status, Some(302));
    assert_eq!(
        d.redirect.map(|r| r.location).as_deref(),
        Some("http://[2001:db8::1]/new/x")
    );
}

/// The proxy Service kpv adds for Envoy Gateway keeps the client's address
/// (`externalTrafficPolicy: Local`, with its health-check node port), as
/// Envoy Gateway's default EnvoyProxy does; ingress-nginx's keeps Cluster.
#[test]
fn envoy_gateways_proxy_service_keeps_the_client_address() {
    use kpv_core::model::TrafficPolicy;
    for (file, local) in [
        (
            "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\nspec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw}\nspec:\n  gatewayClassName: eg\n  listeners: [{name: http, port: 80, protocol: HTTP}]\n",
            true,
        ),
        (
            "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: nginx}\nspec: {controller: k8s.io/ingress-nginx}\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web}\nspec:\n  ingressClassName: nginx\n  defaultBackend: {service: {name: web, port: {number: 80}}}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n",
            false,
        ),
    ] {
        let (cluster, _) = kpv_core::Code::ALL.parse(file);
        let p = kpv_core::http::prepare(&cluster);
        let proxy = p.proxies.iter().find(|x| x.synthesized).expect("a proxy added");
        let svc = p.cluster.service(&proxy.service).expect("its Service");
        let want = if local { TrafficPolicy::Local } else { TrafficPolicy::Cluster };
        assert_eq!(svc.external_traffic_policy, want);
        assert_eq!(svc.health_check_node_port.is_some(), local);
    }
}
