//! The release pipeline of the shipped `.wasm`: the pinned nightly toolchain
//! and the unstable cargo and rustc settings `trunk build --release` runs
//! with (std rebuilt for size with `panic_abort`, panics that abort at once,
//! no Debug formatting), and installing that toolchain with rustup.
//!
//! Everything is set through environment variables on the trunk command
//! only, so native builds, the tests and the CLI stay on stable and never
//! see a `-Z` flag. It never sets `RUSTFLAGS`: that variable replaces the
//! wasm32 `rustflags` of `.cargo/config.toml` (Leptos's `erase_components`);
//! the target's config variable used here is appended to them instead.

use std::env;
use std::process::Command;

/// The one place the nightly of the release build is pinned. Its `rust-src`
/// and wasm32 std must be on the dist server (some dates lack them, e.g.
/// 2026-05-18); 2026-05-20 has both (rustc 1.97.0-nightly 2026-05-19).
pub const NIGHTLY: &str = "nightly-2026-05-20";

/// Set to `stable` to build the release `.wasm` with the stable toolchain and
/// none of the nightly settings (a machine that cannot install the nightly).
pub const TOOLCHAIN_VAR: &str = "KPV_RELEASE_TOOLCHAIN";

/// True unless the release build was asked to stay on stable.
pub fn nightly_wanted() -> bool {
    env::var(TOOLCHAIN_VAR).map_or(true, |v| v != "stable")
}

/// The settings of the nightly release build, as environment variables:
/// - `CARGO_UNSTABLE_BUILD_STD`: std rebuilt with the app's profile (size
///   optimised, LTO across std), `panic_abort` instead of unwinding;
/// - `CARGO_UNSTABLE_BUILD_STD_FEATURES=optimize_for_size`: std's smaller
///   algorithms (sorting, formatting);
/// - `CARGO_PROFILE_RELEASE_PANIC=immediate-abort` with cargo's
///   `-Zpanic-immediate-abort`: a panic is a trap, with no message
///   formatting or location tables (the app catches nothing either way);
/// - `-Zfmt-debug=none` for wasm32 only: `{:?}` prints nothing, so text a
///   reader sees is always written with `Display`.
pub const NIGHTLY_ENV: [(&str, &str); 5] = [
    ("CARGO_UNSTABLE_BUILD_STD", "std,panic_abort"),
    ("CARGO_UNSTABLE_BUILD_STD_FEATURES", "optimize_for_size"),
    ("CARGO_UNSTABLE_PANIC_IMMEDIATE_ABORT", "true"),
    ("CARGO_PROFILE_RELEASE_PANIC", "immediate-abort"),
    (
        "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
        "-Zfmt-debug=none",
    ),
];

/// Put the nightly release settings on `cmd` (a `trunk build --release`),
/// unless the stable build was asked for.
pub fn apply(cmd: &mut Command) {
    if !nightly_wanted() {
        return;
    }
    cmd.env("RUSTUP_TOOLCHAIN", NIGHTLY);
    for (k, v) in NIGHTLY_ENV {
        cmd.env(k, v);
    }
    // It would replace the config's wasm32 flags (erase_components).
    cmd.env_remove("RUSTFLAGS");
}

/// What rustup must install for the release build: the pinned nightly with
/// `rust-src` (for build-std) and the wasm32 std. `installed` is
/// `rustup toolchain list`'s output.
pub fn install_args(installed: &str) -> Option<Vec<&'static str>> {
    let have = installed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .any(|t| t == NIGHTLY || t.starts_with(&format!("{NIGHTLY}-")));
    (!have).then(|| {
        vec![
            "toolchain",
            "install",
            NIGHTLY,
            "--profile",
            "minimal",
            "--component",
            "rust-src",
            "--target",
            "wasm32-unknown-unknown",
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_the_pinned_nightly_only_when_missing() {
        for (list, install) in [
            ("stable-x86_64-unknown-linux-gnu (default)\nnightly-x86_64-unknown-linux-gnu\n", true),
            ("", true),
            ("nightly-2026-05-19-x86_64-unknown-linux-gnu\n", true),
            (
                "stable-x86_64-unknown-linux-gnu (active, default)\nnightly-2026-05-20-x86_64-unknown-linux-gnu\n",
                false,
            ),
        ] {
            let args = install_args(list);
            assert_eq!(args.is_some(), install, "{list}");
            if let Some(a) = args {
                assert!(a.contains(&NIGHTLY) && a.contains(&"rust-src"));
            }
        }
    }

    #[test]
    fn never_sets_rustflags_and_keeps_minus_z_to_wasm32() {
        for (k, v) in NIGHTLY_ENV {
            assert_ne!(k, "RUSTFLAGS");
            assert_ne!(k, "CARGO_BUILD_RUSTFLAGS");
            if v.starts_with("-Z") {
                assert!(k.starts_with("CARGO_TARGET_WASM32_"), "{k}");
            }
        }
    }
}
