//! Fuzz target: arbitrary bytes as a share link (the fragment text, its
//! compressed payload, or the JSON inside it); whatever decodes must survive
//! encode → decode unchanged. The body lives in
//! `kpv_core::fuzzing::fuzz_share_decode` so `core/tests/fuzz_corpus.rs`
//! replays the corpus with the same code.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kpv_core::fuzzing::fuzz_share_decode(data);
});
