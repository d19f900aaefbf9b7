//! The app's components: markup over values computed by kpv-core.
pub mod diagram;
