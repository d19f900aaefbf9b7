//! The browser around the app: URL parameters, the browser's language, and
//! the editor's local storage. Everything read here is untrusted: bad values
//! are reported and ignored, never a crash.

use crate::i18n::{tr, Lang};
use crate::scenarios::PRESETS;
use kpv_core::model::Mode;
use kpv_core::util::percent;

/// Options given in the page URL
/// (`?embed=1&scenario=…&mode=…&lang=…&theme=…&step=…&play=1&lesson=…&page=…`),
/// checked once: a value the app does not know is left out and reported in
/// `problems`, so a documentation author sees a typo instead of a silent
/// default. Unknown parameter names are ignored (pages add their own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UrlOptions {
    pub embed: bool,
    /// A preset's key.
    pub scenario: Option<&'static str>,
    pub mode: Option<Mode>,
    pub lang: Option<Lang>,
    pub theme: Option<&'static str>,
    /// The hop to stop the first packet at.
    pub step: Option<u32>,
    /// `play=1`: play on from there at once (a click-to-load embed, whose
    /// reader has just clicked Play on its poster).
    pub play: bool,
    /// A lesson to open (`lesson=readiness`) and its page, from 1 (`page=2`).
    pub lesson: Option<String>,
    pub page: Option<u32>,
    pub problems: Vec<UrlProblem>,
}

/// A URL parameter whose value was ignored, with what it accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlProblem {
    pub param: &'static str,
    /// The value given, cut to [`SHOWN_VALUE_CHARS`] characters.
    pub value: String,
    pub accepted: Accepted,
}

/// What a URL parameter accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Accepted {
    OneOf(Vec<String>),
    /// A whole number, at least this.
    NumberFrom(u32),
    /// A whole number in this range, both ends included.
    NumberIn(u32, u32),
    /// A known value, set aside because another parameter (`lesson=…`)
    /// decides the same thing.
    OverriddenBy(String),
    /// A hop number past the packet's last: it has this many hops.
    Hops(usize),
    /// A parameter only the full app reads (`lesson=` in an embed).
    NotInEmbed,
}

impl UrlProblem {
    fn new(param: &'static str, given: &str, accepted: Accepted) -> UrlProblem {
        let mut value: String = given.chars().take(SHOWN_VALUE_CHARS).collect();
        if value.len() < given.len() {
            value.push('…');
        }
        UrlProblem {
            param,
            value,
            accepted,
        }
    }

    /// `step=N` asks for a hop the packet does not have (it has `hops`).
    pub fn step_beyond(step: u32, hops: usize) -> UrlProblem {
        UrlProblem::new("step", &step.to_string(), Accepted::Hops(hops))
    }

    /// What was ignored and how to fix it, in `lang`.
    pub fn describe(&self, lang: Lang) -> String {
        let fix = match &self.accepted {
            Accepted::OverriddenBy(by) => {
                return tr(lang, "url.overridden")
                    .replace("{param}", self.param)
                    .replace("{value}", &self.value)
                    .replace("{by}", by);
            }
            Accepted::Hops(n) => {
                return tr(lang, "url.step-beyond")
                    .replace("{value}", &self.value)
                    .replace("{n}", &n.to_string());
            }
            Accepted::NotInEmbed => {
                return tr(lang, "url.not-in-embed")
                    .replace("{param}", self.param)
                    .replace("{value}", &self.value);
            }
            Accepted::OneOf(names) => tr(lang, "url.one-of").replace("{list}", &names.join(", ")),
            Accepted::NumberFrom(n) => tr(lang, "url.number").replace("{n}", &n.to_string()),
            Accepted::NumberIn(a, b) => tr(lang, "url.number-in")
                .replace("{from}", &a.to_string())
                .replace("{to}", &b.to_string()),
        };
        let what = tr(lang, "url.ignored")
            .replace("{param}", self.param)
            .replace("{value}", &self.value);
        format!("{what} {fix}")
    }
}

/// How much of a bad value a problem repeats (a URL can be long).
pub const SHOWN_VALUE_CHARS: usize = 40;

/// `auto` (the default) follows the reader's `prefers-color-scheme`, as a
/// docs page's own dark mode does.
pub const THEMES: [&str; 3] = ["auto", "light", "dark"];

/// Parse and check a query string (`?a=1&b=2`); `lessons` are the ids a
/// `lesson=` may name, each with its number of pages. When a parameter is
/// given twice, the last value decides.
pub fn parse_query(search: &str, lessons: &[(&str, usize)]) -> UrlOptions {
    let mut o = UrlOptions::default();
    let mut problems = Vec::new();
    let mut check = |param: &'static str, v: &str, ok: bool, accepted: Accepted| {
        if !ok {
            problems.push(UrlProblem::new(param, v, accepted));
        }
        ok
    };
    let one_of = |names: &[&str]| Accepted::OneOf(names.iter().map(|n| n.to_string()).collect());
    for pair in search
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        // Browsers and mail clients percent-encode what they pass on.
        let (k, v) = (percent::decode(k, true), percent::decode(v, true));
        let (k, v) = (k.as_str(), v.as_str());
        match k {
            "embed" => o.embed = v != "0" && v != "false",
            "play" => o.play = v != "0" && v != "false",
            "scenario" => {
                o.scenario = PRESETS.iter().find(|p| p.key == v).map(|p| p.key);
                let keys: Vec<_> = PRESETS.iter().map(|p| p.key).collect();
                check("scenario", v, o.scenario.is_some(), one_of(&keys));
            }
            "mode" => {
                let names = Mode::ALL.map(Mode::as_str);
                o.mode = Mode::parse(v);
                check("mode", v, o.mode.is_some(), one_of(&names));
            }
            "lang" => {
                o.lang = Lang::parse(v);
                check(
                    "lang",
                    v,
                    o.lang.is_some(),
                    one_of(&Lang::ALL.map(Lang::code)),
                );
            }
            "theme" => {
                o.theme = THEMES.into_iter().find(|t| *t == v);
                check("theme", v, o.theme.is_some(), one_of(&THEMES));
            }
            "step" => {
                // Hops are numbered from 1, as the event list counts them.
                o.step = v.parse().ok().filter(|&n| n >= 1);
                check("step", v, o.step.is_some(), Accepted::NumberFrom(1));
            }
            "lesson" => {
                o.lesson = lessons
                    .iter()
                    .any(|(id, _)| *id == v)
                    .then(|| v.to_string());
                let ids: Vec<_> = lessons.iter().map(|(id, _)| *id).collect();
                // No lessons at all: an embed, which has none to open.
                let accepted = if ids.is_empty() {
                    Accepted::NotInEmbed
                } else {
                    one_of(&ids)
                };
                check("lesson", v, o.lesson.is_some(), accepted);
            }
            "page" => {
                o.page = v.parse().ok().filter(|p| *p >= 1);
                check("page", v, o.page.is_some(), Accepted::NumberFrom(1));
            }
            _ => {}
        }
    }
    // A page past the lesson's last, once both are known.
    let pages = lessons
        .iter()
        .find(|(id, _)| Some(*id) == o.lesson.as_deref())
        .map(|(_, n)| *n as u32);
    if let (Some(p), Some(n)) = (o.page, pages) {
        if p > n {
            o.page = None;
            check("page", &p.to_string(), false, Accepted::NumberIn(1, n));
        }
    }
    // A lesson opens its own scenario: a scenario given with it is not shown.
    if let (Some(scenario), Some(lesson)) = (o.scenario, o.lesson.as_deref()) {
        problems.push(UrlProblem::new(
            "scenario",
            scenario,
            Accepted::OverriddenBy(format!("lesson={lesson}")),
        ));
        o.scenario = None;
    }
    o.problems = problems;
    o
}

pub fn url_options(lessons: &[(&str, usize)]) -> UrlOptions {
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    parse_query(&search, lessons)
}

/// The language the app starts in: the address's `lang=`, else the
/// browser's when it is one we have, else English.
pub fn start_lang() -> Lang {
    url_options(&[])
        .lang
        .or_else(browser_lang)
        .unwrap_or_default()
}

/// The browser's preferred language, when it is one we have.
pub fn browser_lang() -> Option<Lang> {
    let nav = web_sys::window()?.navigator();
    nav.language().and_then(|l| Lang::parse(&l))
}

/// The editor's text (and whether the user wrote it).
pub const EDITOR_KEY: &str = "kpv.editor.v1";
/// The user's own last text when the editor shows one the app loaded
/// (a preset, a file): what Restore brings back.
pub const OWN_KEY: &str = "kpv.editor.own.v1";

/// What local storage held for the editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    Nothing,
    /// The text, and whether the user wrote it (not a text the app loaded).
    Text {
        yaml: String,
        own: bool,
    },
    /// Present but not ours or damaged: reported and kept until the user
    /// decides (`raw` can be downloaded first).
    Unreadable {
        reason: String,
        raw: String,
    },
    /// The browser's storage is turned off for this page.
    Unavailable,
}

/// Decode the stored value (pure, so it is tested natively).
pub fn decode_stored(raw: Option<&str>) -> Stored {
    let Some(raw) = raw else {
        return Stored::Nothing;
    };
    let unreadable = |reason: String| Stored::Unreadable {
        reason,
        raw: raw.to_string(),
    };
    match kpv_core::util::json_text::parse(raw) {
        Ok(v) => match (
            v.get("version").and_then(|x| x.as_u64()),
            v.get("yaml").and_then(|x| x.as_str()),
        ) {
            (Some(1), Some(yaml)) => Stored::Text {
                yaml: yaml.to_string(),
                // Texts saved before the flag existed were the user's.
                own: v.get("own").and_then(|x| x.as_bool()).unwrap_or(true),
            },
            _ => unreadable("the saved editor content has an unknown format".into()),
        },
        Err(e) => unreadable(format!("the saved editor content is damaged ({e})")),
    }
}

pub fn encode_stored(yaml: &str, own: bool) -> String {
    // The text `json!({"own": own, "version": 1, "yaml": yaml})` wrote (keys
    // sorted), without shipping serde_json.
    let mut out = format!("{{\"own\":{own},\"version\":1,\"yaml\":");
    kpv_core::util::json_text::write_str(&mut out, yaml);
    out.push('}');
    out
}

/// Why a text was not saved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveError {
    /// Storage is turned off (or refused) for this page.
    Unavailable,
    /// Storage refused the value: too large for what is left.
    Full,
}

fn storage() -> Result<web_sys::Storage, SaveError> {
    web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .ok_or(SaveError::Unavailable)
}

pub fn load_editor() -> Stored {
    match storage() {
        Err(_) => Stored::Unavailable,
        Ok(s) => decode_stored(s.get_item(EDITOR_KEY).ok().flatten().as_deref()),
    }
}

/// Save the editor's text.
pub fn save_editor(yaml: &str, own: bool) -> Result<(), SaveError> {
    storage()?
        .set_item(EDITOR_KEY, &encode_stored(yaml, own))
        .map_err(|_| SaveError::Full)
}

/// The user's own text kept aside, if any.
pub fn load_own() -> Option<String> {
    let raw = storage().ok()?.get_item(OWN_KEY).ok().flatten();
    match decode_stored(raw.as_deref()) {
        Stored::Text { yaml, .. } => Some(yaml),
        _ => None,
    }
}

/// Keep (or forget) the user's own text aside.
pub fn save_own(yaml: Option<&str>) -> Result<(), SaveError> {
    let s = storage()?;
    match yaml {
        Some(y) => s
            .set_item(OWN_KEY, &encode_stored(y, true))
            .map_err(|_| SaveError::Full),
        None => s.remove_item(OWN_KEY).map_err(|_| SaveError::Unavailable),
    }
}

/// Whether the app is embedded (the embed build, or `embed=1` in the whole
/// app's address): only the diagram and its bar.
#[derive(Clone, Copy, Debug)]
pub struct Embedded(pub bool);

/// The full app's colour theme, for the parts that read it from context
/// (the embed snippet names it).
#[cfg(feature = "full")]
#[derive(Clone, Copy, Debug)]
pub struct Theme(pub leptos::prelude::RwSignal<&'static str>);

#[cfg(test)]
mod tests {
    use super::*;

    const LESSONS: &[(&str, usize)] = &[("readiness", 4), ("services-basics", 3)];

    #[test]
    fn known_query_values_are_taken_typed() {
        let o = parse_query(
            "?embed=1&scenario=nodeport&mode=ipvs&lang=ko&theme=dark&step=3&junk&utm_source=x",
            LESSONS,
        );
        assert!(o.embed);
        assert_eq!(o.scenario, Some("nodeport"));
        assert_eq!(o.mode, Some(Mode::Ipvs));
        assert_eq!(o.lang, Some(Lang::Ko));
        assert_eq!(o.theme, Some("dark"));
        assert_eq!(o.step, Some(3));
        assert_eq!(
            o.problems,
            vec![],
            "unknown parameter names are not problems"
        );
        assert!(!parse_query("?embed=0", LESSONS).embed);
        assert!(parse_query("?scenario=nodeport&play=1", LESSONS).play);
        assert!(!parse_query("?scenario=nodeport&play=0", LESSONS).play);
        assert!(!parse_query("?scenario=nodeport", LESSONS).play);
        let o = parse_query("?lesson=readiness&page=2", LESSONS);
        assert_eq!(o.lesson.as_deref(), Some("readiness"));
        assert_eq!(o.page, Some(2));
        assert_eq!(parse_query("", LESSONS), UrlOptions::default());
    }

    #[test]
    fn unknown_query_values_are_ignored_and_reported() {
        let o = parse_query(
            "?scenario=nodeport-local&mode=ipvs&mode=iptable&lang=fr&theme=blue&step=x&lesson=nope&page=0",
            LESSONS,
        );
        // The valid mode before the bad one is not kept: the last value decides.
        assert_eq!(
            (o.scenario, o.mode, o.lang, o.theme, o.step, o.lesson, o.page),
            (None, None, None, None, None, None, None)
        );
        let params: Vec<_> = o
            .problems
            .iter()
            .map(|p| (p.param, p.value.as_str()))
            .collect();
        assert_eq!(
            params,
            [
                ("scenario", "nodeport-local"),
                ("mode", "iptable"),
                ("lang", "fr"),
                ("theme", "blue"),
                ("step", "x"),
                ("lesson", "nope"),
                ("page", "0"),
            ]
        );
        let keys: Vec<String> = PRESETS.iter().map(|p| p.key.to_string()).collect();
        assert_eq!(o.problems[0].accepted, Accepted::OneOf(keys));
        assert_eq!(
            o.problems[1].accepted,
            Accepted::OneOf(
                ["userspace", "iptables", "ipvs", "nftables", "cilium"]
                    .map(String::from)
                    .to_vec()
            )
        );
        assert_eq!(o.problems[4].accepted, Accepted::NumberFrom(1));
        assert_eq!(o.problems[6].accepted, Accepted::NumberFrom(1));
    }

    #[test]
    fn query_values_are_percent_decoded() {
        let o = parse_query(
            "?scenario=loadbalancer%2Dlocal&mode=%69pvs&lang=k%6F",
            LESSONS,
        );
        assert_eq!(o.scenario, Some("loadbalancer-local"));
        assert_eq!(o.mode, Some(Mode::Ipvs));
        assert_eq!(o.lang, Some(Lang::Ko));
        assert_eq!(o.problems, vec![]);
        // Names too, and `+` is a space; a bad escape stays as written.
        assert_eq!(
            parse_query("?m%6Fde=nftables", LESSONS).mode,
            Some(Mode::Nftables)
        );
        // `+` is a space in a query (form encoding).
        let o = parse_query("?scenario=node+port", LESSONS);
        assert_eq!(o.problems[0].value, "node port");
        let o = parse_query("?scenario=node%20port", LESSONS);
        assert_eq!(o.problems[0].value, "node port");
    }

    #[test]
    fn a_lesson_overriding_the_scenario_is_said() {
        let o = parse_query("?scenario=nodeport&lesson=readiness", LESSONS);
        assert_eq!(o.scenario, None);
        assert_eq!(o.lesson.as_deref(), Some("readiness"));
        assert_eq!(o.problems.len(), 1);
        assert_eq!(
            o.problems[0].describe(Lang::En),
            "The page address has scenario=nodeport, but lesson=readiness opens its own \
             scenario, so scenario was ignored."
        );
        assert!(o.problems[0]
            .describe(Lang::Ko)
            .contains("lesson=readiness"));
        // Without a lesson the scenario stands.
        assert_eq!(parse_query("?scenario=nodeport", LESSONS).problems, vec![]);
        // The embed has no lessons (its list is empty).
        let p = parse_query("?lesson=readiness", &[]).problems[0].clone();
        assert_eq!(
            p.describe(Lang::En),
            "The page address has lesson=readiness, but an embed shows no lessons, so it was \
             ignored. Open the app itself (the address without embed/) for the lesson."
        );
        assert!(p.describe(Lang::Ko).contains("lesson=readiness"));
        let p = UrlProblem::step_beyond(40, 12);
        assert_eq!(
            p.describe(Lang::En),
            "The page address has step=40, but the packet has only 12 hops (1 to 12), so it \
             stops at the last one."
        );
    }

    #[test]
    fn a_problem_says_what_was_ignored_and_how_to_fix_it() {
        let o = parse_query("?mode=iptable&page=-1", LESSONS);
        assert_eq!(
            o.problems[0].describe(Lang::En),
            "The page address has mode=iptable, which is not known here, so it was ignored. \
             Use one of: userspace, iptables, ipvs, nftables, cilium."
        );
        assert_eq!(
            o.problems[1].describe(Lang::Ko),
            "페이지 주소의 page=-1 값은 알 수 없는 값이라 무시했습니다. 1 이상의 정수를 쓰세요."
        );
        // A long value is cut, so a hostile address cannot fill the page.
        let long = "x".repeat(10_000);
        let o = parse_query(&format!("?lesson={long}"), LESSONS);
        assert_eq!(o.problems[0].value.chars().count(), SHOWN_VALUE_CHARS + 1);
        assert!(o.problems[0].value.ends_with('…'));
        // A page past the lesson's last is named with the lesson's range,
        // whichever order the two come in.
        let o = parse_query("?page=5&lesson=readiness", LESSONS);
        assert_eq!((o.lesson.as_deref(), o.page), (Some("readiness"), None));
        assert_eq!(o.problems[0].accepted, Accepted::NumberIn(1, 4));
        assert_eq!(
            o.problems[0].describe(Lang::En),
            "The page address has page=5, which is not known here, so it was ignored. \
             Use a whole number from 1 to 4."
        );
        assert_eq!(
            parse_query("?lesson=readiness&page=4", LESSONS).problems,
            vec![]
        );
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        /// Any address: no panic; every value kept is one the app knows, and
        /// every problem repeats at most a short cut of what was given.
        #[test]
        fn any_query_is_checked_without_panic(
            search in "[?&=a-z0-9%<>\u{1}-\u{7f}é한]{0,200}",
            picks in proptest::collection::vec(0usize..8, 0..6),
        ) {
            const NAMES: [&str; 8] =
                ["scenario=", "mode=", "lang=", "theme=", "step=", "lesson=", "page=", "embed="];
            let mut q = search.clone();
            for p in &picks {
                q.push('&');
                q.push_str(NAMES[*p]);
                q.push_str(&search);
            }
            let o = parse_query(&q, LESSONS);
            proptest::prop_assert!(o.scenario.is_none_or(|k| PRESETS.iter().any(|p| p.key == k)));
            proptest::prop_assert!(o
                .lesson
                .as_deref()
                .is_none_or(|l| LESSONS.iter().any(|(id, _)| *id == l)));
            proptest::prop_assert!(o.page.is_none_or(|p| p >= 1));
            for p in &o.problems {
                proptest::prop_assert!(p.value.chars().count() <= SHOWN_VALUE_CHARS + 1);
                proptest::prop_assert!(!p.describe(Lang::Ko).is_empty());
            }
        }
    }

    #[test]
    fn stored_editor_values_are_read_defensively() {
        assert_eq!(decode_stored(None), Stored::Nothing);
        let y = "kind: \"Service\"\n\u{1}é";
        for own in [true, false] {
            assert_eq!(
                encode_stored(y, own),
                serde_json::json!({ "own": own, "version": 1, "yaml": y }).to_string()
            );
            assert_eq!(
                decode_stored(Some(&encode_stored("kind: Service", own))),
                Stored::Text {
                    yaml: "kind: Service".into(),
                    own
                }
            );
        }
        // A value saved before the flag existed is the user's own text.
        assert_eq!(
            decode_stored(Some("{\"version\":1,\"yaml\":\"a: 1\"}")),
            Stored::Text {
                yaml: "a: 1".into(),
                own: true
            }
        );
        // What cannot be read is kept whole, to be downloaded before it is replaced.
        for raw in ["{not json", "{\"version\": 9, \"yaml\": \"x\"}", "42"] {
            match decode_stored(Some(raw)) {
                Stored::Unreadable { raw: kept, reason } => {
                    assert_eq!(kept, raw);
                    assert!(!reason.is_empty());
                }
                other => panic!("{raw}: {other:?}"),
            }
        }
    }
}
