//! Base32 and base64url of RFC 4648, the two binary-to-text codes kpv needs:
//! base32 (standard alphabet) for kube-proxy's chain-name hashes, base64url
//! without padding for share links. A few lines each instead of a general
//! codec crate in the web app's download.
//!
//! Decoding is strict, as a share link's reader must be: any character
//! outside the alphabet, padding, an impossible length or non-zero unused
//! bits is refused. Nothing here allocates more than its output or panics.

const BASE32: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The first `len` characters of the (padded) base32 encoding of `data`.
pub fn push_base32_prefix(out: &mut String, data: &[u8], len: usize) {
    let chars = (data.len() * 8).div_ceil(5);
    for i in 0..len.min(data.len().div_ceil(5) * 8) {
        if i >= chars {
            out.push('=');
            continue;
        }
        // The 5 bits starting at bit 5*i, big-endian, zero past the end.
        let bit = 5 * i;
        let byte = |k: usize| u16::from(data.get(k).copied().unwrap_or(0));
        let pair = (byte(bit / 8) << 8) | byte(bit / 8 + 1);
        let v = (pair >> (11 - bit % 8)) & 31;
        out.push(char::from(BASE32[usize::from(v)]));
    }
}

/// base64url of `data`, without padding, appended to `out`.
pub fn push_base64url(out: &mut String, data: &[u8]) {
    out.reserve(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = |k: usize| u32::from(chunk.get(k).copied().unwrap_or(0));
        let n = (b(0) << 16) | (b(1) << 8) | b(2);
        // 2, 3 or 4 characters for 1, 2 or 3 bytes.
        for j in 0..=chunk.len() {
            out.push(char::from(BASE64URL[((n >> (18 - 6 * j)) & 63) as usize]));
        }
    }
}

/// The bytes of an unpadded base64url text, or `None` when it is not one.
pub fn decode_base64url(text: &[u8]) -> Option<Vec<u8>> {
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    for chunk in text.chunks(4) {
        let mut n: u32 = 0;
        for &c in chunk {
            let v = match c {
                b'A'..=b'Z' => c - b'A',
                b'a'..=b'z' => c - b'a' + 26,
                b'0'..=b'9' => c - b'0' + 52,
                b'-' => 62,
                b'_' => 63,
                _ => return None,
            };
            n = (n << 6) | u32::from(v);
        }
        // Left-align a short last chunk: 2 or 3 characters carry 1 or 2
        // bytes, and the bits after them must be zero.
        let bytes = chunk.len() * 6 / 8;
        n <<= 6 * (4 - chunk.len());
        if n & (0xFF_FFFF >> (8 * bytes)) != 0 {
            return None;
        }
        out.extend_from_slice(&n.to_be_bytes()[1..=bytes]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_test_vectors() {
        // Section 10's vectors (base64 in the URL alphabet, which these do
        // not reach, without padding).
        for (data, b32, b64) in [
            ("", "", ""),
            ("f", "MY======", "Zg"),
            ("fo", "MZXQ====", "Zm8"),
            ("foo", "MZXW6===", "Zm9v"),
            ("foob", "MZXW6YQ=", "Zm9vYg"),
            ("fooba", "MZXW6YTB", "Zm9vYmE"),
            ("foobar", "MZXW6YTBOI======", "Zm9vYmFy"),
        ] {
            let mut s = String::new();
            push_base32_prefix(&mut s, data.as_bytes(), 100);
            assert_eq!(s, b32);
            let mut s = String::new();
            push_base64url(&mut s, data.as_bytes());
            assert_eq!(s, b64);
            assert_eq!(
                decode_base64url(b64.as_bytes()),
                Some(data.as_bytes().to_vec())
            );
        }
        let mut s = String::new();
        push_base64url(&mut s, &[0xfb, 0xff, 0xbf]);
        assert_eq!(s, "-_-_");
        let mut s = String::new();
        push_base32_prefix(&mut s, b"foobar", 3);
        assert_eq!(s, "MZX");
    }

    proptest::proptest! {
        /// The same text as the general codec crate kpv used before, and
        /// the same verdict on every text it is asked to read.
        #[test]
        fn same_as_data_encoding(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..70), len in 0usize..120) {
            let mut s = String::new();
            push_base64url(&mut s, &data);
            proptest::prop_assert_eq!(&s, &data_encoding::BASE64URL_NOPAD.encode(&data));
            proptest::prop_assert_eq!(decode_base64url(s.as_bytes()), Some(data.clone()));
            let mut s = String::new();
            push_base32_prefix(&mut s, &data, len);
            let full = data_encoding::BASE32.encode(&data);
            proptest::prop_assert_eq!(s.as_str(), &full[..len.min(full.len())]);
        }

        #[test]
        fn decodes_like_data_encoding(text in "[A-Za-z0-9_=+/ -]{0,13}") {
            proptest::prop_assert_eq!(
                decode_base64url(text.as_bytes()),
                data_encoding::BASE64URL_NOPAD.decode(text.as_bytes()).ok()
            );
        }
    }

    #[test]
    fn refuses_what_is_not_unpadded_base64url() {
        for bad in [
            "A", "Zg==", "Zm9v=", "Zh", "Zm9", "Zm+v", "Zm/v", "Zm v", "Zm9vY", "é",
        ] {
            assert_eq!(decode_base64url(bad.as_bytes()), None, "{bad}");
        }
    }
}
