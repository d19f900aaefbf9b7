//! Lowering the HTTP routing kinds: the driver (which kind goes where),
//! IngressClass, GatewayClass, Secrets, Namespaces, Envoy Gateway's
//! `EnvoyProxy`, and the controllers' markers on Deployments and Services.
//! Ingress is in `ingress.rs`, the Gateway API kinds in `gateway.rs`.
//!
//! Validated as the API server does, with located diagnostics; never
//! panics on input; decides no routing.

use super::validate::string_map;
use super::{Builder, RawObject};
use crate::model::routing::*;
use crate::model::NamespacedName;
use crate::yaml::Node as Y;

/// Lower every routing object into `b`'s cluster, in input order (nothing
/// in them refers to another routing object while lowering). Reached
/// through [`super::RoutingLowerer`] only, so that it lives with the rest of
/// HTTP routing's code.
pub(crate) fn lower(b: &mut Builder, raw: &[RawObject]) {
    b.routing(raw);
}

impl Builder {
    fn routing(&mut self, raw: &[RawObject]) {
        for (i, o) in raw.iter().enumerate() {
            let kind = o.kind.as_str();
            if matches!(kind, "Deployment" | "Service") {
                markers(&o.node, kind, &mut self.objects);
                continue;
            }
            if !ROUTING_KINDS.contains(&kind) {
                continue;
            }
            let namespaced = !matches!(kind, "IngressClass" | "GatewayClass" | "Namespace");
            let Some((id, labels, _)) = self.meta(o, namespaced) else {
                continue;
            };
            let m = o.node.get("metadata");
            let meta = Meta {
                id: id.clone(),
                labels,
                annotations: string_map(m.and_then(|m| m.get("annotations"))),
                created: m
                    .and_then(|m| m.get("creationTimestamp"))
                    .and_then(Y::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
                order: (o.file, o.doc, i),
            };
            let object = Self::object_name(o, &id);
            let n = &o.node;
            let api = n.get("apiVersion").and_then(Y::as_str).unwrap_or("");
            let mut c = o.ctx(&mut self.diags, object);
            let out = &mut self.objects;
            match kind {
                "Ingress" => {
                    if let Some(x) = super::ingress::ingress(&mut c, n, api, meta) {
                        out.ingresses.push(x);
                    }
                }
                "Gateway" => {
                    if let Some(x) = super::gateway::gateway(&mut c, n, meta) {
                        out.gateways.push(x);
                    }
                }
                "HTTPRoute" => {
                    if let Some(x) = super::gateway::route(&mut c, n, meta) {
                        out.routes.push(x);
                    }
                }
                "ReferenceGrant" => {
                    if let Some(x) = super::gateway::grant(&mut c, n, meta) {
                        out.grants.push(x);
                    }
                }
                "IngressClass" => {
                    let controller = c
                        .string(
                            n.get("spec").and_then(|s| s.get("controller")),
                            "spec.controller",
                        )
                        .unwrap_or_default();
                    if controller.is_empty() {
                        c.err(n, "spec.controller", "Required value", "");
                    }
                    let is_default = meta
                        .annotations
                        .get("ingressclass.kubernetes.io/is-default-class")
                        .is_some_and(|x| x == "true");
                    out.ingress_classes.push(IngressClass {
                        meta,
                        controller,
                        is_default,
                    });
                }
                "GatewayClass" => {
                    let spec = n.get("spec");
                    let controller = c
                        .string(
                            spec.and_then(|s| s.get("controllerName")),
                            "spec.controllerName",
                        )
                        .unwrap_or_default();
                    if controller.is_empty() {
                        c.err(n, "spec.controllerName", "Required value", "");
                    }
                    let envoy_proxy = spec.and_then(|s| s.get("parametersRef")).and_then(|p| {
                        (p.get("kind").and_then(Y::as_str) == Some("EnvoyProxy")).then(|| {
                            NamespacedName::new(
                                p.get("namespace").and_then(Y::as_str).unwrap_or("default"),
                                p.get("name").and_then(Y::as_str).unwrap_or(""),
                            )
                        })
                    });
                    out.gateway_classes.push(GatewayClass {
                        name: meta.id.name,
                        controller,
                        envoy_proxy,
                    });
                }
                "Secret" => {
                    let tls = n.get("type").and_then(Y::as_str) == Some("kubernetes.io/tls");
                    out.secrets.insert(meta.id, tls);
                }
                "Namespace" => {
                    out.namespaces.insert(meta.id.name, meta.labels);
                }
                "EnvoyProxy" => {
                    let service = n
                        .get("spec")
                        .and_then(|s| s.get("routingType"))
                        .and_then(Y::as_str)
                        == Some("Service");
                    if service {
                        out.envoy_service_routing.push(meta.id.clone());
                    }
                    out.envoy_proxies.push(meta.id);
                }
                _ => {}
            }
        }
    }
}

/// The controllers' own markers on Deployments and Services.
fn markers(n: &Y, kind: &str, out: &mut RoutingObjects) {
    let m = n.get("metadata");
    let id = NamespacedName::new(
        m.and_then(|m| m.get("namespace"))
            .and_then(Y::as_str)
            .unwrap_or("default"),
        m.and_then(|m| m.get("name"))
            .and_then(Y::as_str)
            .unwrap_or(""),
    );
    let labels = string_map(m.and_then(|m| m.get("labels")));
    let gw_name = labels.get("gateway.envoyproxy.io/owning-gateway-name");
    let gw_ns = labels.get("gateway.envoyproxy.io/owning-gateway-namespace");
    if let (Some(name), Some(ns)) = (gw_name, gw_ns) {
        out.markers.push(ControllerMarker::EnvoyProxy {
            object: id.clone(),
            is_service: kind == "Service",
            gateway: NamespacedName::new(ns.clone(), name.clone()),
        });
    }
    if kind != "Deployment" {
        return;
    }
    let template = n.get("spec").and_then(|s| s.get("template"));
    let containers = template
        .and_then(|t| t.get("spec"))
        .and_then(|s| s.get("containers"))
        .and_then(Y::as_seq)
        .unwrap_or(&[]);
    for ctr in containers {
        let args: Vec<&str> = ["args", "command"]
            .iter()
            .filter_map(|k| ctr.get(k).and_then(Y::as_seq))
            .flatten()
            .filter_map(Y::as_str)
            .collect();
        if !args.iter().any(|a| a.ends_with("nginx-ingress-controller")) {
            continue;
        }
        let flag = |name: &str| {
            args.iter()
                .find_map(|a| a.strip_prefix(name))
                .map(str::to_string)
        };
        out.markers.push(ControllerMarker::IngressNginx {
            deployment: id.clone(),
            controller_class: flag("--controller-class=")
                .unwrap_or_else(|| "k8s.io/ingress-nginx".into()),
            ingress_class: flag("--ingress-class=").unwrap_or_else(|| "nginx".into()),
            pod_labels: string_map(
                template
                    .and_then(|t| t.get("metadata"))
                    .and_then(|m| m.get("labels")),
            ),
        });
    }
}
