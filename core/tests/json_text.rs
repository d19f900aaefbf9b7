//! `json_text` against serde_json, the reference it replaces in the web app:
//! the same texts accepted and refused, the same strings and integers read,
//! and byte-identical string literals written.

use kpv_core::util::json_text::{self, Json, Number};
use proptest::prelude::*;

/// What serde_json reads from `text`, in `Json`'s terms (numbers only as far
/// as `Json` keeps them).
fn reference(text: &str) -> Option<Json> {
    fn conv(v: &serde_json::Value) -> Json {
        match v {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(*b),
            serde_json::Value::Number(n) => Json::Number(match n.as_u64() {
                Some(u) if !n.is_f64() => Number::Unsigned(u),
                _ => Number::Other,
            }),
            serde_json::Value::String(s) => Json::String(s.clone()),
            serde_json::Value::Array(a) => Json::Array(a.iter().map(conv).collect()),
            serde_json::Value::Object(o) => {
                Json::Object(o.iter().map(|(k, v)| (k.clone(), conv(v))).collect())
            }
        }
    }
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .map(|v| conv(&v))
}

/// Objects compared as serde_json's sorted map holds them (last value of a
/// repeated key).
fn normalised(v: &Json) -> Json {
    match v {
        Json::Array(a) => Json::Array(a.iter().map(normalised).collect()),
        Json::Object(m) => {
            let mut out: std::collections::BTreeMap<String, Json> = Default::default();
            for (k, v) in m {
                out.insert(k.clone(), normalised(v));
            }
            Json::Object(out.into_iter().collect())
        }
        other => other.clone(),
    }
}

fn check(text: &str) {
    let ours = json_text::parse(text).ok().map(|v| normalised(&v));
    assert_eq!(ours, reference(text), "{text:?}");
}

#[test]
fn reads_what_serde_json_reads_and_refuses_what_it_refuses() {
    for text in [
        // Scalars and whitespace.
        "null",
        " true ",
        "false\n",
        "\t\r\n0",
        "\"\"",
        "1",
        "-1",
        "0.5",
        "1e3",
        "1E+3",
        "1e-3",
        "-0",
        "12345678901234567890",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999999999",
        "1.0",
        "0e0",
        // Escapes, surrogate pairs, non-ASCII.
        r#""a\"b\\c\/d\be\ff\ng\rh\ti""#,
        r#""\u0041\u00e9\u4e2d\uFFFF""#,
        r#""\ud83d\ude00""#,
        r#""\uD83D\uDE00x""#,
        "\"한국어 é 😀\"",
        r#""\u0000""#,
        // Containers, nesting, repeated keys.
        "[]",
        "[1,[2,[3]]]",
        "{}",
        r#"{"a":1,"b":[true,null],"c":{"d":"e"}}"#,
        r#"{"a":1,"a":2}"#,
        " { \"k\" : [ 1 , 2 ] } ",
        // Refused: grammar.
        "",
        " ",
        "nul",
        "tru",
        "True",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "1e+",
        "+1",
        "0x10",
        "[1,]",
        "[1 2]",
        "{\"a\"}",
        "{\"a\":}",
        "{a:1}",
        "{\"a\":1,}",
        "[",
        "{",
        "\"abc",
        "1 2",
        "[]]",
        "{\"a\":1}}",
        "'a'",
        "NaN",
        "Infinity",
        // Refused: strings.
        "\"a\nb\"",
        "\"\t\"",
        r#""\x""#,
        r#""\u12""#,
        r#""\u12G4""#,
        r#""\ud83d""#,
        r#""\ud83dx""#,
        r#""\ud83d\u0041""#,
        r#""\ude00""#,
        "\"\\",
    ] {
        check(text);
    }
}

#[test]
fn nesting_is_limited_like_serde_json() {
    for depth in [1, 127, 128, 129, 500] {
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        check(&text);
        let text = format!(
            "{}1{}",
            "{\"a\":[".repeat(depth / 2),
            "]}".repeat(depth / 2)
        );
        check(&text);
    }
    // Far past the limit: an error, not a stack overflow.
    assert!(json_text::parse(&"[".repeat(1_000_000)).is_err());
}

#[test]
fn errors_say_where() {
    for (text, line, column) in [("", 1, 1), ("[1,\n  x]", 2, 3), ("{\"é\":1,}", 1, 8)] {
        let e = json_text::parse(text).err();
        assert_eq!(
            e.as_ref().map(|e| (e.line, e.column)),
            Some((line, column)),
            "{text:?}"
        );
        assert!(e.is_some_and(|e| e
            .to_string()
            .contains(&format!("line {line} column {column}"))));
    }
}

#[test]
fn accessors() {
    let v = json_text::parse(r#"{"n":7,"s":"x","b":false,"a":[null],"n":8,"f":1.5}"#)
        .unwrap_or(Json::Null);
    assert_eq!(v.get("n").and_then(Json::as_u64), Some(8));
    assert_eq!(v.get("s").and_then(Json::as_str), Some("x"));
    assert_eq!(v.get("b").and_then(Json::as_bool), Some(false));
    assert_eq!(
        v.get("a").and_then(Json::as_array).map(<[Json]>::len),
        Some(1)
    );
    assert_eq!(v.get("f").and_then(Json::as_u64), None);
    assert!(v.get("missing").is_none() && v.as_object().is_some());
    assert!(v.get("a").and_then(|a| a.get("x")).is_none());
    assert!(Json::Null.is_null() && Json::Null.as_object().is_none());
}

proptest! {
    #[test]
    fn strings_are_written_as_serde_json_writes_them(s in any::<String>()) {
        let ours = json_text::quote(&s);
        prop_assert_eq!(&ours, &serde_json::to_string(&s).unwrap_or_default());
        prop_assert_eq!(json_text::parse(&ours), Ok(Json::String(s)));
    }

    #[test]
    fn control_and_escape_heavy_strings(s in "[\\x00-\\x1f\"\\\\/a\u{7f}\u{80}\u{ffff}😀]{0,40}") {
        prop_assert_eq!(json_text::quote(&s), serde_json::to_string(&s).unwrap_or_default());
    }

    #[test]
    fn any_text_is_judged_like_serde_json(text in "[\\[\\]{}\",:0-9.eE+\\-a-z\\\\ ]{0,24}") {
        check(&text);
    }

    #[test]
    fn unsigned_integers(n in any::<u64>()) {
        prop_assert_eq!(json_text::parse(&n.to_string()), Ok(Json::Number(Number::Unsigned(n))));
        check(&format!("[{n}, -{n}, {n}.0, {n}e0]"));
    }
}
