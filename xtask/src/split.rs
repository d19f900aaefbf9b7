//! Code loaded on first use: after `trunk build --release` has written a
//! site, cut the web crate's split points (`web/src/modes.rs`: the userspace,
//! IPVS and nftables compilers) out of its `.wasm` into files of their own.
//!
//! Trunk 0.21 runs cargo, wasm-bindgen and wasm-opt in one go and knows
//! nothing of split points, so this step redoes the last two from cargo's
//! output (linked with `--emit-relocs`, which the split needs):
//! `wasm_split_cli_support` splits it into the main module, one `.wasm` per
//! split point (plus shared chunks) and a small JS module that fetches them;
//! wasm-bindgen then writes the main module's JS glue with LLD's exports
//! kept (the split files import them), and wasm-opt optimises each `.wasm`
//! as trunk would. The results replace trunk's `.js` and `_bg.wasm` under
//! the same names, so the page and `loader.js` are untouched; the split
//! files are named after their content, so a host's cache never mixes a new
//! main module with an old split file. Nothing here decides what is split:
//! the web crate's `#[wasm_split]` functions do.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The link flag the split needs in cargo's output (relocations).
pub const EMIT_RELOCS: &str = "-Clink-args=--emit-relocs";

/// The cargo feature of the web crate that turns its split points on.
pub const FEATURE: &str = "split";

/// The JS module that loads the split files (imported by the main JS).
const LINK_MODULE: &str = "__wasm_split.js";

/// True for the `.wasm` files [`split_site`] writes, fetched on first use
/// (not part of the first load; its small JS module is, the main JS imports
/// it).
pub fn is_on_demand(name: &str) -> bool {
    (name.starts_with("split_") || name.starts_with("chunk_")) && name.ends_with(".wasm")
}

/// What a step of the split did wrong.
#[derive(Debug)]
pub struct SplitError(pub String);

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err(what: impl std::fmt::Display) -> SplitError {
    SplitError(what.to_string())
}

/// FNV-1a, 64 bits, as 16 hex digits: a content name for cache busting.
pub fn content_hash(data: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The `kpv-web-<hash>` stem of the site's wasm-bindgen JS in `dist`.
fn bindgen_stem(dist: &Path) -> Result<String, SplitError> {
    let mut stems: Vec<String> = fs::read_dir(dist)
        .map_err(|e| err(format!("{}: {e}", dist.display())))?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix("_bg.wasm").map(str::to_string))
        .collect();
    stems.sort();
    match stems.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(err(format!(
            "{}: expected one *_bg.wasm written by trunk, found {}",
            dist.display(),
            stems.len()
        ))),
    }
}

/// Split the site in `dist`, built from cargo's `input` (the `.wasm` cargo
/// linked, with relocations). `run` runs a tool and says whether it worked;
/// `wasm_opt_params` are the main module's wasm-opt flags. Returns the split
/// files written, by name.
pub fn split_site(
    input: &Path,
    dist: &Path,
    wasm_opt_params: &[&str],
    run: &dyn Fn(&mut Command) -> bool,
    cmd: &dyn Fn(&str) -> Command,
) -> Result<Vec<String>, SplitError> {
    let done = split_in(input, dist, wasm_opt_params, run, cmd);
    // The scratch folder never stays in the site, whatever happened.
    let _ = fs::remove_dir_all(dist.join(WORK_DIR));
    done
}

/// Scratch folder of [`split_site`], inside `dist` (removed when it ends).
const WORK_DIR: &str = ".split-work";

fn split_in(
    input: &Path,
    dist: &Path,
    wasm_opt_params: &[&str],
    run: &dyn Fn(&mut Command) -> bool,
    cmd: &dyn Fn(&str) -> Command,
) -> Result<Vec<String>, SplitError> {
    let stem = bindgen_stem(dist)?;
    let wasm = fs::read(input).map_err(|e| err(format!("{}: {e}", input.display())))?;
    let work = dist.join(WORK_DIR);
    let _ = fs::remove_dir_all(&work);
    let parts = work.join("parts");
    fs::create_dir_all(&parts).map_err(|e| err(format!("{}: {e}", parts.display())))?;
    let main_in = work.join("main.wasm");
    let main_module = format!("./{stem}.js");
    let link_name = format!("./{LINK_MODULE}");
    let split = wasm_split_cli_support::transform({
        let mut opts = wasm_split_cli_support::Options::new(&wasm);
        opts.output_dir = &parts;
        opts.main_out_path = &main_in;
        opts.main_module = &main_module;
        opts.link_name = &link_name;
        opts
    })
    .map_err(|e| err(format!("splitting {}: {e}", input.display())))?;

    // The main module's JS glue, with the exports the split files import.
    let bindgen = work.join("bindgen");
    let ok = run(cmd("wasm-bindgen")
        .args(["--target", "web", "--no-typescript", "--keep-lld-exports"])
        .arg("--out-name")
        .arg(&stem)
        .arg("--out-dir")
        .arg(&bindgen)
        .arg(&main_in));
    if !ok {
        return Err(err("wasm-bindgen on the split main module failed"));
    }
    let main_wasm = bindgen.join(format!("{stem}_bg.wasm"));
    let ok = run(cmd("wasm-opt")
        .arg("-Oz")
        .args(wasm_opt_params)
        .arg(&main_wasm)
        .arg("-o")
        .arg(&main_wasm));
    if !ok {
        return Err(err("wasm-opt on the split main module failed"));
    }

    // Each split file, optimised and named after its content.
    let mut link_js = fs::read_to_string(parts.join(LINK_MODULE))
        .map_err(|e| err(format!("{LINK_MODULE}: {e}")))?;
    let mut written = Vec::new();
    let mut modules: Vec<PathBuf> = split.split_modules.clone();
    modules.sort();
    for module in &modules {
        let ok = run(cmd("wasm-opt").arg("-Oz").arg(module).arg("-o").arg(module));
        if !ok {
            return Err(err(format!("wasm-opt on {} failed", module.display())));
        }
        let name = module
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| err(format!("{}: not a file name", module.display())))?;
        let data = fs::read(module).map_err(|e| err(format!("{}: {e}", module.display())))?;
        let hashed = format!("{name}-{}.wasm", content_hash(&data));
        let quoted = format!("\"./{name}.wasm\"");
        if !link_js.contains(&quoted) {
            return Err(err(format!("{LINK_MODULE} does not name {name}.wasm")));
        }
        link_js = link_js.replace(&quoted, &format!("\"./{hashed}\""));
        fs::write(dist.join(&hashed), &data).map_err(|e| err(format!("{hashed}: {e}")))?;
        written.push(hashed);
    }
    let link_hashed = format!("__wasm_split-{}.js", content_hash(link_js.as_bytes()));
    fs::write(dist.join(&link_hashed), &link_js).map_err(|e| err(format!("{link_hashed}: {e}")))?;
    written.push(link_hashed.clone());

    // The main JS imports the link module by the name given to the split;
    // only its `import` lines change (the wasm's import object keeps the
    // module name the `.wasm` asks for).
    let js = fs::read_to_string(bindgen.join(format!("{stem}.js")))
        .map_err(|e| err(format!("{stem}.js: {e}")))?;
    let js = rename_import(&js, &link_name, &format!("./{link_hashed}"))
        .ok_or_else(|| err(format!("{stem}.js does not import {link_name}")))?;
    fs::write(dist.join(format!("{stem}.js")), js).map_err(|e| err(format!("{stem}.js: {e}")))?;
    fs::copy(&main_wasm, dist.join(format!("{stem}_bg.wasm")))
        .map_err(|e| err(format!("{stem}_bg.wasm: {e}")))?;
    Ok(written)
}

/// `js` with its `import … from "<from>"` lines importing `to` instead, or
/// None when no line imports `from`.
fn rename_import(js: &str, from: &str, to: &str) -> Option<String> {
    let mut found = false;
    let mut out = String::with_capacity(js.len());
    for line in js.split_inclusive('\n') {
        let is_import = line.starts_with("import ")
            && [format!("\"{from}\""), format!("'{from}'")]
                .iter()
                .any(|q| line.contains(q.as_str()));
        if is_import {
            found = true;
            out.push_str(
                &line
                    .replace(&format!("\"{from}\""), &format!("\"{to}\""))
                    .replace(&format!("'{from}'"), &format!("'{to}'")),
            );
        } else {
            out.push_str(line);
        }
    }
    found.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_is_fnv1a() {
        // FNV-1a 64 of "" and "a", as published with the algorithm.
        assert_eq!(content_hash(b""), "cbf29ce484222325");
        assert_eq!(content_hash(b"a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn only_import_lines_are_renamed() {
        let js = "import * as import1 from \"./__wasm_split.js\"\n\
                  import { x } from './other.js';\n\
                  const imports = { \"./__wasm_split.js\": import1 };\n";
        let out = rename_import(js, "./__wasm_split.js", "./__wasm_split-00ff.js");
        assert_eq!(
            out.as_deref(),
            Some(
                "import * as import1 from \"./__wasm_split-00ff.js\"\n\
                 import { x } from './other.js';\n\
                 const imports = { \"./__wasm_split.js\": import1 };\n"
            )
        );
        assert_eq!(
            rename_import("const a = 1;\n", "./__wasm_split.js", "./x.js"),
            None
        );
    }

    #[test]
    fn a_failed_split_leaves_no_scratch_folder_in_the_site() {
        let dist = std::env::temp_dir().join(format!("kpv-split-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dist);
        fs::create_dir_all(&dist).unwrap();
        fs::write(dist.join("kpv-web-00_bg.wasm"), b"trunk's").unwrap();
        let input = dist.join("linked.wasm");
        fs::write(&input, b"not a wasm module").unwrap();
        let never = |_: &mut Command| panic!("no tool runs after a failed split");
        let r = split_site(&input, &dist, &[], &never, &|c| Command::new(c));
        assert!(r.is_err());
        assert!(!dist.join(WORK_DIR).exists());
        let _ = fs::remove_dir_all(&dist);
    }

    #[test]
    fn split_files_are_told_apart_from_the_first_load() {
        assert!(is_on_demand("split_kpv_ipvs-0123456789abcdef.wasm"));
        assert!(is_on_demand("chunk_3_kpv_ipvs-0123.wasm"));
        assert!(!is_on_demand("__wasm_split-0123.js"));
        assert!(!is_on_demand("kpv-web-d030c86398c3eb42_bg.wasm"));
        assert!(!is_on_demand("loader.js"));
    }
}
