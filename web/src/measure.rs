//! How wide a label is drawn, and a label cut to fit, in the diagram's
//! logical units; numbers as SVG attributes. Wide characters (Hangul, CJK)
//! count a whole em, the rest 0.62 em.

/// A number as an SVG attribute (one decimal).
pub fn n(v: f64) -> String {
    crate::numbers::one_decimal(v)
}

/// Characters of a `px`-sized label that fit in `w` logical units.
pub fn fits(w: f64, px: f64) -> usize {
    ((w / (px * 0.62)).floor() as usize).max(4)
}

/// Whether a character is drawn about a whole em wide (Hangul, CJK, full-width
/// forms) rather than the 0.62 em [`fits`] assumes.
fn wide(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x11FF | 0x2E80..=0xA4CF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFF60)
}

/// `text` cut with `…` to fit `w` at `px`, wide characters counted a whole
/// em: a Korean line is half again as wide as [`fits`] reckons.
pub fn clip(text: &str, w: f64, px: f64) -> String {
    let em = |c: char| if wide(c) { px } else { px * 0.62 };
    if drawn_width(text, px) <= w {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = em('…');
    for c in text.chars() {
        used += em(c);
        if used > w {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// `text` on at most `lines` lines of `w` at `px`, broken after a space
/// where one is near (else inside a word); only the last line is cut with
/// `…`, when the text needs more lines.
pub fn wrap(text: &str, w: f64, px: f64, lines: usize) -> Vec<String> {
    let em = |c: char| if wide(c) { px } else { px * 0.62 };
    let mut out: Vec<String> = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() && out.len() + 1 < lines.max(1) {
        if drawn_width(rest, px) <= w {
            break;
        }
        // The longest prefix that fits, then back to its last space.
        let mut used = 0.0;
        let mut end = 0;
        for (i, c) in rest.char_indices() {
            used += em(c);
            if used > w {
                break;
            }
            end = i + c.len_utf8();
        }
        let cut = match rest[..end].rfind(' ') {
            Some(s) if s > end / 2 => s + 1,
            _ => end.max(rest.chars().next().map_or(1, char::len_utf8)),
        };
        out.push(rest[..cut].trim_end().to_string());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        out.push(clip(rest, w, px));
    }
    out
}

/// How wide `text` is drawn at `px`, wide characters a whole em, the rest
/// 0.62 em.
pub fn drawn_width(text: &str, px: f64) -> f64 {
    text.chars()
        .map(|c| if wide(c) { px } else { px * 0.62 })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::{clip, wrap};

    #[test]
    fn wrap_breaks_after_spaces_and_cuts_only_the_last_line() {
        assert_eq!(wrap("short", 100.0, 10.0, 2), ["short"]);
        // 6.2 a character: 16 characters a line.
        assert_eq!(
            wrap(
                "PREROUTING: matches, jumps to KUBE-SERVICES",
                100.0,
                10.0,
                2
            ),
            ["PREROUTING:", "matches, jumps …"]
        );
        assert_eq!(
            wrap(
                "PREROUTING: matches, jumps to KUBE-SERVICES",
                100.0,
                10.0,
                3
            ),
            ["PREROUTING:", "matches, jumps", "to KUBE-SERVICES"]
        );
        // A word longer than a line is broken inside.
        assert_eq!(
            wrap("KUBE-SVC-CDGGSHYLG3RE2FKL x", 100.0, 10.0, 2),
            ["KUBE-SVC-CDGGSHY", "LG3RE2FKL x"]
        );
        // Hangul counts a whole em: 10 a line.
        assert_eq!(
            wrap("가나다라마 바사아자차카", 100.0, 10.0, 2),
            ["가나다라마", "바사아자차카"]
        );
    }

    #[test]
    fn clip_counts_hangul_a_whole_em() {
        // (text, width, px, expected)
        for (text, w, px, want) in [
            ("abcd", 100.0, 10.0, "abcd"),
            ("abcdefghijklmnopqrstuvwxyz", 65.0, 10.0, "abcdefghi…"),
            ("가나다라마바사", 70.0, 10.0, "가나다라마바사"),
            ("가나다라마바사", 50.0, 10.0, "가나다라…"),
            ("LB가 이 노드", 60.0, 10.0, "LB가 이 …"),
        ] {
            let got = clip(text, w, px);
            assert_eq!(got, want, "{text} in {w}");
        }
    }
}
