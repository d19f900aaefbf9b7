//! Diagnostics about relations between objects (a selector that matches no
//! Pod, a pending load balancer, Endpoints without their Service, a named
//! targetPort no container declares, a route's parentRef or backendRef that
//! does not resolve, a listener's certificate) are found after lowering,
//! yet each is placed like a parse diagnostic: its file, document, object,
//! field, and the line of the field that names the relation (else the
//! object's `kind:` line). Expected lines are the lines marked `# <-`.

use kpv_core::http;
use kpv_core::model::{self, Input};
use kpv_core::util::diag::Diagnostic;

struct Case {
    name: &'static str,
    /// Input files; the marked line (`# <-`) is where the diagnostic goes.
    files: &'static [&'static str],
    /// A fragment of the message that picks the diagnostic.
    message: &'static str,
    object: &'static str,
    field: &'static str,
    /// The file and document (0-based) it is in.
    file: usize,
    document: usize,
}

/// Model diagnostics, then the HTTP status ones, all located.
fn diagnostics(files: &[&str]) -> Vec<Diagnostic> {
    let inputs: Vec<Input<'_>> = files.iter().map(|t| Input { text: t }).collect();
    let (cluster, mut diags) = kpv_core::Code::ALL.parse_files(&inputs);
    let prepared = http::prepare(&cluster);
    let mut status = http::report::diagnostics(&prepared.table);
    status.extend(http::status::ingress_diagnostics(
        &prepared.table.objects,
        &prepared.cluster,
    ));
    model::locate_diagnostics(&inputs, &mut status);
    diags.extend(status);
    diags
}

/// (file, 1-based line) of the `# <-` mark.
fn marked(files: &[&str]) -> (usize, usize) {
    let found: Vec<(usize, usize)> = files
        .iter()
        .enumerate()
        .flat_map(|(f, t)| {
            t.lines()
                .enumerate()
                .filter(|(_, l)| l.contains("# <-"))
                .map(move |(i, _)| (f, i + 1))
        })
        .collect();
    assert_eq!(found.len(), 1, "mark exactly one line: {found:?}");
    found[0]
}

/// Two documents: the GatewayClass `eg` (Envoy Gateway), then the Gateway
/// `web` of that class with these `listeners` (block list items).
macro_rules! gateway_web {
    ($listeners:literal) => {
        concat!(
            "apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: eg
  listeners:
",
            $listeners
        )
    };
}

/// The HTTPRoute `default/r` with this `spec` (its fields, indented).
macro_rules! route_r {
    ($spec:literal) => {
        concat!(
            "apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
spec:
",
            $spec
        )
    };
}

const NODE: &str = "apiVersion: v1
kind: Node
metadata:
  name: n1
spec:
  podCIDR: 10.244.1.0/24
status:
  addresses:
    - {type: InternalIP, address: 192.168.0.11}
";

const CASES: &[Case] = &[
    Case {
        name: "selector matches no Pod",
        files: &["apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: # <-
    app: nothing
  ports:
    - port: 80
"],
        message: "matches no Pod",
        object: "Service/default/web",
        field: "spec.selector",
        file: 0,
        document: 0,
    },
    Case {
        name: "selector in the second document of the second file",
        files: &[
            NODE,
            "apiVersion: v1
kind: Pod
metadata:
  name: p
  labels: {app: db}
spec:
  nodeName: n1
  containers: [{name: c, image: i}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  ports: [{port: 80}]
  selector: {app: db} # <-
",
        ],
        message: "matches no Pod in namespace shop",
        object: "Service/shop/web",
        field: "spec.selector",
        file: 1,
        document: 1,
    },
    Case {
        name: "a List member's field keeps its items[] prefix",
        files: &["apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Service
    metadata: {name: a}
    spec: {ports: [{port: 80}], selector: {app: a}}
  - apiVersion: v1
    kind: Service
    metadata: {name: b}
    spec:
      ports: [{port: 80}]
      selector: # <-
        app: b
"],
        message: "app=b matches no Pod",
        object: "Service/default/b",
        field: "items[1].spec.selector",
        file: 0,
        document: 0,
    },
    Case {
        name: "assumed load balancer without status: the kind line",
        files: &["apiVersion: v1
kind: Service # <-
metadata:
  name: lb
spec:
  type: LoadBalancer
  ports: [{port: 80}]
"],
        message: "kpv assumes a cloud load balancer",
        object: "Service/default/lb",
        field: "status.loadBalancer.ingress",
        file: 0,
        document: 0,
    },
    Case {
        name: "pending load balancer with an empty status: its nearest written parent",
        files: &[
            NODE,
            "apiVersion: v1
kind: Service
metadata:
  name: lb
spec:
  type: LoadBalancer
  loadBalancerClass: example.com/internal
  ports: [{port: 80}]
status:
  loadBalancer: {} # <-
",
        ],
        message: "stays pending",
        object: "Service/default/lb",
        field: "status.loadBalancer.ingress",
        file: 1,
        document: 0,
    },
    Case {
        name: "Endpoints without a Service",
        files: &["apiVersion: v1
kind: Endpoints
metadata:
  namespace: db
  name: lonely # <-
subsets:
  - addresses: [{ip: 10.0.0.1}]
    ports: [{port: 5432}]
"],
        message: "have no Service of the same name",
        object: "Endpoints/db/lonely",
        field: "metadata.name",
        file: 0,
        document: 0,
    },
    Case {
        name: "named targetPort no container declares",
        files: &[
            NODE,
            "apiVersion: v1
kind: Pod
metadata:
  name: web-1
  labels: {app: web}
spec:
  nodeName: n1
  containers:
    - name: c
      image: i
      ports: [{name: http, containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - {name: http, port: 80, targetPort: http}
    - name: metrics
      port: 9090
      targetPort: metrics # <-
",
        ],
        message: "targetPort `metrics` (TCP) is declared by no container of the 1 Pod(s)",
        object: "Service/default/web",
        field: "spec.ports[1].targetPort",
        file: 1,
        document: 1,
    },
    Case {
        name: "StatefulSet serviceName naming no Service",
        files: &["apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web # <-
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
"],
        message: "`web` names no Service in namespace default, so the StatefulSet's Pods' DNS names (web-0.web.default.svc.cluster.local, …) do not resolve",
        object: "StatefulSet/default/web",
        field: "spec.serviceName",
        file: 0,
        document: 0,
    },
    Case {
        name: "userspace portRange too small for the Service ports",
        files: &["apiVersion: v1
kind: Service
metadata: {name: a}
spec: {clusterIP: 10.96.0.10, ports: [{port: 80, name: a}, {port: 81, name: b}], selector: {x: y}}
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: userspace
portRange: 30000-30000 # <-
"],
        message: "needs a proxy port per TCP Service port",
        object: "KubeProxyConfiguration",
        field: "portRange",
        file: 0,
        document: 1,
    },
    Case {
        name: "userspace mode with hand-written EndpointSlices",
        files: &["apiVersion: v1
kind: Service
metadata: {name: ext}
spec: {clusterIP: 10.96.0.20, ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice # <-
metadata:
  name: ext-1
  labels: {kubernetes.io/service-name: ext}
addressType: IPv4
endpoints: [{addresses: [10.1.2.3]}]
ports: [{port: 80}]
---
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: userspace
"],
        message: "reads Endpoints, not EndpointSlices",
        object: "EndpointSlice/default/ext-1",
        field: "kind",
        file: 0,
        document: 1,
    },
    Case {
        name: "HTTPRoute parentRef to a Gateway that does not exist",
        files: &[
            GATEWAY,
            route_r!("  parentRefs:
    - name: web
    - name: nowhere # <-
  rules:
    - backendRefs: [{name: app, port: 80}]
"),
        ],
        message: "Accepted: False (NoMatchingParent) for parent default/nowhere",
        object: "HTTPRoute/default/r",
        field: "spec.parentRefs[1]",
        file: 1,
        document: 0,
    },
    Case {
        name: "HTTPRoute backendRef to a Service that does not exist",
        files: &[
            GATEWAY,
            route_r!("  parentRefs: [{name: web}]
  rules:
    - backendRefs: [{name: app, port: 80}]
    - matches: [{path: {type: PathPrefix, value: /x}}]
      backendRefs:
        - name: app
          port: 80
        - name: missing # <-
          port: 80
"),
        ],
        message: "ResolvedRefs: False (BackendNotFound)",
        object: "HTTPRoute/default/r",
        field: "spec.rules[1].backendRefs[1].name",
        file: 1,
        document: 0,
    },
    Case {
        name: "HTTPRoute backendRef to another namespace without a ReferenceGrant",
        files: &[
            GATEWAY,
            route_r!("  parentRefs: [{name: web}]
  rules:
    - backendRefs:
        - name: app # <-
          namespace: other
          port: 80
"),
        ],
        message: "ResolvedRefs: False (RefNotPermitted)",
        object: "HTTPRoute/default/r",
        field: "spec.rules[0].backendRefs[0].name",
        file: 1,
        document: 0,
    },
    Case {
        name: "HTTPS listener whose certificate Secret does not exist",
        files: &[gateway_web!("    - name: http
      protocol: HTTP
      port: 80
    - name: https
      protocol: HTTPS
      port: 443
      tls:
        certificateRefs: # <-
          - name: no-such-secret
")],
        message: "listener `https`: ResolvedRefs False",
        object: "Gateway/default/web",
        field: "spec.listeners[1].tls.certificateRefs",
        file: 0,
        document: 1,
    },
    Case {
        name: "two listeners with the same port, protocol and hostname",
        files: &[gateway_web!("    - {name: a, protocol: HTTP, port: 80}
    - {name: b, protocol: HTTP, port: 80} # <-
")],
        message: "listener `b`: Conflicted",
        object: "Gateway/default/web",
        field: "spec.listeners[1]",
        file: 0,
        document: 1,
    },
    Case {
        name: "HTTP and HTTPS listeners on one port",
        files: &[gateway_web!("    - {name: a, protocol: HTTP, port: 8443}
    - name: b # <-
      protocol: HTTPS
      port: 8443
      tls: {certificateRefs: [{name: cert}]}
")],
        message: "listener `b`: Conflicted True (ProtocolConflict)",
        object: "Gateway/default/web",
        field: "spec.listeners[1]",
        file: 0,
        document: 1,
    },
    Case {
        name: "Ingress path to a Service that does not exist",
        files: &[GATEWAY, "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing}
spec:
  rules:
    - host: a.example
      http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: app, port: {number: 80}}}}
          - path: /x
            pathType: Prefix
            backend:
              service:
                name: gone # <-
                port: {number: 80}
"],
        message: "backend Service default/gone does not exist",
        object: "Ingress/default/ing",
        field: "spec.rules[0].http.paths[1].backend.service.name",
        file: 1,
        document: 0,
    },
    Case {
        name: "Ingress path to a port the Service lacks, after a refused path",
        files: &[GATEWAY, "apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing}
spec:
  rules:
    - http:
        paths:
          - {path: /a, backend: {service: {name: app, port: {number: 80}}}}
          - path: /b
            pathType: Exact
            backend:
              service:
                name: app # <-
                port: {name: https}
"],
        message: "backend Service default/app has no port https",
        object: "Ingress/default/ing",
        field: "spec.rules[0].http.paths[1].backend.service.name",
        file: 1,
        document: 0,
    },
    Case {
        name: "the article's extensions/v1beta1 Ingress with a serviceName that does not exist",
        files: &["apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: test-ingress
spec:
  rules:
    - host: testhost.com
      http:
        paths:
          - path: /*
            backend:
              serviceName: service-test # <-
              servicePort: 80
"],
        message: "backend Service default/service-test does not exist",
        object: "Ingress/default/test-ingress",
        field: "spec.rules[0].http.paths[0].backend.serviceName",
        file: 0,
        document: 0,
    },
    Case {
        name: "Ingress defaultBackend to a Service that does not exist",
        files: &["apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ing, namespace: web}
spec:
  defaultBackend: # <-
    service: {name: fallback, port: {number: 80}}
"],
        message: "backend Service web/fallback does not exist: the controller answers 503 for this defaultBackend",
        object: "Ingress/web/ing",
        field: "spec.defaultBackend",
        file: 0,
        document: 0,
    },
];

/// A Gateway and a Service `app` for the route cases (file 0).
const GATEWAY: &str = concat!(
    gateway_web!("    - {name: http, protocol: HTTP, port: 80}\n"),
    "---
apiVersion: v1
kind: Service
metadata: {name: app}
spec: {clusterIP: 10.96.0.30, ports: [{port: 80}]}
"
);

#[test]
fn relation_diagnostics_are_placed_at_the_field_that_names_the_relation() {
    for case in CASES {
        let diags = diagnostics(case.files);
        let hits: Vec<&Diagnostic> = diags
            .iter()
            .filter(|d| d.message.contains(case.message))
            .collect();
        let [d] = hits.as_slice() else {
            panic!(
                "{}: want one diagnostic with {:?}: {diags:#?}",
                case.name, case.message
            )
        };
        let (file, line) = marked(case.files);
        assert_eq!(
            d.object.as_deref(),
            Some(case.object),
            "{}: {d:#?}",
            case.name
        );
        assert_eq!(
            d.field.as_deref(),
            Some(case.field),
            "{}: {d:#?}",
            case.name
        );
        assert_eq!(
            (d.file, d.document),
            (case.file, case.document),
            "{}: {d:#?}",
            case.name
        );
        assert_eq!(file, case.file, "{}", case.name);
        let at = d
            .position()
            .unwrap_or_else(|| panic!("{}: no position: {d:#?}", case.name));
        assert_eq!(at.line, line, "{}: {d}", case.name);
        // Shown as parse diagnostics are.
        let text = d.to_string();
        assert!(
            text.contains(&format!(
                "document {}, line {line}, column ",
                case.document + 1
            )),
            "{}: {text}",
            case.name
        );
    }
}

/// A diagnostic about the input as a whole keeps having no position, and
/// a diagnostic that already had one keeps it.
#[test]
fn only_unplaced_object_diagnostics_are_placed() {
    let text = "apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 99999}]
  selector: {app: x}
";
    let diags = diagnostics(&[text]);
    let nodes = diags
        .iter()
        .find(|d| d.message.contains("no Node objects given"))
        .expect("the no-Node warning");
    assert_eq!(nodes.position(), None, "{nodes:#?}");
    assert!(!nodes.to_string().contains("line"));
    let port = diags
        .iter()
        .find(|d| d.field.as_deref() == Some("spec.ports[0].port"))
        .expect("the port error");
    assert_eq!(port.position().map(|s| s.line), Some(5), "{port:#?}");
    // The selector warning names an object of the input: it is placed.
    let selector = diags
        .iter()
        .find(|d| d.message.contains("matches no Pod"))
        .expect("the selector warning");
    assert_eq!(
        selector.position().map(|s| s.line),
        Some(6),
        "{selector:#?}"
    );
}

/// The CLI prints the route status diagnostics with their position, and
/// with the file they are in.
#[test]
fn kpv_routes_prints_located_route_status() {
    use kpv_core::cli::{parse_args, run};
    let route = CASES
        .iter()
        .find(|c| c.field == "spec.rules[1].backendRefs[1].name")
        .unwrap();
    let (_, line) = marked(route.files);
    let names = vec!["gw.yaml".to_string(), "route.yaml".to_string()];
    let args = vec!["routes".to_string(), names[0].clone(), names[1].clone()];
    let texts: Vec<String> = route.files.iter().map(|t| t.to_string()).collect();
    let out = run(&parse_args(&args).unwrap(), &texts, &names);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let want = format!(
        "route.yaml: warning: document 1, line {line}, column 11: HTTPRoute/default/r: spec.rules[1].backendRefs[1].name: ResolvedRefs: False (BackendNotFound)"
    );
    assert!(out.stderr.contains(&want), "{}", out.stderr);
}

/// `kpv check` (text) prints the route status and Ingress backend warnings
/// too, placed like its own; an input without routing objects is unchanged.
#[test]
fn kpv_check_prints_located_routing_warnings() {
    use kpv_core::cli::{parse_args, run};
    // (The case with a refused path is an input with an error: kpv check
    // then computes nothing, as for any error.)
    for case in CASES.iter().filter(|c| {
        let routing = ["HTTPRoute/", "Ingress/", "Gateway/"]
            .iter()
            .any(|k| c.object.starts_with(k));
        routing && !c.name.contains("after a refused path")
    }) {
        let names: Vec<String> = (0..case.files.len())
            .map(|i| format!("in{i}.yaml"))
            .collect();
        let mut args = vec!["check".to_string()];
        args.extend(names.iter().cloned());
        let texts: Vec<String> = case.files.iter().map(|t| t.to_string()).collect();
        let out = run(&parse_args(&args).unwrap(), &texts, &names);
        assert_eq!(out.code, 0, "{}: {}", case.name, out.stderr);
        let (file, line) = marked(case.files);
        let line_text = out
            .stderr
            .lines()
            .find(|l| l.contains(case.message))
            .unwrap_or_else(|| panic!("{}: {}", case.name, out.stderr));
        let want = format!(
            "in{file}.yaml: warning: document {}, line {line}, column ",
            case.document + 1
        );
        assert!(line_text.starts_with(&want), "{}: {line_text}", case.name);
        assert!(line_text.contains(&format!("{}: {}: ", case.object, case.field)));
    }
}
