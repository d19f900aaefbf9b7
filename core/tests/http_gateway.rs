//! Gateway API matching, checked against the request tables of the Gateway
//! API conformance suite (`conformance/tests/httproute-*.go`: matching,
//! matching across routes, header, query-parameter and method matching,
//! hostname intersection, listener hostnames): the routes below restate
//! those tests' manifests, the expectations their tables.

mod gateway_support;
use gateway_support::*;

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
            (
                get("http://foo.wildcard.io/non-matching-prefix"),
                Status(404),
            ),
            (
                get("http://foo.anotherwildcard.io/non-matching-prefix"),
                Status(404),
            ),
        ],
    );
    // Only accepted routes count: two on the specific listener, one on each
    // wildcard; the route intersecting no listener is counted nowhere.
    assert_eq!(attached(yaml, g), [2, 1, 1]);
    assert_eq!(
        conditions(yaml, "no-intersecting-hosts")[0],
        ("Accepted", "False", "NoMatchingListenerHostname")
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
