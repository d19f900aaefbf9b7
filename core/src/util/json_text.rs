//! JSON text without serde_json: a small reader into a value tree and the
//! string escaper, for the two JSON texts the app itself reads and writes
//! (share links and the editor's saved text). serde_json's parser and `Value`
//! cost the web app's download more than this whole module; the CLI's JSON
//! renderings still use serde_json (the `json` feature).
//!
//! The reader accepts exactly RFC 8259 JSON, as serde_json does (same escapes,
//! surrogate pairs, nesting limit, no trailing text; a repeated key
//! keeps its last value). Numbers are kept only as far as the app reads them:
//! a non-negative integer that fits `u64`, or "some other number". It never
//! panics, never recurses past the nesting limit, and does no IO.

use std::fmt;

/// Deepest nesting of arrays and objects read (serde_json's limit too: 128
/// levels is an error), so hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 127;

/// A JSON value. Objects keep their members in text order; [`Json::get`]
/// finds the last member of a name, as a map built from them would hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// A number as far as the app reads numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Number {
    /// A non-negative integer (no fraction, no exponent) within `u64`.
    Unsigned(u64),
    /// Any other valid number: negative, fractional, with an exponent, or
    /// larger than `u64`.
    Other,
}

impl Json {
    /// The value of member `key` of an object (the last one when repeated).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|m| &m.1),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Json> {
        matches!(self, Json::Object(_)).then_some(self)
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(Number::Unsigned(n)) => Some(*n),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }
}

/// Why a text is not JSON, and where (1-based line and column, in
/// characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub message: &'static str,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for JsonError {}

/// Read one JSON value (with optional whitespace around it).
pub fn parse(text: &str) -> Result<Json, JsonError> {
    let mut r = Reader {
        s: text.as_bytes(),
        pos: 0,
    };
    let v = r.value(0);
    let v = v.and_then(|v| {
        r.skip_ws();
        if r.pos < r.s.len() {
            Err("trailing characters")
        } else {
            Ok(v)
        }
    });
    v.map_err(|message| {
        // The line and column of the byte where reading stopped.
        let upto = &text.as_bytes()[..r.pos.min(text.len())];
        let line = 1 + upto.iter().filter(|&&b| b == b'\n').count();
        let start = upto.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = 1 + upto[start..].iter().filter(|&&b| b & 0xC0 != 0x80).count();
        JsonError {
            message,
            line,
            column,
        }
    })
}

/// Append `s` as a JSON string literal, escaped exactly as serde_json writes
/// it: `"` and `\`, the short escapes `\b \f \n \r \t`, other control
/// characters as `\u00xx` (lower-case hex); everything else as it is.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let mut plain = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[plain..i]);
        plain = i + 1;
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(esc);
        }
    }
    out.push_str(&s[plain..]);
    out.push('"');
}

/// `s` as a JSON string literal (see [`write_str`]).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_str(&mut out, s);
    out
}

type Step<T> = Result<T, &'static str>;

struct Reader<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Consume `word` (after its first byte was seen).
    fn word(&mut self, word: &[u8], v: Json) -> Step<Json> {
        if self.s[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err("expected value")
        }
    }

    fn value(&mut self, depth: usize) -> Step<Json> {
        self.skip_ws();
        match self.peek() {
            None => Err("EOF while parsing a value"),
            Some(b'n') => self.word(b"null", Json::Null),
            Some(b't') => self.word(b"true", Json::Bool(true)),
            Some(b'f') => self.word(b"false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'-' | b'0'..=b'9') => self.number().map(Json::Number),
            Some(open @ (b'[' | b'{')) => {
                if depth >= MAX_DEPTH {
                    return Err("recursion limit exceeded");
                }
                self.pos += 1;
                if open == b'[' {
                    self.array(depth + 1)
                } else {
                    self.object(depth + 1)
                }
            }
            Some(_) => Err("expected value"),
        }
    }

    /// After `[`.
    fn array(&mut self, depth: usize) -> Step<Json> {
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                None => return Err("EOF while parsing a list"),
                Some(_) => return Err("expected `,` or `]`"),
            }
        }
    }

    /// After `{`.
    fn object(&mut self, depth: usize) -> Step<Json> {
        let mut members = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b'"') => {}
                None => return Err("EOF while parsing an object"),
                Some(_) => return Err("key must be a string"),
            }
            let key = self.string()?;
            self.skip_ws();
            match self.peek() {
                Some(b':') => self.pos += 1,
                None => return Err("EOF while parsing an object"),
                Some(_) => return Err("expected `:`"),
            }
            members.push((key, self.value(depth)?));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(members));
                }
                None => return Err("EOF while parsing an object"),
                Some(_) => return Err("expected `,` or `}`"),
            }
        }
    }

    /// After `-` or a digit: RFC 8259's number grammar.
    fn number(&mut self) -> Step<Number> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let start = self.pos;
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err("invalid number"),
        }
        // A leading zero is the whole integer part.
        let int = &self.s[start..self.pos];
        let mut plain = !negative;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err("invalid number");
            }
            self.digits();
            plain = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err("invalid number");
            }
            self.digits();
            plain = false;
        }
        if !plain {
            return Ok(Number::Other);
        }
        let mut n: u64 = 0;
        for &d in int {
            match n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
            {
                Some(m) => n = m,
                None => return Ok(Number::Other),
            }
        }
        Ok(Number::Unsigned(n))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// At `"`: the string's text with its escapes resolved.
    fn string(&mut self) -> Step<String> {
        self.pos += 1;
        let mut out = String::new();
        let mut plain = self.pos;
        loop {
            let Some(b) = self.peek() else {
                return Err("EOF while parsing a string");
            };
            match b {
                b'"' => {
                    out.push_str(self.text(plain, self.pos));
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(self.text(plain, self.pos));
                    self.pos += 1;
                    self.escape(&mut out)?;
                    plain = self.pos;
                }
                0..=0x1f => return Err("control character in a string"),
                _ => self.pos += 1,
            }
        }
    }

    /// The input between two positions that are both at character
    /// boundaries (only ASCII bytes end a run of plain text).
    fn text(&self, from: usize, to: usize) -> &str {
        std::str::from_utf8(&self.s[from..to]).unwrap_or_default()
    }

    /// After `\`.
    fn escape(&mut self, out: &mut String) -> Step<()> {
        let Some(b) = self.peek() else {
            return Err("EOF while parsing a string");
        };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                let code = match hi {
                    0xD800..=0xDBFF => {
                        if self.s[self.pos..].starts_with(b"\\u") {
                            self.pos += 2;
                        } else {
                            return Err("lone leading surrogate in hex escape");
                        }
                        let lo = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return Err("lone leading surrogate in hex escape");
                        }
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err("lone trailing surrogate in hex escape"),
                    _ => hi,
                };
                char::from_u32(code).ok_or("invalid unicode code point")?
            }
            _ => return Err("invalid escape"),
        };
        out.push(c);
        Ok(())
    }

    /// Four hex digits.
    fn hex4(&mut self) -> Step<u32> {
        let mut n = 0;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                None => return Err("EOF while parsing a string"),
                Some(_) => return Err("invalid escape"),
            };
            n = n * 16 + u32::from(d);
            self.pos += 1;
        }
        Ok(n)
    }
}
