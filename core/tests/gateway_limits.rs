//! The Gateway API CRDs' limits and CEL rules as the API server applies
//! them (gateway-api `apis/v1`, standard channel): lists past `maxItems`,
//! repeated filters, RequestRedirect with backendRefs, `ReplacePrefixMatch`
//! without one PathPrefix match, bad header names, `#` and spaces in
//! paths, an empty rewrite hostname; and, over generated routes, no panic
//! and weighted picks that follow the weights however large they are.

mod gateway_support;
use gateway_support::*;
use proptest::prelude::*;

/// The API server's errors for `yaml` (after the conformance infrastructure).
fn errors(yaml: &str) -> Vec<String> {
    let text = format!("{INFRA}\n---\n{yaml}");
    let (_, diags) = kpv_core::http::parse(&text);
    diags
        .iter()
        .filter(|d| d.severity == kpv_core::util::diag::Severity::Error)
        .map(|d| format!("{}: {}", d.field.clone().unwrap_or_default(), d.message))
        .collect()
}

fn route(rule: &str) -> String {
    format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: r, namespace: {NS}}}\nspec:\n  parentRefs: [{{name: same-namespace}}]\n  rules:\n  - {rule}\n"
    )
}

fn backend_refs(n: usize, weight: u32) -> String {
    let one = format!("{{name: infra-backend-v1, port: 8080, weight: {weight}}}");
    format!("backendRefs: [{}]", vec![one; n].join(", "))
}

#[test]
fn lists_past_max_items_are_refused() {
    assert!(errors(&route(&backend_refs(16, 1))).is_empty());
    assert_eq!(
        errors(&route(&backend_refs(4300, 1_000_000))),
        ["spec.rules[0].backendRefs: Too many: 4300: must have at most 16 items"]
    );
    let matches = vec!["{path: {value: /a}}"; 65].join(", ");
    assert_eq!(
        errors(&route(&format!("matches: [{matches}]"))),
        ["spec.rules[0].matches: Too many: 65: must have at most 64 items"]
    );
    // 16 rules of 64 matches each are within the lists' limits, but not
    // within the route's 128 in all.
    let rule = format!("matches: [{}]", ["{path: {value: /a}}"; 9].join(", "));
    let rules = vec![rule; 15].join("\n  - ");
    let e = errors(&route(&rules));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with("spec.rules: While 16 rules and 64 matches"),
        "{e:?}"
    );
    let hosts = (0..17)
        .map(|i| format!("h{i}.example.com"))
        .collect::<Vec<_>>();
    let yaml = route("{}").replace(
        "  rules:",
        &format!("  hostnames: [{}]\n  rules:", hosts.join(", ")),
    );
    assert_eq!(
        errors(&yaml),
        ["spec.hostnames: Too many: 17: must have at most 16 items"]
    );
}

#[test]
fn cel_rules_on_filters_are_applied() {
    let modifier =
        "{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: a, value: b}]}}";
    for (rule, want) in [
        (
            format!("filters: [{modifier}, {modifier}]"),
            "spec.rules[0].filters: RequestHeaderModifier filter cannot be repeated",
        ),
        (
            format!("filters: [{{type: RequestRedirect, requestRedirect: {{scheme: https}}}}]\n    {}", backend_refs(1, 1)),
            "spec.rules[0]: RequestRedirect filter must not be used together with backendRefs",
        ),
        (
            "matches: [{path: {type: Exact, value: /a}}]\n    filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /b}}}]".into(),
            "spec.rules[0]: When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified",
        ),
        (
            "filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: Bad Name, value: x}]}}]".into(),
            "spec.rules[0].filters[0].requestHeaderModifier.set[0].name: Invalid value: \"Bad Name\": should match '^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$'",
        ),
        (
            "matches: [{headers: [{name: \"x y\", value: a}]}]".into(),
            "spec.rules[0].matches[0].headers[0].name: Invalid value: \"x y\": should match '^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$'",
        ),
        (
            "matches: [{path: {type: PathPrefix, value: \"/cart#x y\"}}]".into(),
            "spec.rules[0].matches[0].path.value: must not contain '#' when type one of ['Exact', 'PathPrefix']",
        ),
        (
            "filters: [{type: URLRewrite, urlRewrite: {hostname: \"\"}}]".into(),
            "spec.rules[0].filters[0].urlRewrite.hostname: Invalid value: \"\": spec.rules[0].filters[0].urlRewrite.hostname in body should be at least 1 chars long",
        ),
    ] {
        assert_eq!(errors(&route(&rule)), [want], "{rule}");
    }
}

#[test]
fn a_header_value_with_a_line_break_is_left_out_with_a_warning() {
    let yaml = route(
        "filters: [{type: RequestHeaderModifier, requestHeaderModifier: {add: [{name: X-A, value: \"1\\r\\nHost: evil\"}, {name: X-B, value: ok}]}}]\n    backendRefs: [{name: infra-backend-v1, port: 8080}]",
    );
    assert!(errors(&yaml).is_empty());
    let d = Fixture::new(&yaml).decide("same-namespace", &get("http://gw/"), 1);
    assert_eq!(d.request.headers.get("x-b").map(String::as_str), Some("ok"));
    assert!(d.request.headers.get("x-a").is_none());
    assert!(d
        .request
        .headers
        .get("host")
        .is_none_or(|h| !h.contains("evil")));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any number of backendRefs of any weights: lowering and walking never
    /// panic (debug builds check arithmetic); past 16 the route is refused;
    /// within the limits a zero weight is never chosen.
    #[test]
    fn weights_and_counts_never_panic(
        weights in prop::collection::vec(0u32..=1_000_000, 0..40),
        seed in 0u64..1000,
    ) {
        let refs = weights
            .iter()
            .enumerate()
            .map(|(i, w)| format!("{{name: infra-backend-v{}, port: 8080, weight: {w}}}", i % 3 + 1))
            .collect::<Vec<_>>();
        let yaml = route(&format!("backendRefs: [{}]", refs.join(", ")));
        let e = errors(&yaml);
        prop_assert_eq!(e.is_empty(), weights.len() <= 16);
        if e.is_empty() {
            let d = Fixture::new(&yaml).decide("same-namespace", &get("http://gw/"), seed);
            let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
            if total == 0 {
                prop_assert_eq!(d.status, Some(500));
            } else {
                let b = d.backend.expect("a backend is chosen");
                prop_assert!(b.weight > 0);
                prop_assert_eq!(u64::from(b.total_weight), total);
            }
        }
    }
}

/// One backend of weight 1 among a heavy one gets about its share, not
/// more: 1 in 1,000,001 is never picked in 2,000 draws.
#[test]
fn a_light_backend_gets_its_share() {
    let yaml = route("backendRefs: [{name: infra-backend-v1, port: 8080, weight: 1000000}, {name: infra-backend-v2, port: 8080, weight: 1}]");
    let f = Fixture::new(&yaml);
    let light = (0..2000)
        .filter(|seed| {
            let d = f.decide("same-namespace", &get("http://gw/"), *seed);
            d.backend
                .is_some_and(|b| b.service.name == "infra-backend-v2")
        })
        .count();
    assert!(light <= 1, "{light} of 2000");
}
