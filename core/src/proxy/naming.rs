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
    let digest = Sha256::digest(text.as_bytes());
    let mut s = BASE32.encode(&digest);
    s.truncate(len);
    s
}

/// The text kube-proxy hashes for a Service port: `ns/name:port` + lower-case protocol.
pub fn service_port_hash_input(name: &ServicePortName, protocol: Protocol) -> String {
    format!("{}{}", name, protocol.as_lower())
}
