//! What a lesson's nouns point at on the diagram: the `data-ref` keys of the
//! elements highlighted now (while a noun is hovered or focused, and briefly
//! when a step opens).
//!
//! Glue only: which element a noun names is kpv-core's decision
//! ([`kpv_core::view::noun::resolve`]); this never looks into the cluster itself.

use kpv_core::view::noun::DiagramRef;
use leptos::prelude::*;
use std::time::Duration;

/// How long a step's nouns stay highlighted when it opens.
const FLASH_MS: u64 = 1_600;

/// The keys highlighted now; one per app (from context).
#[derive(Clone, Copy)]
pub struct Pointed {
    keys: RwSignal<Vec<String>>,
    /// Bumped on every change, so an old flash's timer clears nothing newer.
    generation: StoredValue<u64>,
}

impl Pointed {
    pub fn new() -> Pointed {
        Pointed {
            keys: RwSignal::new(Vec::new()),
            generation: StoredValue::new(0),
        }
    }

    /// Whether the element with `key` is highlighted (reactive).
    pub fn has(&self, key: &str) -> bool {
        self.keys.with(|k| k.iter().any(|x| x == key))
    }

    pub fn show(&self, keys: Vec<String>) {
        self.generation.update_value(|g| *g += 1);
        self.keys.set(keys);
    }

    pub fn clear(&self) {
        self.show(Vec::new());
    }

    /// Highlight `keys` for a moment.
    pub fn flash(&self, keys: Vec<String>) {
        if keys.is_empty() {
            return;
        }
        self.show(keys);
        let at = self.generation.get_value();
        let me = *self;
        set_timeout(
            move || {
                if me.generation.try_get_value() == Some(at) {
                    me.clear();
                }
            },
            Duration::from_millis(FLASH_MS),
        );
    }
}

impl Default for Pointed {
    fn default() -> Self {
        Pointed::new()
    }
}

/// The app's `Pointed`, or a private one where none is provided (an embed
/// without lessons).
pub fn pointed() -> Pointed {
    use_context::<Pointed>().unwrap_or_default()
}

/// The `data-ref` of a diagram element.
pub fn key(r: &DiagramRef) -> String {
    match r {
        DiagramRef::Pod(id) => format!("pod:{id}"),
        DiagramRef::Node(name) => format!("node:{name}"),
        DiagramRef::Service(id) => format!("svc:{id}"),
        DiagramRef::LoadBalancer => "lb".into(),
        DiagramRef::Client => "client".into(),
        DiagramRef::Step(s) => format!("step:{s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kpv_core::model::NamespacedName;

    #[test]
    fn keys_are_distinct_per_element_kind() {
        let id = NamespacedName {
            namespace: "default".into(),
            name: "web".into(),
        };
        let keys = [
            key(&DiagramRef::Pod(id.clone())),
            key(&DiagramRef::Service(id)),
            key(&DiagramRef::Node("web".into())),
            key(&DiagramRef::Step("KUBE-SVC".into())),
            key(&DiagramRef::LoadBalancer),
            key(&DiagramRef::Client),
        ];
        assert_eq!(keys[0], "pod:default/web");
        assert_eq!(keys[1], "svc:default/web");
        let set: std::collections::BTreeSet<_> = keys.iter().collect();
        assert_eq!(set.len(), keys.len());
    }
}
