//! The scenario presets shipped with the app: the YAML files of
//! `tests/scenarios/`, the same ones kpv-core's tests check. Only the default
//! preset is compiled in; the others are files of the site (`data/`, copied
//! from `tests/`) that [`crate::data`] fetches when one is chosen. Never
//! include a preset's text in the `.wasm` outside tests.

use crate::i18n::Lang;

pub struct Preset {
    pub key: &'static str,
    pub en: &'static str,
    pub ko: &'static str,
    /// The text, for the one preset compiled in.
    pub yaml: Option<&'static str>,
    /// The site's files the text is made of (joined as YAML documents).
    pub files: &'static [&'static str],
    /// [`fingerprint`] of the text: a share link's scenario is known as
    /// this preset without fetching it (a test keeps it equal to the files).
    pub sum: u64,
}

/// FNV-1a (64 bits) of a scenario's text.
pub fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Preset {
    pub fn title(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.en,
            Lang::Ko => self.ko,
        }
    }

    /// The text of the fetched `parts` (one per file, in order).
    pub fn join(&self, parts: &[String]) -> String {
        parts.join("---\n")
    }
}

/// The alpaca/bandicoot seed scenario.
pub const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");

macro_rules! preset {
    ($key:literal, $en:literal, $ko:literal, $sum:literal) => {
        Preset {
            key: $key,
            en: $en,
            ko: $ko,
            yaml: None,
            files: &[concat!("data/scenarios/", $key, ".yaml")],
            sum: $sum,
        }
    };
}

pub const PRESETS: &[Preset] = &[
    Preset {
        key: "alpaca-bandicoot",
        en: "alpaca & bandicoot: ClusterIP and DNS names",
        ko: "alpaca & bandicoot: ClusterIP와 DNS 이름",
        yaml: Some(SEED),
        files: &[],
        sum: 0x2d19dd8a8f01c142,
    },
    preset!(
        "nodeport",
        "NodePort: a port on every node",
        "NodePort: 모든 노드에 열리는 포트",
        0x577f9864b53b304b
    ),
    preset!(
        "loadbalancer-cluster",
        "LoadBalancer, externalTrafficPolicy Cluster",
        "LoadBalancer: externalTrafficPolicy Cluster (모든 노드가 전달)",
        0xf6fb35758c8a33aa
    ),
    preset!(
        "loadbalancer-local",
        "LoadBalancer, externalTrafficPolicy Local",
        "LoadBalancer: externalTrafficPolicy Local (로컬 Pod만, 클라이언트 주소 유지)",
        0x19ce5a98b0f211f2
    ),
    preset!(
        "no-endpoints",
        "No ready endpoints: REJECT",
        "준비된 엔드포인트 없음: REJECT",
        0x5f03ba217e223c1f
    ),
    preset!(
        "session-affinity",
        "Session affinity ClientIP",
        "세션 어피니티 ClientIP",
        0x5c0198347320a870
    ),
    preset!(
        "external-database",
        "Manual Endpoints to an external database",
        "외부 데이터베이스로 가는 수동 Endpoints",
        0x2bebd1045b7331be
    ),
    preset!(
        "userspace-retry",
        "userspace retry vs iptables (legacy mode)",
        "userspace 재시도 vs iptables (레거시 모드)",
        0x678e5e7f552f0eee
    ),
    preset!(
        "ingress",
        "Ingress: one load balancer, two hosts, TLS on one",
        "Ingress: 로드밸런서 하나, 호스트 둘, 그중 하나는 TLS",
        0x9193b1b9d75588b3
    ),
    preset!(
        "gateway-api",
        "Gateway API: two routes, header match, weights, redirect",
        "Gateway API: 라우트 둘, 헤더 매치, 가중치, 리다이렉트",
        0x9298778d7dfaa159
    ),
    preset!(
        "cilium",
        "Cilium instead of kube-proxy: socket LB, Maglev, DSR",
        "kube-proxy 대신 Cilium: 소켓 LB, Maglev, DSR",
        0x9f35f8a7d8c042b3
    ),
    Preset {
        key: "article-ingress",
        en: "The article's Ingress as printed (extensions/v1beta1)",
        ko: "글에 실린 그대로의 Ingress (extensions/v1beta1)",
        // The Ingress printed in the NodePort / LoadBalancer / Ingress
        // article, with the nodes, Service and Pods it needs (no controller:
        // one is added).
        yaml: None,
        files: &[
            "data/http/article-cluster.yaml",
            "data/http/article-ingress.yaml",
        ],
        sum: 0xe1d8e2342df96093,
    },
];

/// A preset's text as the site serves it, read from the repository (tests).
#[cfg(test)]
pub fn text_from_disk(p: &Preset) -> String {
    match p.yaml {
        Some(y) => y.to_string(),
        None => p.join(
            &p.files
                .iter()
                .map(|f| crate::fetch::from_disk(f))
                .collect::<Vec<_>>(),
        ),
    }
}

/// The preset `key`'s text read from the repository (tests).
#[cfg(test)]
pub fn by_key_from_disk(key: &str) -> String {
    PRESETS
        .iter()
        .find(|p| p.key == key)
        .map(text_from_disk)
        .unwrap_or_else(|| panic!("no preset {key}"))
}

/// A preset's text if it is at hand (compiled in, or every file fetched).
pub fn preset_text(p: &Preset) -> Option<String> {
    match p.yaml {
        Some(y) => Some(y.to_string()),
        None => p
            .files
            .iter()
            .map(|f| crate::fetch::cached(f))
            .collect::<Option<Vec<_>>>()
            .map(|parts| p.join(&parts)),
    }
}

/// Fetch what a preset's text is made of.
async fn fetch_all(p: &Preset) -> Result<(), crate::fetch::FetchError> {
    if p.yaml.is_none() {
        for f in p.files {
            crate::fetch::get(f).await?;
        }
    }
    Ok(())
}

/// The preset `key`'s text, fetched if needed.
pub async fn preset(key: &str) -> Result<String, crate::fetch::FetchError> {
    let p = PRESETS
        .iter()
        .find(|p| p.key == key)
        .ok_or_else(|| crate::fetch::FetchError(format!("no preset {key}")))?;
    fetch_all(p).await?;
    preset_text(p).ok_or_else(|| crate::fetch::FetchError(format!("{key}: not loaded")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_without_errors_and_keys_are_unique() {
        let mut keys = std::collections::BTreeSet::new();
        for p in PRESETS {
            assert!(keys.insert(p.key), "duplicate preset {}", p.key);
            let text = text_from_disk(p);
            assert_eq!(
                p.sum,
                fingerprint(&text),
                "{}: sum must be {:#018x}",
                p.key,
                fingerprint(&text)
            );
            let (_, diags) = kpv_core::Code::ALL.parse(&text);
            assert!(
                !kpv_core::util::diag::has_errors(&diags),
                "{}: {diags:#?}",
                p.key
            );
        }
    }

    /// A share link's text is named as its preset without fetching it;
    /// any other text, even one byte off, is the user's own.
    #[test]
    fn a_shared_preset_text_is_known_by_its_fingerprint() {
        for p in PRESETS {
            let text = text_from_disk(p);
            assert_eq!(crate::share::scenario_key(&text), p.key);
            let edited = text.replacen("name:", "name: ", 1);
            assert_eq!(crate::share::scenario_key(&edited), crate::state::CUSTOM);
        }
    }

    /// The HTTP presets offer their entry point first (so one click sends a
    /// request), and the article's manifest loads with its conversion warning.
    #[test]
    fn http_presets_offer_their_entry_point_first() {
        for (key, entry, url) in [
            ("ingress", "ingressclass/nginx", "https://testhost.com/"),
            (
                "gateway-api",
                "gateway/default/web",
                "https://www.example.com/",
            ),
            (
                "article-ingress",
                "ingressclass/gce",
                "https://testhost.com/",
            ),
        ] {
            let p = PRESETS.iter().find(|p| p.key == key).expect(key);
            let (c, diags) = kpv_core::Code::ALL.parse(&text_from_disk(p));
            let first = kpv_core::session::replay::targets(&c, kpv_core::Code::ALL.replay().http)
                .into_iter()
                .next()
                .expect(key);
            assert_eq!(first.key, format!("http:{entry}"), "{key}");
            match &first.dst {
                kpv_core::net::trace::Dest::Http(h) => assert_eq!(h.request.url(), url, "{key}"),
                d => panic!("{key}: {d:?}"),
            }
            if key == "article-ingress" {
                assert!(
                    diags
                        .iter()
                        .any(|d| d.message.contains("removed in Kubernetes 1.22")),
                    "{diags:#?}"
                );
            }
        }
    }
}
