//! The share-link codec: the app's whole input state in one URL fragment.
//!
//! The visualizer stores only inputs (the scenario YAML, the mode, the apps'
//! health changes, the packets sent with their seeds, where the clock and the
//! focus are) and derives everything else by [`crate::replay::replay`]. So a
//! link that carries those inputs reproduces exactly what its author saw.
//!
//! Format: `v1.` followed by base64url (no padding) of the raw-deflate
//! compressed JSON of [`ShareState`] (short keys; the YAML text dominates and
//! compresses well). [`decode`] never panics on any input: it caps the encoded
//! length and the inflated size (a "zip bomb" is refused, not inflated), and
//! validates every value before returning it. Nothing here reads a clock or
//! draws randomness.

use crate::controller::AppChange;
use crate::model::{Mode, Scheduler};
use crate::replay::SentPacket;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// The version prefix of links this code writes.
pub const PREFIX: &str = "v1.";
/// Largest inflated payload accepted (2 MiB).
pub const MAX_INFLATED: usize = 2 * 1024 * 1024;
/// Largest encoded link accepted, in characters (after the prefix).
pub const MAX_ENCODED: usize = 1024 * 1024;
/// Largest scenario text accepted (1 MiB).
pub const MAX_YAML: usize = 1024 * 1024;
/// Most packets and most app changes in one link.
pub const MAX_ITEMS: usize = 10_000;
/// Playback speed bounds, in percent of real time.
pub const SPEED_RANGE: std::ops::RangeInclusive<u16> = 1..=10_000;
/// Largest simulated time (2^53 ms: still exact in a JavaScript number).
pub const MAX_TIME_MS: u64 = 1 << 53;
/// Largest hop index of the step cursor.
pub const MAX_STEP: u32 = 100_000;

/// Everything a share link carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareState {
    /// The scenario as YAML text (a preset's text, or the user's edits).
    #[serde(rename = "y")]
    pub yaml: String,
    #[serde(rename = "m")]
    pub mode: Mode,
    /// The IPVS scheduler override (`None` = the scenario's configuration).
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<Scheduler>,
    /// The seed the next packet's seed is derived from.
    #[serde(rename = "r")]
    pub seed: u64,
    /// Playback speed in percent (100 = real time).
    #[serde(rename = "v")]
    pub speed_percent: u16,
    /// The simulated clock.
    #[serde(rename = "t")]
    pub time_ms: u64,
    /// The focused packet's id.
    #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<u32>,
    /// The hop of the focused packet being stepped through.
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    #[serde(rename = "c", default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<AppChange>,
    #[serde(rename = "p", default, skip_serializing_if = "Vec::is_empty")]
    pub packets: Vec<SentPacket>,
    /// UI language (`en`, `ko`), when the author chose one.
    #[serde(rename = "l", default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
}

/// Why a share link could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// Nothing after the `#`.
    Empty,
    /// Not a `v1.` link (a newer app, or not a kpv link at all).
    Version { found: String },
    /// The text is longer than any link kpv writes.
    TooLong { chars: usize },
    /// Not valid base64url.
    Base64,
    /// The compressed data is damaged or cut short.
    Inflate,
    /// It would inflate to more than [`MAX_INFLATED`] bytes.
    TooLarge,
    /// It inflated, but is not the expected JSON.
    Json { detail: String },
    /// A value is outside what the app accepts.
    OutOfRange { field: &'static str, detail: String },
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::Empty => f.write_str("the share link has no state in it"),
            ShareError::Version { found } => write!(
                f,
                "this share link is not in a format this version of the app reads (it starts with {found:?}, expected \"{PREFIX}\")"
            ),
            ShareError::TooLong { chars } => write!(
                f,
                "this share link is too long ({chars} characters; at most {MAX_ENCODED})"
            ),
            ShareError::Base64 => f.write_str(
                "this share link is damaged: it contains characters that are not base64url (was it cut or edited?)",
            ),
            ShareError::Inflate => {
                f.write_str("this share link is damaged or incomplete: its data does not decompress")
            }
            ShareError::TooLarge => write!(
                f,
                "this share link expands to more than {} MiB and was refused",
                MAX_INFLATED / (1024 * 1024)
            ),
            ShareError::Json { detail } => {
                write!(f, "this share link's data is not a valid app state: {detail}")
            }
            ShareError::OutOfRange { field, detail } => {
                write!(f, "this share link has an invalid {field}: {detail}")
            }
        }
    }
}

impl std::error::Error for ShareError {}

/// Encode a state as a URL-fragment-safe string (`v1.` + base64url).
pub fn encode(state: &ShareState) -> String {
    // Serializing plain data with string keys cannot fail; fall back to an
    // empty object rather than panic.
    let json = serde_json::to_vec(state).unwrap_or_else(|_| b"{}".to_vec());
    let packed = miniz_oxide::deflate::compress_to_vec(&json, 9);
    let mut out = String::with_capacity(PREFIX.len() + packed.len() * 4 / 3 + 4);
    out.push_str(PREFIX);
    out.push_str(&data_encoding::BASE64URL_NOPAD.encode(&packed));
    out
}

/// Decode a share link (with or without the leading `#`). Never panics.
pub fn decode(text: &str) -> Result<ShareState, ShareError> {
    let text = text.trim();
    let text = text.strip_prefix('#').unwrap_or(text);
    if text.is_empty() {
        return Err(ShareError::Empty);
    }
    let Some(body) = text.strip_prefix(PREFIX) else {
        let found: String = text.chars().take(8).collect();
        return Err(ShareError::Version { found });
    };
    if body.is_empty() {
        return Err(ShareError::Empty);
    }
    if body.len() > MAX_ENCODED {
        return Err(ShareError::TooLong { chars: body.len() });
    }
    let packed = data_encoding::BASE64URL_NOPAD
        .decode(body.as_bytes())
        .map_err(|_| ShareError::Base64)?;
    let json =
        miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_INFLATED).map_err(|e| {
            match e.status {
                miniz_oxide::inflate::TINFLStatus::HasMoreOutput => ShareError::TooLarge,
                _ => ShareError::Inflate,
            }
        })?;
    let state: ShareState = serde_json::from_slice(&json).map_err(|e| ShareError::Json {
        detail: e.to_string(),
    })?;
    validate(&state)?;
    Ok(state)
}

fn out_of_range(field: &'static str, detail: impl Into<String>) -> ShareError {
    ShareError::OutOfRange {
        field,
        detail: detail.into(),
    }
}

/// Check every value is one the app can use.
pub fn validate(s: &ShareState) -> Result<(), ShareError> {
    if s.yaml.len() > MAX_YAML {
        return Err(out_of_range(
            "scenario",
            format!("{} bytes, at most {MAX_YAML}", s.yaml.len()),
        ));
    }
    if !SPEED_RANGE.contains(&s.speed_percent) {
        return Err(out_of_range(
            "speed",
            format!(
                "{}%, expected {}% to {}%",
                s.speed_percent,
                SPEED_RANGE.start(),
                SPEED_RANGE.end()
            ),
        ));
    }
    if s.time_ms > MAX_TIME_MS {
        return Err(out_of_range(
            "time",
            format!("{} ms is too late", s.time_ms),
        ));
    }
    if s.changes.len() > MAX_ITEMS {
        return Err(out_of_range(
            "list of app changes",
            format!("{} entries, at most {MAX_ITEMS}", s.changes.len()),
        ));
    }
    if let Some(c) = s.changes.iter().find(|c| c.at_ms > MAX_TIME_MS) {
        return Err(out_of_range(
            "app change time",
            format!("{} ms is too late", c.at_ms),
        ));
    }
    if s.packets.len() > MAX_ITEMS {
        return Err(out_of_range(
            "list of packets",
            format!("{} entries, at most {MAX_ITEMS}", s.packets.len()),
        ));
    }
    let mut ids = BTreeSet::new();
    for p in &s.packets {
        if p.at_ms > MAX_TIME_MS {
            return Err(out_of_range(
                "packet time",
                format!("{} ms is too late", p.at_ms),
            ));
        }
        if !ids.insert(p.id) {
            return Err(out_of_range(
                "packet list",
                format!("packet id {} appears twice", p.id),
            ));
        }
    }
    if let Some(f) = s.focus {
        if !ids.contains(&f) {
            return Err(out_of_range(
                "focus",
                format!("there is no packet {f} to focus"),
            ));
        }
    }
    if let Some(h) = s.step {
        if h > MAX_STEP {
            return Err(out_of_range("step", format!("hop {h} is out of range")));
        }
    }
    if let Some(l) = &s.lang {
        let ok =
            (2..=8).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        if !ok {
            return Err(out_of_range(
                "language",
                format!(
                    "{:?} is not a language code",
                    l.chars().take(16).collect::<String>()
                ),
            ));
        }
    }
    Ok(())
}
