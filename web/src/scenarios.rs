//! The scenario presets shipped with the app (the YAML files of `tests/scenarios/`).

use crate::i18n::Lang;

pub struct Preset {
    pub key: &'static str,
    pub en: &'static str,
    pub ko: &'static str,
    pub yaml: &'static str,
}

impl Preset {
    pub fn title(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.en,
            Lang::Ko => self.ko,
        }
    }
}

/// The alpaca/bandicoot seed scenario.
pub const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");

pub const PRESETS: &[Preset] = &[Preset {
    key: "alpaca-bandicoot",
    en: "alpaca & bandicoot: ClusterIP and DNS names",
    ko: "alpaca & bandicoot: ClusterIP와 DNS 이름",
    yaml: SEED,
}];
