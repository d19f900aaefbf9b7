//! kube-proxy's chain names: a hash of the Service port (and endpoint), so
//! names are stable and fit the 28-character iptables limit.
//!
//! The hash is sha256 of the name text, base32-encoded (standard alphabet),
//! cut to 16 characters (iptables) or 8 (nftables), exactly as kube-proxy.

use super::ServicePortName;
use crate::packet::Protocol;
use data_encoding::BASE32;
use sha2::{Digest, Sha256};

/// base32(sha256(text)), cut to `len` characters.
pub fn hash_prefix(text: &str, len: usize) -> String {
    let mut s = String::with_capacity(len);
    push_hash_prefix(&mut s, text, len);
    s
}

/// Appends base32(sha256(text)) cut to `len` characters to `out`. Base32
/// turns each 5 bytes into 8 characters, so only the bytes the prefix needs
/// are encoded (chain names are made 100,000s of times at scale).
pub fn push_hash_prefix(out: &mut String, text: &str, len: usize) {
    let digest = Sha256::digest(text.as_bytes());
    let bytes = len.div_ceil(8) * 5;
    let mut buf = [0u8; 56];
    let part = &digest[..bytes.min(digest.len())];
    let n = BASE32.encode_len(part.len());
    let Some(enc) = buf.get_mut(..n) else {
        out.push_str(&BASE32.encode(&digest)[..len.min(52)]);
        return;
    };
    BASE32.encode_mut(part, enc);
    let cut = len.min(n);
    // Base32 output is ASCII.
    out.push_str(std::str::from_utf8(&enc[..cut]).unwrap_or_default());
}

/// The text kube-proxy hashes for a Service port: `ns/name:port` + lower-case protocol.
pub fn service_port_hash_input(name: &ServicePortName, protocol: Protocol) -> String {
    format!("{}{}", name, protocol.as_lower())
}
