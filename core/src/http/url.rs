//! A URL's parts as curl sends them (RFC 3986): the scheme, the userinfo
//! (never part of the Host; curl sends it as Basic credentials), the host
//! (lower case; an internationalised name as its IDNA A-label,
//! `xn--…` by RFC 3492's Punycode), one optional port, the path and query;
//! the fragment is never sent. Errors are typed and located by byte.
//!
//! Host names are mapped by lower-casing the letters of Latin-1, Latin
//! Extended-A, Greek and Cyrillic, not by the full UTS #46 table (which
//! would put Unicode's case tables in the app's download): names that need
//! more (such as `ß` or full-width letters) are sent as written.

use super::values::{RequestProblem, Scheme};

/// A URL read into the parts a request uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlParts {
    pub scheme: Scheme,
    /// `user[:password]`, percent-decoded, when the URL has one.
    pub userinfo: Option<String>,
    /// Lower case; IPv6 without brackets; IDN labels as `xn--` A-labels.
    pub host: String,
    pub port: Option<u16>,
    pub path: String,
    /// Without `?` (empty when none).
    pub query: String,
}

/// Read `url` (already trimmed, no spaces or control characters). The
/// error's byte offset points at what is wrong.
pub fn parse(url: &str) -> Result<UrlParts, (usize, RequestProblem)> {
    let lower = url.to_ascii_lowercase();
    let (scheme, start) = if lower.starts_with("https://") {
        (Scheme::Https, 8)
    } else if lower.starts_with("http://") {
        (Scheme::Http, 7)
    } else {
        return Err((0, RequestProblem::NoScheme));
    };
    let rest = url.get(start..).unwrap_or("");
    // The fragment ends the URL and is never sent.
    let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
    let (authority, path_query) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    let (userinfo, host_port, at) = match authority.rsplit_once('@') {
        Some((u, h)) => (
            Some(crate::util::percent::decode(u, false)),
            h,
            start + u.len() + 1,
        ),
        None => (None, authority, start),
    };
    let (host, port) = split_host_port(host_port).ok_or((at, RequestProblem::BadAuthority))?;
    Ok(UrlParts {
        scheme,
        userinfo,
        host,
        port,
        path: if path.is_empty() { "/" } else { path }.to_string(),
        query: query.to_string(),
    })
}

/// `HOST[:PORT]` or `[IPv6][:PORT]`: the host (lower case, IDN as
/// A-labels) and the port (1–65535); `None` when either cannot be read,
/// including a second `:PORT`.
pub fn split_host_port(s: &str) -> Option<(String, Option<u16>)> {
    let (h, p) = if let Some(r) = s.strip_prefix('[') {
        let (h, rest) = r.split_once(']')?;
        if !(rest.is_empty() || rest.starts_with(':')) || h.parse::<std::net::Ipv6Addr>().is_err() {
            return None;
        }
        (h, rest.strip_prefix(':'))
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if h.is_empty() {
        return None;
    }
    let port = match p {
        Some(p) => Some(p.parse::<u16>().ok().filter(|x| *x > 0)?),
        None => None,
    };
    Some((to_ascii_host(h)?, port))
}

/// A host name as it goes on the wire: lower case, each label with
/// characters beyond ASCII as `xn--` + Punycode. `None` when a label cannot
/// be encoded.
pub fn to_ascii_host(host: &str) -> Option<String> {
    if host.is_ascii() {
        return Some(host.to_ascii_lowercase());
    }
    let labels: Option<Vec<String>> = host
        .split('.')
        .map(|label| {
            let label: String = label.chars().map(lower).collect();
            if label.is_ascii() {
                Some(label)
            } else {
                punycode(&label).map(|p| format!("xn--{p}"))
            }
        })
        .collect();
    Some(labels?.join("."))
}

/// `c` in lower case, for ASCII and the capitals of Latin-1, Latin
/// Extended-A, Greek and Cyrillic; any other character as it is.
fn lower(c: char) -> char {
    let u = u32::from(c);
    let to = match u {
        0x41..=0x5A | 0xC0..=0xD6 | 0xD8..=0xDE | 0x391..=0x3A1 | 0x3A3..=0x3AB => u + 32,
        0x410..=0x42F => u + 32,
        0x400..=0x40F => u + 80,
        0x178 => 0xFF,
        // Latin Extended-A pairs capital (even) and small (odd), except
        // the run 0x139..0x148 and 0x179..0x17E, where capitals are odd.
        0x100..=0x137 | 0x14A..=0x177 if u % 2 == 0 => u + 1,
        0x139..=0x148 | 0x179..=0x17E if u % 2 == 1 => u + 1,
        _ => u,
    };
    char::from_u32(to).unwrap_or(c)
}

/// RFC 3492's Punycode of `input` (the encoder of its section 6.3, with
/// its parameters), or `None` on overflow.
pub fn punycode(input: &str) -> Option<String> {
    const BASE: u32 = 36;
    const T_MIN: u32 = 1;
    const T_MAX: u32 = 26;
    const SKEW: u32 = 38;
    const DAMP: u32 = 700;
    fn adapt(delta: u32, points: u32, first: bool) -> u32 {
        let mut delta = if first { delta / DAMP } else { delta / 2 };
        delta += delta / points.max(1);
        let mut k = 0;
        while delta > ((BASE - T_MIN) * T_MAX) / 2 {
            delta /= BASE - T_MIN;
            k += BASE;
        }
        k + (BASE - T_MIN + 1) * delta / (delta + SKEW)
    }
    fn digit(d: u32) -> char {
        let b = if d < 26 {
            b'a' + d as u8
        } else {
            b'0' + (d - 26) as u8
        };
        char::from(b)
    }
    let points: Vec<u32> = input.chars().map(u32::from).collect();
    let mut out: String = input.chars().filter(char::is_ascii).collect();
    let basic = out.chars().count() as u32;
    let mut handled = basic;
    if basic > 0 {
        out.push('-');
    }
    let (mut n, mut delta, mut bias) = (128u32, 0u32, 72u32);
    let total = points.len() as u32;
    while handled < total {
        let m = points.iter().copied().filter(|&c| c >= n).min()?;
        delta = delta.checked_add((m - n).checked_mul(handled + 1)?)?;
        n = m;
        for &c in &points {
            if c < n {
                delta = delta.checked_add(1)?;
            }
            if c == n {
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = if k <= bias {
                        T_MIN
                    } else if k >= bias + T_MAX {
                        T_MAX
                    } else {
                        k - bias
                    };
                    if q < t {
                        break;
                    }
                    out.push(digit(t + (q - t) % (BASE - t)));
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                out.push(digit(q));
                bias = adapt(delta, handled + 1, handled == basic);
                delta = 0;
                handled += 1;
            }
        }
        delta = delta.checked_add(1)?;
        n = n.checked_add(1)?;
    }
    Some(out)
}

/// A host as a URL writes it: an IPv6 address in brackets.
pub fn host_in_url(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// The `Authorization` value curl sends for a URL's userinfo: Basic with
/// `user:password` (an empty password when the URL gives none).
pub fn basic_credentials(userinfo: &str) -> String {
    let pair = if userinfo.contains(':') {
        userinfo.to_string()
    } else {
        format!("{userinfo}:")
    };
    let mut b64 = String::new();
    crate::util::base_n::push_base64url(&mut b64, pair.as_bytes());
    let mut out = String::from("Basic ");
    out.extend(b64.chars().map(|c| match c {
        '-' => '+',
        '_' => '/',
        c => c,
    }));
    while (out.len() - 6) % 4 != 0 {
        out.push('=');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punycode_of_rfc_3492_samples() {
        // Section 7.1's samples (lower-cased where the RFC mixes case).
        for (input, want) in [
            ("bücher", "bcher-kva"),
            ("münchen", "mnchen-3ya"),
            ("他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"),
            ("3年b組金八先生", "3b-ww4c5e180e575a65lsy2b"),
            (
                "세계의모든사람들이한국어를이해한다면얼마나좋을까",
                "989aomsvi5e83db1d2a355cv1e0vak1dwrv93d5xbh15a0dt30a5jpsd879ccm6fea98c",
            ),
            ("ü", "tda"),
        ] {
            assert_eq!(punycode(input).as_deref(), Some(want), "{input}");
        }
    }

    #[test]
    fn hosts_as_curl_sends_them() {
        assert_eq!(
            to_ascii_host("Bücher.TestHost.com").as_deref(),
            Some("xn--bcher-kva.testhost.com")
        );
        assert_eq!(to_ascii_host("Example.COM").as_deref(), Some("example.com"));
        assert_eq!(to_ascii_host("BÜCHER.de"), to_ascii_host("bücher.de"));
        assert_eq!(to_ascii_host("ПРИМЕР.рф"), to_ascii_host("пример.рф"));
        assert_eq!(to_ascii_host("ΑΘΗΝΑ.gr"), to_ascii_host("αθηνα.gr"));
        assert_eq!(to_ascii_host("ŁÓDŹ.pl"), to_ascii_host("łódź.pl"));
        // Checked against the compiler's full Unicode table.
        for c in (0xC0u32..0x180)
            .chain(0x391..0x3AC)
            .chain(0x400..0x430)
            .filter_map(char::from_u32)
        {
            let full: Vec<char> = c.to_lowercase().collect();
            if full.len() == 1 && c != 'İ' && c != 'ſ' {
                assert_eq!(lower(c), full[0], "{c:?}");
            }
        }
    }

    #[test]
    fn urls_read_as_rfc_3986_reads_them() {
        let u = parse("https://user:pw@Bücher.testhost.com:8443/api?q=1#frag").unwrap();
        assert_eq!(u.userinfo.as_deref(), Some("user:pw"));
        assert_eq!(u.host, "xn--bcher-kva.testhost.com");
        assert_eq!(u.port, Some(8443));
        assert_eq!((u.path.as_str(), u.query.as_str()), ("/api", "q=1"));
        let u = parse("http://h/a#x?y").unwrap();
        assert_eq!((u.path.as_str(), u.query.as_str()), ("/a", ""));
        let u = parse("http://h#x").unwrap();
        assert_eq!(u.path, "/");
        let u = parse("http://[2001:db8::1]:81/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("2001:db8::1", Some(81)));
        for bad in [
            "https://host:443:443/",
            "http://:80/",
            "http://h:0/",
            "http://h:65536/",
            "http://[::1/",
            "http://[nothost]/",
            "http://user@/",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse("ftp://h/"), Err((0, RequestProblem::NoScheme)));
        assert_eq!(
            parse("http://u@h:99999/"),
            Err((9, RequestProblem::BadAuthority))
        );
    }

    #[test]
    fn basic_credentials_as_curl_sends_them() {
        assert_eq!(basic_credentials("user"), "Basic dXNlcjo=");
        assert_eq!(basic_credentials("user:pw"), "Basic dXNlcjpwdw==");
        assert_eq!(
            basic_credentials("aladdin:opensesame"),
            "Basic YWxhZGRpbjpvcGVuc2VzYW1l"
        );
    }
}
