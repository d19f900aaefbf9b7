//! The share-link codec: the app's whole input state in one URL fragment.
//!
//! The visualizer stores only inputs (the scenario YAML, the mode, the apps'
//! health changes, the packets sent with their seeds, where the clock and the
//! focus are) and derives everything else by [`crate::session::replay::replay`]. So a
//! link that carries those inputs reproduces exactly what its author saw.
//!
//! Format: `v1.` followed by base64url (no padding) of the raw-deflate
//! compressed JSON of [`ShareState`] (short keys; the YAML text dominates and
//! compresses well). [`decode`] never panics on any input: it caps the encoded
//! length and the inflated size (a "zip bomb" is refused, not inflated), and
//! validates every value before returning it. Nothing here reads a clock or
//! draws randomness.

use crate::model::{Mode, Scheduler};
use crate::net::controller::AppChange;
use crate::session::replay::SentPacket;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// The version prefix of links this code writes.
pub const PREFIX: &str = "v1.";
/// Largest inflated payload accepted (8 MiB): room for [`MAX_ITEMS`]
/// packets (about 300 bytes of JSON each, up to about 700 with the longest
/// names) beside a [`MAX_YAML`] scenario, so every state within the other
/// limits fits; a "zip bomb" past it is refused before it is inflated further.
pub const MAX_INFLATED: usize = 8 * 1024 * 1024;
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
/// Longest node name (a DNS subdomain).
pub const MAX_NODE_NAME: usize = 253;
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
    /// The node whose rules the author chose to show, if they chose one.
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    pub rules_node: Option<String>,
}

impl ShareState {
    /// The Pods the link's packets start from that `cluster` does not have
    /// (each once, in the packets' order): those packets go nowhere.
    pub fn missing_origins(
        &self,
        cluster: &crate::model::Cluster,
    ) -> Vec<crate::model::NamespacedName> {
        let mut out: Vec<crate::model::NamespacedName> = Vec::new();
        for p in &self.packets {
            if let crate::net::trace::Origin::Pod { pod } = &p.request.origin {
                if cluster.pod(pod).is_none() && !out.contains(pod) {
                    out.push(pod.clone());
                }
            }
        }
        out
    }
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
                "this share link is not in a format this version of the app reads (it starts with {}, expected \"{PREFIX}\")",
                crate::util::diag::quoted(found)
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
    let json = codec::to_json(state);
    let packed = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 9);
    let mut out = String::with_capacity(PREFIX.len() + packed.len() * 4 / 3 + 4);
    out.push_str(PREFIX);
    crate::util::base_n::push_base64url(&mut out, &packed);
    out
}

/// [`encode`], but only a link [`decode`] reads back as this same state:
/// a state over the decoder's limits (scenario text, packets, the link's
/// length or inflated size) is refused with the reason instead of giving a
/// link that would open something else.
pub fn encode_checked(state: &ShareState) -> Result<String, ShareError> {
    validate(state)?;
    let link = encode(state);
    match decode(&link) {
        Ok(back) if back == *state => Ok(link),
        Ok(_) => Err(out_of_range("state", "it does not read back the same")),
        Err(e) => Err(e),
    }
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
    let packed =
        crate::util::base_n::decode_base64url(body.as_bytes()).ok_or(ShareError::Base64)?;
    let json =
        miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_INFLATED).map_err(|e| {
            match e.status {
                miniz_oxide::inflate::TINFLStatus::HasMoreOutput => ShareError::TooLarge,
                _ => ShareError::Inflate,
            }
        })?;
    let state = codec::from_json(&json).map_err(|detail| ShareError::Json { detail })?;
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
    if let Some(n) = &s.rules_node {
        if n.is_empty() || n.len() > MAX_NODE_NAME {
            return Err(out_of_range(
                "rules node",
                format!("a node name of {} bytes (1 to {MAX_NODE_NAME})", n.len()),
            ));
        }
    }
    if let Some(l) = &s.lang {
        let ok =
            (2..=8).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
        if !ok {
            return Err(out_of_range(
                "language",
                format!(
                    "{} is not a language code",
                    crate::util::diag::quoted(&l.chars().take(16).collect::<String>())
                ),
            ));
        }
    }
    Ok(())
}

/// The JSON of [`ShareState`], written and read by hand: exactly the text
/// serde's derives wrote (same keys, order and escapes, so links stay
/// byte-identical), but the derived `Deserialize` impls (an internally tagged
/// enum buffers through serde's `Content`) cost the .wasm about 20 KB gzip.
/// It is read with [`crate::util::json_text`], not serde_json, which the web app
/// does not ship.
mod codec {
    use super::ShareState;
    use crate::http::send::HttpSend;
    use crate::http::table::EntryPoint;
    use crate::http::walk::{HttpRequest, Scheme};
    use crate::model::packet::Protocol;
    use crate::model::{Mode, NamespacedName, Scheduler};
    use crate::net::controller::{AppChange, AppState};
    use crate::net::trace::{Dest, Origin, Request};
    use crate::session::replay::SentPacket;
    use crate::util::json_text::{self, Json as Value};
    use std::fmt::Write as _;
    use std::net::IpAddr;

    /// A value known to be an object.
    type Obj = Value;
    type R<T> = Result<T, String>;

    fn text(o: &mut String, s: &str) {
        json_text::write_str(o, s);
    }

    fn key(o: &mut String, k: &str) {
        o.push_str(",\"");
        o.push_str(k);
        o.push_str("\":");
    }

    fn name(o: &mut String, n: &NamespacedName) {
        o.push_str("{\"namespace\":");
        text(o, &n.namespace);
        o.push_str(",\"name\":");
        text(o, &n.name);
        o.push('}');
    }

    fn request(o: &mut String, r: &Request) {
        o.push_str("{\"origin\":{\"kind\":");
        match &r.origin {
            Origin::External { client } => {
                let _ = write!(o, "\"external\",\"client\":\"{client}\"");
            }
            Origin::Pod { pod } => {
                o.push_str("\"pod\",\"pod\":");
                name(o, pod);
            }
            Origin::Node { node, src } => {
                o.push_str("\"node\",\"node\":");
                text(o, node);
                let _ = write!(o, ",\"src\":\"{src}\"");
            }
        }
        o.push_str("},\"dst\":{\"kind\":");
        match &r.dst {
            Dest::Ip(ip) => {
                let _ = write!(o, "\"ip\",\"value\":\"{ip}\"");
            }
            Dest::Name(n) => {
                o.push_str("\"name\",\"value\":");
                text(o, n);
            }
            Dest::Http(h) => http(o, h),
        }
        let _ = write!(
            o,
            "}},\"port\":{},\"protocol\":\"{}\",\"src_port\":{},\"keep_open\":{}}}",
            r.port,
            r.protocol.as_upper(),
            r.src_port,
            r.keep_open
        );
    }

    /// An HTTP request's destination: the entry point and the request.
    fn http(o: &mut String, h: &HttpSend) {
        let r = &h.request;
        o.push_str("\"http\",\"entry\":");
        text(o, &h.entry.to_string());
        let _ = write!(
            o,
            ",\"scheme\":\"{}\",\"port\":{}",
            r.scheme.as_str(),
            r.port
        );
        for (k, v) in [
            ("authority", &r.authority),
            ("host", &r.host),
            ("method", &r.method),
            ("path", &r.path),
            ("query", &r.query),
        ] {
            key(o, k);
            text(o, v);
        }
        if let Some(p) = r.host_port {
            let _ = write!(o, ",\"host_port\":{p}");
        }
        if let Some(s) = &r.sni {
            key(o, "sni");
            text(o, s);
        }
        o.push_str(",\"headers\":[");
        for (i, (k, v)) in r.headers.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            o.push('[');
            text(o, k);
            o.push(',');
            text(o, v);
            o.push(']');
        }
        o.push(']');
    }

    fn http_of(d: &Obj) -> R<HttpSend> {
        let entry_text = str_field(d, "entry")?;
        let entry = EntryPoint::parse(entry_text)
            .ok_or_else(|| format!("entry: `{entry_text}` is not an entry point"))?;
        let scheme = match variant(d, "scheme", &["http", "https"])? {
            0 => Scheme::Http,
            _ => Scheme::Https,
        };
        let s = |k: &str| str_field(d, k).map(str::to_string);
        let host_port = match opt(d, "host_port") {
            Some(v) => Some(uint(v, "host_port", u64::from(u16::MAX))? as u16),
            None => None,
        };
        let sni = match opt(d, "sni") {
            Some(v) => Some(string(v, "sni")?.to_string()),
            None => None,
        };
        let mut headers = Vec::new();
        for h in list(d, "headers")? {
            match h.as_array() {
                Some([k, v]) => headers.push((
                    string(k, "headers")?.to_string(),
                    string(v, "headers")?.to_string(),
                )),
                _ => return Err(wrong("headers", h, "a [name, value] pair")),
            }
        }
        Ok(HttpSend {
            entry,
            request: HttpRequest {
                scheme,
                port: u16_field(d, "port")?,
                authority: s("authority")?,
                host: s("host")?,
                host_port,
                sni,
                method: s("method")?,
                path: s("path")?,
                query: s("query")?,
                headers,
            },
        })
    }

    pub(super) fn to_json(s: &ShareState) -> String {
        let mut o = String::with_capacity(s.yaml.len() + 128 + 160 * s.packets.len());
        o.push_str("{\"y\":");
        text(&mut o, &s.yaml);
        let _ = write!(o, ",\"m\":\"{}\"", s.mode.as_str());
        if let Some(sc) = s.scheduler {
            let _ = write!(o, ",\"s\":\"{}\"", sc.as_str());
        }
        let _ = write!(
            o,
            ",\"r\":{},\"v\":{},\"t\":{}",
            s.seed, s.speed_percent, s.time_ms
        );
        if let Some(f) = s.focus {
            let _ = write!(o, ",\"f\":{f}");
        }
        if let Some(h) = s.step {
            let _ = write!(o, ",\"h\":{h}");
        }
        if !s.changes.is_empty() {
            key(&mut o, "c");
            for (i, c) in s.changes.iter().enumerate() {
                o.push(if i == 0 { '[' } else { ',' });
                let _ = write!(o, "{{\"at_ms\":{},\"pod\":", c.at_ms);
                name(&mut o, &c.pod);
                let _ = write!(o, ",\"state\":\"{}\"}}", c.state.as_str());
            }
            o.push(']');
        }
        if !s.packets.is_empty() {
            key(&mut o, "p");
            for (i, p) in s.packets.iter().enumerate() {
                o.push(if i == 0 { '[' } else { ',' });
                let _ = write!(o, "{{\"id\":{},\"at_ms\":{},\"request\":", p.id, p.at_ms);
                request(&mut o, &p.request);
                let _ = write!(o, ",\"seed\":{}}}", p.seed);
            }
            o.push(']');
        }
        if let Some(l) = &s.lang {
            key(&mut o, "l");
            text(&mut o, l);
        }
        if let Some(n) = &s.rules_node {
            key(&mut o, "n");
            text(&mut o, n);
        }
        o.push('}');
        o
    }

    fn kind(v: &Value) -> &'static str {
        match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "a sequence",
            Value::Object(_) => "a map",
        }
    }

    fn wrong(k: &str, v: &Value, want: &str) -> String {
        format!("invalid type for `{k}`: {}, expected {want}", kind(v))
    }

    fn obj<'a>(v: &'a Value, k: &str) -> R<&'a Obj> {
        v.as_object().ok_or_else(|| wrong(k, v, "a map"))
    }

    fn get<'a>(o: &'a Obj, k: &str) -> R<&'a Value> {
        o.get(k).ok_or_else(|| format!("missing field `{k}`"))
    }

    /// An optional field: absent or null is `None`.
    fn opt<'a>(o: &'a Obj, k: &str) -> Option<&'a Value> {
        o.get(k).filter(|v| !v.is_null())
    }

    fn string<'a>(v: &'a Value, k: &str) -> R<&'a str> {
        v.as_str().ok_or_else(|| wrong(k, v, "a string"))
    }

    fn str_field<'a>(o: &'a Obj, k: &str) -> R<&'a str> {
        string(get(o, k)?, k)
    }

    fn uint(v: &Value, k: &str, max: u64) -> R<u64> {
        match v.as_u64() {
            Some(n) if n <= max => Ok(n),
            Some(n) => Err(format!("invalid value for `{k}`: {n} is too large")),
            None => Err(wrong(k, v, "an unsigned integer")),
        }
    }

    fn u64_field(o: &Obj, k: &str) -> R<u64> {
        uint(get(o, k)?, k, u64::MAX)
    }

    fn u32_field(o: &Obj, k: &str) -> R<u32> {
        Ok(uint(get(o, k)?, k, u32::MAX.into())? as u32)
    }

    fn u16_field(o: &Obj, k: &str) -> R<u16> {
        Ok(uint(get(o, k)?, k, u16::MAX.into())? as u16)
    }

    fn opt_u32(o: &Obj, k: &str) -> R<Option<u32>> {
        opt(o, k)
            .map(|v| Ok(uint(v, k, u32::MAX.into())? as u32))
            .transpose()
    }

    /// One of `names`, by index.
    fn variant(o: &Obj, k: &str, names: &[&str]) -> R<usize> {
        let s = str_field(o, k)?;
        names.iter().position(|n| *n == s).ok_or_else(|| {
            let names: Vec<String> = names.iter().map(|n| crate::util::diag::quoted(n)).collect();
            format!(
                "unknown variant `{s}` for `{k}`, expected one of [{}]",
                names.join(", ")
            )
        })
    }

    fn ip(o: &Obj, k: &str) -> R<IpAddr> {
        str_field(o, k)?
            .parse()
            .map_err(|_| format!("invalid value for `{k}`: not an IP address"))
    }

    fn list<'a>(o: &'a Obj, k: &str) -> R<&'a [Value]> {
        match o.get(k) {
            None => Ok(&[]),
            Some(v) => v.as_array().ok_or_else(|| wrong(k, v, "a sequence")),
        }
    }

    fn name_of(v: &Value, k: &str) -> R<NamespacedName> {
        let o = obj(v, k)?;
        Ok(NamespacedName::new(
            str_field(o, "namespace")?,
            str_field(o, "name")?,
        ))
    }

    const SCHEDULERS: [&str; 9] = ["rr", "wrr", "lc", "wlc", "sh", "dh", "sed", "nq", "mh"];

    fn request_of(v: &Value) -> R<Request> {
        let o = obj(v, "request")?;
        let og = obj(get(o, "origin")?, "origin")?;
        let origin = match variant(og, "kind", &["external", "pod", "node"])? {
            0 => Origin::External {
                client: ip(og, "client")?,
            },
            1 => Origin::Pod {
                pod: name_of(get(og, "pod")?, "pod")?,
            },
            _ => Origin::Node {
                node: str_field(og, "node")?.to_string(),
                src: ip(og, "src")?,
            },
        };
        let d = obj(get(o, "dst")?, "dst")?;
        let dst = match variant(d, "kind", &["ip", "name", "http"])? {
            0 => Dest::Ip(ip(d, "value")?),
            1 => Dest::Name(str_field(d, "value")?.to_string()),
            _ => Dest::Http(Box::new(http_of(d)?)),
        };
        let protocol = match variant(o, "protocol", &["TCP", "UDP", "SCTP"])? {
            0 => Protocol::Tcp,
            1 => Protocol::Udp,
            _ => Protocol::Sctp,
        };
        let keep = get(o, "keep_open")?;
        Ok(Request {
            origin,
            dst,
            port: u16_field(o, "port")?,
            protocol,
            src_port: u16_field(o, "src_port")?,
            keep_open: keep
                .as_bool()
                .ok_or_else(|| wrong("keep_open", keep, "a boolean"))?,
        })
    }

    pub(super) fn from_json(bytes: &[u8]) -> R<ShareState> {
        let text = std::str::from_utf8(bytes).map_err(|e| e.to_string())?;
        let v = json_text::parse(text).map_err(|e| e.to_string())?;
        let o = obj(&v, "the state")?;
        let modes = Mode::ALL.map(Mode::as_str);
        let mode = Mode::ALL[variant(o, "m", &modes)?];
        let scheduler = match opt(o, "s") {
            None => None,
            Some(_) => Some(Scheduler::ALL[variant(o, "s", &SCHEDULERS)?]),
        };
        let mut changes = Vec::new();
        for c in list(o, "c")? {
            let c = obj(c, "c")?;
            let state = AppState::ALL[variant(c, "state", &AppState::ALL.map(AppState::as_str))?];
            changes.push(AppChange {
                at_ms: u64_field(c, "at_ms")?,
                pod: name_of(get(c, "pod")?, "pod")?,
                state,
            });
        }
        let mut packets = Vec::new();
        for p in list(o, "p")? {
            let p = obj(p, "p")?;
            packets.push(SentPacket {
                id: u32_field(p, "id")?,
                at_ms: u64_field(p, "at_ms")?,
                request: request_of(get(p, "request")?)?,
                seed: u64_field(p, "seed")?,
            });
        }
        Ok(ShareState {
            yaml: str_field(o, "y")?.to_string(),
            mode,
            scheduler,
            seed: u64_field(o, "r")?,
            speed_percent: u16_field(o, "v")?,
            time_ms: u64_field(o, "t")?,
            focus: opt_u32(o, "f")?,
            step: opt_u32(o, "h")?,
            changes,
            packets,
            lang: opt(o, "l")
                .map(|v| string(v, "l"))
                .transpose()?
                .map(str::to_string),
            rules_node: opt(o, "n")
                .map(|v| string(v, "n"))
                .transpose()?
                .map(str::to_string),
        })
    }
}
