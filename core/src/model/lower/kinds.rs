//! Which kinds kpv reads, and at which `apiVersion`s: the same kind name in
//! another API group is another object (a Knative `serving.knative.dev/v1`
//! Service is not a core Service) and must be skipped with a reason, never
//! read as the core one.
//!
//! This module only classifies (kind, apiVersion) pairs; it never looks at
//! an object's other fields.

/// What to do with an object of a modelled kind, given its `apiVersion`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ApiVersionCheck {
    /// The version kpv models.
    Current,
    /// An old version the API server no longer serves, read as the current
    /// one (the fields kpv reads are the same): say so.
    Removed {
        current: &'static str,
        removed_in: &'static str,
    },
    /// No `apiVersion`: kubectl refuses the file ("apiVersion not set"); kpv
    /// reads it as the current version and warns.
    Missing { current: &'static str },
    /// Another API group's kind of the same name: skipped.
    Foreign { expected: &'static [&'static str] },
}

/// Removed versions read with a warning, and the release that removed them.
type Removed = &'static [(&'static str, &'static str)];

/// (kind, versions kpv reads as current, removed versions).
const KINDS: &[(&str, &[&str], Removed)] = &[
    (
        "KubeProxyConfiguration",
        &["kubeproxy.config.k8s.io/v1alpha1"],
        &[],
    ),
    (
        "ClusterConfiguration",
        &["kubeadm.k8s.io/v1beta4", "kubeadm.k8s.io/v1beta3"],
        &[("kubeadm.k8s.io/v1beta2", "1.26")],
    ),
    (
        "ServiceCIDR",
        &["networking.k8s.io/v1", "networking.k8s.io/v1beta1"],
        &[],
    ),
    ("Node", &["v1"], &[]),
    ("Pod", &["v1"], &[]),
    ("Service", &["v1"], &[]),
    ("Endpoints", &["v1"], &[]),
    (
        "EndpointSlice",
        &["discovery.k8s.io/v1"],
        &[("discovery.k8s.io/v1beta1", "1.25")],
    ),
    (
        "Deployment",
        &["apps/v1"],
        &[
            ("apps/v1beta1", "1.16"),
            ("apps/v1beta2", "1.16"),
            ("extensions/v1beta1", "1.16"),
        ],
    ),
    (
        "ReplicaSet",
        &["apps/v1"],
        &[("apps/v1beta2", "1.16"), ("extensions/v1beta1", "1.16")],
    ),
    (
        "DaemonSet",
        &["apps/v1"],
        &[("apps/v1beta2", "1.16"), ("extensions/v1beta1", "1.16")],
    ),
    (
        "StatefulSet",
        &["apps/v1"],
        &[("apps/v1beta1", "1.16"), ("apps/v1beta2", "1.16")],
    ),
    ("Job", &["batch/v1"], &[]),
    ("ConfigMap", &["v1"], &[]),
];

/// The kinds kpv models, in the order they are lowered (configuration
/// first, then what later objects refer to).
pub(super) const ORDER: &[&str] = &[
    "KubeProxyConfiguration",
    "ConfigMap",
    "ClusterConfiguration",
    "ServiceCIDR",
    "Node",
    "Deployment",
    "ReplicaSet",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "Pod",
    "Service",
    "Endpoints",
    "EndpointSlice",
];

/// Every kind kpv lowers: [`ORDER`], then the routing kinds
/// ([`crate::model::routing::ROUTING_KINDS`]). An object of any other kind
/// is skipped with a warning that lists these.
pub(super) fn modelled() -> impl Iterator<Item = &'static str> {
    ORDER
        .iter()
        .chain(crate::model::routing::ROUTING_KINDS)
        .copied()
}

/// Classify `api_version` (empty when absent) for a modelled `kind`; `None`
/// when kpv does not model the kind at all.
pub(super) fn check(kind: &str, api_version: &str) -> Option<ApiVersionCheck> {
    let (_, current, removed) = KINDS.iter().find(|(k, ..)| *k == kind)?;
    let first = current.first().copied().unwrap_or("v1");
    Some(if current.contains(&api_version) {
        ApiVersionCheck::Current
    } else if api_version.is_empty() {
        ApiVersionCheck::Missing { current: first }
    } else if let Some((_, release)) = removed.iter().find(|(v, _)| *v == api_version) {
        ApiVersionCheck::Removed {
            current: first,
            removed_in: release,
        }
    } else {
        ApiVersionCheck::Foreign { expected: current }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_are_classified_per_kind() {
        let cases: &[(&str, &str, Option<ApiVersionCheck>)] = &[
            ("Service", "v1", Some(ApiVersionCheck::Current)),
            (
                "Service",
                "serving.knative.dev/v1",
                Some(ApiVersionCheck::Foreign { expected: &["v1"] }),
            ),
            (
                "Service",
                "",
                Some(ApiVersionCheck::Missing { current: "v1" }),
            ),
            ("Deployment", "apps/v1", Some(ApiVersionCheck::Current)),
            (
                "Deployment",
                "extensions/v1beta1",
                Some(ApiVersionCheck::Removed {
                    current: "apps/v1",
                    removed_in: "1.16",
                }),
            ),
            (
                "Deployment",
                "v1",
                Some(ApiVersionCheck::Foreign {
                    expected: &["apps/v1"],
                }),
            ),
            ("Job", "batch/v1", Some(ApiVersionCheck::Current)),
            ("ConfigMap", "v1", Some(ApiVersionCheck::Current)),
            ("Secret", "v1", None),
        ];
        for (kind, version, want) in cases {
            assert_eq!(&check(kind, version), want, "{kind} {version}");
        }
        for kind in ORDER {
            assert!(check(kind, "").is_some(), "{kind} has versions");
        }
    }
}
