//! The browser around the app: URL parameters, the browser's language, and
//! the editor's local storage. Everything read here is untrusted: bad values
//! are reported and ignored, never a crash.

use crate::i18n::Lang;

/// Options given in the page URL (`?embed=1&scenario=…&mode=…&lang=…&theme=…&step=…`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UrlOptions {
    pub embed: bool,
    pub scenario: Option<String>,
    pub mode: Option<String>,
    pub lang: Option<String>,
    pub theme: Option<String>,
    pub step: Option<u32>,
    /// A lesson to open (`lesson=readiness`) and its page, from 1 (`page=2`).
    pub lesson: Option<String>,
    pub page: Option<u32>,
}

/// Parse a query string (`?a=1&b=2`), leniently.
pub fn parse_query(search: &str) -> UrlOptions {
    let mut o = UrlOptions::default();
    for pair in search
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = v.to_string();
        match k {
            "embed" => o.embed = v != "0" && v != "false",
            "scenario" => o.scenario = Some(v),
            "mode" => o.mode = Some(v),
            "lang" => o.lang = Some(v),
            "theme" => o.theme = Some(v),
            "step" => o.step = v.parse().ok(),
            "lesson" => o.lesson = Some(v),
            "page" => o.page = v.parse().ok(),
            _ => {}
        }
    }
    o
}

pub fn url_options() -> UrlOptions {
    let search = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    parse_query(&search)
}

/// The browser's preferred language, when it is one we have.
pub fn browser_lang() -> Option<Lang> {
    let nav = web_sys::window()?.navigator();
    nav.language().and_then(|l| Lang::parse(&l))
}

const EDITOR_KEY: &str = "kpv.editor.v1";

/// What local storage held for the editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    Nothing,
    Text(String),
    /// Present but not ours or damaged: reported, then ignored.
    Unreadable(String),
}

/// Decode the stored value (pure, so it is tested natively).
pub fn decode_stored(raw: Option<&str>) -> Stored {
    let Some(raw) = raw else {
        return Stored::Nothing;
    };
    let parsed: Result<serde_json::Value, _> = serde_json::from_str(raw);
    match parsed {
        Ok(v) => match (
            v.get("version").and_then(|x| x.as_u64()),
            v.get("yaml").and_then(|x| x.as_str()),
        ) {
            (Some(1), Some(yaml)) => Stored::Text(yaml.to_string()),
            _ => Stored::Unreadable("the saved editor content has an unknown format".into()),
        },
        Err(e) => Stored::Unreadable(format!("the saved editor content is damaged ({e})")),
    }
}

pub fn encode_stored(yaml: &str) -> String {
    // The text `json!({"version": 1, "yaml": yaml})` wrote (keys sorted),
    // without shipping serde_json's `Value` serializer.
    let yaml = serde_json::to_string(yaml).unwrap_or_default();
    format!("{{\"version\":1,\"yaml\":{yaml}}}")
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

pub fn load_editor() -> Stored {
    let raw = storage().and_then(|s| s.get_item(EDITOR_KEY).ok().flatten());
    decode_stored(raw.as_deref())
}

/// Save the editor's text; false when storage is unavailable or full.
pub fn save_editor(yaml: &str) -> bool {
    storage().is_some_and(|s| s.set_item(EDITOR_KEY, &encode_stored(yaml)).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_options_are_parsed_leniently() {
        let o = parse_query("?embed=1&scenario=nodeport&mode=ipvs&lang=ko&theme=dark&step=3&junk");
        assert!(o.embed);
        assert_eq!(o.scenario.as_deref(), Some("nodeport"));
        assert_eq!(o.mode.as_deref(), Some("ipvs"));
        assert_eq!(o.step, Some(3));
        assert_eq!(parse_query("?step=x").step, None);
        assert!(!parse_query("?embed=0").embed);
        let o = parse_query("?lesson=readiness&page=2");
        assert_eq!(o.lesson.as_deref(), Some("readiness"));
        assert_eq!(o.page, Some(2));
        assert_eq!(parse_query("?page=-1").page, None);
    }

    #[test]
    fn stored_editor_values_are_read_defensively() {
        assert_eq!(decode_stored(None), Stored::Nothing);
        let y = "kind: \"Service\"\n\u{1}é";
        assert_eq!(
            encode_stored(y),
            serde_json::json!({ "version": 1, "yaml": y }).to_string()
        );
        assert_eq!(
            decode_stored(Some(&encode_stored("kind: Service"))),
            Stored::Text("kind: Service".into())
        );
        assert!(matches!(
            decode_stored(Some("{not json")),
            Stored::Unreadable(_)
        ));
        assert!(matches!(
            decode_stored(Some("{\"version\": 9, \"yaml\": \"x\"}")),
            Stored::Unreadable(_)
        ));
        assert!(matches!(decode_stored(Some("42")), Stored::Unreadable(_)));
    }
}
