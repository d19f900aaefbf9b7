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

/// How wide `text` is drawn at `px`, wide characters a whole em, the rest
/// 0.62 em.
pub fn drawn_width(text: &str, px: f64) -> f64 {
    text.chars()
        .map(|c| if wide(c) { px } else { px * 0.62 })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::clip;

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
