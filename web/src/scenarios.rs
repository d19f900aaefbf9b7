//! The scenario presets shipped with the app (the YAML files of `tests/scenarios/`).

/// The alpaca/bandicoot seed scenario.
pub const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");
