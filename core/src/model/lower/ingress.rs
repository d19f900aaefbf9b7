//! Lowering an Ingress (a routing kind, see `routing.rs`):
//! `networking.k8s.io/v1` as the API server validates it, and the removed `extensions/v1beta1` / `networking.k8s.io/v1beta1`
//! (`serviceName`/`servicePort`, `spec.backend`, optional `pathType`)
//! converted to v1 as the API server's conversion did, with a warning that
//! says what it became. Never panics on input; decides no routing.

use super::validate::{host_problem, strict_path_problem, Ctx};
use crate::model::routing::{
    Ingress, IngressBackend, IngressPath, IngressRule, IngressTls, Meta, PathType,
};
use crate::model::PortRef;
use crate::yaml::{Node as Y, Value};

pub(super) fn ingress(c: &mut Ctx<'_>, n: &Y, api: &str, meta: Meta) -> Option<Ingress> {
    let beta = matches!(api, "extensions/v1beta1" | "networking.k8s.io/v1beta1");
    if !beta && api != "networking.k8s.io/v1" {
        c.err(
            n,
            "apiVersion",
            format!("Ingress in version \"{api}\" cannot be handled"),
            "use apiVersion: networking.k8s.io/v1",
        );
        return None;
    }
    let spec = n.get("spec");
    let mut converted: Vec<String> = Vec::new();
    let class_name = c.string(
        spec.and_then(|s| s.get("ingressClassName")),
        "spec.ingressClassName",
    );
    let default_key = if beta { "backend" } else { "defaultBackend" };
    let default_backend = spec.and_then(|s| s.get(default_key)).and_then(|b| {
        if beta {
            converted.push("spec.backend → spec.defaultBackend".into());
        }
        backend(c, b, &format!("spec.{default_key}"), beta, &mut converted)
    });
    let mut rules = Vec::new();
    for (i, r) in c
        .seq(spec.and_then(|s| s.get("rules")), "spec.rules")
        .iter()
        .enumerate()
    {
        let field = format!("spec.rules[{i}]");
        let host = c.string(r.get("host"), &format!("{field}.host"));
        if let (Some(h), Some(node)) = (&host, r.get("host")) {
            if let Some(p) = host_problem(h) {
                c.err(node, &format!("{field}.host"), p, "");
            }
        }
        let http = r.get("http");
        let mut paths = Vec::new();
        let path_nodes = c.seq(
            http.and_then(|h| h.get("paths")),
            &format!("{field}.http.paths"),
        );
        if http.is_some() && path_nodes.is_empty() {
            c.err(r, &format!("{field}.http.paths"), "Required value", "");
        }
        for (j, p) in path_nodes.iter().enumerate() {
            let pf = format!("{field}.http.paths[{j}]");
            if let Some(path) = ingress_path(c, p, &pf, beta, &mut converted) {
                paths.push(path);
            }
        }
        rules.push(IngressRule { host, paths });
    }
    let tls = ingress_tls(c, spec);
    if default_backend.is_none() && rules.is_empty() && c.errors == 0 {
        c.err(
            n,
            "spec",
            "Invalid value: either `defaultBackend` or `rules` must be specified",
            "",
        );
    }
    if beta {
        let what = if converted.is_empty() {
            String::new()
        } else {
            format!("; converted: {}", converted.join(", "))
        };
        c.warn(
            n.get("apiVersion").unwrap_or(n),
            "apiVersion",
            format!("{api} Ingress was removed in Kubernetes 1.22; read as networking.k8s.io/v1{what}"),
            "write apiVersion: networking.k8s.io/v1 with service.name, service.port.number and an explicit pathType",
        );
    }
    let class_annotation = meta.annotations.get("kubernetes.io/ingress.class").cloned();
    Some(Ingress {
        meta,
        class_name,
        class_annotation,
        default_backend,
        tls,
        rules,
    })
}

/// One path of an Ingress rule, at `pf`; `None` when it is refused
/// (reported in `c`). A beta Ingress's conversions are noted in
/// `converted`.
fn ingress_path(
    c: &mut Ctx<'_>,
    p: &Y,
    pf: &str,
    beta: bool,
    converted: &mut Vec<String>,
) -> Option<IngressPath> {
    let path = c
        .string(p.get("path"), &format!("{pf}.path"))
        .unwrap_or_default();
    let path_type = match c.string(p.get("pathType"), &format!("{pf}.pathType")) {
        Some(t) => match t.as_str() {
            "Exact" => PathType::Exact,
            "Prefix" => PathType::Prefix,
            "ImplementationSpecific" => PathType::ImplementationSpecific,
            other => {
                c.err(
                    p.get("pathType").unwrap_or(p),
                    &format!("{pf}.pathType"),
                    format!("Unsupported value: \"{other}\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""),
                    "",
                );
                return None;
            }
        },
        None if beta => {
            converted.push(format!(
                "{pf}.pathType defaulted to ImplementationSpecific (path `{path}`)"
            ));
            PathType::ImplementationSpecific
        }
        None => {
            c.err(
                p,
                &format!("{pf}.pathType"),
                "Required value: pathType must be specified",
                "add pathType: Prefix (or Exact, or ImplementationSpecific)",
            );
            return None;
        }
    };
    let at = p.get("path").unwrap_or(p);
    match path_type {
        PathType::Exact | PathType::Prefix => {
            if let Some(problem) = strict_path_problem(&path) {
                c.err(at, &format!("{pf}.path"), problem, "");
                return None;
            }
        }
        PathType::ImplementationSpecific => {
            if !path.is_empty() && !path.starts_with('/') {
                c.err(
                    at,
                    &format!("{pf}.path"),
                    format!("Invalid value: \"{path}\": must be an absolute path"),
                    "",
                );
                return None;
            }
        }
    }
    let Some(b) = p.get("backend") else {
        c.err(p, &format!("{pf}.backend"), "Required value", "");
        return None;
    };
    let backend = backend(c, b, &format!("{pf}.backend"), beta, converted)?;
    let backend_field = if b.get("serviceName").is_some() && beta {
        format!("{pf}.backend.serviceName")
    } else {
        format!("{pf}.backend.service.name")
    };
    Some(IngressPath {
        path: if path.is_empty() { "/".into() } else { path },
        path_type,
        backend,
        backend_field,
    })
}

/// `spec.tls`: each entry's hosts (a bad one reported, kept) and Secret.
fn ingress_tls(c: &mut Ctx<'_>, spec: Option<&Y>) -> Vec<IngressTls> {
    let mut tls = Vec::new();
    for (i, t) in c
        .seq(spec.and_then(|s| s.get("tls")), "spec.tls")
        .iter()
        .enumerate()
    {
        let mut hosts = Vec::new();
        for (j, h) in c
            .seq(t.get("hosts"), &format!("spec.tls[{i}].hosts"))
            .iter()
            .enumerate()
        {
            if let Some(s) = h.as_str() {
                if let Some(p) = host_problem(s) {
                    c.err(h, &format!("spec.tls[{i}].hosts[{j}]"), p, "");
                }
                hosts.push(s.to_string());
            }
        }
        let secret = c.string(t.get("secretName"), &format!("spec.tls[{i}].secretName"));
        tls.push(IngressTls { hosts, secret });
    }
    tls
}

fn backend(
    c: &mut Ctx<'_>,
    b: &Y,
    field: &str,
    beta: bool,
    converted: &mut Vec<String>,
) -> Option<IngressBackend> {
    if beta {
        if let Some(name) = b.get("serviceName").and_then(Y::as_str) {
            let port = match b.get("servicePort").map(|p| &p.value) {
                Some(Value::Scalar {
                    text,
                    quoted: false,
                }) if text.parse::<u16>().is_ok() => PortRef::Number(text.parse().unwrap_or(0)),
                Some(Value::Scalar { text, .. }) if !text.is_empty() => PortRef::Name(text.clone()),
                _ => {
                    c.err(b, &format!("{field}.servicePort"), "Required value", "");
                    return None;
                }
            };
            let to = match &port {
                PortRef::Number(_) => "service.port.number",
                PortRef::Name(_) => "service.port.name",
            };
            converted.push(format!(
                "{field}.serviceName/servicePort → service.name `{name}`, {to} `{port}`"
            ));
            return Some(IngressBackend::Service {
                name: name.to_string(),
                port,
            });
        }
    }
    let service = b.get("service");
    let resource = b.get("resource");
    match (service, resource) {
        (Some(_), Some(_)) => {
            c.err(
                b,
                field,
                "Invalid value: cannot set both service and resource backends",
                "",
            );
            None
        }
        (None, None) => {
            c.err(
                b,
                field,
                "Required value: one of service or resource must be specified",
                "",
            );
            None
        }
        (None, Some(r)) => Some(IngressBackend::Resource {
            kind: r.get("kind").and_then(Y::as_str).unwrap_or("").into(),
            name: r.get("name").and_then(Y::as_str).unwrap_or("").into(),
        }),
        (Some(s), None) => {
            let name = c
                .string(s.get("name"), &format!("{field}.service.name"))
                .unwrap_or_default();
            if name.is_empty() {
                c.err(s, &format!("{field}.service.name"), "Required value", "");
                return None;
            }
            let p = s.get("port");
            let pname = p.and_then(|p| p.get("name")).and_then(Y::as_str);
            let pnum = c.int(
                p.and_then(|p| p.get("number")),
                &format!("{field}.service.port.number"),
                1,
                65535,
            );
            let at = p.unwrap_or(s);
            match (pname, pnum) {
                (Some(_), Some(_)) => {
                    c.err(
                        at,
                        &format!("{field}.service.port"),
                        "Invalid value: cannot set both port name & port number",
                        "",
                    );
                    None
                }
                (Some(nm), None) => Some(IngressBackend::Service {
                    name,
                    port: PortRef::Name(nm.to_string()),
                }),
                (None, Some(num)) => Some(IngressBackend::Service {
                    name,
                    port: PortRef::Number(num as u16),
                }),
                (None, None) => {
                    c.err(
                        at,
                        &format!("{field}.service.port"),
                        "Required value: port name or number is required",
                        "",
                    );
                    None
                }
            }
        }
    }
}
