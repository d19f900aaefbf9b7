//! `kpv dig`: a name looked up as a Pod's resolver looks it up, against
//! cluster DNS as CoreDNS answers (see [`crate::net::dns`]). Arguments →
//! [`DigArgs`], (arguments, input texts) → [`Output`].

use crate::cli::{Common, Format};
use crate::model::NamespacedName;
use crate::net::dns::zone::Qtype;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigArgs {
    pub name: String,
    pub qtype: Qtype,
    /// The Pod whose resolver asks (`--from pod:NS/NAME`); `None`: a Pod of
    /// the `default` namespace.
    pub from: Option<NamespacedName>,
}

/// Parse `kpv dig` arguments (after the subcommand): files, then the name,
/// then optionally its type; `-x ADDRESS` asks the address's PTR record.
pub fn parse(args: &[String]) -> Result<(Common, DigArgs), String> {
    let mut common = Common::default();
    let mut from = None;
    let mut reverse = None;
    let mut positional: Vec<String> = Vec::new();
    let mut given: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &'static str| -> Result<String, String> {
            if given.contains(&name) {
                return Err(format!("{name} is given twice; give it once"));
            }
            given.push(name);
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--format" => common.format = Format::parse(&value("--format")?)?,
            "--from" => {
                let v = value("--from")?;
                match crate::net::trace::OriginKey::parse(&v) {
                    Some(crate::net::trace::OriginKey::Pod(id)) => from = Some(id),
                    _ => {
                        return Err(format!(
                            "--from `{v}`: `kpv dig` asks from a Pod; use pod:NAMESPACE/NAME"
                        ))
                    }
                }
            }
            "-x" => {
                let v = value("-x")?;
                let ip = crate::model::parse_ip_sloppy(&v)
                    .ok_or_else(|| format!("-x `{v}` is not an IP address"))?;
                reverse = Some(crate::net::dns::name::reverse_name(ip));
            }
            f if f.starts_with('-') && f != "-" => {
                return Err(format!(
                    "`kpv dig` takes --from, -x and --format; `{f}` is not one of them"
                ))
            }
            p => positional.push(p.to_string()),
        }
    }
    let qtype = match (positional.last().and_then(|t| Qtype::parse(t)), &reverse) {
        (Some(t), _) if positional.len() >= 2 || reverse.is_some() => {
            positional.pop();
            t
        }
        (_, Some(_)) => Qtype::Ptr,
        _ => Qtype::A,
    };
    let needed = if reverse.is_some() { 1 } else { 2 };
    if positional.len() < needed {
        return Err(
            "`kpv dig` needs YAML files (or - for stdin) and then the name to look up: \
             kpv dig cluster.yaml web.default [TYPE]"
                .to_string(),
        );
    }
    let name = match reverse {
        Some(r) => r,
        None => positional.pop().unwrap_or_default(),
    };
    common.files = positional;
    Ok((common, DigArgs { name, qtype, from }))
}

/// Run `kpv dig`: the asking Pod's resolver settings, then each query it
/// makes and its response, up to the first with records.
#[cfg(feature = "json")]
pub fn run(
    common: &Common,
    args: &DigArgs,
    texts: &[String],
    files: &[String],
) -> crate::cli::Output {
    use crate::net::dns::{render, resolver};
    let (cluster, report) = match crate::cli::load(texts, files) {
        Ok(x) => x,
        Err(o) => return o,
    };
    if let Some(id) = args.from.as_ref().filter(|id| cluster.pod(id).is_none()) {
        return crate::cli::Output {
            stdout: String::new(),
            stderr: format!("{report}kpv: --from pod:{id}: no such Pod in the input\n"),
            code: 2,
        };
    }
    let conf = resolver::conf_for(&cluster, args.from.as_ref());
    let slices = crate::net::controller::steady_slices(&cluster);
    let slices = crate::net::dns::slices_for_dns(&cluster, &slices);
    let tried = resolver::lookup(&cluster, &slices, &conf, &args.name, args.qtype);
    let stdout = match common.format {
        Format::Text => {
            let who = match &args.from {
                Some(id) => format!("Pod {id}"),
                None => "a Pod in namespace default".to_string(),
            };
            let policy = args
                .from
                .as_ref()
                .and_then(|id| cluster.pod(id))
                .map_or("ClusterFirst", |p| p.dns.policy.as_str());
            let mut s = format!(";; {who} (dnsPolicy {policy}), /etc/resolv.conf:\n");
            s.push_str(&render::resolv_conf(&conf));
            for (q, r) in &tried {
                s.push('\n');
                s.push_str(&render::response(q, args.qtype, r));
            }
            s
        }
        Format::Json => {
            let queries: Vec<serde_json::Value> = tried
                .iter()
                .map(|(q, r)| {
                    let lines = |v: &[crate::net::dns::zone::Record]| -> Vec<String> {
                        v.iter().map(render::record).collect()
                    };
                    serde_json::json!({
                        "name": q,
                        "type": args.qtype.as_str(),
                        "rcode": render::rcode(r),
                        "answer": lines(&r.answer),
                        "additional": lines(&r.extra),
                        "upstream": r.upstream,
                    })
                })
                .collect();
            let v = serde_json::json!({
                "resolv_conf": {
                    "nameservers": conf.nameservers,
                    "search": conf.search,
                    "ndots": conf.ndots,
                },
                "queries": queries,
            });
            crate::cli::json_text(&v)
        }
    };
    crate::cli::Output::ok(stdout, report)
}
