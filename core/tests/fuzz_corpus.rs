//! Replays the curated fuzz corpus (`core/fuzz/corpus/yaml_import/`) through
//! the same function the `yaml_import` fuzz target runs, so inputs that once
//! crashed (and the interesting ones cargo-fuzz found) stay covered by a plain
//! `cargo test`, without nightly or cargo-fuzz.

use std::path::Path;

#[test]
fn yaml_import_corpus_replays_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/yaml_import");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    for path in &files {
        let bytes = std::fs::read(path).expect("corpus file");
        let result = std::panic::catch_unwind(|| kpv_core::fuzzing::fuzz_one(&bytes));
        assert!(result.is_ok(), "{} panicked", path.display());
    }
}
