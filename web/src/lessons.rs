//! The guided lessons shipped with the app: the files of `tests/lessons/`,
//! the same ones kpv-core's tests check against their scenarios.

use kpv_core::lesson::{self, Lesson};

/// Lesson files, in teaching order.
pub const FILES: &[&str] = &[
    include_str!("../../tests/lessons/services-basics.yaml"),
    include_str!("../../tests/lessons/modes-compared.yaml"),
    include_str!("../../tests/lessons/nodeport-loadbalancer.yaml"),
    include_str!("../../tests/lessons/traffic-policy-local.yaml"),
    include_str!("../../tests/lessons/readiness.yaml"),
    include_str!("../../tests/lessons/external-database.yaml"),
    include_str!("../../tests/lessons/ingress.yaml"),
    include_str!("../../tests/lessons/gateway-api.yaml"),
];

/// Every lesson that parses without errors (all of them: a test checks).
pub fn all() -> Vec<Lesson> {
    FILES
        .iter()
        .filter_map(|text| {
            let (l, diags) = lesson::parse(text);
            (!kpv_core::diag::has_errors(&diags)).then_some(l)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::PRESETS;

    #[test]
    fn every_lesson_file_is_shipped_and_valid() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/lessons");
        let on_disk = std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "yaml"))
                    .count()
            })
            .unwrap_or(0);
        assert_eq!(
            FILES.len(),
            on_disk,
            "a lesson file in tests/lessons is not in FILES"
        );
        let lessons = all();
        assert_eq!(lessons.len(), FILES.len(), "a lesson file has errors");
        for l in &lessons {
            let preset = PRESETS.iter().find(|p| p.key == l.scenario);
            assert!(
                preset.is_some(),
                "{}: scenario {} is not a preset",
                l.id,
                l.scenario
            );
            let (cluster, _) = kpv_core::model::parse(preset.map(|p| p.yaml).unwrap_or_default());
            let problems = lesson::check_against(l, &cluster);
            assert!(problems.is_empty(), "{}: {problems:?}", l.id);
            assert!(!l.title.ko.is_empty() && !l.title.en.is_empty());
        }
    }
}
