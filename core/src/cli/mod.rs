//! The `kpv` command line as pure functions: arguments → [`Command`], and
//! (command, input texts) → [`Output`]. The binary only reads files and
//! prints, so every behaviour here is tested natively without processes.

pub mod dig;
pub mod requests;
pub mod why;

use crate::model::{self, Mode, Scheduler};

use crate::model::packet::Protocol;
// `run` prints JSON on request, so it and its helpers need the `json` feature.
#[cfg(feature = "json")]
use crate::{
    model::packet::IpFamily,
    model::Cluster,
    net::controller,
    net::modes::{self, CompileOptions},
    util::diag::{has_errors, Diagnostic},
    Code,
};
#[cfg(feature = "json")]
use std::fmt::Write as _;

pub const USAGE: &str = "\
kpv — what kube-proxy does with your Services

USAGE:
    kpv rules <FILE>... [--mode M] [--scheduler S] [--node NAME] [--format text|json]
              [--view maps|frontends|backends|services]   (--mode cilium)
    kpv trace <FILE>... --src IP --dst IP|NAME --port N [--protocol TCP|UDP|SCTP]
              [--mode M] [--scheduler S] [--node NAME] [--seed N]
              [--from node|pod:NS/NAME|external] [--format text|json]
    kpv check <FILE>... [--format text|json]
    kpv http <FILE>... <URL> [--via gateway/NAMESPACE/NAME | --via ingressclass/NAME]
             [--sni NAME] [-X METHOD] [-H 'Name: value']... [--backend-header 'Name: value']...
             [--from external|node|pod:NS/NAME] [--mode M] [--seed N] [--format text|json]
    kpv routes <FILE>... [--format text|json]
    kpv dig <FILE>... NAME [A|AAAA|SRV|PTR|CNAME|TXT|NS|SOA] [-x IP]
            [--from pod:NS/NAME] [--format text|json]
    kpv share <FILE>... [--mode M] [--scheduler S] [--packets N] [--gap-ms G]
              [--at-ms T] [--seed N] [--speed PERCENT] [--lang en|ko]

FILES are Kubernetes YAML (multi-document or `kind: List`); `-` reads stdin.
Each option may be given once, and only to a command that takes it.
Kinds: Node, Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, Service,
Endpoints, EndpointSlice, ServiceCIDR, KubeProxyConfiguration, kubeadm's
ClusterConfiguration (the API server's NodePort range and service subnet) and
Cilium's kube-system/cilium-config ConfigMap (with kube-proxy-replacement, the
default mode is cilium); for
http and routes also Ingress, IngressClass, GatewayClass, Gateway, HTTPRoute,
ReferenceGrant, Secret (name and type), Namespace.
URL is http(s)://HOST[:PORT]/PATH[?QUERY]; HOST is the Host header and the SNI.
dig asks as the Pod's resolver does (its search list, ndots:5) and prints each
query with cluster DNS's answer, as CoreDNS gives it.

OPTIONS:
    --mode M        userspace (legacy, removed in Kubernetes 1.26), iptables, ipvs, nftables,
                    cilium (eBPF kube-proxy replacement)
                    (default: the KubeProxyConfiguration's mode, else cilium when
                    cilium-config replaces kube-proxy, else iptables)
    --scheduler S   IPVS scheduler: rr wrr lc wlc sh dh sed nq mh
    --node NAME     whose kube-proxy (default: hostnameOverride, else the first node)
    --format F      text (what the node would print) or json
    --view V        Cilium: maps (the BPF maps, as `lb/maps-dump`), or the agent's
                    frontends, backends or services table
    --seed N        seed of the random choices (same seed, same path)
    --packets N     share: connections sent to the first destination (default 1, at most 10000)
    --gap-ms G      share: simulated milliseconds between them (default 100)
    --at-ms T       share: when the first leaves, in simulated ms (default 0; probes
                    have settled after about 30000)
    --speed PERCENT share: playback speed, 100 = real time (default 100)
    --lang L        share: the language the link opens in
    -h, --help      this help
";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Text,
    Json,
}

impl Format {
    /// `--format`'s value.
    pub fn parse(v: &str) -> Result<Format, String> {
        match v {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            v => Err(format!("unknown format `{v}`; use text or json")),
        }
    }
}

/// Where a traced packet starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum From {
    /// The node's own netfilter (as kube-proxy's tests do).
    Node,
    /// A Pod (its node's rules apply).
    Pod(model::NamespacedName),
    /// A client outside the cluster, through the cloud load balancer if any.
    External,
}

/// The options every command shares; none given: text, and the input's own
/// mode, scheduler and node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Common {
    pub files: Vec<String>,
    pub mode: Option<Mode>,
    pub scheduler: Option<Scheduler>,
    pub node: Option<String>,
    pub format: Format,
    /// `kpv rules --view`: another view of the node's state than its rules
    /// (Cilium: the agent's `frontends`, `backends`, `services` tables).
    pub view: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceArgs {
    pub src: String,
    pub dst: String,
    pub port: u16,
    pub protocol: Protocol,
    pub seed: u64,
    pub from: From,
}

/// `kpv share`: a link's packets and playback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareArgs {
    pub packets: u32,
    pub gap_ms: u64,
    /// When the first packet leaves (the link opens with the clock there).
    pub at_ms: u64,
    pub seed: u64,
    pub speed_percent: u16,
    pub lang: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Help(String),
    Check(Common),
    Rules(Common),
    Trace(Common, TraceArgs),
    /// Print the app's share-link fragment (`v1.…`) for the input.
    Share(Common, ShareArgs),
    /// Send an HTTP request through an Ingress or Gateway.
    Http(Common, requests::HttpArgs),
    /// Print each entry point's routing table.
    Routes(Common),
    /// Look a name up as a Pod's resolver does.
    Dig(Common, dig::DigArgs),
}

impl Command {
    pub fn files(&self) -> &[String] {
        match self {
            Command::Help(_) => &[],
            Command::Check(c)
            | Command::Rules(c)
            | Command::Trace(c, _)
            | Command::Share(c, _)
            | Command::Http(c, _)
            | Command::Routes(c)
            | Command::Dig(c, _) => &c.files,
        }
    }
}

/// What a run prints and its exit code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
}

impl Output {
    /// A run that succeeded: what it prints on stdout and stderr, code 0.
    pub fn ok(stdout: String, stderr: String) -> Output {
        Output {
            stdout,
            stderr,
            code: 0,
        }
    }
}

/// A JSON value as `--format json` prints it: pretty, with a final newline.
#[cfg(feature = "json")]
pub(crate) fn json_text(v: &impl serde::Serialize) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// The options each command takes (besides `-h`/`--help`).
fn options_of(sub: &str) -> &'static [&'static str] {
    match sub {
        "check" => &["--format"],
        "rules" => &["--mode", "--scheduler", "--node", "--format", "--view"],
        "trace" => &[
            "--src",
            "--dst",
            "--port",
            "--protocol",
            "--mode",
            "--scheduler",
            "--node",
            "--seed",
            "--from",
            "--format",
        ],
        "share" => &[
            "--mode",
            "--scheduler",
            "--seed",
            "--packets",
            "--gap-ms",
            "--at-ms",
            "--speed",
            "--lang",
        ],
        _ => &[],
    }
}

/// Every option any command takes (`kpv http`'s too, so that one given to
/// another command is named as not applying rather than as unknown).
const ALL_OPTIONS: [&str; 21] = [
    "--view",
    "--via",
    "--sni",
    "-X",
    "-H",
    "--backend-header",
    "--mode",
    "--scheduler",
    "--node",
    "--format",
    "--src",
    "--dst",
    "--port",
    "--protocol",
    "--seed",
    "--from",
    "--packets",
    "--gap-ms",
    "--at-ms",
    "--speed",
    "--lang",
];

/// `kpv http` and `kpv routes` are parsed by `cli::requests`; an option of theirs
/// that takes one value is refused here when given twice, as for the other
/// commands (`-H` and `--backend-header` add a header each time).
fn refuse_repeats(args: &[String]) -> Result<(), String> {
    const ONCE: [&str; 7] = [
        "--format", "--mode", "--via", "--sni", "-X", "--seed", "--from",
    ];
    const MANY: [&str; 2] = ["-H", "--backend-header"];
    let mut given: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(&opt) = ONCE.iter().find(|o| **o == a.as_str()) {
            if given.contains(&opt) {
                return Err(format!("{opt} is given twice; give it once"));
            }
            given.push(opt);
            it.next();
        } else if MANY.contains(&a.as_str()) {
            it.next();
        }
    }
    Ok(())
}

/// Parse the arguments after the program name.
///
/// An option given twice, or to a command that does not take it, is an
/// error (it used to be ignored, or the last one silently won).
pub fn parse_args(args: &[String]) -> Result<Command, String> {
    let Some(sub) = args.first() else {
        return Ok(Command::Help(USAGE.to_string()));
    };
    if sub == "-h" || sub == "--help" || sub == "help" {
        return Ok(Command::Help(USAGE.to_string()));
    }
    if sub == "http" || sub == "routes" {
        refuse_repeats(&args[1..])?;
        return match requests::parse(sub, &args[1..])? {
            (common, Some(h)) => Ok(Command::Http(common, h)),
            (common, None) => Ok(Command::Routes(common)),
        };
    }
    if sub == "dig" {
        return dig::parse(&args[1..]).map(|(c, d)| Command::Dig(c, d));
    }
    if !matches!(sub.as_str(), "rules" | "trace" | "check" | "share") {
        return Err(format!(
            "unknown command `{sub}`; use rules, trace, check, share, http, routes or dig"
        ));
    }
    let takes = options_of(sub);
    let mut parsed = Parsed::default();
    let mut given: Vec<&str> = Vec::new();
    let mut it = args[1..].iter();
    while let Some(a) = it.next() {
        if let Some(&opt) = ALL_OPTIONS.iter().find(|o| **o == a.as_str()) {
            if !takes.contains(&opt) {
                return Err(format!(
                    "{opt} does not apply to `kpv {sub}`; it takes {}",
                    takes.join(", ")
                ));
            }
            if given.contains(&opt) {
                return Err(format!("{opt} is given twice; give it once"));
            }
            given.push(opt);
            let v = it
                .next()
                .cloned()
                .ok_or_else(|| format!("{opt} needs a value"))?;
            parsed.set(opt, v)?;
            continue;
        }
        match a.as_str() {
            "-h" | "--help" => return Ok(Command::Help(USAGE.to_string())),
            f if f.starts_with("--") => return Err(format!("unknown option `{f}`")),
            file => parsed.common.files.push(file.to_string()),
        }
    }
    parsed.command(sub)
}

/// What the options of `rules`, `trace`, `check` and `share` have set.
struct Parsed {
    common: Common,
    src: Option<String>,
    dst: Option<String>,
    port: Option<u16>,
    protocol: Protocol,
    seed: u64,
    from: From,
    share: ShareArgs,
}

impl Default for Parsed {
    fn default() -> Self {
        Parsed {
            common: Common::default(),
            src: None,
            dst: None,
            port: None,
            protocol: Protocol::Tcp,
            seed: 1,
            from: From::Node,
            share: ShareArgs {
                packets: 1,
                gap_ms: 100,
                at_ms: 0,
                seed: 1,
                speed_percent: 100,
                lang: None,
            },
        }
    }
}

impl Parsed {
    /// One option `opt` with its value `v`, checked.
    fn set(&mut self, opt: &str, v: String) -> Result<(), String> {
        let (common, share) = (&mut self.common, &mut self.share);
        match opt {
            "--mode" => {
                common.mode = Some(Mode::parse(&v).ok_or_else(|| {
                    format!("unknown mode `{v}`; use userspace, iptables, ipvs, nftables or cilium")
                })?);
            }
            "--scheduler" => {
                common.scheduler = Some(Scheduler::parse(&v).ok_or_else(|| {
                    format!(
                        "unknown IPVS scheduler `{v}`; use rr, wrr, lc, wlc, sh, dh, sed, nq or mh"
                    )
                })?);
            }
            "--node" => common.node = Some(v),
            "--view" => common.view = Some(v),
            "--format" => common.format = Format::parse(&v)?,
            "--src" => self.src = Some(v),
            "--dst" => self.dst = Some(v),
            "--port" => {
                self.port = Some(
                    v.parse::<u16>()
                        .ok()
                        .filter(|p| *p > 0)
                        .ok_or_else(|| format!("--port `{v}` is not a port number (1–65535)"))?,
                );
            }
            "--protocol" => {
                self.protocol = Protocol::parse(&v)
                    .ok_or_else(|| format!("unknown protocol `{v}`; use TCP, UDP or SCTP"))?;
            }
            "--seed" => {
                self.seed = v
                    .parse()
                    .map_err(|_| format!("--seed `{v}` is not a whole number"))?;
            }
            "--from" => {
                self.from = match crate::net::trace::OriginKey::parse(&v) {
                    Some(crate::net::trace::OriginKey::Node(None)) => From::Node,
                    Some(crate::net::trace::OriginKey::External) => From::External,
                    Some(crate::net::trace::OriginKey::Pod(id)) => From::Pod(id),
                    _ => {
                        return Err(format!(
                            "--from `{v}`: use node, external or pod:NAMESPACE/NAME"
                        ))
                    }
                };
            }
            "--packets" => {
                share.packets = v
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=crate::session::share::MAX_ITEMS as u32).contains(n))
                    .ok_or_else(|| format!("--packets `{v}`: use a number from 1 to 10000"))?;
            }
            "--gap-ms" => {
                share.gap_ms = v
                    .parse::<u64>()
                    .ok()
                    .filter(|g| *g <= 3_600_000)
                    .ok_or_else(|| format!("--gap-ms `{v}`: use milliseconds from 0 to 3600000"))?;
            }
            "--at-ms" => {
                share.at_ms = v
                    .parse::<u64>()
                    .ok()
                    .filter(|t| *t <= 86_400_000)
                    .ok_or_else(|| format!("--at-ms `{v}`: use milliseconds from 0 to 86400000"))?;
            }
            "--speed" => {
                share.speed_percent = v
                    .parse::<u16>()
                    .ok()
                    .filter(|p| crate::session::share::SPEED_RANGE.contains(p))
                    .ok_or_else(|| format!("--speed `{v}`: use a percentage from 1 to 10000"))?;
            }
            "--lang" => {
                if v != "en" && v != "ko" {
                    return Err(format!("--lang `{v}`: use en or ko"));
                }
                share.lang = Some(v);
            }
            _ => {}
        }
        Ok(())
    }

    /// The command, once every option is read.
    fn command(mut self, sub: &str) -> Result<Command, String> {
        if self.common.files.is_empty() {
            return Err(format!(
                "`kpv {sub}` needs at least one YAML file (or - for stdin)"
            ));
        }
        match sub {
            "check" => Ok(Command::Check(self.common)),
            "rules" => Ok(Command::Rules(self.common)),
            "share" => {
                self.share.seed = self.seed;
                Ok(Command::Share(self.common, self.share))
            }
            _ => {
                let missing: Vec<&str> = [
                    ("--src", self.src.is_none()),
                    ("--dst", self.dst.is_none()),
                    ("--port", self.port.is_none()),
                ]
                .into_iter()
                .filter_map(|(n, m)| m.then_some(n))
                .collect();
                if !missing.is_empty() {
                    return Err(format!("`kpv trace` needs {}", missing.join(", ")));
                }
                Ok(Command::Trace(
                    self.common,
                    TraceArgs {
                        src: self.src.unwrap_or_default(),
                        dst: self.dst.unwrap_or_default(),
                        port: self.port.unwrap_or(0),
                        protocol: self.protocol,
                        seed: self.seed,
                        from: self.from,
                    },
                ))
            }
        }
    }
}

#[cfg(feature = "json")]
fn render_diags(diags: &[Diagnostic], files: &[String]) -> String {
    let mut s = String::new();
    for d in diags {
        let file = files.get(d.file).map(String::as_str).unwrap_or("-");
        let _ = writeln!(s, "{file}: {d}");
    }
    s
}

/// Parse every input; errors end the run with code 1. Returns the cluster
/// and the report of warnings (what `kpv` prints on stderr).
#[cfg(feature = "json")]
pub fn load(texts: &[String], files: &[String]) -> Result<(Cluster, String), Output> {
    let inputs: Vec<model::Input<'_>> = texts.iter().map(|t| model::Input { text: t }).collect();
    let (cluster, diags) = Code::ALL.parse_files(&inputs);
    let report = render_diags(&diags, files);
    if has_errors(&diags) {
        let errors = diags.iter().filter(|d| d.is_error()).count();
        return Err(Output {
            stdout: String::new(),
            stderr: format!("{report}kpv: {errors} error(s) in the input; nothing was computed\n"),
            code: 1,
        });
    }
    Ok((cluster, report))
}

/// [`load`], with the HTTP routing objects too.
#[cfg(feature = "json")]
pub(crate) fn load_with_routing(
    texts: &[String],
    files: &[String],
) -> Result<(Cluster, crate::http::Objects, String), Output> {
    let (cluster, report) = load(texts, files)?;
    let routing = crate::http::Objects::clone(&cluster.routing);
    Ok((cluster, routing, report))
}

/// Resolve node and mode overrides: the cluster is changed as `--mode` and
/// `--node` ask, and the node whose kube-proxy is modelled is returned.
#[cfg(feature = "json")]
pub fn proxy_target(cluster: &mut Cluster, common: &Common) -> Result<(String, Mode), String> {
    if let Some(m) = common.mode {
        cluster.proxy.mode = m;
    }
    if let (Some(s), false) = (common.scheduler, cluster.proxy.mode == Mode::Ipvs) {
        return Err(format!(
            "--scheduler {} picks an IPVS scheduler, but the mode is {}, which has none: add --mode ipvs, or leave --scheduler out",
            s.as_str(),
            cluster.proxy.mode.as_str()
        ));
    }
    if let Some(n) = &common.node {
        if cluster.node(n).is_none() {
            let names: Vec<&str> = cluster.nodes.iter().map(|n| n.name.as_str()).collect();
            return Err(format!(
                "no node named `{n}`; nodes are: {}",
                names.join(", ")
            ));
        }
        cluster.proxy.hostname_override = Some(n.clone());
    }
    let node = cluster
        .proxy_node()
        .map(|n| n.name.clone())
        .ok_or_else(|| match &cluster.proxy.hostname_override {
            Some(h) => format!("hostnameOverride `{h}` names no node in the input"),
            None => "the input has no node".to_string(),
        })?;
    Ok((node, cluster.proxy.mode))
}

/// Run a parsed command over the input texts.
#[cfg(feature = "json")]
pub fn run(cmd: &Command, texts: &[String], files: &[String]) -> Output {
    match cmd {
        Command::Help(t) => Output {
            stdout: t.clone(),
            ..Output::default()
        },
        Command::Check(c) if c.format == Format::Json => requests::check_json(texts, files),
        Command::Http(common, args) => requests::run_http(common, args, texts, files),
        Command::Routes(common) => requests::run_routes(common, texts, files),
        Command::Dig(common, args) => dig::run(common, args, texts, files),
        Command::Check(_) => run_check(texts, files),
        Command::Rules(common) => run_rules(common, texts, files),
        Command::Trace(common, args) => run_trace(common, args, texts, files),
        Command::Share(common, args) => run_share(common, args, texts, files),
    }
}

/// `kpv check` in text: the counts on stdout, the diagnostics (and the
/// routes' status) on stderr.
#[cfg(feature = "json")]
fn run_check(texts: &[String], files: &[String]) -> Output {
    match load(texts, files) {
        Err(o) => o,
        Ok((cluster, report)) => Output {
            // The routes' status and the Ingress backends, as
            // `kpv check --format json` reports them.
            stderr: if cluster.routing.is_empty() {
                report
            } else {
                let rt = crate::http::compile(&cluster.routing, &cluster);
                report + &requests::status_report(&rt, &cluster, texts, files)
            },
            stdout: format!(
                "ok: {} node(s), {} pod(s), {} service(s), {} EndpointSlice(s) given\n",
                cluster.nodes.len(),
                cluster.pods.len(),
                cluster.services.len(),
                cluster.endpoint_slices.len()
            ),
            code: 0,
        },
    }
}

/// The input loaded (with its diagnostics' report) and the node and mode
/// whose kube-proxy `rules` and `trace` show; `Err` is the run's output.
#[cfg(feature = "json")]
fn load_target(
    texts: &[String],
    files: &[String],
    common: &Common,
) -> Result<(Cluster, String, String, Mode), Output> {
    let (mut cluster, report) = load(texts, files)?;
    match proxy_target(&mut cluster, common) {
        Ok((node, mode)) => Ok((cluster, report, node, mode)),
        Err(e) => Err(fail(report, e)),
    }
}

/// `kpv rules`: the node's rules of every family, as text, a view or JSON.
#[cfg(feature = "json")]
fn run_rules(common: &Common, texts: &[String], files: &[String]) -> Output {
    let (cluster, report, node, mode) = match load_target(texts, files, common) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let planes = match rules_planes(&cluster, &node, mode, common.scheduler) {
        Ok(p) => p,
        Err(e) => return fail(report, e),
    };
    let stdout = match (common.format, &common.view) {
        (Format::Text, Some(view)) => {
            let mut out = Vec::new();
            for (_, dp) in &planes {
                match dp.render_view(view) {
                    Some(text) => out.push(text),
                    None => {
                        return fail(
                            report,
                            format!(
                                "--view {view} is not a view of {} mode; --mode cilium has frontends, backends and services",
                                mode.as_str()
                            ),
                        )
                    }
                }
            }
            out.join("\n")
        }
        (Format::Text, None) => modes::render_planes(&planes),
        (Format::Json, _) => {
            let mut json: Vec<serde_json::Value> =
                planes.iter().map(|(_, dp)| dp.render_json()).collect();
            let v = if json.len() == 1 {
                json.remove(0)
            } else {
                serde_json::Value::Array(json)
            };
            crate::cli::json_text(&v)
        }
    };
    Output::ok(stdout, report)
}

/// `kpv trace`: one connection's hops, checked for the address family.
#[cfg(feature = "json")]
fn run_trace(common: &Common, args: &TraceArgs, texts: &[String], files: &[String]) -> Output {
    let (cluster, report, node, _) = match load_target(texts, files, common) {
        Ok(x) => x,
        Err(o) => return o,
    };
    if let Some(dst) = model::parse_ip_sloppy(&args.dst) {
        if let Err(e) = same_family(&cluster, args, dst, format!("--dst {dst}")) {
            return fail(report, e);
        }
    }
    match cli_trace(&cluster, &node, common.scheduler, args) {
        Ok(t) => {
            // A name's family is known once DNS has answered.
            let answer = t.hops.iter().find_map(|h| match &h.what {
                crate::net::trace::HopKind::Dns { answer, .. } => Some(*answer),
                _ => None,
            });
            if let Some(ip) = answer {
                let what = format!("--dst {} (it resolves to {ip})", args.dst);
                if let Err(e) = same_family(&cluster, args, ip, what) {
                    return fail(report, e);
                }
            }
            let stdout = match common.format {
                Format::Text => {
                    let mut s = crate::net::trace::render_text(&t);
                    // A static input is read as a cluster long settled.
                    let steady = u64::MAX / 4;
                    let timing = crate::net::controller::Timing::default();
                    if let Some(cause) =
                        crate::net::why::no_endpoints(&cluster, &[], timing, steady, &t)
                    {
                        s.push_str(&why::render(&cause));
                    }
                    s
                }
                Format::Json => crate::cli::json_text(&crate::net::trace::to_json(&t)),
            };
            Output::ok(stdout, report)
        }
        Err(e) => fail(report, e),
    }
}

/// `kpv share`: a share link of the input and its packets.
#[cfg(feature = "json")]
fn run_share(common: &Common, args: &ShareArgs, texts: &[String], files: &[String]) -> Output {
    let (mut cluster, report) = match load(texts, files) {
        Ok(x) => x,
        Err(o) => return o,
    };
    let mode = common.mode.unwrap_or(cluster.proxy.mode);
    cluster.proxy.mode = mode;
    match share_state(texts, &cluster, mode, common, args) {
        Ok(state) => Output {
            stdout: format!("{}\n", crate::session::share::encode(&state)),
            stderr: report,
            code: 0,
        },
        Err(e) => fail(report, e),
    }
}

/// The share state of `kpv share`: the input text, and `packets` new
/// connections to the scenario's first destination (the outermost entry
/// point) from its default origin, `gap_ms` apart from `at_ms`; the clock and
/// focus on the first packet, paused.
#[cfg(feature = "json")]
pub fn share_state(
    texts: &[String],
    cluster: &Cluster,
    mode: Mode,
    common: &Common,
    args: &ShareArgs,
) -> Result<crate::session::share::ShareState, String> {
    let target = crate::session::replay::targets(cluster, crate::Code::ALL.replay().http)
        .into_iter()
        .next()
        .ok_or("the input has no Service to send packets to")?;
    let origin = crate::session::replay::default_origin(cluster, &target);
    let mut seeds = crate::util::choose::Chooser::new(args.seed);
    let packets = (0..args.packets)
        .map(|i| crate::session::replay::SentPacket {
            id: i,
            at_ms: args.at_ms + u64::from(i) * args.gap_ms,
            request: crate::session::replay::request(&target, origin.clone(), i),
            seed: seeds.next_u64(),
        })
        .collect();
    let state = crate::session::share::ShareState {
        yaml: texts.join("\n---\n"),
        mode,
        scheduler: common.scheduler,
        seed: args.seed,
        speed_percent: args.speed_percent,
        time_ms: args.at_ms,
        focus: Some(0),
        step: None,
        changes: Vec::new(),
        packets,
        lang: args.lang.clone(),
        rules_node: None,
    };
    crate::session::share::validate(&state).map_err(|e| e.to_string())?;
    Ok(state)
}

/// `kpv rules`' data planes for `node` ([`modes::node_planes`] from the
/// slices kube-proxy has synced at rest); an error when the node has no
/// address to build rules for.
#[cfg(feature = "json")]
pub fn rules_planes(
    cluster: &Cluster,
    node: &str,
    mode: Mode,
    scheduler: Option<Scheduler>,
) -> Result<Vec<modes::FamilyPlane>, String> {
    let synced = controller::steady_slices(cluster);
    let opts = CompileOptions { scheduler };
    let planes = modes::node_planes(cluster, &synced, node, mode, opts, Code::ALL.compilers);
    if planes.is_empty() {
        return Err(format!(
            "node `{node}` has no IP address to build rules for"
        ));
    }
    Ok(planes)
}

/// A packet has one address family: refuse a trace whose source (`--src`,
/// or the Pod's address the trace starts from) and destination differ, as
/// the kernel would never route such a packet.
#[cfg(feature = "json")]
fn same_family(
    cluster: &Cluster,
    args: &TraceArgs,
    dst: std::net::IpAddr,
    what_dst: String,
) -> Result<(), String> {
    let source = match &args.from {
        From::Pod(id) => cluster
            .pod(id)
            .and_then(|p| p.ips.first())
            .map(|ip| (*ip, format!("the source, Pod {id}'s address {ip},"))),
        From::Node | From::External => {
            model::parse_ip_sloppy(&args.src).map(|ip| (ip, format!("--src {ip}")))
        }
    };
    let Some((src, what_src)) = source else {
        return Ok(());
    };
    let name = |ip: &std::net::IpAddr| match IpFamily::of(ip) {
        IpFamily::V4 => "IPv4",
        IpFamily::V6 => "IPv6",
    };
    if IpFamily::of(&src) == IpFamily::of(&dst) {
        return Ok(());
    }
    Err(format!(
        "{what_src} is {} but {what_dst} is {}: a packet has one address family; trace from a source of the same family",
        name(&src),
        name(&dst)
    ))
}

#[cfg(feature = "json")]
fn fail(report: String, msg: String) -> Output {
    Output {
        stdout: String::new(),
        stderr: format!("{report}kpv: {msg}\n"),
        code: 2,
    }
}

/// `kpv trace`: parse the flags' addresses and trace one connection in steady state.
pub fn cli_trace(
    cluster: &model::Cluster,
    node: &str,
    scheduler: Option<Scheduler>,
    args: &TraceArgs,
) -> Result<crate::net::trace::Trace, String> {
    use crate::net::trace::{trace, Dest, Origin, Request, Sim, WorldState};
    let src: std::net::IpAddr = crate::model::parse_ip_sloppy(&args.src)
        .ok_or_else(|| format!("--src `{}` is not an IP address", args.src))?;
    let dst = match crate::model::parse_ip_sloppy(&args.dst) {
        Some(ip) => Dest::Ip(ip),
        None if args
            .dst
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
            && !args.dst.is_empty() =>
        {
            Dest::Name(args.dst.clone())
        }
        None => {
            return Err(format!(
                "--dst `{}` is neither an IP address nor a DNS name",
                args.dst
            ))
        }
    };
    let origin = match &args.from {
        From::Node => Origin::Node {
            node: node.to_string(),
            src,
        },
        From::External => Origin::External { client: src },
        From::Pod(id) => {
            if cluster.pod(id).is_none() {
                return Err(format!("no Pod {id} in the input"));
            }
            Origin::Pod { pod: id.clone() }
        }
    };
    let slices = crate::net::controller::steady_slices(cluster);
    let sim = Sim::new(
        cluster,
        &slices,
        cluster.proxy.mode,
        scheduler,
        crate::Code::ALL.compilers,
    );
    let req = Request {
        origin,
        dst,
        port: args.port,
        protocol: args.protocol,
        src_port: 40000,
        keep_open: false,
    };
    let mut state = WorldState::default();
    let mut chooser = crate::util::choose::Chooser::new(args.seed);
    Ok(trace(&sim, &req, &mut state, &mut chooser, 0))
}
