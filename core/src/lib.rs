//! kpv-core: a deterministic model of how Kubernetes Services reach Pods.
//!
//! Layers, bottom up: [`yaml`] (a spanned YAML tree) → [`model`] (typed,
//! validated objects) → [`controller`] (probes and the EndpointSlice
//! controller, in simulated time) → [`proxy`] (kube-proxy's mode-independent
//! view and endpoint selection) → [`modes`] (each kube-proxy mode compiles that
//! view into its own rules and traces packets through them) → [`trace`] (a
//! packet's whole path across client, load balancer, nodes and Pods).
//!
//! Architecture invariants: this crate does no IO, never reads a clock and
//! never draws unseeded randomness; time and random choices are passed in.
//! Every collection that reaches output is ordered (`BTreeMap`, sorted `Vec`).
//! Only renderers produce text formats.

pub mod base_n;
pub mod choose;
pub mod cli;
pub mod code;
pub mod controller;
pub mod diag;
pub mod dns;
#[doc(hidden)]
pub mod fuzzing;
#[doc(hidden)]
pub mod generate;
pub mod http;
pub mod json_text;
pub mod lab;
pub mod lesson;
pub mod model;
pub mod modes;
pub mod noun;
pub mod order;
pub mod packet;
pub mod pipeline;
pub mod proxy;
pub mod replay;
pub mod scene;
pub mod settle;
pub mod sha256;
pub mod share;
pub mod timeline;
pub mod trace;
pub mod vecmap;
pub mod yaml;

pub use code::Code;
