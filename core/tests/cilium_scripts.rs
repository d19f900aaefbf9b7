//! Fidelity against Cilium's own load-balancer test scripts
//! (`pkg/loadbalancer/tests/testdata/*.txtar` in cilium/cilium), transcribed
//! as data in `tests/cilium/*.txt` (the schema is in that folder's README).
//!
//! Each checkpoint is the objects that exist at one `lb/maps-dump` of a
//! script, the agent's flags as a `cilium-config` ConfigMap and the local
//! Node; kpv's `kpv rules --mode cilium` for that node must print the
//! script's expected dump, modulo ID renumbering (Cilium numbers services,
//! backends and reverse-NAT entries in the order it processed them; kpv in
//! sorted order). IDs are compared by what they stand for: every `ID=`/`BEID=`
//! is replaced by the frontend or backend address it names, the lines are
//! sorted again, and the two dumps must then be equal line for line.

use kpv_core::model::Mode;
use kpv_core::net::modes::{node_planes, render_planes, CompileOptions, Compilers};
use std::collections::BTreeMap;
use std::path::Path;

/// One `== check` of a transcribed script.
struct Check {
    script: String,
    name: String,
    node: String,
    yaml: String,
    expected: Vec<String>,
}

/// Reads one transcribed script: its `# node:` line, its `== file` sections
/// and its `== check NAME: FILES…` sections with the expected dump lines.
fn read_script(stem: &str, text: &str) -> Vec<Check> {
    let mut node = String::new();
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut checks: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    enum In {
        Header,
        File(String),
        Check,
    }
    let mut at = In::Header;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("== file ") {
            let name = rest.trim().to_string();
            files.insert(name.clone(), String::new());
            at = In::File(name);
            continue;
        }
        if let Some(rest) = line.strip_prefix("== check ") {
            let (name, list) = rest
                .split_once(':')
                .unwrap_or_else(|| panic!("{stem}: `== check` without `:` in {line:?}"));
            let list = list.split_whitespace().map(str::to_string).collect();
            checks.push((name.trim().to_string(), list, Vec::new()));
            at = In::Check;
            continue;
        }
        match &at {
            In::Header => {
                if let Some(n) = line.strip_prefix("# node:") {
                    node = n.trim().to_string();
                }
            }
            In::File(name) => {
                let f = files.get_mut(name).expect("the file was inserted above");
                f.push_str(line);
                f.push('\n');
            }
            In::Check => {
                if !line.trim().is_empty() {
                    checks
                        .last_mut()
                        .expect("a check was pushed above")
                        .2
                        .push(line.trim_end().to_string());
                }
            }
        }
    }
    assert!(!node.is_empty(), "{stem}: no `# node:` line");
    checks
        .into_iter()
        .map(|(name, list, expected)| {
            let yaml = list
                .iter()
                .map(|f| {
                    files
                        .get(f)
                        .unwrap_or_else(|| panic!("{stem} {name}: no file {f}"))
                        .clone()
                })
                .collect::<Vec<_>>()
                .join("---\n");
            Check {
                script: stem.to_string(),
                name,
                node: node.clone(),
                yaml,
                expected,
            }
        })
        .collect()
}

/// The value of `key=` in a dump line (up to the next space).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split(' ')
        .find_map(|w| w.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
}

/// A dump with every ID replaced by what it names, sorted: services and
/// reverse-NAT entries by their frontend address, backends by theirs.
fn canonical(lines: &[String]) -> Vec<String> {
    let mut service: BTreeMap<String, String> = BTreeMap::new();
    let mut backend: BTreeMap<String, String> = BTreeMap::new();
    for l in lines {
        if let (Some(id), Some(addr)) = (field(l, "ID"), field(l, "ADDR")) {
            if l.starts_with("SVC:") && id != "0" {
                service.insert(id.to_string(), addr.to_string());
            } else if l.starts_with("BE:") {
                backend.insert(id.to_string(), addr.to_string());
            }
        }
    }
    let name = |map: &BTreeMap<String, String>, id: &str| {
        map.get(id)
            .map_or_else(|| format!("<unknown {id}>"), |a| format!("<{a}>"))
    };
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| {
            if let Some((head, inner)) = l.split_once(" INNER=[") {
                // `MAGLEV: ID=2 INNER=[1(256), 2(255)]`: slot counts per
                // backend, most first, ties by ID: by address instead.
                let id = field(head, "ID").unwrap_or("");
                let mut pairs: Vec<(usize, String)> = inner
                    .trim_end_matches(']')
                    .split(", ")
                    .filter_map(|p| {
                        let (be, n) = p.split_once('(')?;
                        Some((n.trim_end_matches(')').parse().ok()?, name(&backend, be)))
                    })
                    .collect();
                pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                let inner: Vec<String> = pairs.iter().map(|(n, a)| format!("{a}({n})")).collect();
                return format!(
                    "MAGLEV: ID={} INNER=[{}]",
                    name(&service, id),
                    inner.join(", ")
                );
            }
            let svc_ids = l.starts_with("SVC:")
                || l.starts_with("REV:")
                || l.starts_with("AFF:")
                || l.starts_with("MAGLEV:")
                || l.starts_with("SRCRANGE:");
            l.split(' ')
                .map(|w| {
                    if let Some(id) = w.strip_prefix("BEID=") {
                        format!("BEID={}", name(&backend, id))
                    } else if let Some(id) = w.strip_prefix("ID=") {
                        if id == "0" {
                            w.to_string()
                        } else if l.starts_with("BE:") {
                            format!("ID={}", name(&backend, id))
                        } else if svc_ids {
                            format!("ID={}", name(&service, id))
                        } else {
                            w.to_string()
                        }
                    } else {
                        w.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    out.sort();
    out
}

/// kpv's dump for a checkpoint: every family's maps of the node, each
/// canonical on its own (kpv numbers each family from 1; one agent numbers
/// both together), merged.
fn kpv_canonical(check: &Check) -> Vec<String> {
    let (cluster, _diags) = kpv_core::Code::ALL.parse(&check.yaml);
    let slices = kpv_core::net::controller::compute_slices(&cluster, &Default::default());
    let planes = node_planes(
        &cluster,
        &slices,
        &check.node,
        Mode::Cilium,
        CompileOptions::default(),
        Compilers::ALL,
    );
    let mut out: Vec<String> = planes
        .iter()
        .flat_map(|plane| {
            let lines: Vec<String> = render_planes(std::slice::from_ref(plane))
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect();
            canonical(&lines)
        })
        .collect();
    out.sort();
    out
}

fn scripts() -> Vec<Check> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cilium");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    paths.sort();
    paths
        .iter()
        .flat_map(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{stem}: {e}"));
            read_script(&stem, &text)
        })
        .collect()
}

#[test]
fn kpv_prints_the_maps_every_transcribed_checkpoint_expects() {
    let checks = scripts();
    assert!(checks.len() >= 40, "only {} checkpoints", checks.len());
    let mut failed = Vec::new();
    for c in &checks {
        let got = kpv_canonical(c);
        let want = canonical(&c.expected);
        if got != want {
            let missing: Vec<_> = want.iter().filter(|l| !got.contains(l)).collect();
            let extra: Vec<_> = got.iter().filter(|l| !want.contains(l)).collect();
            failed.push(format!(
                "{} {}:\n  missing:\n    {}\n  extra:\n    {}",
                c.script,
                c.name,
                missing
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n    "),
                extra
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n    "),
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} checkpoints differ:\n{}",
        failed.len(),
        checks.len(),
        failed.join("\n")
    );
}

#[test]
fn ids_are_compared_by_what_they_name() {
    let dump = |be1: u32, be2: u32, svc: u32, slot1: u32| -> Vec<String> {
        vec![
            format!("BE: ID={be1} ADDR=10.244.1.1:80/TCP STATE=active"),
            format!("BE: ID={be2} ADDR=10.244.1.2:80/TCP STATE=active"),
            format!("REV: ID={svc} ADDR=10.96.0.1:80"),
            format!("SVC: ID={svc} ADDR=10.96.0.1:80/TCP SLOT=0 LBALG=undef AFFTimeout=0 COUNT=1 QCOUNT=0 FLAGS=ClusterIP"),
            format!("SVC: ID={svc} ADDR=10.96.0.1:80/TCP SLOT=1 BEID={slot1} COUNT=0 QCOUNT=0 FLAGS=ClusterIP"),
            format!("MAGLEV: ID={svc} INNER=[{slot1}(251)]"),
        ]
    };
    // Renumbered: the same maps.
    assert_eq!(canonical(&dump(1, 2, 7, 1)), canonical(&dump(5, 4, 2, 5)));
    // The slot and the Maglev table naming the other backend: different.
    assert_ne!(canonical(&dump(1, 2, 7, 1)), canonical(&dump(1, 2, 7, 2)));
}
