//! A Service's cluster IPs, IP families and family policy, validated as
//! the API server's `ValidateServiceClusterIPsRelatedFields` does, in its
//! order; and how the API prints families and string lists in its errors.
//!
//! Never panics on input; every rejected field is a located diagnostic.

use super::*;
use crate::util::diag::Span;

/// `spec.ipFamilyPolicy` (the variants are the API's own names).
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FamilyPolicy {
    SingleStack,
    PreferDualStack,
    RequireDualStack,
}

/// A Service's cluster IPs, IP families and family policy, as validated.
pub(super) struct Families {
    pub(super) cluster_ips: Vec<IpAddr>,
    pub(super) headless: bool,
    pub(super) want_families: Vec<IpFamily>,
    pub(super) families_at: Vec<Span>,
    pub(super) family_policy: FamilyPolicy,
    pub(super) cluster_ips_at: Option<Span>,
    pub(super) policy_at: Option<Span>,
}

/// Validated as the API server's `ValidateServiceClusterIPsRelatedFields`
/// does, in its order; `None` after the first error (reported in `c`).
pub(super) fn families(c: &mut Ctx<'_>, spec: &Y, service_type: ServiceType) -> Option<Families> {
    let single = spec.get("clusterIP").filter(|x| !x.is_null());
    let list = spec.get("clusterIPs").and_then(Y::as_seq);
    let cluster_ips_at = spec.get("clusterIPs").or(single).map(|x| x.span);
    let texts: Vec<String> = list
        .map(|l| {
            l.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    // ValidateServiceClusterIPsRelatedFields, in its order.
    check_cluster_ip_list(c, spec, single, &texts)?;
    let mut ip_nodes: Vec<(&Y, String)> = Vec::new();
    if let Some(list) = list {
        for (i, x) in list.iter().enumerate() {
            ip_nodes.push((x, format!("spec.clusterIPs[{i}]")));
        }
    } else if let Some(x) = single {
        ip_nodes.push((x, "spec.clusterIP".into()));
    }
    let mut cluster_ips = Vec::new();
    let mut headless = false;
    for (x, field) in ip_nodes {
        match x.as_str() {
            Some("None") => {
                headless = true;
            }
            Some("") => {}
            _ => {
                if let Some(ip) = c.ip(x, &field) {
                    cluster_ips.push(ip);
                }
            }
        }
    }
    if cluster_ips.len() == 2 && IpFamily::of(&cluster_ips[0]) == IpFamily::of(&cluster_ips[1]) {
        let at = spec.get("clusterIPs").unwrap_or(spec);
        c.err(
            at,
            "spec.clusterIPs",
            format!(
                "Invalid value: {}: may specify no more than one IP for each IP family",
                go_strings(&texts)
            ),
            "give one IPv4 and one IPv6 address",
        );
        return None;
    }
    let (want_families, families_at) = ip_families(c, spec)?;
    if !headless {
        let at = spec.get("clusterIPs").or(single).unwrap_or(spec);
        check_family_order(c, at, list.is_some(), &cluster_ips, &want_families)?;
    }
    let (family_policy, policy_at) = family_policy(
        c,
        spec,
        service_type,
        (cluster_ips.len(), want_families.len()),
    )?;
    Some(Families {
        cluster_ips,
        headless,
        want_families,
        families_at,
        family_policy,
        cluster_ips_at,
        policy_at,
    })
}

/// The `clusterIPs` list itself: its first value is `clusterIP`'s, `None`
/// stands alone, at most two values.
fn check_cluster_ip_list(
    c: &mut Ctx<'_>,
    spec: &Y,
    single: Option<&Y>,
    texts: &[String],
) -> Option<()> {
    let at = spec.get("clusterIPs").unwrap_or(spec);
    if let (Some(one), Some(first)) = (single.and_then(Y::as_str), texts.first()) {
        if !one.is_empty() && first != one {
            c.err(
                at,
                "spec.clusterIPs",
                format!(
                    "Invalid value: {}: first value must match `clusterIP`",
                    go_strings(texts)
                ),
                "make clusterIPs[0] the same as clusterIP, or give only one of them",
            );
            return None;
        }
    }
    if texts.len() > 1 && texts[0] == "None" {
        c.err(
            at,
            "spec.clusterIPs",
            format!(
                "Invalid value: {}: 'None' must be the first and only value",
                go_strings(texts)
            ),
            "a headless Service has `clusterIPs: [None]` and nothing else",
        );
        return None;
    }
    if texts.len() > 2 {
        c.err(
            at,
            "spec.clusterIPs",
            format!(
                "Invalid value: {}: may only hold up to 2 values",
                go_strings(texts)
            ),
            "give at most one IPv4 and one IPv6 address",
        );
        return None;
    }
    Some(())
}

/// `spec.ipFamilies`: each `IPv4` or `IPv6`, once; with where each is
/// written.
fn ip_families(c: &mut Ctx<'_>, spec: &Y) -> Option<(Vec<IpFamily>, Vec<Span>)> {
    let mut want_families = Vec::new();
    let mut families_at = Vec::new();
    for (i, f) in c
        .seq(spec.get("ipFamilies"), "spec.ipFamilies")
        .iter()
        .enumerate()
    {
        let field = format!("spec.ipFamilies[{i}]");
        let fam = match f.as_str() {
            Some("IPv4") => IpFamily::V4,
            Some("IPv6") => IpFamily::V6,
            other => {
                c.err(
                    f,
                    &field,
                    format!(
                        "Unsupported value: \"{}\": supported values: \"IPv4\", \"IPv6\"",
                        other.unwrap_or("")
                    ),
                    "use IPv4 or IPv6",
                );
                return None;
            }
        };
        if want_families.contains(&fam) {
            c.err(
                f,
                &field,
                format!("Duplicate value: \"{}\"", family_name(fam)),
                "list each family once: [IPv4], [IPv6], [IPv4, IPv6] or [IPv6, IPv4]",
            );
            return None;
        }
        want_families.push(fam);
        families_at.push(f.span);
    }
    Some((want_families, families_at))
}

/// Each cluster IP is of the family listed at its index (an error points
/// at `at`, where the cluster IPs are written).
fn check_family_order(
    c: &mut Ctx<'_>,
    at: &Y,
    from_list: bool,
    cluster_ips: &[IpAddr],
    want_families: &[IpFamily],
) -> Option<()> {
    for (i, ip) in cluster_ips.iter().enumerate() {
        let Some(&fam) = want_families.get(i) else {
            continue;
        };
        if IpFamily::of(ip) == fam {
            continue;
        }
        let field = if from_list {
            format!("spec.clusterIPs[{i}]")
        } else {
            "spec.clusterIP".to_string()
        };
        c.err(
            at,
            &field,
            format!(
                "Invalid value: \"{ip}\": expected an {} value as indicated by `ipFamilies[{i}]`",
                family_name(fam)
            ),
            "list the families in the order of the cluster IPs",
        );
        return None;
    }
    Some(())
}

/// `ipFamilyPolicy` and where it is written, checked against how many
/// cluster IPs and families the Service gives.
fn family_policy(
    c: &mut Ctx<'_>,
    spec: &Y,
    service_type: ServiceType,
    (n_ips, n_families): (usize, usize),
) -> Option<(FamilyPolicy, Option<Span>)> {
    let policy_node = spec.get("ipFamilyPolicy").filter(|x| !x.is_null());
    let family_policy = match policy_node.map(|x| x.as_str().unwrap_or("?")) {
        None => FamilyPolicy::SingleStack,
        Some("SingleStack") => FamilyPolicy::SingleStack,
        Some("PreferDualStack") => FamilyPolicy::PreferDualStack,
        Some("RequireDualStack") => FamilyPolicy::RequireDualStack,
        Some(other) => {
            c.err(
                policy_node.unwrap_or(spec),
                "spec.ipFamilyPolicy",
                format!("Unsupported value: \"{other}\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\""),
                "use SingleStack, PreferDualStack or RequireDualStack",
            );
            return None;
        }
    };
    if family_policy == FamilyPolicy::SingleStack
        && policy_node.is_some()
        && service_type != ServiceType::ExternalName
    {
        let what = if n_ips == 2 {
            Some("cluster IPs")
        } else if n_families == 2 {
            Some("IP families")
        } else {
            None
        };
        if let Some(what) = what {
            c.err(
                policy_node.unwrap_or(spec),
                "spec.ipFamilyPolicy",
                format!("Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple {what} are specified"),
                "set ipFamilyPolicy: PreferDualStack or RequireDualStack, or give one family",
            );
            return None;
        }
    }
    // Absent, a policy is SingleStack (and then two IPs or families are
    // the same error as above).
    if policy_node.is_none()
        && (n_ips == 2 || n_families == 2)
        && service_type != ServiceType::ExternalName
    {
        let what = if n_ips == 2 {
            "cluster IPs"
        } else {
            "IP families"
        };
        c.err(
            spec,
            "spec.ipFamilyPolicy",
            format!("Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple {what} are specified"),
            "add `ipFamilyPolicy: PreferDualStack` (or RequireDualStack)",
        );
        return None;
    }
    Some((family_policy, policy_node.map(|x| x.span)))
}

/// Go's `%#v` of a `[]string`, as the API server prints a list it refuses.
pub(super) fn go_strings(ips: &[String]) -> String {
    let quoted: Vec<String> = ips.iter().map(|s| crate::util::diag::quoted(s)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// `IPv4` / `IPv6`, as the API names a family.
pub(super) fn family_name(f: IpFamily) -> &'static str {
    match f {
        IpFamily::V4 => "IPv4",
        IpFamily::V6 => "IPv6",
    }
}
