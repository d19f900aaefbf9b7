//! The guided lessons shipped with the app: the files of `tests/lessons/`,
//! the same ones kpv-core's tests check against their scenarios. They are
//! files of the site (`data/lessons/`) fetched when a lesson is opened; only
//! this index (ids, pages, titles for the picker) is compiled in, and a test
//! keeps it equal to the files. Never include a lesson's text in the `.wasm`
//! outside tests.

use kpv_core::session::lesson::{self, Lesson};

/// What the picker and the address check need before a lesson is fetched.
pub struct Entry {
    pub id: &'static str,
    /// Its number of steps (the `page=` it accepts).
    pub pages: usize,
    pub en: &'static str,
    pub ko: &'static str,
}

impl Entry {
    pub fn title(&self, lang: crate::i18n::Lang) -> &'static str {
        match lang {
            crate::i18n::Lang::En => self.en,
            crate::i18n::Lang::Ko => self.ko,
        }
    }
}

/// The lessons, in teaching order; each one's file is `data/lessons/<id>.yaml`.
pub const INDEX: &[Entry] = &[
    Entry {
        id: "services-basics",
        pages: 3,
        en: "Services and Endpoints: a stable address for changing Pods",
        ko: "Service와 Endpoints: 바뀌는 Pod 앞의 고정된 주소",
    },
    Entry {
        id: "modes-compared",
        pages: 3,
        en: "kube-proxy's modes compared: userspace, iptables, IPVS",
        ko: "kube-proxy 모드 비교: userspace, iptables, IPVS",
    },
    Entry {
        id: "nodeport-loadbalancer",
        pages: 2,
        en: "NodePort and LoadBalancer: traffic from outside the cluster",
        ko: "NodePort와 LoadBalancer: 클러스터 밖에서 오는 트래픽",
    },
    Entry {
        id: "traffic-policy-local",
        pages: 2,
        en: "externalTrafficPolicy: Local keeps the client's address",
        ko: "externalTrafficPolicy: Local은 클라이언트 주소를 지킵니다",
    },
    Entry {
        id: "readiness",
        pages: 3,
        en: "Readiness takes Pods out of a Service and back; liveness restarts them",
        ko: "Readiness는 Pod를 Service에서 빼고 다시 넣고, liveness는 재시작합니다",
    },
    Entry {
        id: "external-database",
        pages: 2,
        en: "A Service for a database outside the cluster",
        ko: "클러스터 밖 데이터베이스를 위한 Service",
    },
    Entry {
        id: "ingress",
        pages: 6,
        en: "One load balancer, many Services: Ingress",
        ko: "로드 밸런서 하나로 여러 Service를: Ingress",
    },
    Entry {
        id: "gateway-api",
        pages: 6,
        en: "From Ingress to Gateway API",
        ko: "Ingress에서 Gateway API로",
    },
    Entry {
        id: "kube-proxy-vs-cilium",
        pages: 5,
        en: "kube-proxy vs Cilium: the socket, DSR and Maglev",
        ko: "kube-proxy와 Cilium: 소켓, DSR, Maglev",
    },
];

/// The site path of lesson `id`'s file.
pub fn path(id: &str) -> String {
    format!("data/lessons/{id}.yaml")
}

/// A lesson file's lesson, if it parses without errors.
pub fn parse(text: &str) -> Option<Lesson> {
    let (l, diags) = lesson::parse(text);
    (!kpv_core::util::diag::has_errors(&diags)).then_some(l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::{by_key_from_disk, PRESETS};

    /// Every file of `tests/lessons` is in the index, valid against its
    /// preset, and the index says what the file says.
    #[test]
    fn every_lesson_file_is_indexed_and_valid() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/lessons");
        let on_disk = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(
            INDEX.len(),
            on_disk,
            "a lesson file in tests/lessons is not in INDEX"
        );
        for e in INDEX {
            let text = crate::fetch::from_disk(&path(e.id));
            let l = parse(&text).unwrap_or_else(|| panic!("{}: the file has errors", e.id));
            assert_eq!(l.id, e.id, "the file's id");
            assert_eq!(l.steps.len(), e.pages, "{}: pages in INDEX", e.id);
            assert_eq!(
                (l.title.get("en"), l.title.get("ko")),
                (e.en, e.ko),
                "{}: titles in INDEX",
                e.id
            );
            assert!(!e.ko.is_empty() && !e.en.is_empty());
            assert!(
                PRESETS.iter().any(|p| p.key == l.scenario),
                "{}: scenario {} is not a preset",
                l.id,
                l.scenario
            );
            let (cluster, _) = kpv_core::Code::ALL.parse(&by_key_from_disk(&l.scenario));
            let problems = lesson::check_against(&l, &cluster, &kpv_core::Code::ALL.lesson());
            assert!(problems.is_empty(), "{}: {problems:?}", l.id);
        }
    }
}
