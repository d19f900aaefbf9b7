//! Shared by the Gateway API test files: the conformance suite's
//! infrastructure restated (namespace, backends, Gateways) and one `check`
//! helper that sends a table of requests through `kpv_core::http::walk`.

#![allow(dead_code)]

use kpv_core::cli::requests::{request, HttpArgs, HttpFrom};
use kpv_core::http::journey::ClusterBackends;
use kpv_core::http::walk::Decision;
use kpv_core::http::{compile, walk, EntryPoint};
use kpv_core::util::choose::Chooser;

/// The conformance suite's shared infrastructure, restated: a namespace,
/// three backends on port 8080, a Gateway `same-namespace` (HTTP on 80,
/// routes from the same namespace), one on 8080 and one HTTPS on 443.
pub const INFRA: &str = r#"
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

pub const NS: &str = "gateway-conformance-infra";

#[derive(Debug)]
pub enum Want {
    Backend(&'static str),
    Status(u16),
    Redirect(u16, &'static str),
}
pub use Want::*;

pub struct Req {
    pub url: &'static str,
    pub method: &'static str,
    pub headers: &'static [(&'static str, &'static str)],
    pub sni: Option<&'static str>,
}

pub fn get(url: &'static str) -> Req {
    Req {
        url,
        method: "GET",
        headers: &[],
        sni: None,
    }
}

pub fn with(url: &'static str, headers: &'static [(&'static str, &'static str)]) -> Req {
    Req {
        url,
        method: "GET",
        headers,
        sni: None,
    }
}

pub fn method(
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

/// The infrastructure plus `yaml`, parsed and compiled once, for many
/// requests.
pub struct Fixture {
    cluster: kpv_core::model::Cluster,
    rt: kpv_core::http::RoutingTable,
    slices: Vec<kpv_core::model::EndpointSlice>,
}

impl Fixture {
    pub fn new(yaml: &str) -> Fixture {
        let text = format!("{INFRA}\n---\n{yaml}");
        let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
        assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
        let (objects, hd) = kpv_core::http::parse(&text);
        assert!(!kpv_core::util::diag::has_errors(&hd), "{hd:#?}");
        let rt = compile(&objects, &cluster);
        let slices = kpv_core::net::controller::steady_slices(&cluster);
        Fixture {
            cluster,
            rt,
            slices,
        }
    }

    pub fn decide(&self, gateway: &str, r: &Req, seed: u64) -> Decision {
        let view = ClusterBackends {
            cluster: &self.cluster,
            slices: &self.slices,
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
        walk(&self.rt, &entry, &req, &view, &mut Chooser::new(seed)).expect("the Gateway exists")
    }
}

pub fn decide(yaml: &str, gateway: &str, r: &Req, seed: u64) -> Decision {
    Fixture::new(yaml).decide(gateway, r, seed)
}

/// Send every request of a table; on failure, name the request and show the
/// rules compared.
pub fn check(yaml: &str, gateway: &str, table: &[(Req, Want)]) {
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

/// Each parentRef's conditions of route `name`, as (type, status, reason).
pub fn conditions(yaml: &str, name: &str) -> Vec<(&'static str, &'static str, &'static str)> {
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let (objects, _) = kpv_core::http::parse(&text);
    let rt = compile(&objects, &cluster);
    rt.route_status
        .iter()
        .filter(|s| s.route.name == name)
        .flat_map(|s| s.conditions.iter().map(|c| (c.kind, c.status, c.reason)))
        .collect()
}

/// A Deployment and its Service on port 8080, as the suite's backends.
pub fn backend(ns: &str, name: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec: {{containers: [{{name: c, ports: [{{containerPort: 3000}}]}}]}}\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: {name}, namespace: {ns}}}\nspec: {{selector: {{app: {name}}}, ports: [{{port: 8080, targetPort: 3000}}]}}\n---\n"
    )
}

/// Attached-route counts of a Gateway's listeners, in listener order.
pub fn attached(yaml: &str, gateway: &str) -> Vec<usize> {
    let text = format!("{INFRA}\n---\n{yaml}");
    let (cluster, _) = kpv_core::Code::ALL.parse(&text);
    let (objects, _) = kpv_core::http::parse(&text);
    let rt = compile(&objects, &cluster);
    let id = kpv_core::model::NamespacedName::new(NS, gateway);
    match rt.tables.get(&kpv_core::http::EntryPoint::Gateway(id)) {
        Some(kpv_core::http::table::Table::Gateway(g)) => {
            g.listeners.iter().map(|l| l.attached_routes).collect()
        }
        _ => Vec::new(),
    }
}

pub const ACCEPTED_AND_RESOLVED: [(&str, &str, &str); 2] = [
    ("Accepted", "True", "Accepted"),
    ("ResolvedRefs", "True", "ResolvedRefs"),
];

/// The suite's second backend namespace and the Gateway that admits routes
/// from namespaces labelled `gateway-conformance: backend`.
pub const BACKEND_NAMESPACES: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: gateway-conformance-web-backend, labels: {gateway-conformance: backend}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: backend-namespaces, namespace: gateway-conformance-infra}
spec:
  gatewayClassName: conformance
  listeners:
    - name: http
      port: 80
      protocol: HTTP
      allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {gateway-conformance: backend}}}}
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
