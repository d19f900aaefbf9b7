//! The composition point: the code each layer is handed, assembled in one
//! place.
//!
//! A layer that calls code a build may not have yet declares the hook it
//! needs and takes it as an argument: [`crate::model::parse`] a
//! [`RoutingLowerer`], [`crate::net::trace::Sim`] the mode [`Compilers`],
//! [`crate::session::replay`] a [`replay::Code`], [`crate::session::lesson`] a
//! [`lesson::Code`]. [`Code`] bundles them. Native builds (the CLI, the
//! tests, the kernel check, the benchmarks) hand in [`Code::ALL`]; the web
//! app builds its `Code` from what has arrived so far, and is the only
//! place that keeps loaded code. Nothing in kpv-core looks code up: there
//! is no registry, and every function stays a function of its arguments.

use crate::http::send::{RequestError, RoutingRow};
use crate::http::{EntryPoint, HttpRequest, Prepared};
use crate::model::{Cluster, Input, RoutingLowerer};
use crate::net::modes::Compilers;
use crate::util::diag::Diagnostic;
use crate::{session::lesson, session::replay};

/// HTTP routing (Ingress, the Gateway API) as every caller reaches it: the
/// web app's release build fetches it as one file on first use.
#[derive(Clone, Copy)]
pub struct Http {
    /// The model's lowering of the routing kinds.
    pub lower: RoutingLowerer,
    /// What a replay and its targets call.
    pub replay: replay::HttpCode,
    /// What the lessons call (`None`: a build without lessons, such as the
    /// web app's embed build, links none of it).
    pub lesson: Option<lesson::HttpCode>,
    /// [`crate::http::send::parse_request`].
    pub parse_request: fn(&str, &str, &str) -> Result<HttpRequest, RequestError>,
    /// [`crate::http::send::entry_for_host`].
    pub entry_for_host: fn(&Prepared, &str) -> Option<EntryPoint>,
    /// [`crate::http::send::table_rows`].
    pub table_rows: fn(&Prepared, &EntryPoint) -> Vec<RoutingRow>,
}

impl Http {
    /// HTTP routing's own functions. Naming this links all of it in.
    pub const LINKED: Http = Http {
        lower: RoutingLowerer::LINKED,
        replay: replay::HttpCode::LINKED,
        lesson: Some(lesson::HttpCode::LINKED),
        parse_request: crate::http::send::parse_request,
        entry_for_host: crate::http::send::entry_for_host,
        table_rows: crate::http::send::table_rows,
    };
}

impl Http {
    /// HTTP routing without the lessons' part (for a build that has no
    /// lessons).
    pub const WITHOUT_LESSONS: Http = Http {
        lesson: None,
        ..Http::LINKED
    };
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Http")
    }
}

/// Every piece of code a computation may be handed.
#[derive(Clone, Copy, Debug)]
pub struct Code {
    /// The mode compilers that are here.
    pub compilers: Compilers,
    /// HTTP routing, when it is here.
    pub http: Option<Http>,
}

impl Code {
    /// Everything linked: what native builds hand in.
    pub const ALL: Code = Code {
        compilers: Compilers::ALL,
        http: Some(Http::LINKED),
    };

    /// The model's part.
    pub fn routing(&self) -> Option<RoutingLowerer> {
        self.http.map(|h| h.lower)
    }

    /// A replay's part.
    pub fn replay(&self) -> replay::Code {
        replay::Code {
            compilers: self.compilers,
            http: self.http.map(|h| h.replay),
        }
    }

    /// The lessons' part.
    pub fn lesson(&self) -> lesson::Code {
        lesson::Code {
            replay: self.replay(),
            http: self.http.and_then(|h| h.lesson),
        }
    }

    /// [`crate::model::parse`] with this code's routing lowering.
    pub fn parse(&self, text: &str) -> (Cluster, Vec<Diagnostic>) {
        crate::model::parse(text, self.routing())
    }

    /// [`crate::model::parse_files`] with this code's routing lowering.
    pub fn parse_files(&self, inputs: &[Input<'_>]) -> (Cluster, Vec<Diagnostic>) {
        crate::model::parse_files(inputs, self.routing())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;

    const INGRESS: &str = include_str!("../../tests/scenarios/ingress.yaml");
    const BROKEN: &str = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x}\nspec: {rules: [{host: UPPER.example}]}\n";

    /// What the web app's release build starts with.
    const FIRST: Code = Code {
        compilers: Compilers::IPTABLES,
        http: None,
    };

    #[test]
    fn a_parse_without_routing_leaves_the_routing_kinds_waiting_and_says_so() {
        let (waiting, diags) = FIRST.parse(INGRESS);
        assert!(waiting.routing.awaiting_code);
        assert!(!waiting.routing.is_empty());
        assert!(waiting.routing.ingresses.is_empty() && waiting.routing.markers.is_empty());
        assert!(!waiting.services.is_empty());
        assert!(!diags.iter().any(|d| d.is_error()));
        let (plain, _) = FIRST.parse(
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n",
        );
        assert!(!plain.routing.awaiting_code && plain.routing.is_empty());
        let (_, d) = FIRST.parse(BROKEN);
        assert!(
            !d.iter().any(|d| d.is_error()),
            "not checked without the code"
        );
    }

    #[test]
    fn a_parse_with_routing_lowers_and_checks_the_routing_kinds() {
        let (waiting, _) = FIRST.parse(INGRESS);
        let (lowered, _) = Code::ALL.parse(INGRESS);
        assert!(!lowered.routing.awaiting_code);
        assert!(!lowered.routing.ingresses.is_empty());
        assert_eq!(lowered.services, waiting.services);
        let (_, d) = Code::ALL.parse(BROKEN);
        assert!(d.iter().any(|d| d.is_error()), "{d:?}");
    }

    #[test]
    fn the_same_text_and_code_always_parse_the_same() {
        // No hidden state: a parse with the code does not change a parse
        // without it that comes after.
        let before = FIRST.parse(INGRESS);
        let _ = Code::ALL.parse(INGRESS);
        assert_eq!(FIRST.parse(INGRESS), before);
    }

    #[test]
    fn each_part_carries_what_the_bundle_has() {
        assert!(FIRST.replay().http.is_none() && FIRST.lesson().http.is_none());
        assert!(FIRST.routing().is_none());
        assert!(FIRST.lesson().replay.compilers.ready(Mode::Iptables));
        assert!(!FIRST.lesson().replay.compilers.ready(Mode::Ipvs));
        let all = Code::ALL.lesson();
        assert!(all.http.is_some() && all.replay.http.is_some());
        for m in Mode::ALL {
            assert!(all.replay.compilers.ready(m), "{m:?}");
        }
    }
}
