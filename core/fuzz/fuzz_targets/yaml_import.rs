//! Fuzz target: arbitrary bytes as a YAML import, then (when it parses
//! cleanly) every mode's compile and one traced packet. The body lives in
//! `kpv_core::fuzzing::fuzz_one` so `core/tests/fuzz_corpus.rs` replays the
//! corpus with the same code.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kpv_core::fuzzing::fuzz_one(data);
});
