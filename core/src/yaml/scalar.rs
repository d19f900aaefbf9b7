//! What an unquoted scalar means to `kubectl`: YAML 1.1 integers and booleans.
//!
//! `kubectl apply -f` turns YAML into JSON with `sigs.k8s.io/yaml`, which
//! reads the text with go-yaml v2, a YAML 1.1 reader: `010` is octal 8,
//! `0x1F90` is 8080, `1_000` is 1000, `+12` is 12, and `08` (not octal) is
//! the float 8.0, which reaches the API server as the JSON number `8`. The
//! functions here give the value an integer or boolean field receives, so a
//! manifest means here what it means to the cluster. They read text only:
//! no tags, no quoting (the caller knows whether the scalar was quoted).

/// The integer an unquoted scalar is read as by kubectl, when it is one
/// that fits in an `i64`: go-yaml v2's integer rules (underscores dropped,
/// then Go's `ParseInt` with base 0: `0x`, `0o`, `0b` prefixes, a leading
/// `0` for octal, an optional sign), else a YAML float with no fractional
/// part (`1e3`, `80.0`, `08`), which JSON carries as a whole number.
pub fn int(text: &str) -> Option<i64> {
    match *text.as_bytes().first()? {
        b'0'..=b'9' | b'+' | b'-' => {}
        // go-yaml reads these with Go's ParseFloat as they are.
        b'.' => return whole(text),
        _ => return None,
    }
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    if let Some(v) = go_parse_int(&plain) {
        return Some(v);
    }
    if yaml_style_float(&plain) {
        return whole(&plain);
    }
    None
}

/// The boolean an unquoted scalar is read as by kubectl (YAML 1.1: `yes`,
/// `on`, `y` are true as well as `true`; `no`, `off`, `n` false).
pub fn boolean(text: &str) -> Option<bool> {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Some(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Some(false)
        }
        _ => None,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`, underscores already removed.
fn go_parse_int(s: &str) -> Option<i64> {
    let (negative, body) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let lower = body.get(..2).map(str::to_ascii_lowercase);
    let (radix, digits) = match lower.as_deref() {
        Some("0x") => (16, &body[2..]),
        Some("0o") => (8, &body[2..]),
        Some("0b") => (2, &body[2..]),
        _ if body.len() > 1 && body.starts_with('0') => (8, &body[1..]),
        _ => (10, body),
    };
    // `from_str_radix` would take a second sign; Go does not.
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// go-yaml v2's `yamlStyleFloat`:
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_style_float(s: &str) -> bool {
    fn digits(b: &[u8]) -> usize {
        b.iter().take_while(|c| c.is_ascii_digit()).count()
    }
    let mut b = s.as_bytes();
    if let [b'+' | b'-', rest @ ..] = b {
        b = rest;
    }
    if let [b'.', rest @ ..] = b {
        let n = digits(rest);
        if n == 0 {
            return false;
        }
        b = &rest[n..];
    } else {
        let n = digits(b);
        if n == 0 {
            return false;
        }
        b = &b[n..];
        if let [b'.', rest @ ..] = b {
            b = &rest[digits(rest)..];
        }
    }
    if let [b'e' | b'E', rest @ ..] = b {
        let rest = match rest {
            [b'+' | b'-', r @ ..] => r,
            r => r,
        };
        let n = digits(rest);
        return n > 0 && n == rest.len();
    }
    b.is_empty()
}

/// A float with no fractional part, as the whole number JSON carries
/// (Go's encoder writes such a float without a decimal point): `80.0`,
/// `1e3`, `-2.50e1`. Read in integers: the decimal's digits and exponent,
/// then the double nearest to that whole number (so above 2⁵³ it rounds as
/// Go's float64 does). A fraction that the double would round away
/// (`1.00000000000000000001`) is kept, so that is not whole here.
fn whole(s: &str) -> Option<i64> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !all_digits(int_part)
        || !all_digits(frac_part)
    {
        return None;
    }
    let mut exp: i64 = match exponent {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !all_digits(digits) {
                return None;
            }
            let v = digits
                .bytes()
                .take(6)
                .fold(0i64, |v, d| v * 10 + i64::from(d - b'0'));
            if e.starts_with('-') {
                -v
            } else {
                v
            }
        }
    };
    // The significant digits, without leading or trailing zeros.
    let joined: String = int_part.chars().chain(frac_part.chars()).collect();
    exp -= frac_part.len() as i64;
    let trimmed = joined.trim_start_matches('0');
    let digits = trimmed.trim_end_matches('0');
    if digits.is_empty() {
        return Some(0);
    }
    exp += (trimmed.len() - digits.len()) as i64;
    // Below 10⁻³²⁴ the double is zero (Go reads it so, without an error).
    if digits.len() as i64 + exp <= -324 {
        return Some(0);
    }
    // Not whole, or far outside the i64 range.
    if exp < 0 || digits.len() as i64 + exp > 20 {
        return None;
    }
    let mut v: i128 = 0;
    for d in digits.bytes() {
        v = v * 10 + i128::from(d - b'0');
    }
    v *= 10i128.pow(exp as u32);
    if negative {
        v = -v;
    }
    // The i64 range as floats: [-2^63, 2^63), after rounding to a double.
    let f = v as f64;
    let bound = 9_223_372_036_854_775_808.0_f64;
    (f >= -bound && f < bound).then_some(f as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_as_kubectl_reads_them() {
        for (text, want) in [
            ("8080", Some(8080)),
            ("010", Some(8)),
            ("0o10", Some(8)),
            ("0O10", Some(8)),
            ("0x1F90", Some(8080)),
            ("0X1f90", Some(8080)),
            ("0b1010", Some(10)),
            ("-0b1010", Some(-10)),
            ("1_000", Some(1000)),
            ("0x_1F", Some(31)),
            ("+12", Some(12)),
            ("-12", Some(-12)),
            ("0", Some(0)),
            ("-0", Some(0)),
            ("00", Some(0)),
            // Not octal, so a float: 8.0, sent as 8.
            ("08", Some(8)),
            ("09", Some(9)),
            ("1e3", Some(1000)),
            ("80.0", Some(80)),
            ("80.", Some(80)),
            (".0", Some(0)),
            ("-1.5e1", Some(-15)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("-0x8000000000000000", Some(i64::MIN)),
            // Not whole numbers, or not numbers at all.
            ("80.5", None),
            (".5", None),
            ("9223372036854775808", None),
            ("1e30", None),
            ("0x", None),
            ("0x+5", None),
            ("0xG", None),
            ("+-1", None),
            ("--1", None),
            ("1-2", None),
            ("2024-01-02", None),
            ("12:30", None),
            ("_1", None),
            ("", None),
            ("http", None),
            (".inf", None),
            ("1e", None),
            ("e3", None),
            ("0x1p4", None),
            ("١٢", None),
        ] {
            assert_eq!(int(text), want, "{text:?}");
        }
    }

    #[test]
    fn whole_floats_read_in_integers_as_the_double_reads_them() {
        // What the float reading gives (Go's ParseFloat, then a whole-number check).
        let by_float = |t: &str| -> Option<i64> {
            let f: f64 = t.parse().ok()?;
            let bound = 9_223_372_036_854_775_808.0_f64;
            (f.is_finite() && f.fract() == 0.0 && f >= -bound && f < bound).then_some(f as i64)
        };
        for t in [
            "80.0",
            "1e3",
            "1E3",
            "-2.50e1",
            "+7.",
            ".5e1",
            "0.0",
            "-0.0",
            "000.000e5",
            "1.5",
            "1e-1",
            "10e-1",
            "123.4500e2",
            "9.2233720368547758e18",
            "9.3e18",
            "-9.2233720368547758e18",
            "9007199254740993.0",
            "1e30",
            "1e400",
            "1e-400",
            "1.e2",
            "e5",
            ".",
            "1.2.3",
            "1e",
            "1e+",
            "12345678901234567890e-5",
            "0.000000000000000000000000000001e30",
        ] {
            assert_eq!(whole(t), by_float(t), "{t}");
        }
    }

    #[test]
    fn booleans_as_kubectl_reads_them() {
        for t in [
            "true", "True", "TRUE", "yes", "Yes", "YES", "y", "Y", "on", "On", "ON",
        ] {
            assert_eq!(boolean(t), Some(true), "{t}");
        }
        for f in [
            "false", "False", "FALSE", "no", "No", "NO", "n", "N", "off", "Off", "OFF",
        ] {
            assert_eq!(boolean(f), Some(false), "{f}");
        }
        for other in ["tRUE", "1", "0", "enabled", "", "yES", "oN"] {
            assert_eq!(boolean(other), None, "{other}");
        }
    }
}
