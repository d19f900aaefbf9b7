//! The editor's own undo history for large texts: a windowed textarea
//! (see [`super::textwindow`]) loses the browser's undo stack each time its
//! window moves, so edits to a text of [`WINDOW_AT`] bytes or more are
//! recorded here and Ctrl+Z / Ctrl+Shift+Z replay them on the whole draft.
//!
//! Pure text arithmetic, tested natively. Bounded: at most [`MAX_EDITS`]
//! edits and [`MAX_BYTES`] bytes of text are kept, the oldest dropped
//! first, so a long session costs no more than a short one.

use super::textwindow::WINDOW_AT;
use std::collections::VecDeque;

/// Edits kept for undo.
pub const MAX_EDITS: usize = 200;
/// Bytes of removed and inserted text kept for undo.
pub const MAX_BYTES: usize = 8 * 1024 * 1024;

/// The bytes `at..at + removed.len()` of the text became `inserted`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub at: usize,
    pub removed: String,
    pub inserted: String,
}

impl Edit {
    fn bytes(&self) -> usize {
        self.removed.len() + self.inserted.len()
    }

    /// `text` with this edit made, or `None` when it does not apply (the
    /// text is not the one the edit was recorded on).
    fn apply(&self, text: &str) -> Option<String> {
        let end = self.at.checked_add(self.removed.len())?;
        if text.get(self.at..end)? != self.removed {
            return None;
        }
        let mut out = String::with_capacity(text.len() - self.removed.len() + self.inserted.len());
        out.push_str(&text[..self.at]);
        out.push_str(&self.inserted);
        out.push_str(&text[end..]);
        Some(out)
    }

    fn inverse(&self) -> Edit {
        Edit {
            at: self.at,
            removed: self.inserted.clone(),
            inserted: self.removed.clone(),
        }
    }
}

/// The edit that turns `before` into `after`: what differs between their
/// longest common prefix and suffix (on character boundaries); `None` when
/// they are equal.
pub fn diff(before: &str, after: &str) -> Option<Edit> {
    if before == after {
        return None;
    }
    let mut head = before
        .bytes()
        .zip(after.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !before.is_char_boundary(head) || !after.is_char_boundary(head) {
        head -= 1;
    }
    let room = before.len().min(after.len()) - head;
    let mut tail = before
        .bytes()
        .rev()
        .zip(after.bytes().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    while !before.is_char_boundary(before.len() - tail)
        || !after.is_char_boundary(after.len() - tail)
    {
        tail -= 1;
    }
    Some(Edit {
        at: head,
        removed: before[head..before.len() - tail].to_string(),
        inserted: after[head..after.len() - tail].to_string(),
    })
}

/// Undo and redo stacks of a large text's edits.
#[derive(Clone, Debug, Default)]
pub struct History {
    undo: VecDeque<Edit>,
    redo: Vec<Edit>,
    bytes: usize,
}

impl History {
    /// Note the user's `edit` of a text of `before_len` bytes that now has
    /// `after_len`. Edits of texts smaller than [`WINDOW_AT`] on both sides
    /// are the browser's to undo: they clear this history.
    pub fn record(&mut self, edit: Option<Edit>, before_len: usize, after_len: usize) {
        if before_len < WINDOW_AT && after_len < WINDOW_AT {
            *self = History::default();
            return;
        }
        let Some(edit) = edit else {
            return;
        };
        self.redo.clear();
        // Typing runs join into one edit, as the browser's do: an insert
        // right after the last insert, unless a line ended.
        if let Some(last) = self.undo.back_mut() {
            let joins = edit.removed.is_empty()
                && last.removed.is_empty()
                && last.at + last.inserted.len() == edit.at
                && !last.inserted.ends_with('\n')
                && edit.inserted.chars().count() == 1;
            if joins {
                last.inserted.push_str(&edit.inserted);
                self.bytes += edit.inserted.len();
                self.trim();
                return;
            }
        }
        self.bytes += edit.bytes();
        self.undo.push_back(edit);
        self.trim();
    }

    fn trim(&mut self) {
        while self.undo.len() > MAX_EDITS || self.bytes > MAX_BYTES {
            match self.undo.pop_front() {
                Some(e) => self.bytes -= e.bytes(),
                None => break,
            }
        }
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    /// `text` with the last edit undone, and where the caret goes (the end
    /// of what came back). `None` with nothing to undo or a text the
    /// history does not describe (then the history is cleared).
    pub fn undo(&mut self, text: &str) -> Option<(String, usize)> {
        let edit = self.undo.pop_back()?;
        self.bytes -= edit.bytes();
        let back = edit.inverse();
        let Some(out) = back.apply(text) else {
            *self = History::default();
            return None;
        };
        let caret = back.at + back.inserted.len();
        self.redo.push(edit);
        Some((out, caret))
    }

    /// `text` with the last undone edit made again, and the caret after it.
    pub fn redo(&mut self, text: &str) -> Option<(String, usize)> {
        let edit = self.redo.pop()?;
        let Some(out) = edit.apply(text) else {
            *self = History::default();
            return None;
        };
        let caret = edit.at + edit.inserted.len();
        self.bytes += edit.bytes();
        self.undo.push_back(edit);
        self.trim();
        Some((out, caret))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big() -> String {
        "kind: Service\n".repeat(WINDOW_AT / 14 + 1)
    }

    #[test]
    fn the_diff_is_what_changed_on_character_boundaries() {
        assert_eq!(diff("abc", "abc"), None);
        let e = diff("name: a\n", "name: ab\n").unwrap();
        assert_eq!(
            (e.at, e.removed.as_str(), e.inserted.as_str()),
            (7, "", "b")
        );
        // Two characters sharing a first byte are not split.
        let e = diff("x가y", "x각y").unwrap();
        assert_eq!(
            (e.at, e.removed.as_str(), e.inserted.as_str()),
            (1, "가", "각")
        );
        // A repeated letter: the prefix takes what it can, the suffix the rest.
        let e = diff("aaa", "aa").unwrap();
        assert_eq!(
            (e.at, e.removed.as_str(), e.inserted.as_str()),
            (2, "a", "")
        );
    }

    #[test]
    fn typing_undoes_as_a_run_and_redoes() {
        let mut text = big();
        let start = text.clone();
        let mut h = History::default();
        for c in ["#", " ", "h", "i"] {
            let at = 14;
            let before = text.clone();
            let offset = text[at..].find('\n').map_or(text.len(), |i| at + i);
            text.insert_str(offset, c);
            h.record(diff(&before, &text), before.len(), text.len());
        }
        assert!(text.starts_with("kind: Service\nkind: Service# hi\n"));
        let (undone, caret) = h.undo(&text).unwrap();
        assert_eq!(undone, start, "one Ctrl+Z takes the typed run back");
        assert_eq!(caret, 27);
        assert!(!h.can_undo());
        let (redone, _) = h.redo(&undone).unwrap();
        assert_eq!(redone, text);
        // A new edit clears what could be redone.
        h.undo(&redone).unwrap();
        let again = format!("{start}x");
        h.record(diff(&start, &again), start.len(), again.len());
        assert!(!h.can_redo());
    }

    #[test]
    fn a_large_paste_is_undone_to_the_small_text() {
        let small = "kind: Pod\n".to_string();
        let pasted = big();
        let mut h = History::default();
        h.record(diff(&small, &pasted), small.len(), pasted.len());
        assert_eq!(h.undo(&pasted).map(|(t, _)| t), Some(small));
    }

    #[test]
    fn small_texts_are_the_browsers_and_history_is_bounded() {
        let mut h = History::default();
        h.record(diff("a", "ab"), 1, 2);
        assert!(!h.can_undo());
        let mut text = big();
        for i in 0..(MAX_EDITS + 50) {
            let before = text.clone();
            text.insert_str(0, if i % 2 == 0 { "x\n" } else { "y\n" });
            h.record(diff(&before, &text), before.len(), text.len());
        }
        assert_eq!(h.undo.len(), MAX_EDITS);
        let huge = "z".repeat(MAX_BYTES);
        let before = text.clone();
        text.push_str(&huge);
        h.record(diff(&before, &text), before.len(), text.len());
        assert!(h.bytes <= MAX_BYTES);
        // A text the history does not describe: nothing applies, and the
        // history is cleared rather than corrupting the draft.
        assert_eq!(h.undo("unrelated"), None);
        assert!(!h.can_undo());
    }
}
