//! The `kpv` command line: parse manifests, print a node's rules, trace a packet.
fn main() {}
