//! The download's size: each shipped file of a built site (and of its
//! `embed/` site when there is one) raw, gzip -9 and brotli; the budgets the
//! test command enforces; the precompressed `.gz` and `.br` files written
//! beside the shipped files; twiggy's breakdown of the `.wasm` on request.
//!
//! Sizes are deterministic (same input, same compressor settings, no
//! timestamps in the gzip header), so the budget check is a test, not a
//! benchmark. Nothing here changes a shipped file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Issue 16's budget for the full app: 480 KB gzip -9 of `.wasm` + `.js` +
/// `.css` + `index.html` + loader.
pub const FULL_BUDGET: u64 = 480 * 1024;
/// Issue 16's budget for the embed build (`embed/`).
pub const EMBED_BUDGET: u64 = 360 * 1024;
/// What a click-to-load embed costs its page before the click: the host
/// script and the largest poster (`embed/posters/`), gzip -9.
pub const POSTER_BUDGET: u64 = 60_000;

// Both sites are within their budgets, which the test command enforces
// exactly. Their first loads (the files above; the split files fetched on
// first use are listed apart and not counted) measured 487,143 B (full app)
// and 368,418 B (embed) with every lever in: the nightly pipeline,
// fixed-point formatting, presets, lessons and the Korean words fetched on
// demand, no serde_json or data-encoding, the split points (the five
// modes, HTTP routing with its lowering, share-link reading, the parts
// below the first screen and the DNS tab), the full app's own words, styles
// (full.css: the side column, compare view, lessons, labs, editor), keys
// overlay and exports out of
// the embed, small maps as `VecMap`s instead of B-trees, the routing objects
// shared by one `Arc` (no derived deep clone), the embed's routing
// without the lessons' part, the rules panel and `Dataplane::hash_tables`
// full-only, and hop kinds compared with `matches!` (a derived `==` on
// `HopKind` pulled in 2 KB of deep comparison).

/// The files a reader downloads: the app's code, style, page and loader.
const SHIPPED: [&str; 4] = ["wasm", "js", "css", "html"];
/// The script a docs page loads to size its kpv iframes: shipped beside
/// the app for the host page, never loaded by the app itself.
const HOST_SCRIPT: &str = "kpv-embed.js";
/// The files precompressed for hosts that serve `.gz`/`.br` as they are
/// (the page itself is small and often templated by the host).
const PRECOMPRESSED: [&str; 3] = ["wasm", "js", "css"];

/// One shipped file's figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSize {
    pub name: String,
    pub raw: u64,
    pub gzip: u64,
    pub brotli: u64,
}

/// A site's files and totals. The totals (and the budgets) are the first
/// load: `files`. The split files fetched when a reader first needs them
/// (`split.rs`) are listed apart, in `on_demand`.
#[derive(Debug, Default)]
pub struct Site {
    pub files: Vec<FileSize>,
    pub on_demand: Vec<FileSize>,
}

impl Site {
    pub fn raw(&self) -> u64 {
        self.files.iter().map(|f| f.raw).sum()
    }
    pub fn gzip(&self) -> u64 {
        self.files.iter().map(|f| f.gzip).sum()
    }
    pub fn brotli(&self) -> u64 {
        self.files.iter().map(|f| f.brotli).sum()
    }
}

/// CRC-32 (IEEE, reflected), as gzip's trailer needs.
fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, slot) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *slot = c;
    }
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// `data` as a gzip file at level 9: a 10-byte header with no name and no
/// time (so the output depends on the input only), the deflate stream, CRC-32
/// and length.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    // Magic, deflate, no flags, mtime 0, "maximum compression", OS unknown.
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 9));
    out.extend(crc32(data).to_le_bytes());
    out.extend((data.len() as u32).to_le_bytes());
    out
}

/// `data` compressed with brotli at its highest quality (11) and a 4 MB
/// window, as hosts precompress static files.
pub fn brotli(data: &[u8]) -> Vec<u8> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    let mut out = Vec::new();
    let mut input = data;
    // Writing into a Vec cannot fail.
    let _ = brotli::BrotliCompress(&mut input, &mut out, &params);
    out
}

fn has_ext(p: &Path, exts: &[&str]) -> bool {
    p.is_file()
        && p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
}

fn files_in(dir: &Path, exts: &[&str]) -> Result<Vec<PathBuf>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| has_ext(p, exts))
        .collect();
    files.sort();
    Ok(files)
}

/// Measure the shipped files directly in `dir` (not its sub-folders).
pub fn measure(dir: &Path) -> Result<Site, String> {
    let mut site = Site::default();
    for f in files_in(dir, &SHIPPED)? {
        let data = fs::read(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == HOST_SCRIPT {
            continue;
        }
        let list = if crate::split::is_on_demand(&name) {
            &mut site.on_demand
        } else {
            &mut site.files
        };
        list.push(FileSize {
            name,
            raw: data.len() as u64,
            gzip: gzip(&data).len() as u64,
            brotli: brotli(&data).len() as u64,
        });
    }
    if site.files.is_empty() {
        return Err(format!("no shipped files in {}", dir.display()));
    }
    Ok(site)
}

/// Write `NAME.gz` and `NAME.br` beside every `.wasm`, `.js` and `.css` of a
/// built site and of its `embed/` site, for hosts that serve precompressed
/// files (nginx `gzip_static`/`brotli_static`, Caddy `precompressed`).
pub fn precompress(dist: &Path) -> Result<usize, String> {
    let mut written = 0;
    let embed = dist.join("embed");
    let dirs: Vec<&Path> = if embed.is_dir() {
        vec![dist, &embed]
    } else {
        vec![dist]
    };
    for dir in dirs {
        for f in files_in(dir, &PRECOMPRESSED)? {
            let data = fs::read(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            for (ext, packed) in [("gz", gzip(&data)), ("br", brotli(&data))] {
                let mut name = f.clone().into_os_string();
                name.push(".");
                name.push(ext);
                let write = fs::File::create(&name).and_then(|mut out| out.write_all(&packed));
                write.map_err(|e| format!("cannot write {}: {e}", Path::new(&name).display()))?;
                written += 1;
            }
        }
    }
    Ok(written)
}

/// Print a site's table: one line per file, then the totals.
fn print_site(label: &str, site: &Site) {
    println!("size: {label}");
    println!(
        "size:   {:<44} {:>9} {:>9} {:>9}",
        "file", "raw B", "gzip -9 B", "brotli B"
    );
    for f in &site.files {
        println!(
            "size:   {:<44} {:>9} {:>9} {:>9}",
            f.name, f.raw, f.gzip, f.brotli
        );
    }
    println!(
        "size:   {:<44} {:>9} {:>9} {:>9}",
        "total (first load)",
        site.raw(),
        site.gzip(),
        site.brotli()
    );
    if site.on_demand.is_empty() {
        return;
    }
    println!("size:   loaded on first use (not in the first load):");
    for f in &site.on_demand {
        println!(
            "size:   {:<44} {:>9} {:>9} {:>9}",
            f.name, f.raw, f.gzip, f.brotli
        );
    }
    let sum = |g: fn(&FileSize) -> u64| site.on_demand.iter().map(g).sum::<u64>();
    println!(
        "size:   {:<44} {:>9} {:>9} {:>9}",
        "total (on first use)",
        sum(|f| f.raw),
        sum(|f| f.gzip),
        sum(|f| f.brotli)
    );
}

/// The verdict of one site against its budget: true when within (and how
/// much is to spare), else how far over.
fn judge(label: &str, gzip: u64, budget: u64) -> bool {
    let kb = |b: u64| format!("{:.1} KB", b as f64 / 1024.0);
    if gzip <= budget {
        println!(
            "size: {label}: {gzip} B gzip -9 ({}) within the budget of {budget} B ({}); {} B to spare",
            kb(gzip),
            kb(budget),
            budget - gzip
        );
        true
    } else {
        println!(
            "size: {label}: {gzip} B gzip -9 ({}) is OVER the budget of {budget} B ({}) by {} B ({}): FAILED",
            kb(gzip),
            kb(budget),
            gzip - budget,
            kb(gzip - budget)
        );
        false
    }
}

/// `cargo xtask size`: the full site's table and verdict, then `embed/`'s
/// when it exists. False when a site is over its enforced limit or cannot be
/// read.
pub fn check(dist: &Path) -> bool {
    let mut ok = true;
    match measure(dist) {
        Ok(site) => {
            print_site(&format!("full app ({})", dist.display()), &site);
            ok &= judge("full app", site.gzip(), FULL_BUDGET);
        }
        Err(e) => {
            println!("size: {e}");
            ok = false;
        }
    }
    let embed = dist.join("embed");
    if embed.is_dir() {
        match measure(&embed) {
            Ok(site) => {
                print_site(&format!("embed ({})", embed.display()), &site);
                ok &= judge("embed", site.gzip(), EMBED_BUDGET);
            }
            Err(e) => {
                println!("size: {e}");
                ok = false;
            }
        }
    } else {
        println!(
            "size: no embed build in {} (budget {EMBED_BUDGET} B when it exists)",
            embed.display()
        );
    }
    match before_click(dist) {
        Ok((bytes, largest)) => {
            ok &= judge(
                &format!("click-to-load before the click ({HOST_SCRIPT} + {largest})"),
                bytes,
                POSTER_BUDGET,
            );
        }
        Err(e) => {
            println!("size: {e}");
            ok = false;
        }
    }
    ok
}

/// gzip -9 of the host script plus the largest poster, and that poster's
/// name: what a click-to-load embed's page fetches before its click.
fn before_click(dist: &Path) -> Result<(u64, String), String> {
    let read = |p: &Path| fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let script = gzip(&read(&dist.join(HOST_SCRIPT))?).len() as u64;
    let dir = dist.join("embed/posters");
    let mut largest = (0, String::new());
    for f in files_in(&dir, &["svg"])? {
        let size = gzip(&read(&f)?).len() as u64;
        if size > largest.0 {
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
            largest = (size, name.unwrap_or_default());
        }
    }
    if largest.1.is_empty() {
        return Err(format!("no posters in {}", dir.display()));
    }
    Ok((script + largest.0, format!("posters/{}", largest.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_of_known_inputs() {
        // The check value of CRC-32/ISO-HDLC and two classic strings.
        for (input, want) in [
            (&b""[..], 0u32),
            (b"123456789", 0xCBF4_3926),
            (b"The quick brown fox jumps over the lazy dog", 0x414F_A339),
        ] {
            assert_eq!(crc32(input), want, "{input:?}");
        }
    }

    #[test]
    fn gzip_and_brotli_round_trip_and_are_deterministic() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("line {} of the rules\n", i % 97).into_bytes())
            .collect();
        let gz = gzip(&text);
        assert_eq!(gz, gzip(&text));
        assert_eq!(&gz[..4], &[0x1f, 0x8b, 8, 0]);
        let body = &gz[10..gz.len() - 8];
        let back = miniz_oxide::inflate::decompress_to_vec(body).unwrap_or_default();
        assert_eq!(back, text);
        let trailer = &gz[gz.len() - 8..];
        assert_eq!(trailer[..4], crc32(&text).to_le_bytes());
        assert_eq!(trailer[4..], (text.len() as u32).to_le_bytes());

        let br = brotli(&text);
        assert_eq!(br, brotli(&text));
        let mut out = Vec::new();
        let mut input = &br[..];
        assert!(brotli::BrotliDecompress(&mut input, &mut out).is_ok());
        assert_eq!(out, text);
        assert!(br.len() < gz.len() && gz.len() < text.len() / 10);
    }

    #[test]
    fn precompress_and_measure_a_site() {
        let dir = std::env::temp_dir().join(format!("xtask-size-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let embed = dir.join("embed");
        assert!(fs::create_dir_all(&embed).is_ok());
        let js = "export function f() { return 1; }\n".repeat(200);
        for (path, data) in [
            (dir.join("app.js"), js.as_str()),
            (dir.join("index.html"), "<!DOCTYPE html><title>t</title>"),
            (dir.join("favicon.svg"), "<svg/>"),
            (embed.join("app.css"), "body { margin: 0 }\n"),
        ] {
            assert!(fs::write(path, data).is_ok());
        }
        assert_eq!(precompress(&dir), Ok(4));
        for f in [
            "app.js.gz",
            "app.js.br",
            "embed/app.css.gz",
            "embed/app.css.br",
        ] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        assert!(!dir.join("index.html.gz").exists());
        // Precompressed copies and non-shipped files are not counted.
        let site = measure(&dir).unwrap_or_default();
        let names: Vec<&str> = site.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["app.js", "index.html"]);
        assert_eq!(site.raw(), js.len() as u64 + 31);
        let gz = fs::metadata(dir.join("app.js.gz"))
            .map(|m| m.len())
            .unwrap_or(0);
        assert_eq!(site.files[0].gzip, gz);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn judge_fails_only_above_the_budget() {
        for (gzip, budget, ok) in [(100, 200, true), (200, 200, true), (201, 200, false)] {
            assert_eq!(judge("t", gzip, budget), ok, "{gzip} {budget}");
        }
    }
}
