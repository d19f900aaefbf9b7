//! The posters of the click-to-load embed: one small SVG per preset, drawn
//! from kpv-core's own layout of the preset (the client, the load
//! balancer, the nodes, the Services and the Pods with their names and
//! addresses, as the app places them), written beside the embed build as
//! `embed/posters/KEY.svg`. `kpv-embed.js` shows it, with a Play button,
//! until the reader clicks; only then is the app itself loaded.
//!
//! Names and addresses only, no words: one picture serves every language.
//! Light and dark follow the reader's `prefers-color-scheme`.

use kpv_core::view::scene::{Rect, Scene};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// The presets made of more than one file (their key, their files under
/// `tests/`), as the app's preset index lists them; every other preset is
/// `tests/scenarios/KEY.yaml`.
const JOINED: &[(&str, &[&str])] = &[(
    "article-ingress",
    &["http/article-cluster.yaml", "http/article-ingress.yaml"],
)];

/// Write a poster for every preset into `out`; how many were written.
pub fn write_all(root: &Path, out: &Path) -> Result<usize, String> {
    fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut presets: Vec<(String, String)> = Vec::new();
    let dir = root.join("tests/scenarios");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    for p in files {
        let key = p.file_stem().map(|s| s.to_string_lossy().into_owned());
        let text = fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        presets.extend(key.map(|k| (k, text)));
    }
    for (key, parts) in JOINED {
        let mut text = String::new();
        for part in *parts {
            let p = root.join("tests").join(part);
            text.push_str(&fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?);
            text.push_str("\n---\n");
        }
        presets.push((key.to_string(), text));
    }
    for (key, text) in &presets {
        let p = out.join(format!("{key}.svg"));
        fs::write(&p, of_yaml(text)).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(presets.len())
}

/// The poster of a cluster given as YAML.
pub fn of_yaml(text: &str) -> String {
    let (cluster, _) = kpv_core::Code::ALL.parse(text);
    let slices = kpv_core::net::controller::steady_slices(&cluster);
    let scene = kpv_core::view::scene::layout(&cluster, &slices);
    svg(&scene, cluster.proxy.mode.as_str())
}

/// Colours of the app's two themes.
const STYLE: &str = "text{font:16px ui-monospace,monospace;fill:#1f2937}\
.t{font:600 17px system-ui,sans-serif}\
rect{fill:#fff;stroke:#94a3b8;stroke-width:1.5}\
.n{fill:#f1f5f9}.s{fill:#eef2ff;stroke:#6366f1}.p{fill:#ecfdf5;stroke:#10b981}\
.k{fill:#e2e8f0}line,path{stroke:#94a3b8;stroke-width:2;fill:none}path{stroke:#6366f1;opacity:.5}\
@media(prefers-color-scheme:dark){text{fill:#e5e7eb}rect{fill:#1f2937;stroke:#64748b}\
.n{fill:#111827}.s{fill:#1e1b4b;stroke:#818cf8}.p{fill:#052e16;stroke:#34d399}.k{fill:#334155}\
line{stroke:#64748b}path{stroke:#818cf8}}";

/// The scene as an SVG poster (the strip below the nodes left out).
pub fn svg(s: &Scene, mode: &str) -> String {
    let bottom = s
        .nodes
        .iter()
        .map(|n| n.rect.y + n.rect.h)
        .chain(s.pods.iter().map(|p| p.rect.y + p.rect.h))
        .fold(s.client.y + s.client.h, f64::max)
        + 8.0;
    let mut o = String::new();
    let _ = write!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\"><style>{STYLE}</style>",
        num(s.width),
        num(bottom),
        num(s.width),
        num(bottom)
    );
    for k in &s.links {
        let _ = write!(
            o,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            num(k.from.x),
            num(k.from.y),
            num(k.to.x),
            num(k.to.y)
        );
    }
    for e in &s.edges {
        let from = s
            .services
            .iter()
            .find(|x| x.id == e.service)
            .map(|x| x.rect);
        let to = s.pods.iter().find(|p| p.id == e.pod).map(|p| p.rect);
        if let (Some(a), Some(b)) = (from, to) {
            let (ax, ay, bx) = (a.x + a.w / 2.0, a.y + a.h, b.x + b.w - 20.0);
            let _ = write!(
                o,
                "<path d=\"M{} {} C{} {} {} {} {} {}\"/>",
                num(ax),
                num(ay),
                num(ax),
                num(ay + 80.0),
                num(bx),
                num(b.y - 80.0),
                num(bx),
                num(b.y)
            );
        }
    }
    boxed(&mut o, s.client, "", &["198.51.100.7"]);
    if let Some(r) = s.load_balancer {
        boxed(&mut o, r, "", &[&s.load_balancer_ips.join(", ")]);
    }
    for n in &s.nodes {
        boxed(&mut o, n.rect, "n", &[]);
        label(
            &mut o,
            n.rect.x + 10.0,
            n.rect.y + 24.0,
            &n.name,
            n.proxy.x - n.rect.x - 16.0,
            true,
        );
        boxed(&mut o, n.proxy, "k", &[]);
        label(
            &mut o,
            n.proxy.x + 8.0,
            n.proxy.y + 18.0,
            mode,
            n.proxy.w - 12.0,
            false,
        );
        boxed(&mut o, n.eth, "", &[&format!("eth0 {}", n.ip)]);
    }
    for v in &s.services {
        named(&mut o, v.rect, "s", (&v.id.name, &v.cluster_ip), 10.0);
    }
    if let Some(m) = s.more_services {
        boxed(&mut o, m.rect, "s", &[&format!("+{}", m.count)]);
    }
    for p in &s.pods {
        named(&mut o, p.rect, "p", (&p.id.name, &p.ip), 8.0);
    }
    o.push_str("</svg>\n");
    o
}

/// A box of class `class` with a name (bold) and an address, `inset` from
/// its left side.
fn named(o: &mut String, r: Rect, class: &str, (name, address): (&str, &str), inset: f64) {
    boxed(o, r, class, &[]);
    let w = r.w - 2.0 * inset;
    label(o, r.x + inset, r.y + 21.0, name, w, true);
    label(o, r.x + inset, r.y + 41.0, address, w, false);
}

/// A box of class `class`, with `lines` of text inside from its top.
fn boxed(o: &mut String, r: Rect, class: &str, lines: &[&str]) {
    let _ = write!(
        o,
        "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\"/>",
        num(r.x),
        num(r.y),
        num(r.w),
        num(r.h)
    );
    for (i, line) in lines.iter().enumerate() {
        label(
            o,
            r.x + 10.0,
            r.y + 22.0 + 20.0 * i as f64,
            line,
            r.w - 20.0,
            false,
        );
    }
}

/// A text at (x, y), cut with `…` to `w` units (0.62 em a character).
fn label(o: &mut String, x: f64, y: f64, text: &str, w: f64, title: bool) {
    let px = if title { 17.0 } else { 16.0 };
    let fit = ((w / (px * 0.62)).floor() as usize).max(4);
    let shown: String = if text.chars().count() > fit {
        text.chars().take(fit - 1).chain(['…']).collect()
    } else {
        text.to_string()
    };
    let _ = write!(
        o,
        "<text{} x=\"{}\" y=\"{}\">{}</text>",
        if title { " class=\"t\"" } else { "" },
        num(x),
        num(y),
        escape(&shown)
    );
}

/// A coordinate with at most one decimal.
fn num(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every preset's poster is small, names every Pod and Service the
    /// layout draws, and escapes what it writes.
    #[test]
    fn every_preset_has_a_small_poster_with_its_boxes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let out = std::env::temp_dir().join(format!("kpv-posters-{}", std::process::id()));
        let n = write_all(&root, &out).expect("posters written");
        assert!(n >= 12, "{n} posters");
        let nodeport = fs::read_to_string(out.join("nodeport.svg")).expect("nodeport poster");
        assert!(nodeport.starts_with("<svg xmlns="), "{nodeport}");
        assert!(nodeport.contains("prefers-color-scheme:dark"));
        for entry in fs::read_dir(&out).expect("posters") {
            let p = entry.expect("entry").path();
            let bytes = fs::metadata(&p).expect("size").len();
            assert!(bytes < 24_000, "{}: {bytes} B", p.display());
        }
        let _ = fs::remove_dir_all(&out);
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {app: a}}\nspec: {containers: [{name: c, image: i}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a-svc}\nspec: {selector: {app: a}, ports: [{port: 80}]}\n";
        let svg = of_yaml(text);
        assert!(svg.contains(">a-svc</text>"), "{svg}");
        assert!(svg.contains(">a</text>"), "{svg}");
        assert_eq!(escape("<a&b>"), "&lt;a&amp;b&gt;");
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.25), "12.3");
    }
}
