//! Percent-encoding (`%XX`) as URLs and query strings write it: one reader
//! of an escape, shared by every decoder.

/// The byte a `%XX` escape at `i` of `b` stands for, or `None` when `b[i..]`
/// does not start with a complete escape.
pub fn escape_at(b: &[u8], i: usize) -> Option<u8> {
    let hex = |j: usize| b.get(j).and_then(|x| char::from(*x).to_digit(16));
    match (b.get(i), hex(i.checked_add(1)?), hex(i.checked_add(2)?)) {
        // Two hex digits are below 256.
        (Some(b'%'), Some(h), Some(l)) => u8::try_from(h * 16 + l).ok(),
        _ => None,
    }
}

/// `text` with every `%XX` decoded (a malformed escape kept as written) and,
/// when `plus_is_space` (form encoding, as in a query), `+` read as a space;
/// bytes that are not UTF-8 become U+FFFD.
pub fn decode(text: &str, plus_is_space: bool) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if let Some(byte) = escape_at(b, i) {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(if plus_is_space && c == b'+' { b' ' } else { c });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_read_whole_or_not_at_all() {
        assert_eq!(escape_at(b"%41", 0), Some(b'A'));
        assert_eq!(escape_at(b"x%ff", 1), Some(0xff));
        assert_eq!(escape_at(b"%4", 0), None);
        assert_eq!(escape_at(b"%zz", 0), None);
        assert_eq!(escape_at(b"a", 0), None);
        assert_eq!(escape_at(b"", usize::MAX), None);
    }

    #[test]
    fn decoding_keeps_what_is_not_an_escape() {
        assert_eq!(decode("a%20b%zz%4", false), "a b%zz%4");
        assert_eq!(decode("a+b%20c", true), "a b c");
        assert_eq!(decode("a+b", false), "a+b");
        assert_eq!(decode("100%", true), "100%");
        assert_eq!(decode("%ED%95%9C", true), "한");
        assert_eq!(decode("%FF", true), "\u{FFFD}");
    }
}
