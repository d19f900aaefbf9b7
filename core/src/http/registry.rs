//! How the rest of kpv-core (the replay, the targets, the lessons) and the
//! web app reach HTTP routing: one table of function pointers, [`Fns`].
//!
//! Every build but one links the table in. The web app's release build
//! enables `lazy-http`: then no caller outside [`super`] names HTTP code
//! directly, the routing code lives in a file the app loads when a
//! scenario first has Ingress or Gateway API objects, and the app
//! [`register`]s the table when it arrives. Until then [`fns`] is `None`
//! and callers leave HTTP out (no entry points, no proxies placed) rather
//! than guess; the app shows "loading" for what depends on it. This module
//! decides nothing about requests itself.

use super::model::EntryPoint;
use super::send::{HttpSend, RequestError, RoutingRow};
use super::walk::HttpRequest;
use super::Prepared;
use crate::choose::Chooser;
use crate::diag::Diagnostic;
use crate::lesson::{Answer, HttpPlayed, Lesson, OriginSpec, RequestSpec};
use crate::model::{Cluster, EndpointSlice, Mode, Scheduler};
use crate::replay::{SentPacket, Target};
use crate::trace::{Sim, Trace};

/// A lesson step's requests played (see [`crate::lesson::play`]).
pub type LessonPlayFn = fn(
    &Cluster,
    &RequestSpec,
    Option<&OriginSpec>,
    (Mode, Option<Scheduler>),
    u32,
    &mut Chooser,
) -> Option<HttpPlayed>;

/// An HTTP request's trace in a replay (see [`crate::replay::Replay`]).
pub type TraceFn =
    fn(&Prepared, &Sim<'_>, &[EndpointSlice], &HttpSend, &SentPacket) -> Option<Trace>;

/// Everything outside [`super`] calls into HTTP routing.
#[derive(Clone, Copy)]
pub struct Fns {
    /// [`super::prepare`].
    pub prepare: fn(&Cluster) -> Prepared,
    /// One request's journey as a trace.
    pub trace: TraceFn,
    /// One target per entry point a controller serves.
    pub targets: fn(&Prepared) -> Vec<Target>,
    /// [`super::send::parse_request`].
    pub parse_request: fn(&str, &str, &str) -> Result<HttpRequest, RequestError>,
    /// [`super::send::entry_for_host`].
    pub entry_for_host: fn(&Prepared, &str) -> Option<EntryPoint>,
    /// [`super::send::table_rows`].
    pub table_rows: fn(&Prepared, &EntryPoint) -> Vec<RoutingRow>,
    /// A lesson step's requests.
    pub lesson_play: LessonPlayFn,
    /// A lesson's requests and HTTP questions checked against its scenario.
    pub lesson_check: fn(&Lesson, &Cluster, &mut Vec<Diagnostic>),
    /// Does an HTTP answer hold for the requests played?
    pub lesson_holds: fn(&Cluster, &Answer, &HttpPlayed) -> bool,
    /// The model's lowering of the routing kinds (Ingress, the Gateway API
    /// kinds, their classes, Secrets, Namespaces, the controllers' markers).
    pub(crate) lower_routing: LowerRoutingFn,
}

/// See [`Fns::lower_routing`].
pub(crate) type LowerRoutingFn =
    fn(&mut crate::model::lower::Builder, &[crate::model::lower::RawObject]);

/// The table itself. Naming it links all of HTTP routing in: outside this
/// module only the web app's split point does (it is what that file holds).
pub const FNS: Fns = Fns {
    prepare: super::prepare,
    trace: crate::replay::http_trace,
    targets: crate::replay::http_targets,
    parse_request: super::send::parse_request,
    entry_for_host: super::send::entry_for_host,
    table_rows: super::send::table_rows,
    lesson_play: crate::lesson::http::play,
    lesson_check: crate::lesson::http::check,
    lesson_holds: crate::lesson::http::holds,
    lower_routing: crate::model::lower::lower_routing,
};

/// The table, when HTTP routing is in this build or has been registered.
pub fn fns() -> Option<Fns> {
    linked().or_else(loaded)
}

/// True when HTTP requests can be routed now.
pub fn ready() -> bool {
    fns().is_some()
}

#[cfg(not(feature = "lazy-http"))]
fn linked() -> Option<Fns> {
    Some(FNS)
}

#[cfg(feature = "lazy-http")]
fn linked() -> Option<Fns> {
    None
}

#[cfg(not(feature = "lazy-http"))]
fn loaded() -> Option<Fns> {
    None
}

#[cfg(feature = "lazy-http")]
static LOADED: std::sync::OnceLock<Fns> = std::sync::OnceLock::new();

#[cfg(feature = "lazy-http")]
fn loaded() -> Option<Fns> {
    LOADED.get().copied()
}

/// Make `fns` the table (HTTP routing's code has just loaded). The first
/// registration stands.
#[cfg(feature = "lazy-http")]
pub fn register(fns: Fns) {
    let _ = LOADED.set(fns);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "lazy-http"))]
    #[test]
    fn routing_is_linked_without_lazy_http() {
        assert!(ready());
        let Some(f) = fns() else {
            panic!("HTTP routing is linked in this build");
        };
        assert_eq!(f.prepare as usize, FNS.prepare as usize);
        assert_eq!(f.trace as usize, FNS.trace as usize);
        assert_eq!(f.lesson_play as usize, FNS.lesson_play as usize);
    }

    /// One test, as the registration is once per process.
    #[cfg(feature = "lazy-http")]
    #[test]
    fn routing_is_absent_until_registered_then_stays() {
        assert!(linked().is_none());
        // Before: the routing kinds wait for the code, unlowered and
        // unchecked, and the cluster says so.
        let text = include_str!("../../../tests/scenarios/ingress.yaml");
        let broken = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x}\nspec: {rules: [{host: UPPER.example}]}\n";
        let (waiting, diags) = crate::model::parse(text);
        assert!(waiting.routing.awaiting_code);
        assert!(!waiting.routing.is_empty());
        assert!(waiting.routing.ingresses.is_empty() && waiting.routing.markers.is_empty());
        assert!(!waiting.services.is_empty());
        assert!(!diags.iter().any(|d| d.is_error()));
        let (plain, _) = crate::model::parse(
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n",
        );
        assert!(!plain.routing.awaiting_code && plain.routing.is_empty());
        let (_, d) = crate::model::parse(broken);
        assert!(!d.iter().any(|d| d.is_error()));
        register(FNS);
        // After: the same text is lowered as in a build that links it.
        let (lowered, _) = crate::model::parse(text);
        assert!(!lowered.routing.awaiting_code);
        assert!(!lowered.routing.ingresses.is_empty());
        assert_eq!(lowered.services, waiting.services);
        let (_, d) = crate::model::parse(broken);
        assert!(d.iter().any(|d| d.is_error()), "{d:?}");
        assert!(ready());
        // A second registration does not replace the first.
        fn other(_: &Cluster) -> Prepared {
            super::super::prepare(&Cluster::default())
        }
        register(Fns {
            prepare: other,
            ..FNS
        });
        assert_eq!(
            fns().map(|f| f.prepare as usize),
            Some(FNS.prepare as usize)
        );
    }
}
