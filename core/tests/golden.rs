//! Golden snapshots of `kpv rules` (text) for every scenario in
//! `tests/scenarios/` in every mode (`Mode::ALL`), through the CLI's pure entry
//! point. A change in any mode's rendering shows up here as a diff to review.

use kpv_core::cli::{parse_args, run};
use kpv_core::model::Mode;
use std::path::PathBuf;

/// Combinations `kpv rules` refuses, with the reason it must give.
const REFUSED: &[(&str, Mode, &str)] = &[];

fn scenarios() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/scenarios")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    v.sort();
    v
}

#[test]
fn rules_text_of_every_scenario_in_every_mode() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let _guard = settings.bind_to_scope();
    let mut count = 0;
    for path in scenarios() {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("UTF-8 name")
            .to_string();
        let text = std::fs::read_to_string(&path).expect("readable");
        for mode in Mode::ALL {
            let args: Vec<String> = ["rules", "in.yaml", "--mode", mode.as_str()]
                .iter()
                .map(|s| s.to_string())
                .collect();
            let cmd = parse_args(&args).expect("valid arguments");
            let out = run(&cmd, std::slice::from_ref(&text), &["in.yaml".to_string()]);
            if let Some((_, _, why)) = REFUSED.iter().find(|(s, m, _)| *s == stem && *m == mode) {
                assert_ne!(out.code, 0, "{stem} {mode:?} is expected to be refused");
                assert!(out.stderr.contains(why), "{stem} {mode:?}: {}", out.stderr);
                continue;
            }
            assert_eq!(out.code, 0, "{stem} {mode:?}: {}", out.stderr);
            assert!(!out.stdout.is_empty(), "{stem} {mode:?}");
            insta::assert_snapshot!(format!("golden__{stem}__{}", mode.as_str()), out.stdout);
            count += 1;
        }
    }
    assert!(count >= 14 * 4, "{count} snapshots");
}
