//! The `kpv http` and `kpv routes` commands and `kpv check --format json`'s
//! routing report, as pure functions beside [`crate::cli`]: arguments →
//! [`HttpArgs`], (arguments, input texts) → [`Output`]. The English words
//! for HTTP routing decisions live here, and nowhere else in kpv-core.

#[cfg(feature = "json")]
use crate::cli::Output;
use crate::cli::{Common, Format};
use crate::http::{self, journey::JourneyHop, proxies::ProxyWorkload, EntryPoint, HttpRequest};
use crate::model::{self, NamespacedName};
#[cfg(feature = "json")]
use crate::net::trace::Origin;
use std::fmt::Write as _;

/// Where `kpv http` starts the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HttpFrom {
    External,
    Node,
    Pod(NamespacedName),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpArgs {
    pub url: String,
    pub via: Option<EntryPoint>,
    pub sni: Option<String>,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub backend_headers: Vec<(String, String)>,
    pub from: HttpFrom,
    pub seed: u64,
}

fn header(v: &str, flag: &str) -> Result<(String, String), String> {
    match v.split_once(':') {
        Some((k, val)) if !k.trim().is_empty() && !k.contains(' ') => {
            Ok((k.trim().to_ascii_lowercase(), val.trim().to_string()))
        }
        _ => Err(format!("{flag} `{v}`: write 'Name: value'")),
    }
}

/// Parse `kpv http` / `kpv routes` arguments (after the subcommand).
pub fn parse(sub: &str, args: &[String]) -> Result<(Common, Option<HttpArgs>), String> {
    let mut common = Common::default();
    let mut h = HttpArgs {
        url: String::new(),
        via: None,
        sni: None,
        method: "GET".into(),
        headers: Vec::new(),
        backend_headers: Vec::new(),
        from: HttpFrom::External,
        seed: 1,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| -> Result<String, String> {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let http_only = |f: &str| -> Result<(), String> {
            if sub == "routes" {
                Err(format!("`kpv routes` takes no {f}"))
            } else {
                Ok(())
            }
        };
        match a.as_str() {
            "--format" => common.format = Format::parse(&value("--format")?)?,
            "--mode" => {
                http_only("--mode")?;
                let v = value("--mode")?;
                common.mode = Some(model::Mode::parse(&v).ok_or_else(|| {
                    format!("unknown mode `{v}`; use userspace, iptables, ipvs, nftables or cilium")
                })?);
            }
            "--via" => {
                http_only("--via")?;
                let v = value("--via")?;
                h.via = Some(EntryPoint::parse(&v).ok_or_else(|| {
                    format!("--via `{v}`: use gateway/NAMESPACE/NAME or ingressclass/NAME")
                })?);
            }
            "--sni" => {
                http_only("--sni")?;
                h.sni = Some(value("--sni")?.to_ascii_lowercase());
            }
            "-X" => {
                http_only("-X")?;
                h.method = value("-X")?;
            }
            "-H" => {
                http_only("-H")?;
                h.headers.push(header(&value("-H")?, "-H")?);
            }
            "--backend-header" => {
                http_only("--backend-header")?;
                h.backend_headers
                    .push(header(&value("--backend-header")?, "--backend-header")?);
            }
            "--seed" => {
                http_only("--seed")?;
                let v = value("--seed")?;
                h.seed = v
                    .parse()
                    .map_err(|_| format!("--seed `{v}` is not a whole number"))?;
            }
            "--from" => {
                http_only("--from")?;
                let v = value("--from")?;
                h.from = match crate::net::trace::OriginKey::parse(&v) {
                    Some(crate::net::trace::OriginKey::External) => HttpFrom::External,
                    Some(crate::net::trace::OriginKey::Node(None)) => HttpFrom::Node,
                    Some(crate::net::trace::OriginKey::Pod(id)) => HttpFrom::Pod(id),
                    _ => {
                        return Err(format!(
                            "--from `{v}`: use external, node or pod:NAMESPACE/NAME"
                        ))
                    }
                };
            }
            f if f.starts_with('-') && f != "-" => return Err(format!("unknown option `{f}`")),
            u if sub == "http" && (u.starts_with("http://") || u.starts_with("https://")) => {
                if !h.url.is_empty() {
                    return Err("`kpv http` takes one URL".into());
                }
                h.url = u.to_string();
            }
            file => common.files.push(file.to_string()),
        }
    }
    if common.files.is_empty() {
        return Err(format!(
            "`kpv {sub}` needs at least one YAML file (or - for stdin)"
        ));
    }
    if sub == "http" {
        if h.url.is_empty() {
            return Err("`kpv http` needs a URL: http(s)://HOST[:PORT]/PATH[?QUERY]".into());
        }
        request(&h)?;
        return Ok((common, Some(h)));
    }
    Ok((common, None))
}

/// The request the URL and flags describe.
pub fn request(a: &HttpArgs) -> Result<HttpRequest, String> {
    HttpRequest::from_url(&a.url, &a.method, &a.headers, a.sni.as_deref())
}

pub use crate::http::names_host;

/// The proxy `--via` names, else the one HOST resolves to, else the only one.
pub fn pick_proxy<'p>(
    rt: &http::RoutingTable,
    proxies: &'p [ProxyWorkload],
    via: Option<&EntryPoint>,
    host: &str,
) -> Result<&'p ProxyWorkload, String> {
    let choices = || {
        proxies
            .iter()
            .map(|p| p.entry.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(v) = via {
        match rt.tables.get(v) {
            Some(http::table::Table::Ingress(t)) if !t.served => return Err(format!(
                "--via {v}: no controller serves this class (no IngressClass of that name and no controller for it in the input), so its Ingresses get no address and no traffic"
            )),
            Some(http::table::Table::Gateway(g)) if !g.served => return Err(format!(
                "--via {v}: no GatewayClass `{}` in the input, so no controller programs this Gateway",
                g.class
            )),
            _ => {}
        }
    }
    if proxies.is_empty() {
        return Err(
            "the input has no Ingress, IngressClass or Gateway that a controller serves".into(),
        );
    }
    if let Some(v) = via {
        return proxies.iter().find(|p| &p.entry == v).ok_or_else(|| {
            format!(
                "--via {v}: no such entry point; choose one of: {}",
                choices()
            )
        });
    }
    http::proxy_for_host(rt, proxies, host).ok_or_else(|| {
        format!(
            "`{host}` does not pick one entry point; use --via with one of: {}",
            choices()
        )
    })
}

/// Run `kpv http`.
#[cfg(feature = "json")]
pub fn run_http(common: &Common, a: &HttpArgs, texts: &[String], files: &[String]) -> Output {
    let (mut cluster, _, report) = match crate::cli::load_with_routing(texts, files) {
        Ok(x) => x,
        Err(o) => return o,
    };
    if let Some(m) = common.mode {
        cluster.proxy.mode = m;
    }
    let fail = |msg: String| Output {
        stdout: String::new(),
        stderr: format!("{report}kpv: {msg}\n"),
        code: 2,
    };
    let req = match request(a) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let http::Prepared {
        cluster,
        table: rt,
        proxies,
    } = http::prepare(&cluster);
    let proxy = match pick_proxy(&rt, &proxies, a.via.as_ref(), &req.authority) {
        Ok(p) => p.clone(),
        Err(e) => return fail(e),
    };
    let origin = match &a.from {
        HttpFrom::External => Origin::External {
            client: crate::session::replay::client_ip(),
        },
        HttpFrom::Node => match cluster.proxy_node().and_then(|n| {
            n.primary_ip(crate::model::packet::IpFamily::V4)
                .map(|ip| (n.name.clone(), ip))
        }) {
            Some((node, src)) => Origin::Node { node, src },
            None => return fail("--from node: the input has no node with an address".into()),
        },
        HttpFrom::Pod(id) => {
            if cluster.pod(id).is_none() {
                return fail(format!("no Pod {id} in the input"));
            }
            Origin::Pod { pod: id.clone() }
        }
    };
    let slices = crate::net::controller::steady_slices(&cluster);
    let sim = crate::net::trace::Sim::new(
        &cluster,
        &slices,
        cluster.proxy.mode,
        None,
        crate::Code::ALL.compilers,
    );
    let j = http::journey::journey(
        &sim,
        &slices,
        &rt,
        &proxy,
        &req,
        &http::journey::Start {
            origin,
            seed: a.seed,
        },
    );
    let mut notes = status_report(&rt, &cluster, texts, files);
    if proxy.synthesized {
        let _ = writeln!(
            notes,
            "note: the input has no controller for {}; kpv added one as a controller would: proxy Pod {} behind LoadBalancer Service {}{}",
            proxy.entry,
            proxy.pods.first().map(|p| p.to_string()).unwrap_or_default(),
            proxy.service,
            proxy.address.map(|ip| format!(" at {ip}")).unwrap_or_default()
        );
    }
    let stdout = match common.format {
        Format::Text => render_text(&j, &req, &a.backend_headers),
        Format::Json => crate::cli::json_text(&to_json(&j, &a.backend_headers)),
    };
    Output {
        stdout,
        stderr: format!("{report}{notes}"),
        code: 0,
    }
}

fn route_words(r: &http::walk::RouteRef) -> String {
    let part = if r.kind == "Ingress" { "path" } else { "match" };
    format!("{} {} rule {} {part} {}", r.kind, r.name, r.rule, r.index)
}

fn reason_text(r: &http::walk::Reason) -> String {
    use http::walk::Reason::*;
    match r {
        Routed => "a rule matched".into(),
        DefaultBackend => "no rule matched: the Ingress defaultBackend".into(),
        ControllerDefaultBackend => "no rule matched and no defaultBackend: the controller's default backend answers 404".into(),
        NoListener => "no listener for this port and scheme: the connection is refused".into(),
        TlsHandshakeFailed => "no listener (or no valid certificate) for the TLS server name: the handshake fails".into(),
        Misdirected => "the Host header belongs to another listener than the TLS server name's: 421 Misdirected Request".into(),
        NoMatchingRoute => "no route rule matched".into(),
        Redirect => "a RequestRedirect filter answered".into(),
        CorsPreflight => "a CORS filter answered the preflight request from an allowed origin".into(),
        HttpsRedirect => "ingress-nginx redirects HTTP to HTTPS for a host listed under tls".into(),
        NoBackends => "the rule has no backends (or all weigh 0): 500".into(),
        InvalidBackend { reason } => format!("the chosen backendRef is invalid ({reason}): 500"),
        ServiceNotFound => "the backend Service or port does not exist: 503".into(),
        NoReadyEndpoints => "the backend has no ready endpoints: 503".into(),
        UnsupportedMatch => "a regular-expression match was skipped (kpv does not evaluate them)".into(),
        BadRequest => "two Host headers, or a path above the root: the proxy answers 400 before any rule".into(),
    }
}

fn hop_text(h: &JourneyHop) -> String {
    use http::journey::ProxyStep::*;
    match h {
        JourneyHop::Net(h) => crate::net::trace::describe_hop(h),
        JourneyHop::Proxy { place, step } => {
            let at = match place {
                crate::net::trace::Place::Pod(p) => format!("proxy {p}"),
                _ => "proxy".into(),
            };
            match step {
                TlsTerminate { sni, certificate } => format!(
                    "{at}: TLS terminated (SNI {sni}, certificate {})",
                    certificate
                        .as_ref()
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "the controller's default".into())
                ),
                Route { status } => format!(
                    "{at}: routing decision → {}",
                    status
                        .map(|s| s.to_string())
                        .unwrap_or_else(|| "no HTTP answer".into())
                ),
                Connect {
                    from,
                    to,
                    via_cluster_ip,
                } => format!(
                    "{at}: new connection {from} → {to} ({})",
                    if *via_cluster_ip {
                        "to the Service's ClusterIP, through kube-proxy"
                    } else {
                        "straight to the endpoint Pod, not via the ClusterIP"
                    }
                ),
                Respond { status } => format!("{at}: answers {status} itself"),
            }
        }
    }
}

/// `kpv http --format text`.
pub fn render_text(
    j: &http::journey::Journey,
    req: &HttpRequest,
    backend: &[(String, String)],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "entry: {}   proxy: {}{}   mode: {}",
        j.entry,
        j.proxy.service,
        j.proxy
            .address
            .map(|a| format!(" at {a}"))
            .unwrap_or_default(),
        j.to_proxy.mode.as_str()
    );
    let _ = writeln!(
        s,
        "request: {} {}://{}{}{}",
        req.method,
        req.scheme.as_str(),
        req.host_header(),
        req.path,
        if req.query.is_empty() {
            String::new()
        } else {
            format!("?{}", req.query)
        }
    );
    for (i, h) in j.hops.iter().enumerate() {
        let _ = writeln!(s, "{:>3}. {}", i + 1, hop_text(h));
    }
    let Some(d) = &j.decision else {
        let _ = writeln!(s, "status: - (the connection did not reach a proxy Pod)");
        return s;
    };
    if let Some((gw, l)) = &d.listener {
        let _ = writeln!(s, "listener: {gw}/{l}");
    }
    if let Some(p) = &d.matched_path {
        let _ = writeln!(
            s,
            "path: the proxy normalises {} to {p} before matching",
            req.path
        );
    }
    for c in &d.compared {
        let _ = writeln!(
            s,
            "  compared {}: {}",
            route_words(&c.route),
            if c.matched { "match" } else { "no match" }
        );
    }
    let _ = writeln!(
        s,
        "status: {}   ({})",
        d.status
            .map(|x| x.to_string())
            .unwrap_or_else(|| "-".into()),
        reason_text(&d.reason)
    );
    if let Some(r) = &d.route {
        let _ = writeln!(s, "route: {}", route_words(r));
    }
    if let Some(r) = &d.redirect {
        let _ = writeln!(s, "redirect: {} {}", r.status, r.location);
    }
    if !d.filters.is_empty() {
        let _ = writeln!(s, "filters: {}", d.filters.join(", "));
    }
    if let Some(b) = &d.backend {
        let _ = writeln!(
            s,
            "backend: {}:{}{}   pod: {}",
            b.service,
            b.port,
            if b.total_weight > 1 {
                format!(" (weight {} of {})", b.weight, b.total_weight)
            } else {
                String::new()
            },
            j.pod
                .as_ref()
                .map(|p| p.to_string())
                .unwrap_or_else(|| "-".into())
        );
    }
    for m in &d.mirrors {
        let _ = writeln!(
            s,
            "mirror: {}:{} {}",
            m.service,
            m.port,
            match (m.sent, m.problem) {
                (_, Some(p)) => format!("not sent ({p})"),
                (true, None) => "sent a copy (its answer is dropped)".to_string(),
                (false, None) => format!(
                    "not sent this time ({} of {} requests are mirrored)",
                    m.fraction.0, m.fraction.1
                ),
            }
        );
    }
    if d.status == Some(200) {
        let _ = writeln!(
            s,
            "the backend sees{}: {} {}{}  Host: {}",
            j.backend_peer
                .map(|p| format!(" (a connection from {p}, the proxy Pod)"))
                .unwrap_or_default(),
            d.request.method,
            d.request.path,
            if d.request.query.is_empty() {
                String::new()
            } else {
                format!("?{}", d.request.query)
            },
            d.request.host
        );
        for (k, v) in &d.request.headers {
            let _ = writeln!(s, "  {k}: {v}");
        }
    }
    let resp = d.response_headers(backend);
    if !resp.is_empty() {
        let _ = writeln!(s, "the client gets:");
        for (k, v) in &resp {
            let _ = writeln!(s, "  {k}: {v}");
        }
    }
    s
}

/// `kpv http --format json`.
#[cfg(feature = "json")]
pub fn to_json(j: &http::journey::Journey, backend: &[(String, String)]) -> serde_json::Value {
    use serde_json::json;
    let d = j.decision.as_ref();
    let hops: Vec<serde_json::Value> = j
        .hops
        .iter()
        .map(|h| match h {
            JourneyHop::Net(h) => crate::net::trace::hop_json(h),
            JourneyHop::Proxy { place, step } => json!({ "place": place, "what": step }),
        })
        .collect();
    json!({
        "entry": j.entry.to_string(),
        "status": d.and_then(|d| d.status),
        "reason": d.map(|d| &d.reason),
        "backend": d.and_then(|d| d.backend.as_ref()).map(|b| format!("{}:{}", b.service, b.port)),
        "pod": j.pod.as_ref().map(|p| p.to_string()),
        "backend_peer": j.backend_peer.map(|a| a.to_string()),
        "tls_certificate": d.and_then(|d| d.tls_certificate.as_ref()).map(|c| c.to_string()),
        "route": d.and_then(|d| d.route.as_ref()).map(|r| json!({
            "kind": r.kind, "name": r.name.to_string(), "rule": r.rule, "match": r.index,
        })),
        "listener": d.and_then(|d| d.listener.as_ref()).map(|(g, l)| format!("{g}/{l}")),
        "redirect": d.and_then(|d| d.redirect.as_ref()).map(|r| json!({"status": r.status, "location": r.location})),
        "request": d.map(|d| json!({
            "method": d.request.method,
            "host": d.request.host,
            "path": d.request.path,
            "query": d.request.query,
            "headers": d.request.headers,
        })),
        "response": { "headers": d.map(|d| d.response_headers(backend)).unwrap_or_default() },
        "filters": d.map(|d| d.filters.clone()).unwrap_or_default(),
        "mirrors": d.map(|d| d.mirrors.iter().map(|m| json!({
            "backend": format!("{}:{}", m.service, m.port),
            "fraction": [m.fraction.0, m.fraction.1],
            "sent": m.sent,
            "problem": m.problem,
        })).collect::<Vec<_>>()).unwrap_or_default(),
        "compared": d.map(|d| d.compared.iter().map(|c| json!({
            "kind": c.route.kind, "name": c.route.name.to_string(), "rule": c.route.rule, "match": c.route.index, "matched": c.matched,
        })).collect::<Vec<_>>()).unwrap_or_default(),
        "proxy": {
            "service": j.proxy.service.to_string(),
            "pod": j.proxy_pod.as_ref().map(|p| p.to_string()),
            "address": j.proxy.address.map(|a| a.to_string()),
            "synthesized": j.proxy.synthesized,
            "peer": j.peer.map(|a| a.to_string()),
        },
        "hops": hops,
    })
}

/// The routes' and listeners' status conditions, as report lines.
#[cfg(feature = "json")]
pub(crate) fn status_report(
    rt: &http::RoutingTable,
    cluster: &model::Cluster,
    texts: &[String],
    files: &[String],
) -> String {
    let mut s = String::new();
    for d in located_status(rt, cluster, texts) {
        let file = files.get(d.file).map(String::as_str).unwrap_or("-");
        let _ = writeln!(s, "{file}: {d}");
    }
    s
}

/// The routes' and listeners' status diagnostics and the Ingress backends
/// that do not exist, placed in the input.
#[cfg(feature = "json")]
fn located_status(
    rt: &http::RoutingTable,
    cluster: &model::Cluster,
    texts: &[String],
) -> Vec<crate::util::diag::Diagnostic> {
    let mut diags = http::report::diagnostics(rt);
    diags.extend(http::status::ingress_diagnostics(&rt.objects, cluster));
    let inputs: Vec<model::Input<'_>> = texts.iter().map(|t| model::Input { text: t }).collect();
    model::locate_diagnostics(&inputs, &mut diags);
    diags
}

/// Run `kpv routes`.
#[cfg(feature = "json")]
pub fn run_routes(common: &Common, texts: &[String], files: &[String]) -> Output {
    let (cluster, objects, report) = match crate::cli::load_with_routing(texts, files) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let rt = http::compile(&objects, &cluster);
    let report = report + &status_report(&rt, &cluster, texts, files);
    let stdout = match common.format {
        Format::Text => http::render::render_text(&rt),
        Format::Json => crate::cli::json_text(&http::render::render_json(&rt)),
    };
    Output::ok(stdout, report)
}

/// `kpv check --format json`: diagnostics, each HTTPRoute's conditions per
/// parent, each Gateway's conditions, each listener's attached routes,
/// supportedKinds and conditions, each Ingress's address.
#[cfg(feature = "json")]
pub fn check_json(texts: &[String], files: &[String]) -> Output {
    use serde_json::json;
    let inputs: Vec<model::Input<'_>> = texts.iter().map(|t| model::Input { text: t }).collect();
    let (cluster, diags) = crate::Code::ALL.parse_files(&inputs);
    let objects = cluster.routing.clone();
    let errors = crate::util::diag::has_errors(&diags);
    let mut diags = diags;
    let http::Prepared {
        table: rt, proxies, ..
    } = http::prepare(&cluster);
    diags.extend(located_status(&rt, &cluster, texts));
    let routes: Vec<serde_json::Value> = rt
        .route_status
        .iter()
        .map(|s| json!({
            "kind": "HTTPRoute",
            "name": s.route.to_string(),
            "parent": match &s.section { Some(x) => format!("{}/{x}", s.gateway), None => s.gateway.to_string() },
            "conditions": s.conditions,
        }))
        .collect();
    let mut listeners = Vec::new();
    for t in rt.tables.values() {
        if let http::table::Table::Gateway(g) = t {
            for l in &g.listeners {
                listeners.push(json!({
                    "gateway": g.gateway.to_string(),
                    "listener": l.listener.name,
                    "attached_routes": l.attached_routes,
                    "conflicted": l.conflicted,
                    "resolved_refs": l.certificate_problem.unwrap_or("ResolvedRefs"),
                    "supported_kinds": l.status.supported_kinds,
                    "conditions": l.status.conditions,
                }));
            }
        }
    }
    let ingresses: Vec<serde_json::Value> = objects
        .ingresses
        .iter()
        .map(|i| {
            let class = http::table::ingress_class_of(&objects, i);
            let addr = class.as_ref().and_then(|c| {
                proxies
                    .iter()
                    .find(|p| p.entry == EntryPoint::IngressClass(c.clone()))
                    .and_then(|p| p.address)
            });
            json!({
                "name": i.meta.id.to_string(),
                "class": class,
                "address": addr.map(|a| a.to_string()),
            })
        })
        .collect();
    let v = json!({
        "ok": !errors,
        "diagnostics": diags.iter().map(|d| json!({
            "severity": d.severity,
            "file": files.get(d.file),
            "document": d.document,
            "object": d.object,
            "field": d.field,
            "line": d.span.map(|s| s.line),
            "column": d.span.map(|s| s.column),
            "message": d.message,
            "hint": d.hint,
        })).collect::<Vec<_>>(),
        "routes": routes,
        "listeners": listeners,
        "ingresses": ingresses,
        "gateways": objects.gateways.iter().map(|g| json!({
            "name": g.meta.id.to_string(),
            "address": proxies
                .iter()
                .find(|p| p.entry == EntryPoint::Gateway(g.meta.id.clone()))
                .and_then(|p| p.address)
                .map(|a| a.to_string()),
            "conditions": match rt.tables.get(&EntryPoint::Gateway(g.meta.id.clone())) {
                Some(http::table::Table::Gateway(t)) => t.conditions.clone(),
                _ => Vec::new(),
            },
        })).collect::<Vec<_>>(),
        "controllers": proxies.iter().map(|p| json!({
            "entry": p.entry.to_string(),
            "service": p.service.to_string(),
            "pods": p.pods.iter().map(|x| x.to_string()).collect::<Vec<_>>(),
            "address": p.address.map(|a| a.to_string()),
            "synthesized": p.synthesized,
        })).collect::<Vec<_>>(),
    });
    Output {
        stdout: crate::cli::json_text(&v),
        stderr: String::new(),
        code: if errors { 1 } else { 0 },
    }
}
