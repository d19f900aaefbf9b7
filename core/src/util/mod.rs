//! Small leaves every layer may use: located diagnostics, stable order,
//! the seeded chooser, SHA-256, base-n and percent encodings, JSON text,
//! a sorted-`Vec` map and a small regular-expression engine. Nothing here knows about Kubernetes.

pub mod base_n;
pub mod choose;
pub mod diag;
pub mod json_text;
pub mod order;
pub mod percent;
pub mod regex;
pub mod sha256;
pub mod vecmap;
