//! Every lesson file parses, matches its scenario, is fully bilingual, and
//! each question has exactly one choice that the traces bear out.

use kpv_core::model::Cluster;
use kpv_core::session::lesson::{self, Lesson};

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn lessons() -> Vec<(String, Lesson)> {
    let mut files: Vec<_> = std::fs::read_dir(root().join("tests/lessons"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let (l, d) = lesson::parse(&text);
            assert!(d.is_empty(), "{}: {d:#?}", p.display());
            (p.file_name().unwrap().to_string_lossy().into_owned(), l)
        })
        .collect()
}

fn scenario(name: &str) -> Cluster {
    let path = root().join(format!("tests/scenarios/{name}.yaml"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("no scenario {}", path.display()));
    let (c, d) = kpv_core::Code::ALL.parse(&text);
    assert!(!kpv_core::util::diag::has_errors(&d), "{d:#?}");
    c
}

#[test]
fn there_are_the_lessons() {
    let ids: Vec<String> = lessons().into_iter().map(|(_, l)| l.id).collect();
    for id in [
        "services-basics",
        "modes-compared",
        "nodeport-loadbalancer",
        "traffic-policy-local",
        "readiness",
        "external-database",
        "ingress",
        "gateway-api",
    ] {
        assert!(ids.iter().any(|i| i == id), "{id} missing from {ids:?}");
    }
}

#[test]
fn lessons_match_their_scenarios_and_are_bilingual() {
    for (file, l) in lessons() {
        assert_eq!(file, format!("{}.yaml", l.id));
        let c = scenario(&l.scenario);
        let d = lesson::check_against(&l, &c, &kpv_core::session::lesson::Code::ALL);
        assert!(d.is_empty(), "{file}: {d:#?}");
        let mut texts = vec![&l.title];
        for s in &l.steps {
            texts.push(&s.text);
            if let Some(p) = &s.predict {
                texts.push(&p.question);
                texts.extend(p.choices.iter().map(|c| &c.text));
            }
        }
        for t in texts {
            assert!(
                !t.en.trim().is_empty() && !t.ko.trim().is_empty(),
                "{file}: {t:?}"
            );
            assert!(
                t.ko.chars().any(|c| ('\u{AC00}'..='\u{D7A3}').contains(&c)),
                "{file}: Korean text has no Hangul: {:?}",
                t.ko
            );
            assert_ne!(t.en, t.ko, "{file}");
        }
    }
}

#[test]
fn every_question_has_exactly_one_right_choice() {
    let mut questions = 0;
    for (file, l) in lessons() {
        let c = scenario(&l.scenario);
        for (i, s) in l.steps.iter().enumerate() {
            let played =
                lesson::play(&c, &l, i, 2024, &kpv_core::session::lesson::Code::ALL).unwrap();
            let sent = match &played.http {
                Some(h) => h.journeys.len(),
                None => played.traces.len(),
            };
            assert_eq!(sent as u32, s.set.send.unwrap_or(1));
            assert_eq!(played.http.is_some(), s.set.request.is_some());
            let Some(p) = &s.predict else { continue };
            questions += 1;
            let right: Vec<_> = p
                .choices
                .iter()
                .filter(|ch| {
                    lesson::check_prediction(
                        &c,
                        &ch.answer,
                        &played,
                        &kpv_core::session::lesson::Code::ALL,
                    )
                })
                .map(|ch| ch.answer.clone())
                .collect();
            let outcomes: Vec<_> = played.traces.iter().map(|t| &t.outcome).collect();
            assert_eq!(
                right.len(),
                1,
                "{file} step {i}: right answers {right:?}; outcomes {outcomes:#?}"
            );
            println!("{file} step {i}: {:?}", right[0]);
            // The same for other seeds: the answer is not luck.
            for seed in [1, 77] {
                let other =
                    lesson::play(&c, &l, i, seed, &kpv_core::session::lesson::Code::ALL).unwrap();
                assert!(
                    lesson::check_prediction(
                        &c,
                        &right[0],
                        &other,
                        &kpv_core::session::lesson::Code::ALL
                    ),
                    "{file} step {i} seed {seed}"
                );
            }
        }
    }
    assert!(questions >= 10);
}

#[test]
fn bad_lesson_files_get_diagnostics() {
    let cases = [
        ("", "empty"),
        ("- a\n- b\n", "mapping"),
        ("id: x\ntitle: {en: A}\nscenario: s\nsteps: []\n", "ko"),
        (
            "id: x\ntitle: {en: A, ko: 가}\nscenario: s\nsteps:\n  - text: {en: a, ko: 가}\n    set: {mode: ebpf}\n",
            "unknown mode",
        ),
        (
            "id: x\ntitle: {en: A, ko: 가}\nscenario: s\nsteps:\n  - text: {en: a, ko: 가}\n    set: {target: nodeport}\n",
            "unknown target kind",
        ),
        (
            "id: x\ntitle: {en: A, ko: 가}\nscenario: s\nsteps:\n  - text: {en: a, ko: 가}\n    set: {send: lots}\n",
            "send",
        ),
        (
            "id: x\ntitle: {en: A, ko: 가}\nscenario: s\nsteps:\n  - text: {en: a, ko: 가}\n    predict:\n      question: {en: q, ko: 질문}\n      kind: verdict\n      choices:\n        - {answer: spread, text: {en: a, ko: 가}}\n        - {answer: delivered, text: {en: b, ko: 나}}\n",
            "does not answer",
        ),
        (
            "id: x\ntitle: {en: A, ko: 가}\nscenario: s\nsteps:\n  - text: {en: a, ko: 가}\n    set: {colour: red}\n",
            "unknown setting",
        ),
        ("id: [\n", ""),
    ];
    for (text, want) in cases {
        let (_, d) = lesson::parse(text);
        assert!(
            d.iter()
                .any(|d| d.is_error() && d.to_string().contains(want)),
            "{text:?}: {d:#?}"
        );
    }
    // A valid file naming things its scenario lacks.
    let (l, d) = lesson::parse(
        "id: x\ntitle: {en: A, ko: 가}\nscenario: alpaca-bandicoot\nsteps:\n  - text: {en: a, ko: 가}\n    set: {target: {kind: load-balancer}, app_down: zebra, origin: 'node:worker-9'}\n",
    );
    assert!(d.is_empty(), "{d:#?}");
    let d = lesson::check_against(
        &l,
        &scenario("alpaca-bandicoot"),
        &kpv_core::session::lesson::Code::ALL,
    );
    assert_eq!(d.len(), 3, "{d:#?}");
}

#[test]
fn answer_keys_are_what_the_files_say() {
    for (path, lesson) in lessons() {
        let text = std::fs::read_to_string(root().join("tests/lessons").join(&path))
            .or_else(|_| std::fs::read_to_string(&path))
            .unwrap();
        for step in &lesson.steps {
            for choice in step.predict.iter().flat_map(|p| &p.choices) {
                let key = choice.answer.key();
                assert!(
                    text.contains(&format!("answer: {key}"))
                        || text.contains(&format!("answer: \"{key}\"")),
                    "{path}: no `answer: {key}` in the file"
                );
            }
        }
    }
}

/// `kpv http`'s JSON for a lesson step's request (the CLI's own reading of
/// the URL, headers and entry point: a second path to the same journey).
fn kpv_http(scenario: &str, spec: &lesson::RequestSpec, seed: u64) -> serde_json::Value {
    use kpv_core::cli::{parse_args, run};
    let file = format!("tests/scenarios/{scenario}.yaml");
    let text = std::fs::read_to_string(root().join(&file)).unwrap();
    let mut args: Vec<String> = vec!["http".into(), file.clone(), spec.url.clone()];
    args.extend(["-X".into(), spec.method.clone()]);
    for (k, v) in &spec.headers {
        args.extend(["-H".into(), format!("{k}: {v}")]);
    }
    args.extend([
        "--seed".into(),
        seed.to_string(),
        "--format".into(),
        "json".into(),
    ]);
    let out = run(&parse_args(&args).unwrap(), &[text], &[file]);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// Every HTTP question's right choice agrees with what `kpv http` answers
/// for the same request, and each wrong choice disagrees with it.
#[test]
fn http_answers_agree_with_kpv_http() {
    use lesson::Answer;
    let mut checked = 0;
    for (file, l) in lessons() {
        let c = scenario(&l.scenario);
        for (i, s) in l.steps.iter().enumerate() {
            let (Some(spec), Some(p)) = (&s.set.request, &s.predict) else {
                continue;
            };
            let played = lesson::play(&c, &l, i, 7, &kpv_core::session::lesson::Code::ALL).unwrap();
            let n = played.http.as_ref().unwrap().journeys.len();
            let cli: Vec<serde_json::Value> = (0..n as u64)
                .map(|k| kpv_http(&l.scenario, spec, k))
                .collect();
            let statuses: Vec<u64> = cli.iter().map(|j| j["status"].as_u64().unwrap()).collect();
            let mut backends: Vec<String> = cli
                .iter()
                .filter(|j| j["status"] == 200)
                .filter_map(|j| j["backend"].as_str())
                .map(|b| b.split(':').next().unwrap_or("").to_string())
                .collect();
            backends.sort();
            backends.dedup();
            for ch in &p.choices {
                let by_cli = match &ch.answer {
                    Answer::Status(x) => statuses.iter().all(|s| *s == u64::from(*x)),
                    Answer::Service(name) => {
                        statuses.iter().all(|s| *s == 200)
                            && backends.len() == 1
                            && (backends[0] == *name || backends[0].ends_with(&format!("/{name}")))
                    }
                    Answer::Split => statuses.iter().all(|s| *s == 200) && backends.len() >= 2,
                    Answer::NoBackend => cli.iter().all(|j| j["pod"].is_null()),
                    _ => continue,
                };
                let by_lesson = lesson::check_prediction(
                    &c,
                    &ch.answer,
                    &played,
                    &kpv_core::session::lesson::Code::ALL,
                );
                assert_eq!(
                    by_lesson, by_cli,
                    "{file} step {i} {:?}: statuses {statuses:?} backends {backends:?}",
                    ch.answer
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 15, "{checked}");
}

/// The journeys themselves bear out the TLS and source questions: TLS ends
/// at the proxy Pod on HTTPS only, the backend's peer is the proxy Pod, and
/// X-Forwarded-For carries what the proxy saw.
#[test]
fn http_tls_and_source_answers_follow_the_journey() {
    use lesson::{Answer, Seen, TlsEnd};
    let c = scenario("ingress");
    let cases: [(&str, &[Answer], &[Answer]); 4] = [
        (
            "https://testhost.com/",
            &[
                Answer::TlsEndsAt(TlsEnd::ProxyPod),
                Answer::Peer(Seen::ProxyPod),
                Answer::ForwardedFor(Seen::Node),
            ],
            &[
                Answer::TlsEndsAt(TlsEnd::LoadBalancer),
                Answer::TlsEndsAt(TlsEnd::BackendPod),
                Answer::TlsEndsAt(TlsEnd::NoTls),
                Answer::Peer(Seen::Client),
                Answer::Peer(Seen::Node),
                Answer::ForwardedFor(Seen::Client),
            ],
        ),
        (
            "http://api.testhost.com/",
            &[
                Answer::TlsEndsAt(TlsEnd::NoTls),
                Answer::Service("service-api".into()),
                Answer::Status(200),
            ],
            &[Answer::TlsEndsAt(TlsEnd::ProxyPod), Answer::NoBackend],
        ),
        // A redirect never reaches a backend: no peer, no forwarded-for.
        (
            "http://testhost.com/x",
            &[Answer::Status(308), Answer::NoBackend],
            &[
                Answer::Peer(Seen::ProxyPod),
                Answer::ForwardedFor(Seen::Node),
                Answer::Service("service-test".into()),
            ],
        ),
        (
            "https://shop.example/",
            &[Answer::Status(404), Answer::NoBackend],
            &[Answer::Status(200), Answer::Split],
        ),
    ];
    for (url, right, wrong) in cases {
        let text = format!(
            "id: t\ntitle: {{en: T, ko: 가}}\nscenario: ingress\nsteps:\n  - text: {{en: a, ko: 가}}\n    set: {{request: {{url: \"{url}\"}}, send: 3}}\n"
        );
        let (l, d) = lesson::parse(&text);
        assert!(d.is_empty(), "{d:#?}");
        assert!(lesson::check_against(&l, &c, &kpv_core::session::lesson::Code::ALL).is_empty());
        let played = lesson::play(&c, &l, 0, 5, &kpv_core::session::lesson::Code::ALL).unwrap();
        for a in right {
            assert!(
                lesson::check_prediction(&c, a, &played, &kpv_core::session::lesson::Code::ALL),
                "{url}: {a:?}"
            );
        }
        for a in wrong {
            assert!(
                !lesson::check_prediction(&c, a, &played, &kpv_core::session::lesson::Code::ALL),
                "{url}: {a:?}"
            );
        }
        // Questions about connections are not answered by an HTTP step.
        assert!(!lesson::check_prediction(
            &c,
            &Answer::Delivered,
            &played,
            &kpv_core::session::lesson::Code::ALL
        ));
    }
}

#[test]
fn http_requests_in_lessons_are_checked_where_written() {
    let head = "id: x\ntitle: {en: A, ko: 가}\nscenario: s\nsteps:\n  - text: {en: a, ko: 가}\n";
    // (step body, message, line of the diagnostic)
    let cases = [
        ("    set: {request: {method: GET}}\n", "`url` is missing", 6),
        (
            "    set:\n      request:\n        url: \"ftp://testhost.com/\"\n",
            "must start with http",
            8,
        ),
        (
            "    set:\n      request:\n        url: \"https://:80/\"\n",
            "cannot read HOST",
            8,
        ),
        (
            "    set:\n      request:\n        url: \"https://a.b/\"\n        method: \"G T\"\n",
            "not an HTTP method",
            8,
        ),
        (
            "    set:\n      request:\n        url: \"https://a.b/\"\n        body: x\n",
            "unknown request field `body`",
            9,
        ),
        (
            "    set:\n      request:\n        url: \"https://a.b/\"\n        headers: [a]\n",
            "`headers` must be a mapping",
            9,
        ),
        (
            "    set:\n      request:\n        url: \"https://a.b/\"\n        headers:\n          \"bad name\": x\n",
            "not a header name",
            10,
        ),
        ("    set: {request: url}\n", "`request` must be a mapping", 6),
        (
            "    predict:\n      question: {en: q, ko: 질문}\n      kind: http-status\n      choices:\n        - {answer: \"status:200\", text: {en: a, ko: 가}}\n        - {answer: \"service:web\", text: {en: b, ko: 나}}\n",
            "does not answer",
            11,
        ),
        (
            "    predict:\n      question: {en: q, ko: 질문}\n      kind: http-status\n      choices:\n        - {answer: \"status:99\", text: {en: a, ko: 가}}\n        - {answer: \"status:200\", text: {en: b, ko: 나}}\n",
            "unknown answer `status:99`",
            10,
        ),
        (
            "    predict:\n      question: {en: q, ko: 질문}\n      kind: http-teapot\n      choices: []\n",
            "unknown question kind `http-teapot`",
            8,
        ),
    ];
    for (body, want, line) in cases {
        let text = format!("{head}{body}");
        let (_, d) = lesson::parse(&text);
        let hit = d.iter().find(|d| d.is_error() && d.message.contains(want));
        let Some(hit) = hit else {
            panic!("{text}\nwant {want:?}: {d:#?}")
        };
        assert_eq!(hit.span.map(|s| s.line), Some(line), "{text}\n{hit:#?}");
        assert!(hit
            .field
            .as_deref()
            .is_some_and(|f| f.starts_with("steps[0].")));
    }
}

#[test]
fn http_lessons_are_checked_against_their_scenario() {
    let step = |set: &str, kind: &str, answers: [&str; 2]| {
        format!(
            "  - text: {{en: a, ko: 가}}\n    set: {set}\n    predict:\n      question: {{en: q, ko: 질문}}\n      kind: {kind}\n      choices:\n        - {{answer: \"{}\", text: {{en: a, ko: 가}}}}\n        - {{answer: \"{}\", text: {{en: b, ko: 나}}}}\n",
            answers[0], answers[1]
        )
    };
    let file = |scenario: &str, steps: &[String]| {
        format!(
            "id: x\ntitle: {{en: A, ko: 가}}\nscenario: {scenario}\nsteps:\n{}",
            steps.concat()
        )
    };
    let req = "{request: {url: \"https://testhost.com/\"}}";
    // (scenario, steps, expected (field, message) of each error)
    type Case = (&'static str, Vec<String>, Vec<(&'static str, &'static str)>);
    let cases: Vec<Case> = vec![
        (
            "ingress",
            vec![step(
                req,
                "http-backend",
                ["service:service-test", "service:no-such"],
            )],
            vec![(
                "steps[0].predict.choices[1].answer",
                "has no Service `no-such`",
            )],
        ),
        (
            "ingress",
            vec![step(
                req,
                "http-backend",
                [
                    "service:default/service-test",
                    "service:kube-system/service-test",
                ],
            )],
            vec![(
                "steps[0].predict.choices[1].answer",
                "has no Service `kube-system/service-test`",
            )],
        ),
        // An unknown host is a fine question: the answer is a 404.
        (
            "ingress",
            vec![step(
                "{request: {url: \"http://nowhere.example/\"}}",
                "http-status",
                ["status:404", "status:200"],
            )],
            vec![],
        ),
        (
            "ingress",
            vec![step(
                "{send: 2}",
                "http-status",
                ["status:404", "status:200"],
            )],
            vec![("steps[0].predict.kind", "needs `set.request`")],
        ),
        (
            "ingress",
            vec![step(req, "verdict", ["delivered", "dropped"])],
            vec![("steps[0].predict.kind", "ask an HTTP question")],
        ),
        (
            "ingress",
            vec![
                step(
                    "{fail_readiness: test-1}",
                    "which-pod",
                    ["spread", "one-pod"],
                ),
                step(req, "http-status", ["status:200", "status:503"]),
            ],
            vec![("steps[1].set.request", "at rest")],
        ),
        // No Ingress or Gateway at all in the scenario.
        (
            "alpaca-bandicoot",
            vec![step(req, "http-status", ["status:200", "status:404"])],
            vec![("steps[0].set.request.url", "entry points: none")],
        ),
    ];
    for (scn, steps, want) in cases {
        let text = file(scn, &steps);
        let (l, d) = lesson::parse(&text);
        assert!(d.is_empty(), "{text}\n{d:#?}");
        let got = lesson::check_against(&l, &scenario(scn), &kpv_core::session::lesson::Code::ALL);
        assert_eq!(got.len(), want.len(), "{text}\n{got:#?}");
        for (g, (field, msg)) in got.iter().zip(&want) {
            assert_eq!(g.field.as_deref(), Some(*field), "{g:#?}");
            assert!(g.message.contains(msg), "{g:#?}");
            assert!(g.span.is_some_and(|s| s.line > 4), "{g:#?}");
        }
        if !got.is_empty() {
            continue;
        }
        let played = lesson::play(
            &scenario(scn),
            &l,
            0,
            1,
            &kpv_core::session::lesson::Code::ALL,
        )
        .unwrap();
        assert!(played.http.is_some());
    }
    // A choice's diagnostic points at the choice's own line.
    let text = file(
        "ingress",
        &[step(
            req,
            "http-backend",
            ["service:service-test", "service:nope"],
        )],
    );
    let (l, _) = lesson::parse(&text);
    let d = lesson::check_against(
        &l,
        &scenario("ingress"),
        &kpv_core::session::lesson::Code::ALL,
    );
    let line = text
        .lines()
        .position(|x| x.contains("service:nope"))
        .unwrap()
        + 1;
    assert_eq!(d[0].span.map(|s| s.line), Some(line));
}

#[test]
fn every_lesson_points_at_the_diagram_in_both_languages() {
    use kpv_core::view::noun::{segments, Segment};
    for (file, l) in lessons() {
        let c = scenario(&l.scenario);
        for lang in ["en", "ko"] {
            let nouns: Vec<_> = l
                .steps
                .iter()
                .flat_map(|s| segments(s.text.get(lang)))
                .filter_map(|s| match s {
                    Segment::Noun { target, .. } => Some(target),
                    Segment::Text(_) => None,
                })
                .collect();
            assert!(!nouns.is_empty(), "{file} ({lang}) marks no noun");
            for n in nouns {
                assert!(
                    kpv_core::view::noun::resolve(&c, &n).is_some(),
                    "{file}: {n:?}"
                );
            }
        }
    }
}

#[test]
fn a_noun_naming_nothing_is_reported_at_its_step() {
    let text = std::fs::read_to_string(root().join("tests/lessons/readiness.yaml")).unwrap();
    let c = scenario("alpaca-bandicoot");
    for (bad, field) in [
        ("[[pod:alpaca|the first alpaca Pod]]", "text.en"),
        ("[[pod:alpaca|첫 번째 alpaca Pod]]", "text.ko"),
    ] {
        for replacement in [
            "[[pod:zebra|a zebra]]",
            "[[node:worker-9|w9]]",
            "[[lb|the LB]]",
            "[[step:KUBE-NOPE|x]]",
            "[[pot:alpaca|typo]]",
        ] {
            let edited = text.replacen(bad, replacement, 1);
            assert_ne!(edited, text);
            let (l, d) = lesson::parse(&edited);
            assert!(d.is_empty(), "{d:#?}");
            let d = lesson::check_against(&l, &c, &kpv_core::session::lesson::Code::ALL);
            assert_eq!(d.len(), 1, "{replacement}: {d:#?}");
            assert_eq!(
                d[0].field.as_deref(),
                Some(format!("steps[0].{field}").as_str())
            );
        }
    }
}

#[test]
fn every_question_has_a_hop_that_settles_it() {
    use kpv_core::net::trace::{HopKind, Outcome};
    use kpv_core::session::lesson::PredictKind;
    use kpv_core::session::settle::settling_hop;
    let mut seen = [0usize; 3];
    for (file, l) in lessons() {
        let c = scenario(&l.scenario);
        for (k, s) in l.steps.iter().enumerate() {
            let Some(p) = &s.predict else { continue };
            let played = lesson::play(&c, &l, k, 1, &kpv_core::session::lesson::Code::ALL).unwrap();
            for t in &played.traces {
                let i = settling_hop(t, p.kind)
                    .unwrap_or_else(|| panic!("{file} step {k}: no hop settles {:?}", p.kind));
                let h = &t.hops[i];
                match p.kind {
                    PredictKind::WhichPod => {
                        seen[0] += 1;
                        // The first hop where a rule made the destination an
                        // endpoint (or conntrack did), unless none did.
                        let rewrote = h.after.dst != h.before.dst
                            || matches!(h.what, HopKind::Established { .. });
                        let any = t.hops.iter().any(|x| {
                            matches!(x.what, HopKind::Rule) && x.after.dst != x.before.dst
                        });
                        assert!(rewrote || !any, "{file} step {k}: {h:?}");
                        assert!(
                            t.hops[..i]
                                .iter()
                                .all(|x| !matches!(x.what, HopKind::Rule)
                                    || x.after.dst == x.before.dst),
                            "{file} step {k}: an earlier rule already rewrote the destination"
                        );
                    }
                    PredictKind::SourceIp => {
                        seen[1] += 1;
                        if t.masquerade {
                            assert!(
                                matches!(h.what, HopKind::Masquerade { .. }),
                                "{file}: {h:?}"
                            );
                        } else {
                            assert!(
                                !matches!(h.what, HopKind::Masquerade { .. }),
                                "{file}: {h:?}"
                            );
                        }
                    }
                    PredictKind::WhereTranslated => {
                        // The first rule that rewrote the destination, at
                        // the client's socket or in a node's rules.
                        assert!(
                            matches!(h.what, HopKind::Rule) && h.after.dst != h.before.dst,
                            "{file} step {k}: {h:?}"
                        );
                    }
                    // HTTP steps send no packets: `traces` is empty for them.
                    PredictKind::HttpBackend
                    | PredictKind::HttpStatus
                    | PredictKind::TlsEndsAt
                    | PredictKind::HttpSource => unreachable!("{file} step {k}"),
                    PredictKind::Verdict => {
                        seen[2] += 1;
                        // The oracle is the trace's outcome, not a list of
                        // final hop kinds (settle.rs keeps that list; using
                        // it here would only check it against itself): the
                        // outcome names the hop that ends the connection.
                        let want = match &t.outcome {
                            Outcome::Delivered { .. } => Some(HopKind::Deliver),
                            Outcome::TimedOut { .. } => Some(HopKind::NoAnswer),
                            Outcome::Dropped { reason } => Some(HopKind::Drop { reason: *reason }),
                            Outcome::Rejected { reason } => {
                                Some(HopKind::Reject { reason: *reason })
                            }
                            _ => None,
                        };
                        match want {
                            Some(w) => assert_eq!(h.what, w, "{file} step {k}"),
                            None => assert_eq!(i + 1, t.hops.len(), "{file} step {k}: {h:?}"),
                        }
                        // Nothing but the reply comes after it.
                        assert!(
                            t.hops[i + 1..]
                                .iter()
                                .all(|x| matches!(x.what, HopKind::Reply { .. })),
                            "{file} step {k}: {:?}",
                            &t.hops[i + 1..]
                        );
                    }
                }
            }
        }
    }
    assert!(
        seen.iter().all(|&n| n > 0),
        "each kind of question is tried: {seen:?}"
    );
}

/// An HTTP question settles at the proxy's own step: the rule for which
/// backend, the backend step for the status, the listener for TLS, the
/// backend Pod's delivery (else the proxy's answer) for the source.
#[test]
fn every_http_question_settles_at_the_proxy_step_that_decides_it() {
    use kpv_core::http::send::{journey_trace, HttpSend, ProxyStage};
    use kpv_core::model::packet::Protocol;
    use kpv_core::net::trace::{Dest, HopKind, Origin, Request};
    use kpv_core::session::lesson::PredictKind;
    use kpv_core::session::settle::settling_hop;
    let mut seen = 0;
    for (file, l) in lessons() {
        let c = scenario(&l.scenario);
        for (k, s) in l.steps.iter().enumerate() {
            let Some(p) = &s.predict else { continue };
            let played = lesson::play(&c, &l, k, 3, &kpv_core::session::lesson::Code::ALL).unwrap();
            let Some(h) = &played.http else { continue };
            for j in &h.journeys {
                let req = Request {
                    origin: Origin::External {
                        client: "203.0.113.77".parse().unwrap(),
                    },
                    dst: Dest::Http(Box::new(HttpSend {
                        entry: j.entry.clone(),
                        request: h.request.clone(),
                    })),
                    port: h.request.port,
                    protocol: Protocol::Tcp,
                    src_port: 40000,
                    keep_open: false,
                };
                let t = journey_trace(j, &req);
                let i = settling_hop(&t, p.kind)
                    .unwrap_or_else(|| panic!("{file} step {k}: nothing settles {:?}", p.kind));
                let stage = match &t.hops[i].what {
                    HopKind::Http(x) => Some(x.stage),
                    _ => None,
                };
                let want = match p.kind {
                    PredictKind::HttpBackend => Some(ProxyStage::Rule),
                    PredictKind::HttpStatus => Some(ProxyStage::Backend),
                    PredictKind::TlsEndsAt => Some(ProxyStage::Listener),
                    PredictKind::HttpSource if j.to_backend.is_some() => {
                        assert!(
                            matches!(t.hops[i].what, HopKind::Deliver),
                            "{file} step {k}"
                        );
                        None
                    }
                    PredictKind::HttpSource => Some(ProxyStage::Backend),
                    other => panic!("{file} step {k}: {other:?} on an HTTP step"),
                };
                assert_eq!(stage, want, "{file} step {k} ({:?})", p.kind);
                seen += 1;
            }
        }
    }
    assert!(seen >= 12, "{seen}");
}

/// The readiness lesson's liveness page: the alpaca Pod is restarted once
/// (the new container is healthy), NotReady only around the restart, and
/// Ready when the step's connections are sent.
#[test]
fn the_liveness_page_restarts_the_pod_once_before_its_packets() {
    use kpv_core::net::controller::{events::events, events::EventKind, Timing};
    let (_, l) = lessons()
        .into_iter()
        .find(|(_, l)| l.id == "readiness")
        .unwrap();
    let c = scenario(&l.scenario);
    let step = l
        .steps
        .iter()
        .position(|s| s.set.fail_liveness.is_some())
        .expect("a liveness page");
    let played = lesson::play(&c, &l, step, 2024, &lesson::Code::ALL).unwrap();
    let first_packet = played.packets[0].at_ms;
    let evs = events(&c, &played.changes, Timing::default(), first_packet);
    let step_start = step as u64 * lesson::STEP_MS;
    let restarts: Vec<u64> = evs
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Restarted { .. }) && e.at_ms >= step_start)
        .map(|e| e.at_ms)
        .collect();
    assert_eq!(restarts.len(), 1, "{evs:#?}");
    let watched = &played.watched[0];
    let pod = c.pods.iter().find(|p| &p.id == watched).unwrap();
    let ready = |t| kpv_core::net::controller::ready_at(pod, &played.changes, t);
    assert!(ready(restarts[0] - 1), "Ready while only liveness fails");
    assert!(!ready(restarts[0]), "NotReady at the restart");
    assert!(ready(first_packet), "Ready again before the packets");
}
