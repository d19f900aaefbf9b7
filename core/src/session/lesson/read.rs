//! Reading lesson files: the project's spanned YAML tree → a typed
//! [`Lesson`](super::Lesson) plus located diagnostics (a missing text, an
//! unknown setting, mode or answer, a request URL that cannot be read).
//! Reading never fails and never looks at a scenario: what a lesson names
//! is checked against its scenario by [`super::check_against`].

use super::*;
use crate::yaml::{parse_stream, Limits, Node as Y};

fn target_kind(s: &str) -> Option<TargetKind> {
    Some(match s {
        "load-balancer" => TargetKind::LoadBalancer,
        "node-port" => TargetKind::NodePort,
        "cluster-ip" => TargetKind::ClusterIp,
        "dns-name" => TargetKind::DnsName,
        "external-ip" => TargetKind::ExternalIp,
        _ => return None,
    })
}

struct Reader {
    diags: Vec<Diagnostic>,
}

impl Reader {
    fn err(&mut self, node: &Y, field: &str, msg: impl Into<String>) {
        let mut d = Diagnostic::error(msg).at(node.span);
        d.field = Some(field.to_string());
        self.diags.push(d);
    }

    fn string(&mut self, parent: &Y, key: &str, path: &str) -> Option<String> {
        match parent.get(key) {
            Some(n) if n.is_null() => {
                self.err(n, &format!("{path}{key}"), format!("`{key}` is empty"));
                None
            }
            Some(n) => match n.as_str() {
                Some(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
                Some(_) => {
                    self.err(n, &format!("{path}{key}"), format!("`{key}` is empty"));
                    None
                }
                None => {
                    self.err(
                        n,
                        &format!("{path}{key}"),
                        format!("`{key}` must be text, found a {}", n.kind_name()),
                    );
                    None
                }
            },
            None => None,
        }
    }

    fn required(&mut self, parent: &Y, key: &str, path: &str) -> Option<String> {
        if parent.get(key).is_none() {
            self.err(
                parent,
                &format!("{path}{key}"),
                format!("`{key}` is missing"),
            );
            return None;
        }
        self.string(parent, key, path)
    }

    fn text(&mut self, parent: &Y, key: &str, path: &str) -> Text {
        let Some(n) = parent.get(key) else {
            self.err(
                parent,
                &format!("{path}{key}"),
                format!("`{key}` is missing"),
            );
            return Text::default();
        };
        if n.as_map().is_none() {
            self.err(
                n,
                &format!("{path}{key}"),
                format!("`{key}` must be a mapping with `en` and `ko`"),
            );
            return Text::default();
        }
        let p = format!("{path}{key}.");
        Text {
            en: self.required(n, "en", &p).unwrap_or_default(),
            ko: self.required(n, "ko", &p).unwrap_or_default(),
        }
    }
}

/// Read a lesson file. The lesson is usable when no diagnostic is an error.
pub fn parse(text: &str) -> (Lesson, Vec<Diagnostic>) {
    let mut lesson = Lesson {
        id: String::new(),
        title: Text::default(),
        scenario: String::new(),
        steps: Vec::new(),
    };
    let (docs, diags) = parse_stream(text, &Limits::default());
    let mut r = Reader { diags };
    let roots: Vec<&Y> = docs
        .iter()
        .map(|d| &d.root)
        .filter(|n| !n.is_null())
        .collect();
    let root = match roots.as_slice() {
        [one] => *one,
        [] => {
            if r.diags.is_empty() {
                r.diags.push(Diagnostic::error("the lesson file is empty"));
            }
            return (lesson, r.diags);
        }
        [_, second, ..] => {
            r.err(
                second,
                "",
                "a lesson file holds one lesson (one YAML document)",
            );
            return (lesson, r.diags);
        }
    };
    if root.as_map().is_none() {
        r.err(root, "", "a lesson must be a mapping");
        return (lesson, r.diags);
    }
    lesson.id = r.required(root, "id", "").unwrap_or_default();
    lesson.title = r.text(root, "title", "");
    lesson.scenario = r.required(root, "scenario", "").unwrap_or_default();
    match root.get("steps").map(|s| (s, s.as_seq())) {
        Some((_, Some(steps))) if !steps.is_empty() => {
            for (i, s) in steps.iter().enumerate() {
                if let Some(step) = read_step(&mut r, s, &format!("steps[{i}].")) {
                    lesson.steps.push(step);
                }
            }
        }
        Some((n, _)) => r.err(n, "steps", "`steps` must be a non-empty list"),
        None => r.err(root, "steps", "`steps` is missing"),
    }
    (lesson, r.diags)
}

fn read_step(r: &mut Reader, s: &Y, path: &str) -> Option<LessonStep> {
    if s.as_map().is_none() {
        r.err(s, path.trim_end_matches('.'), "a step must be a mapping");
        return None;
    }
    let text = r.text(s, "text", path);
    let mut set = Settings::default();
    if let Some(n) = s.get("set") {
        let p = format!("{path}set.");
        if n.as_map().is_none() && !n.is_null() {
            r.err(n, &format!("{path}set"), "`set` must be a mapping");
        } else if !n.is_null() {
            read_settings(r, n, &p, &mut set);
        }
    }
    let predict = match s.get("predict") {
        Some(n) => read_prediction(r, n, &format!("{path}predict.")),
        None => None,
    };
    Some(LessonStep {
        text,
        set,
        predict,
        span: s.span,
    })
}

fn read_settings(r: &mut Reader, n: &Y, p: &str, set: &mut Settings) {
    const KEYS: [&str; 10] = [
        "mode",
        "scheduler",
        "target",
        "origin",
        "fail_readiness",
        "fail_liveness",
        "app_down",
        "healthy",
        "send",
        "request",
    ];
    for (k, _) in n.as_map().unwrap_or(&[]) {
        let key = k.as_str().unwrap_or("");
        if !KEYS.contains(&key) {
            r.err(
                k,
                &format!("{p}{key}"),
                format!("unknown setting `{key}` (known: {})", KEYS.join(", ")),
            );
        }
    }
    if let Some(m) = r.string(n, "mode", p) {
        set.mode = Mode::parse(&m);
        if set.mode.is_none() {
            r.err(n, &format!("{p}mode"), format!("unknown mode `{m}`"));
        }
    }
    if let Some(m) = r.string(n, "scheduler", p) {
        set.scheduler = Scheduler::parse(&m);
        if set.scheduler.is_none() {
            r.err(
                n,
                &format!("{p}scheduler"),
                format!("unknown scheduler `{m}`"),
            );
        }
    }
    if let Some(t) = n.get("target") {
        let (kind, service) = match (t.as_str(), t.as_map()) {
            (Some(k), _) => (Some(k.to_string()), None),
            (None, Some(_)) => (
                r.required(t, "kind", &format!("{p}target.")),
                r.string(t, "service", &format!("{p}target.")),
            ),
            _ => (None, None),
        };
        match kind.as_deref().map(|k| (k, target_kind(k))) {
            Some((_, Some(kind))) => set.target = Some(TargetSpec { kind, service }),
            Some((k, None)) => r.err(
                t,
                &format!("{p}target"),
                format!("unknown target kind `{k}` (load-balancer, node-port, cluster-ip, dns-name, external-ip)"),
            ),
            None => r.err(t, &format!("{p}target"), "`target` needs a kind"),
        }
    }
    if let Some(o) = r.string(n, "origin", p) {
        set.origin = if o == "external" {
            Some(OriginSpec::External)
        } else if let Some(x) = o.strip_prefix("pod:").filter(|x| !x.is_empty()) {
            Some(OriginSpec::Pod(x.to_string()))
        } else if let Some(x) = o.strip_prefix("node:").filter(|x| !x.is_empty()) {
            Some(OriginSpec::Node(x.to_string()))
        } else {
            r.err(
                n,
                &format!("{p}origin"),
                format!("origin `{o}` is not `external`, `pod:<name prefix>` or `node:<name>`"),
            );
            None
        };
    }
    if let Some(q) = n.get("request") {
        set.request = read_request(r, q, &format!("{p}request"));
    }
    set.fail_readiness = r.string(n, "fail_readiness", p);
    set.app_down = r.string(n, "app_down", p);
    set.fail_liveness = r.string(n, "fail_liveness", p);
    set.healthy = r.string(n, "healthy", p);
    if let Some(s) = r.string(n, "send", p) {
        match s.parse::<u32>() {
            Ok(x) if (1..=1000).contains(&x) => set.send = Some(x),
            _ => r.err(
                n,
                &format!("{p}send"),
                format!("`send` must be a number from 1 to 1000, not `{s}`"),
            ),
        }
    }
}

/// `request: {method: GET, url: "https://host/path", headers: {name: value}}`
/// (`method` defaults to GET). The URL is read here, so a bad one is
/// reported where it is written.
fn read_request(r: &mut Reader, q: &Y, path: &str) -> Option<RequestSpec> {
    if q.as_map().is_none() {
        r.err(
            q,
            path,
            "`request` must be a mapping with `url` (and `method`, `headers`)",
        );
        return None;
    }
    let p = format!("{path}.");
    for (k, _) in q.as_map().unwrap_or(&[]) {
        let key = k.as_str().unwrap_or("");
        if !["method", "url", "headers"].contains(&key) {
            r.err(
                k,
                &format!("{p}{key}"),
                format!("unknown request field `{key}` (method, url, headers)"),
            );
        }
    }
    let url = r.required(q, "url", &p)?;
    let method = r.string(q, "method", &p).unwrap_or_else(|| "GET".into());
    let mut headers = Vec::new();
    match q.get("headers") {
        None => {}
        Some(h) => match h.as_map() {
            Some(items) => {
                for (k, v) in items {
                    let (Some(name), Some(value)) = (k.as_str(), v.as_str()) else {
                        r.err(
                            v,
                            &format!("{p}headers"),
                            "a header is `name: value`, both text",
                        );
                        continue;
                    };
                    let name = name.trim();
                    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                        r.err(
                            k,
                            &format!("{p}headers.{name}"),
                            format!("`{name}` is not a header name"),
                        );
                        continue;
                    }
                    headers.push((name.to_string(), value.trim().to_string()));
                }
            }
            None if h.is_null() => {}
            None => r.err(
                h,
                &format!("{p}headers"),
                "`headers` must be a mapping of name: value",
            ),
        },
    }
    let spec = RequestSpec {
        method,
        url,
        headers,
    };
    if let Err(e) = spec.to_request() {
        let at = q.get("url").unwrap_or(q);
        r.err(at, &format!("{p}url"), e);
        return None;
    }
    Some(spec)
}

fn read_prediction(r: &mut Reader, n: &Y, p: &str) -> Option<Prediction> {
    if n.as_map().is_none() {
        r.err(n, p.trim_end_matches('.'), "`predict` must be a mapping");
        return None;
    }
    let question = r.text(n, "question", p);
    let kind = match r.required(n, "kind", p).as_deref() {
        Some(k) => match PredictKind::ALL.iter().find(|(x, _)| *x == k) {
            Some((_, kind)) => *kind,
            None => {
                let known: Vec<&str> = PredictKind::ALL.iter().map(|(x, _)| *x).collect();
                r.err(
                    n.get("kind").unwrap_or(n),
                    &format!("{p}kind"),
                    format!("unknown question kind `{k}` ({})", known.join(", ")),
                );
                return None;
            }
        },
        None => return None,
    };
    let mut choices = Vec::new();
    match n.get("choices").and_then(Y::as_seq) {
        Some(items) if items.len() >= 2 => {
            for (i, c) in items.iter().enumerate() {
                let cp = format!("{p}choices[{i}].");
                let text = r.text(c, "text", &cp);
                let Some(a) = r.required(c, "answer", &cp) else {
                    continue;
                };
                match Answer::parse(&a) {
                    Some(answer) if answer.kind() == kind => choices.push(Choice {
                        text,
                        answer,
                        span: c.span,
                    }),
                    Some(_) => r.err(
                        c,
                        &format!("{cp}answer"),
                        format!("`{a}` does not answer this kind of question"),
                    ),
                    None => r.err(c, &format!("{cp}answer"), format!("unknown answer `{a}`")),
                }
            }
        }
        _ => r.err(
            n,
            &format!("{p}choices"),
            "a question needs at least two choices",
        ),
    }
    Some(Prediction {
        question,
        kind,
        choices,
    })
}
