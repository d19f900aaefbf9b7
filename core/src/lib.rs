//! kpv-core: a deterministic model of how Kubernetes Services reach Pods.
//!
//! Layers, bottom up (each uses only the ones below it; `xtask`'s tidy test
//! checks it):
//! - [`util`]: small leaves — diagnostics, stable order, the seeded chooser,
//!   hashes, encodings, a sorted-`Vec` map;
//! - [`yaml`]: YAML text → a spanned tree, read as kubectl reads it;
//! - [`model`]: Kubernetes objects as typed values (and a packet's),
//!   parsed and validated into a [`model::Cluster`] plus diagnostics;
//! - [`net`]: what the cluster does with a packet — the controllers (probes,
//!   EndpointSlices), kube-proxy's mode-independent view, the modes' rules,
//!   cluster DNS, and the trace of a packet across client, load balancer,
//!   nodes and Pods;
//! - [`http`]: Ingress and Gateway API routing in front of Services;
//! - [`view`]: the diagram's layout, animation maths and each mode's
//!   pipeline, in a fixed logical space;
//! - [`session`]: what the app and the CLI play — replay of the packets
//!   sent, lessons, labs, share links;
//! - [`cli`]: the `kpv` command line and its English renderers.
//!
//! [`code`] is the composition point: it hands each layer the code it
//! needs (the mode compilers, HTTP routing), so that nothing here looks
//! code up.
//!
//! Architecture invariants: this crate does no IO, never reads a clock and
//! never draws unseeded randomness; time and random choices are passed in.
//! It holds no global state. Every collection that reaches output is
//! ordered (`BTreeMap`, sorted `Vec`). Only renderers produce text formats.

pub mod cli;
pub mod code;
#[doc(hidden)]
pub mod fuzzing;
#[doc(hidden)]
pub mod generate;
pub mod http;
pub mod model;
pub mod net;
pub mod session;
pub mod util;
pub mod view;
pub mod yaml;

pub use code::Code;
