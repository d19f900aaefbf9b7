//! Replays the curated fuzz corpora (`core/fuzz/corpus/<target>/`) through
//! the same functions the fuzz targets run, so inputs that once crashed (and
//! the interesting ones cargo-fuzz found) stay covered by a plain
//! `cargo test`, without nightly or cargo-fuzz.

use kpv_core::session::share;
use std::path::{Path, PathBuf};

/// The corpus files of one target, sorted by name.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    files
}

fn replay(target: &str, body: fn(&[u8])) {
    for path in corpus(target) {
        let bytes = std::fs::read(&path).expect("corpus file");
        let result = std::panic::catch_unwind(|| body(&bytes));
        assert!(result.is_ok(), "{} panicked", path.display());
    }
}

#[test]
fn yaml_import_corpus_replays_without_panic() {
    replay("yaml_import", kpv_core::fuzzing::fuzz_one);
}

#[test]
fn share_decode_corpus_replays_without_panic() {
    replay("share_decode", kpv_core::fuzzing::fuzz_share_decode);
}

/// The `valid-*` seeds are links the encoder wrote (so the fuzzer starts
/// from real links): each decodes, and encodes back to exactly its text.
#[test]
fn share_decode_valid_seeds_are_encoder_output() {
    let mut valid = 0;
    for path in corpus("share_decode") {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.starts_with("valid-") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("UTF-8 corpus file");
        let state = share::decode(&text)
            .unwrap_or_else(|e| panic!("{} does not decode: {e}", path.display()));
        let again = share::encode(&state);
        assert_eq!(
            again,
            text,
            "{} is not the encoder's output",
            path.display()
        );
        valid += 1;
    }
    assert!(valid >= 3, "only {valid} valid seeds");
}
