//! The heap the YAML reader really takes, measured by a counting allocator:
//! hostile inputs (alias bombs, large scalars aliased many times, nested
//! anchors, and the heaviest inputs the fuzzer found, kept in its corpus)
//! must stay within what [`Limits::max_heap_bytes`] promises, twice over for
//! the growth of vectors, plus the parser's own buffers.
//!
//! One test only in this file: the allocator counts every thread, so no
//! other test may run beside it.

use kpv_core::yaml::{parse_stream, Limits};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; only
// the sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            CURRENT.fetch_sub(layout.size(), Relaxed);
            grew(new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most the heap grew above where it was while parsing `src`.
fn peak_parse(src: &str, limits: &Limits) -> usize {
    let base = CURRENT.load(Relaxed);
    PEAK.store(base, Relaxed);
    let out = parse_stream(src, limits);
    let peak = PEAK.load(Relaxed).saturating_sub(base);
    drop(out);
    peak
}

/// What a parse may take: the tree and anchored copies within the limits
/// (twice, for vectors that grew by doubling), and the parser's buffers,
/// a few times the input.
fn budget(src: &str, limits: &Limits) -> usize {
    2 * limits.max_heap_bytes() + 16 * src.len() + (1 << 20)
}

fn bomb_of_aliases(scalar: usize, levels: usize, fan: usize) -> String {
    let mut s = format!("l0: &l0 \"{}\"\n", "x".repeat(scalar));
    for i in 1..=levels {
        let refs = vec![format!("*l{}", i - 1); fan].join(", ");
        s.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
    }
    s
}

#[test]
fn hostile_yaml_is_parsed_within_the_promised_heap() {
    // Real limits, real bombs: without the limits on expansion each of these
    // takes gigabytes.
    let limits = Limits::default();
    for (name, src) in [
        ("100 KB scalar aliased 1000 times", {
            let mut s = format!("a: &a {}\nb: [", "x".repeat(100_000));
            s.push_str(&vec!["*a"; 1000].join(", "));
            s.push_str("]\n");
            s
        }),
        ("billion laughs", bomb_of_aliases(3, 9, 10)),
        ("1 KB scalar, 8 levels of 8", bomb_of_aliases(1000, 8, 8)),
        ("nested anchors around 1 MB", {
            format!(
                "{}&z {}{}\n",
                (0..60).map(|i| format!("&n{i} [")).collect::<String>(),
                "y".repeat(1 << 20),
                "]".repeat(60)
            )
        }),
    ] {
        let peak = peak_parse(&src, &limits);
        let allowed = budget(&src, &limits);
        assert!(
            peak <= allowed,
            "{name}: the parse took {peak} bytes of heap, more than {allowed}"
        );
    }

    // Small limits and generated programs of anchors and aliases: whatever
    // the input, the heap stays within the budget of its limits.
    let small = Limits {
        max_nodes: 20_000,
        max_text_bytes: 1 << 20,
        ..Limits::default()
    };
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    let shape = (
        0usize..50_000,
        1usize..12,
        1usize..16,
        prop::collection::vec(0usize..4, 0..6),
    );
    let result = runner.run(&shape, |(scalar, levels, fan, extra)| {
        let mut src = bomb_of_aliases(scalar, levels, fan);
        // Mappings and merges over the same anchors.
        for (i, e) in extra.iter().enumerate() {
            let from = levels.min(*e);
            src.push_str(&format!(
                "m{i}: &m{i} {{<<: {{k: *l{from}}}, a: *l{from}, b: [*l{from}, *l{from}]}}\n"
            ));
        }
        let peak = peak_parse(&src, &small);
        let allowed = budget(&src, &small);
        prop_assert!(
            peak <= allowed,
            "{peak} > {allowed} for {} bytes of input",
            src.len()
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }

    // The fuzzer's corpus (the heaviest inputs it found are kept there):
    // each one's whole parse, YAML and lowering, within the budget.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/yaml_import");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    assert!(files.len() > 50, "{}", dir.display());
    for path in files {
        let bytes = std::fs::read(&path).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        let base = CURRENT.load(Relaxed);
        PEAK.store(base, Relaxed);
        let parsed = kpv_core::Code::ALL.parse(&text);
        let peak = PEAK.load(Relaxed).saturating_sub(base);
        drop(parsed);
        let allowed = budget(&text, &limits);
        assert!(peak <= allowed, "{}: {peak} > {allowed}", path.display());
    }
}
