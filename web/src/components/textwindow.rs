//! The editor's window onto a large text: above [`WINDOW_AT`] bytes the
//! textarea holds only whole lines around the caret (Chromium's textarea
//! takes most of a second per key at a few megabytes, whatever its
//! attributes), and the rest stays in the draft in Rust.
//!
//! Pure text arithmetic, tested natively: where a window starts and ends,
//! what it holds after the user typed in it, and the textarea's UTF-16
//! positions as byte offsets. It never touches the DOM and never drops or
//! duplicates a character: the draft is always `before + window + after`.

/// Texts at least this large are edited through a window.
pub const WINDOW_AT: usize = 256 * 1024;
/// About how many bytes of text the window holds on each side of the caret.
pub const WINDOW_HALF: usize = 48 * 1024;
/// When the caret comes this close (in lines) to an edge of the window that
/// is not the text's own edge, the window moves.
pub const EDGE_LINES: usize = 40;
/// … and this close in bytes.
pub const EDGE_BYTES: usize = 8 * 1024;

/// The bytes `start..end` of the draft the textarea holds; `first_line` is
/// the 0-based number of the line at `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: usize,
    pub end: usize,
    pub first_line: usize,
}

impl Window {
    /// The whole text (a small text is not windowed).
    pub fn whole(text: &str) -> Window {
        Window {
            start: 0,
            end: text.len(),
            first_line: 0,
        }
    }

    pub fn is_whole(&self, text: &str) -> bool {
        self.start == 0 && self.end == text.len()
    }
}

fn lines_in(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// How far past the window's size an edge looks for a line's end before it
/// cuts the line (a line of megabytes is shown in part).
pub const LINE_SLACK: usize = 4 * 1024;

/// The window of `text` around byte `at`: whole lines, about
/// [`WINDOW_HALF`] bytes each side (a line longer than [`LINE_SLACK`] is cut
/// at a character boundary). A text under [`WINDOW_AT`] is whole.
pub fn around(text: &str, at: usize) -> Window {
    if text.len() < WINDOW_AT {
        return Window::whole(text);
    }
    let b = text.as_bytes();
    let at = at.min(b.len());
    // Newlines are always character boundaries in UTF-8.
    let lo = at.saturating_sub(WINDOW_HALF);
    let start = if lo == 0 {
        0
    } else {
        let from = lo.saturating_sub(LINE_SLACK);
        match b[from..lo].iter().rposition(|&c| c == b'\n') {
            Some(i) => from + i + 1,
            None if from == 0 => 0,
            None => floor_boundary(text, lo),
        }
    };
    let hi = (at + WINDOW_HALF).min(b.len());
    let to = (hi + LINE_SLACK).min(b.len());
    let end = match b[hi..to].iter().position(|&c| c == b'\n') {
        Some(i) => hi + i + 1,
        None if to == b.len() => to,
        None => ceil_boundary(text, hi),
    };
    Window {
        start,
        end,
        first_line: lines_in(&b[..start]),
    }
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The window of `text` that starts at 0-based line `line` near its middle.
pub fn around_line(text: &str, line: usize) -> (Window, usize) {
    let at = line_start(text, line);
    (around(text, at), at)
}

/// The byte where 0-based line `line` starts (the end if there is none).
pub fn line_start(text: &str, line: usize) -> usize {
    if line == 0 {
        return 0;
    }
    text.as_bytes()
        .iter()
        .enumerate()
        .filter(|(_, &c)| c == b'\n')
        .nth(line - 1)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// The draft after the user edited the window into `shown`, and the window
/// that now holds exactly `shown`.
pub fn splice(draft: &str, w: Window, shown: &str) -> (String, Window) {
    let (start, end) = (
        w.start.min(draft.len()),
        w.end.min(draft.len()).max(w.start.min(draft.len())),
    );
    let mut out = String::with_capacity(start + shown.len() + draft.len() - end);
    out.push_str(&draft[..start]);
    out.push_str(shown);
    out.push_str(&draft[end..]);
    let w = Window {
        start,
        end: start + shown.len(),
        first_line: w.first_line,
    };
    (out, w)
}

/// A textarea position (UTF-16 code units) in `s` as a byte offset.
pub fn utf16_to_byte(s: &str, units: usize) -> usize {
    let mut n = 0;
    for (i, c) in s.char_indices() {
        if n >= units {
            return i;
        }
        n += c.len_utf16();
    }
    s.len()
}

/// A byte offset in `s` as a textarea position (UTF-16 code units).
pub fn byte_to_utf16(s: &str, byte: usize) -> usize {
    s.char_indices()
        .take_while(|(i, _)| *i < byte)
        .map(|(_, c)| c.len_utf16())
        .sum()
}

/// Whether the caret at byte `caret` of the window's text `shown` is so near
/// an inner edge of the window that it should move: within [`EDGE_LINES`]
/// lines and [`EDGE_BYTES`] bytes of it (a caret far along one long line is
/// not near its window's edge).
pub fn near_inner_edge(w: Window, draft_len: usize, shown: &str, caret: usize) -> bool {
    let caret = caret.min(shown.len());
    let b = shown.as_bytes();
    let (before, after) = (&b[..caret], &b[caret..]);
    (w.start > 0 && lines_in(before) < EDGE_LINES && before.len() < EDGE_BYTES)
        || (w.end < draft_len && lines_in(after) < EDGE_LINES && after.len() < EDGE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big() -> String {
        (0..20_000)
            .map(|i| format!("line {i} é한😀 ----------\n"))
            .collect()
    }

    #[test]
    fn a_small_text_is_whole() {
        let t = "a\nb\n";
        assert_eq!(around(t, 2), Window::whole(t));
        assert!(around(t, 0).is_whole(t));
    }

    #[test]
    fn windows_are_whole_lines_around_the_caret_with_their_line_numbers() {
        let t = big();
        assert!(t.len() > WINDOW_AT);
        for at in [0, 1, 5_000, t.len() / 2, t.len() - 3, t.len()] {
            let w = around(&t, at);
            assert!(w.start <= at && at <= w.end, "{at}: {w:?}");
            assert!(w.start == 0 || t.as_bytes()[w.start - 1] == b'\n');
            assert!(w.end == t.len() || t.as_bytes()[w.end - 1] == b'\n');
            assert!(w.end - w.start <= 2 * WINDOW_HALF + 64);
            let first = t[w.start..].lines().next().unwrap_or("");
            assert_eq!(first, t.lines().nth(w.first_line).unwrap_or(""), "{at}");
        }
        let (w, at) = around_line(&t, 12_345);
        assert!(t[at..].starts_with("line 12345 "));
        assert!(w.start <= at && at < w.end);
    }

    #[test]
    fn typing_in_the_window_loses_and_doubles_nothing() {
        let t = big();
        let w = around(&t, t.len() / 2);
        let mut shown = t[w.start..w.end].to_string();
        shown.insert_str(10, "typed ✓ text");
        shown.replace_range(200..210, "");
        let (draft, w2) = splice(&t, w, &shown);
        assert_eq!(draft.len(), t.len() + "typed ✓ text".len() - 10);
        assert_eq!(&draft[w2.start..w2.end], shown);
        assert_eq!(&draft[..w.start], &t[..w.start]);
        assert_eq!(&draft[w2.end..], &t[w.end..]);
        // Typing again in the spliced window keeps it consistent.
        let (again, _) = splice(&draft, w2, &shown);
        assert_eq!(again, draft);
    }

    #[test]
    fn a_line_of_megabytes_is_shown_in_part_and_spliced_whole() {
        // A manifest, then one 2 MB line of multi-byte characters.
        let mut t: String = (0..2_000).map(|i| format!("line {i}\n")).collect();
        t.push_str(&"한".repeat(700_000));
        t.push('\n');
        for at in [t.len(), t.len() - 1_000_000, 5] {
            let w = around(&t, at);
            assert!(
                w.end - w.start <= 2 * (WINDOW_HALF + LINE_SLACK),
                "{at}: {w:?}"
            );
            assert!(t.is_char_boundary(w.start) && t.is_char_boundary(w.end));
            assert!(w.start <= at && at <= w.end);
            assert_eq!(w.first_line, t[..w.start].matches('\n').count());
            let mut shown = t[w.start..w.end].to_string();
            shown.push('x');
            let (d, w2) = splice(&t, w, &shown);
            assert_eq!(d.len(), t.len() + 1);
            assert_eq!(&d[w2.start..w2.end], shown);
        }
    }

    #[test]
    fn textarea_positions_convert_both_ways() {
        let s = "aé한😀b";
        for (units, byte) in [(0, 0), (1, 1), (2, 3), (3, 6), (5, 10), (6, 11)] {
            assert_eq!(utf16_to_byte(s, units), byte, "{units}");
            assert_eq!(byte_to_utf16(s, byte), units, "{byte}");
        }
        assert_eq!(utf16_to_byte(s, 99), s.len());
    }

    #[test]
    fn the_window_moves_only_near_an_inner_edge() {
        let t = big();
        let w = around(&t, t.len() / 2);
        let shown = &t[w.start..w.end];
        assert!(near_inner_edge(w, t.len(), shown, 0));
        assert!(near_inner_edge(w, t.len(), shown, shown.len()));
        assert!(!near_inner_edge(w, t.len(), shown, shown.len() / 2));
        // Along one long line, only the bytes count.
        let mut long = "a\n".repeat(10);
        long.push_str(&"z".repeat(WINDOW_AT));
        let lw = around(&long, long.len() / 2);
        let shown_long = &long[lw.start..lw.end];
        assert!(!near_inner_edge(
            lw,
            long.len(),
            shown_long,
            shown_long.len() / 2
        ));
        assert!(near_inner_edge(lw, long.len(), shown_long, 10));
        let first = around(&t, 0);
        assert!(!near_inner_edge(first, t.len(), &t[..first.end], 0));
    }
}
