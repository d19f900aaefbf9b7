//! The routing objects as [`crate::http`] reads them: the model's typed
//! routing kinds ([`crate::model::routing`]), lowered and validated with the
//! rest of the input by [`crate::model::parse`] (handed HTTP routing's own
//! lowering). Nothing here decides routing.

pub use crate::model::routing::*;

use crate::util::diag::Diagnostic;

/// Every routing object of the input.
pub type Objects = RoutingObjects;

/// The routing objects of one YAML stream, with every diagnostic of it.
pub fn parse(text: &str) -> (Objects, Vec<Diagnostic>) {
    let (cluster, diags) = crate::model::parse(text, Some(crate::model::RoutingLowerer::LINKED));
    (std::sync::Arc::unwrap_or_clone(cluster.routing), diags)
}

/// [`parse`] over several streams.
pub fn parse_files(texts: &[&str]) -> (Objects, Vec<Diagnostic>) {
    let inputs: Vec<crate::model::Input<'_>> = texts
        .iter()
        .map(|t| crate::model::Input { text: t })
        .collect();
    let (cluster, diags) =
        crate::model::parse_files(&inputs, Some(crate::model::RoutingLowerer::LINKED));
    (std::sync::Arc::unwrap_or_clone(cluster.routing), diags)
}
