//! Project tasks: `cargo xtask serve | test | build | kernel | setup`.
//!
//! Each task first installs what it needs and is missing (idempotently, quickly
//! when already there), saying what it installs and why, so the README's two
//! commands work on a fresh machine. Besides the standard library only
//! `miniz_oxide` and `brotli` (pure Rust, for the download size and the
//! precompressed files) are used, so the task runner itself builds quickly.
//! The release pipeline lives in `pipeline`, the size report and budgets in
//! `size`, the benchmarks' runners in `bench`.

mod bench;
mod pipeline;
mod poster;
mod size;
mod split;
#[cfg(test)]
mod tidy;

use std::env;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{exit, Command, Stdio};
use std::time::Instant;

const TRUNK_VERSION: &str = "0.21.14";
const WASM_TARGET: &str = "wasm32-unknown-unknown";
const MIN_BINARYEN: u32 = 120;
/// The path documentation sites embed the app under; the e2e suite checks it.
const SUB_PATH: &str = "/docs/kpv/";

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    let root = project_root();
    env::set_current_dir(&root)
        .unwrap_or_else(|e| die(&format!("cannot enter {}: {e}", root.display())));
    let tools = Tools::new(&root);
    match args.first().map(String::as_str) {
        Some("serve") => serve(&tools, &args[1..]),
        Some("test") => test(&tools),
        Some("bench") => {
            let rest: Vec<String> = args[1..]
                .iter()
                .filter(|a| *a != "--no-browser" && *a != "--no-core")
                .cloned()
                .collect();
            let mut over = 0;
            if !args.iter().any(|a| a == "--no-browser") {
                over += bench::browser(&tools);
            }
            if !args.iter().any(|a| a == "--no-core") {
                over += bench::core(&tools, &rest);
            }
            if over > 0 {
                say(&format!("{over} figure(s) over budget"));
                exit(1);
            }
        }
        Some("build") => {
            tools.ensure_web();
            let public_url = flag_value(&args[1..], "--public-url").unwrap_or_else(|| "/".into());
            let dist = flag_value(&args[1..], "--dist").unwrap_or_else(|| "dist".into());
            if !trunk_build(&tools, &public_url, &dist) {
                exit(1);
            }
        }
        Some("size") => {
            let dist = flag_value(&args[1..], "--dist").unwrap_or_else(|| "dist".into());
            if args.iter().any(|a| a == "--twiggy") {
                tools.ensure_twiggy();
                if !twiggy_top(&tools) {
                    exit(1);
                }
            } else if !size::check(Path::new(&dist)) {
                exit(1);
            }
        }
        Some("setup") => {
            tools.ensure_web();
            if args.iter().any(|a| a == "--twiggy") {
                tools.ensure_twiggy();
            }
            tools.ensure_browser_tests();
            tools.ensure_kernel_tools();
        }
        Some("kernel") => {
            tools.ensure_kernel_tools();
            let k = kernel_check(&tools, &args[1..]);
            if k.failed > 0 {
                exit(1);
            }
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\n\
                 tasks:\n  \
                 serve [--port N]            build and serve the app on 127.0.0.1:8080 (trunk serve)\n  \
                 test                        run every check and test suite; ends with `N passed, N failed`\n  \
                 build [--public-url P] [--dist D]\n                              release build for a static host (default /, dist/),\n                              with the lighter embed build in D/embed/\n  \
                 bench [--no-browser] [--no-core] [FILTER]\n                              frame time and start-up in Chromium, kpv-core at scale\n  \
                 size [--dist D]             each shipped file raw, gzip -9 and brotli, of D and D/embed, against the budgets\n  \
                 size --twiggy               twiggy's top 20 of the release .wasm, names kept (installs twiggy)\n  \
                 kernel [OPTIONS]            kpv's rules in the Linux kernel's netfilter, checked against kpv trace\n                              (root; options of kpv-kernelcheck, e.g. --only nodeport --modes nftables)\n  \
                 setup [--twiggy]            install every tool the other tasks need (twiggy only when asked)"
            );
            exit(2);
        }
    }
}

fn die(msg: &str) -> ! {
    eprintln!("xtask: error: {msg}");
    exit(1);
}

fn flag_value(args: &[String], flag: &str) -> Option<String> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1).cloned()
}

fn project_root() -> PathBuf {
    let manifest = env::var("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("xtask"));
    manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn say(msg: &str) {
    eprintln!("\x1b[1mxtask:\x1b[0m {msg}");
}

/// Run a command to completion with inherited output; true on success.
fn run(cmd: &mut Command) -> bool {
    say(&format!("running {}", describe(cmd)));
    match cmd.status() {
        Ok(s) => s.success(),
        Err(e) => {
            say(&format!("could not start {}: {e}", describe(cmd)));
            false
        }
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Output of a command, or None when it cannot run.
fn output_of(cmd: &mut Command) -> Option<String> {
    let out = cmd.stderr(Stdio::null()).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

struct Tools {
    root: PathBuf,
    path: String,
}

impl Tools {
    fn new(root: &Path) -> Tools {
        // Local tools first: wasm-opt from npm (Debian's is too old), then cargo's bin.
        let mut dirs = vec![root.join("tools/node_modules/.bin")];
        if let Some(home) = env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        {
            dirs.push(home.join("bin"));
        }
        let mut path = dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        if let Ok(old) = env::var("PATH") {
            path.push(':');
            path.push_str(&old);
        }
        Tools {
            root: root.to_path_buf(),
            path,
        }
    }

    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("PATH", &self.path).current_dir(&self.root);
        c
    }

    fn wasm_bindgen_version(&self) -> String {
        let lock = fs::read_to_string(self.root.join("Cargo.lock"))
            .unwrap_or_else(|e| die(&format!("cannot read Cargo.lock: {e}")));
        let mut lines = lock.lines();
        while let Some(l) = lines.next() {
            if l.trim() == "name = \"wasm-bindgen\"" {
                if let Some(v) = lines
                    .next()
                    .and_then(|v| v.trim().strip_prefix("version = \""))
                    .and_then(|v| v.strip_suffix('"'))
                {
                    return v.to_string();
                }
            }
        }
        die("Cargo.lock names no wasm-bindgen version")
    }

    /// Everything `trunk build` needs.
    fn ensure_web(&self) {
        let installed = output_of(self.cmd("rustup").args(["target", "list", "--installed"]))
            .unwrap_or_default();
        if !installed.lines().any(|l| l.trim() == WASM_TARGET) {
            say("installing the Rust target wasm32-unknown-unknown (the app is compiled to WebAssembly)");
            if !run(self.cmd("rustup").args(["target", "add", WASM_TARGET])) {
                die("rustup could not add the wasm32-unknown-unknown target");
            }
        }
        let trunk = output_of(self.cmd("trunk").arg("--version")).unwrap_or_default();
        if !trunk.contains(TRUNK_VERSION) {
            say(&format!("installing trunk {TRUNK_VERSION} (builds and serves the app; 0.22 needs a newer rustc). The first install takes about 10 minutes."));
            if !run(self.cmd("cargo").args([
                "install",
                "trunk",
                "--version",
                TRUNK_VERSION,
                "--locked",
            ])) {
                die("cargo install trunk failed");
            }
        }
        let want = self.wasm_bindgen_version();
        let have = output_of(self.cmd("wasm-bindgen").arg("--version")).unwrap_or_default();
        if have.split_whitespace().nth(1) != Some(want.as_str()) {
            say(&format!("installing wasm-bindgen-cli {want} (must match the wasm-bindgen in Cargo.lock; about 3 minutes)"));
            // Not --locked: its lock file names a crate version the registry here lacks.
            if !run(self
                .cmd("cargo")
                .args(["install", "wasm-bindgen-cli", "--version", &want]))
            {
                die("cargo install wasm-bindgen-cli failed");
            }
        }
        self.ensure_release_toolchain();
        let opt = output_of(self.cmd("wasm-opt").arg("--version")).unwrap_or_default();
        let opt_version: u32 = opt
            .split_whitespace()
            .nth(2)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let local = self.root.join("tools/node_modules/.bin/wasm-opt").exists();
        if opt_version < MIN_BINARYEN || !local {
            say("installing wasm-opt from the npm package binaryen into tools/ (Debian's wasm-opt 108 breaks the app at start-up)");
            if !run(self
                .cmd("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(self.root.join("tools")))
            {
                die("npm ci in tools/ failed");
            }
        }
    }

    /// The pinned nightly of the release build (`pipeline::NIGHTLY`) with
    /// `rust-src` and the wasm32 std, and std's own dependencies fetched (trunk
    /// builds offline). Skipped when `KPV_RELEASE_TOOLCHAIN=stable`.
    fn ensure_release_toolchain(&self) {
        if !pipeline::nightly_wanted() {
            say(&format!(
                "{}=stable: the release .wasm is built with the stable toolchain, without the nightly size settings",
                pipeline::TOOLCHAIN_VAR
            ));
            return;
        }
        let nightly = pipeline::NIGHTLY;
        let list = output_of(self.cmd("rustup").args(["toolchain", "list"])).unwrap_or_default();
        if let Some(args) = pipeline::install_args(&list) {
            say(&format!("installing the Rust toolchain {nightly} with rust-src and the wasm32 std (the release .wasm rebuilds std for size; native builds and tests stay on stable)"));
            if !run(self.cmd("rustup").args(&args)) {
                die(&format!("rustup could not install {nightly}; build with {}=stable to skip the nightly release settings", pipeline::TOOLCHAIN_VAR));
            }
        }
        let installed = |what: &str| {
            output_of(self.cmd("rustup").args([
                what,
                "list",
                "--installed",
                "--toolchain",
                nightly,
            ]))
            .unwrap_or_default()
        };
        if !installed("target").lines().any(|l| l.trim() == WASM_TARGET) {
            say(&format!("adding the wasm32 std to {nightly}"));
            if !run(self
                .cmd("rustup")
                .args(["target", "add", WASM_TARGET, "--toolchain", nightly]))
            {
                die(&format!("rustup could not add {WASM_TARGET} to {nightly}"));
            }
        }
        if !installed("component")
            .lines()
            .any(|l| l.trim() == "rust-src")
        {
            say(&format!(
                "adding rust-src to {nightly} (build-std compiles std from it)"
            ));
            if !run(self.cmd("rustup").args([
                "component",
                "add",
                "rust-src",
                "--toolchain",
                nightly,
            ])) {
                die(&format!("rustup could not add rust-src to {nightly}"));
            }
        }
        // std's own dependencies, which trunk's offline cargo build cannot download.
        let sysroot = output_of(
            self.cmd("rustc")
                .args(["--print", "sysroot"])
                .env("RUSTUP_TOOLCHAIN", nightly),
        )
        .unwrap_or_default();
        let library = Path::new(sysroot.trim()).join("lib/rustlib/src/rust/library/Cargo.toml");
        let fetch = || {
            let mut c = self.cmd("cargo");
            c.env("RUSTUP_TOOLCHAIN", nightly)
                .arg("fetch")
                .arg("--manifest-path")
                .arg(&library);
            c
        };
        if output_of(fetch().arg("--offline")).is_none() {
            say(&format!("fetching the crates std depends on (once; the release build of {nightly} is offline)"));
            if !run(&mut fetch()) {
                die("cargo fetch of std's dependencies failed");
            }
        }
    }

    /// twiggy, for `cargo xtask size --twiggy` only (never needed by `test`).
    fn ensure_twiggy(&self) {
        if output_of(self.cmd("twiggy").arg("--version")).is_none() {
            say("installing twiggy (what the .wasm's bytes are; a few minutes, once)");
            if !run(self.cmd("cargo").args(["install", "twiggy", "--locked"])) {
                die("cargo install twiggy failed");
            }
        }
    }

    /// Chromium, ChromeDriver and Playwright for the browser suites.
    fn ensure_browser_tests(&self) {
        let have_browser =
            Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists();
        if !have_browser {
            let root = output_of(Command::new("id").arg("-u"))
                .map(|s| s.trim() == "0")
                .unwrap_or(false);
            if root {
                say("installing Debian's chromium and chromium-driver (headless browser for the component and end-to-end tests)");
                let ok = run(Command::new("apt-get")
                    .arg("update")
                    .env("DEBIAN_FRONTEND", "noninteractive"))
                    && run(Command::new("apt-get")
                        .args([
                            "install",
                            "-y",
                            "--no-install-recommends",
                            "chromium",
                            "chromium-driver",
                        ])
                        .env("DEBIAN_FRONTEND", "noninteractive"));
                if !ok {
                    die("apt-get could not install chromium and chromium-driver");
                }
            } else {
                die("Chromium is missing. Install it with: sudo apt-get install -y chromium chromium-driver");
            }
        }
        let cjk = Path::new("/usr/share/fonts/opentype/noto").exists();
        let root = output_of(Command::new("id").arg("-u"))
            .map(|s| s.trim() == "0")
            .unwrap_or(false);
        if !cjk && root {
            say("installing Debian's fonts-noto-cjk (Korean text in the browser tests' screenshots)");
            // Screenshots only: a failure here does not stop the tests.
            let _ = run(Command::new("apt-get")
                .args(["install", "-y", "--no-install-recommends", "fonts-noto-cjk"])
                .env("DEBIAN_FRONTEND", "noninteractive"));
        }
        let e2e = self.root.join("tests/e2e");
        if !e2e
            .join("node_modules/@playwright/test/package.json")
            .exists()
        {
            say("installing Playwright's test runner in tests/e2e (npm ci; it uses Debian's Chromium, no browser download)");
            let ok = run(self
                .cmd("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&e2e)
                .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1"));
            if !ok {
                die("npm ci in tests/e2e failed");
            }
        }
    }

    /// iptables, nftables, conntrack, iproute2 and nfacct for the kernel
    /// check, installed with apt-get when run as root. Never fatal: without
    /// them (or without root) the check is skipped and says why.
    fn ensure_kernel_tools(&self) {
        let have = |tool: &str| {
            Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .stdout(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false)
        };
        let missing: Vec<&str> = [
            ("ip", "iproute2"),
            ("nft", "nftables"),
            ("iptables-restore", "iptables"),
            ("conntrack", "conntrack"),
            ("nfacct", "nfacct"),
        ]
        .into_iter()
        .filter(|(tool, _)| !have(tool))
        .map(|(_, pkg)| pkg)
        .collect();
        if missing.is_empty() || !is_root() {
            return;
        }
        say(&format!(
            "installing Debian's {} (the kernel check loads kpv's rules into netfilter in network namespaces)",
            missing.join(", ")
        ));
        // Wait for another apt-get to finish rather than fail at once.
        let lock = ["-o", "DPkg::Lock::Timeout=600"];
        let ok = run(Command::new("apt-get")
            .args(lock)
            .arg("update")
            .env("DEBIAN_FRONTEND", "noninteractive"))
            && run(Command::new("apt-get")
                .args(lock)
                .args(["install", "-y", "--no-install-recommends"])
                .args(&missing)
                .env("DEBIAN_FRONTEND", "noninteractive"));
        if !ok {
            say("apt-get could not install them; the kernel check will say what is missing");
        }
    }
}

/// Root, as the kernel check and Debian's packages need.
fn is_root() -> bool {
    output_of(Command::new("id").arg("-u"))
        .map(|s| s.trim() == "0")
        .unwrap_or(false)
}

/// `kpv-kernelcheck`: kpv's rules in the kernel, flows against kpv trace.
/// Streams its output; counts its closing `kernelcheck: N passed, N failed`
/// line. A machine that cannot run it (exit code 3, not root, no
/// CAP_NET_ADMIN, tools missing) counts nothing, with its one-line reason.
fn kernel_check(tools: &Tools, args: &[String]) -> Count {
    let mut cmd = tools.cmd("cargo");
    cmd.args(["run", "-q", "-p", "kpv-kernelcheck", "--", "run"]);
    cmd.args(args);
    say(&format!("running {}", describe(&cmd)));
    let mut child = match cmd.stdout(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) => {
            say(&format!("could not start: {e}"));
            return Count {
                passed: 0,
                failed: 1,
            };
        }
    };
    let mut count = None;
    let mut skipped = None;
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            if let Some(rest) = line.strip_prefix("kernelcheck: skipped: ") {
                skipped = Some(rest.to_string());
            } else if let Some(rest) = line.strip_prefix("kernelcheck: ") {
                let num = |word: &str| -> Option<u64> {
                    let words: Vec<&str> = rest.split([' ', ',']).collect();
                    let i = words.iter().position(|w| *w == word)?;
                    words.get(i.checked_sub(1)?)?.parse().ok()
                };
                if let (Some(p), Some(f)) = (num("passed"), num("failed")) {
                    count = Some(Count {
                        passed: p,
                        failed: f,
                    });
                }
            }
        }
    }
    let status = child.wait().ok().and_then(|s| s.code());
    if let Some(reason) = skipped.filter(|_| status == Some(3)) {
        say(&format!("kernel check skipped: {reason}"));
        return Count::default();
    }
    match (count, status) {
        (Some(c), Some(0 | 1)) => c,
        (Some(c), _) => Count {
            passed: c.passed,
            failed: c.failed.max(1),
        },
        (None, _) => Count {
            passed: 0,
            failed: 1,
        },
    }
}

fn serve(tools: &Tools, args: &[String]) {
    tools.ensure_web();
    let mut cmd = tools.cmd("trunk");
    cmd.args(["serve", "--offline", "--address", "127.0.0.1"]);
    cmd.args([
        "--port",
        &flag_value(args, "--port").unwrap_or_else(|| "8080".into()),
    ]);
    say("serving on http://127.0.0.1:8080/ (Ctrl-C stops)");
    if !run(&mut cmd) {
        exit(1);
    }
}

/// The release build of the site and of its embed build in `embed/`
/// (nightly settings from `pipeline`), then their precompressed `.gz`/`.br`
/// files.
fn trunk_build(tools: &Tools, public_url: &str, dist: &str) -> bool {
    if pipeline::nightly_wanted() {
        say(&format!(
            "release .wasm with {} (build-std, immediate abort, optimize_for_size, no Debug formatting)",
            pipeline::NIGHTLY
        ));
    }
    let mut cmd = tools.cmd("trunk");
    cmd.args([
        "build",
        "--release",
        "--offline",
        "--minify",
        "--public-url",
        public_url,
        "--dist",
        dist,
    ]);
    pipeline::apply(&mut cmd);
    split_flags(&mut cmd, "");
    if !(run(&mut cmd) && split(tools, dist) && embed_build(tools, public_url, dist)) {
        return false;
    }
    match size::precompress(Path::new(dist)) {
        Ok(n) => {
            say(&format!(
                "wrote {n} precompressed files (.gz, .br) in {dist} and {dist}/embed"
            ));
            true
        }
        Err(e) => {
            say(&format!("precompressing {dist}: {e}"));
            false
        }
    }
}

/// The embed build (`embed.html`: the web crate without its `full` feature)
/// into `embed/` of the same output folder, served under `<public-url>embed/`.
fn embed_build(tools: &Tools, public_url: &str, dist: &str) -> bool {
    let url = format!("{}/embed/", public_url.trim_end_matches('/'));
    let out = Path::new(dist).join("embed");
    let mut cmd = tools.cmd("trunk");
    cmd.args([
        "build",
        "--release",
        "--offline",
        "--minify",
        "--public-url",
        &url,
        "--dist",
        &out.display().to_string(),
        "embed.html",
        "--no-default-features",
    ]);
    pipeline::apply(&mut cmd);
    split_flags(&mut cmd, "embed,");
    if !(run(&mut cmd) && split(tools, &out.display().to_string())) {
        return false;
    }
    match poster::write_all(&tools.root, &tools.root.join(&out).join("posters")) {
        Ok(n) => {
            say(&format!("wrote {n} posters in {}/posters", out.display()));
            true
        }
        Err(e) => {
            say(&format!("writing the posters: {e}"));
            false
        }
    }
}

/// The web crate's split points on, and cargo's output linked with the
/// relocations the split reads (appended to the wasm32 flags, never
/// replacing them).
fn split_flags(cmd: &mut Command, features: &str) {
    cmd.args(["--features", &format!("{features}{}", split::FEATURE)]);
    let var = "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS";
    let before = cmd
        .get_envs()
        .find(|(k, _)| *k == var)
        .and_then(|(_, v)| v)
        .map(|v| v.to_string_lossy().into_owned());
    let flags = match before {
        Some(b) if !b.is_empty() => format!("{b} {}", split::EMIT_RELOCS),
        _ => split::EMIT_RELOCS.to_string(),
    };
    cmd.env(var, flags);
}

/// Cut the split points of the site trunk has just written into `dist` out
/// of its `.wasm` (see `split.rs`).
fn split(tools: &Tools, dist: &str) -> bool {
    let target = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| tools.root.join("target"));
    let input = target.join(WASM_TARGET).join("release/kpv-web.wasm");
    let dist = tools.root.join(dist);
    let cmd = |program: &str| tools.cmd(program);
    match split::split_site(
        &input,
        &dist,
        &["--low-memory-unused", "--zero-filled-memory"],
        &|c| run(c),
        &cmd,
    ) {
        Ok(files) => {
            say(&format!(
                "split {} into its first load and {} file(s) loaded on first use: {}",
                dist.display(),
                files.len(),
                files.join(", ")
            ));
            true
        }
        Err(e) => {
            say(&format!("splitting {}: {e}", dist.display()));
            false
        }
    }
}

/// twiggy's top 20 of the full app's release `.wasm` as wasm-bindgen wrote it
/// (before wasm-opt, so the function names are kept). The full app is built
/// first (cheap when it was the last build; the embed build writes the same
/// paths). The name section itself is left out of the list: it is never
/// shipped.
fn twiggy_top(tools: &Tools) -> bool {
    let target = env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| tools.root.join("target"));
    let candidates = [
        target.join("wasm-bindgen/release/kpv-web_bg.wasm"),
        target.join(format!("{WASM_TARGET}/release/kpv-web.wasm")),
    ];
    tools.ensure_web();
    let out = target.join("twiggy-site");
    let mut build = tools.cmd("trunk");
    build
        .args(["build", "--release", "--offline", "--dist"])
        .arg(&out)
        .arg("index.html");
    pipeline::apply(&mut build);
    if !run(&mut build) {
        return false;
    }
    let Some(wasm) = candidates.iter().find(|p| p.exists()) else {
        say("no release .wasm found after the build");
        return false;
    };
    let mut cmd = tools.cmd("twiggy");
    cmd.args(["top", "-n", "22"]).arg(wasm);
    say(&format!("running {}", describe(&cmd)));
    let Some(out) = output_of(&mut cmd) else {
        say("twiggy failed");
        return false;
    };
    for line in out
        .lines()
        .filter(|l| !l.contains("subsection") && !l.contains("custom section"))
    {
        println!("{line}");
    }
    true
}

/// The split points exist only in the release build's feature sets (`split`
/// on wasm32, with the full app and with the embed), so clippy checks them
/// there too.
fn split_clippy(tools: &Tools) -> Count {
    let full = format!("full,{}", split::FEATURE);
    let embed = format!("embed,{}", split::FEATURE);
    let ok = [full, embed].iter().all(|features| {
        run(tools.cmd("cargo").args([
            "clippy",
            "-p",
            "kpv-web",
            "--no-default-features",
            "--features",
            features,
            "--target",
            WASM_TARGET,
            "--",
            "-D",
            "warnings",
        ]))
    });
    check(ok)
}

/// Clippy on the web crate as the embed build compiles it (`full` off), so
/// code left unused there is caught too.
fn embed_clippy(tools: &Tools) -> Count {
    check(run(tools.cmd("cargo").args([
        "clippy",
        "-p",
        "kpv-web",
        "--no-default-features",
        "--features",
        "embed",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])))
}

/// Counts of one suite.
#[derive(Default, Clone, Copy)]
struct Count {
    passed: u64,
    failed: u64,
}

/// Run a command, stream its stdout, and count `test result:` lines of cargo
/// test / wasm-bindgen-test. A failing command with no failed test counts one.
fn cargo_tests(cmd: &mut Command) -> Count {
    say(&format!("running {}", describe(cmd)));
    let mut count = Count::default();
    let child = cmd.stdout(Stdio::piped()).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            say(&format!("could not start: {e}"));
            return Count {
                passed: 0,
                failed: 1,
            };
        }
    };
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            if let Some(rest) = line.trim().strip_prefix("test result: ") {
                // "ok. 11 passed; 0 failed; 0 ignored; ..."
                let num = |word: &str| -> u64 {
                    rest.split(';')
                        .find_map(|part| {
                            let mut it = part.split_whitespace().rev();
                            (it.next() == Some(word))
                                .then(|| it.next().and_then(|n| n.parse().ok()))
                                .flatten()
                        })
                        .unwrap_or(0)
                };
                count.passed += num("passed");
                count.failed += num("failed");
            }
        }
    }
    let ok = child.wait().map(|s| s.success()).unwrap_or(false);
    if !ok && count.failed == 0 {
        count.failed = 1;
    }
    count
}

fn check(ok: bool) -> Count {
    if ok {
        Count {
            passed: 1,
            failed: 0,
        }
    } else {
        Count {
            passed: 0,
            failed: 1,
        }
    }
}

/// Playwright's counts from its JSON report.
fn playwright(tools: &Tools) -> Count {
    let e2e = tools.root.join("tests/e2e");
    let report = e2e.join("artifacts/report.json");
    let _ = fs::remove_file(&report);
    let ok = run(tools
        .cmd("npx")
        .args(["playwright", "test"])
        .current_dir(&e2e)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1"));
    let text = fs::read_to_string(&report).unwrap_or_default();
    let stat = |key: &str| -> u64 {
        text.find(&format!("\"{key}\":"))
            .and_then(|i| {
                let rest = &text[i + key.len() + 3..];
                let digits: String = rest
                    .trim_start()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                digits.parse().ok()
            })
            .unwrap_or(0)
    };
    let mut c = Count {
        passed: stat("expected") + stat("flaky"),
        failed: stat("unexpected"),
    };
    if !ok && c.failed == 0 {
        c.failed = 1;
    }
    c
}

fn test(tools: &Tools) {
    let started = Instant::now();
    tools.ensure_web();
    tools.ensure_browser_tests();
    tools.ensure_kernel_tools();
    let mut suites: Vec<(&str, Count)> = Vec::new();
    let mut add = |name: &'static str, c: Count| {
        say(&format!("{name}: {} passed, {} failed", c.passed, c.failed));
        suites.push((name, c));
    };
    add(
        "rustfmt",
        check(run(tools.cmd("cargo").args(["fmt", "--all", "--check"]))),
    );
    add(
        "clippy",
        check(run(tools.cmd("cargo").args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]))),
    );
    add("clippy (embed build)", embed_clippy(tools));
    add("clippy (split points, wasm32)", split_clippy(tools));
    add(
        "kpv-core for wasm32",
        check(run(tools.cmd("cargo").args([
            "check",
            "-p",
            "kpv-core",
            "--no-default-features",
            "--target",
            WASM_TARGET,
        ]))),
    );
    add(
        "cargo test",
        cargo_tests(tools.cmd("cargo").args(["test", "--workspace"])),
    );
    add("kernel check (netfilter)", kernel_check(tools, &[]));
    add(
        "wasm-bindgen-test (Chromium)",
        cargo_tests(
            tools
                .cmd("cargo")
                .args(["test", "-p", "kpv-web", "--target", WASM_TARGET])
                .env("CHROMEDRIVER", "/usr/bin/chromedriver")
                .current_dir(tools.root.join("web")),
        ),
    );
    let built = trunk_build(tools, "/", "dist");
    add("trunk build --release", check(built));
    add(
        "download size (budgets, gzip -9)",
        check(built && size::check(Path::new("dist"))),
    );
    let sub_dist = format!("target/site{SUB_PATH}");
    let sub_built = trunk_build(tools, SUB_PATH, &sub_dist);
    add("trunk build --release (sub-path)", check(sub_built));
    if built && sub_built {
        add("playwright (Chromium)", playwright(tools));
    } else {
        add(
            "playwright (Chromium)",
            Count {
                passed: 0,
                failed: 1,
            },
        );
    }
    let total = suites.iter().fold(Count::default(), |a, (_, c)| Count {
        passed: a.passed + c.passed,
        failed: a.failed + c.failed,
    });
    eprintln!();
    for (name, c) in &suites {
        eprintln!(
            "  {:<36} {:>5} passed {:>3} failed",
            name, c.passed, c.failed
        );
    }
    eprintln!("  took {:.0} s", started.elapsed().as_secs_f64());
    println!("{} passed, {} failed", total.passed, total.failed);
    if total.failed > 0 {
        exit(1);
    }
}
