//! Diagnostics: what is wrong with the input, where, and how to fix it.
//!
//! Parsing and validation never fail: they return a value plus a list of
//! diagnostics. Nothing here formats for a particular output; `Display` is the
//! one plain-text rendering shared by the CLI and the web app.

use serde::Serialize;
use std::fmt;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Something was skipped or filled in; the result is still usable.
    Warning,
    /// The object (or document) could not be used as written.
    Error,
}

/// A position in the source text (1-based line and column).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub line: usize,
    pub column: usize,
}

/// One problem found in the input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Which input file (index into the list given), when there are several.
    pub file: usize,
    /// Index of the YAML document in its file (0-based; messages number
    /// documents from 1, see [`Diagnostic::document_number`]).
    pub document: usize,
    /// `Kind/namespace/name` (or `Kind/name`), when known.
    pub object: Option<String>,
    /// Field path inside the object, e.g. `spec.ports[0].port`.
    pub field: Option<String>,
    pub span: Option<Span>,
    pub message: String,
    /// How to fix it, when there is a simple answer.
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            file: 0,
            document: 0,
            object: None,
            field: None,
            span: None,
            message: message.into(),
            hint: None,
        }
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The document as people count them: the first is 1.
    pub fn document_number(&self) -> usize {
        self.document.saturating_add(1)
    }

    /// Where it is, when that is known: a diagnostic about the whole input
    /// (its size, say) has no position, and a renderer must then print none
    /// rather than "line 0" (nor a document: see `Display`).
    pub fn position(&self) -> Option<Span> {
        self.span.filter(|s| s.line > 0 && s.column > 0)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{sev}")?;
        // Where it is, when that is known. A diagnostic without a position
        // is about the input or an object as a whole (named below); its
        // `document` may be the default 0, which would name the wrong one.
        if let Some(span) = self.position() {
            write!(
                f,
                ": document {}, line {}, column {}",
                self.document_number(),
                span.line,
                span.column
            )?;
        }
        match (&self.object, &self.field) {
            (Some(o), Some(p)) => write!(f, ": {o}: {p}")?,
            (Some(o), None) => write!(f, ": {o}")?,
            (None, Some(p)) => write!(f, ": {p}")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.message)?;
        if let Some(h) = &self.hint {
            write!(f, " (hint: {h})")?;
        }
        Ok(())
    }
}

/// `s` in double quotes with `"`, `\\` and control characters escaped, as Go's
/// `%q` (and the API server's messages) show a value. Written out rather than
/// with `{:?}`: the shipped `.wasm` is built with Debug formatting compiled
/// out, and this text reaches the reader.
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\'' => out.push(c),
            c => out.extend(c.escape_debug()),
        }
    }
    out.push('"');
    out
}

/// True when any diagnostic is an error.
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(Diagnostic::is_error)
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn quoted_matches_the_debug_text_it_replaces() {
        for s in [
            "",
            "web",
            "a\"b",
            "back\\slash",
            "it's",
            "tab\there",
            "line\nbreak",
            "nul\0",
            "한국어",
            "\u{7f}",
        ] {
            assert_eq!(quoted(s), format!("{s:?}"), "{s}");
        }
    }
}
