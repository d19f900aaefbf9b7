//! The request form's inputs as a plain model the Store holds and the
//! form binds to: method, URL and header lines kept as typed (a text with
//! an error stays), and how they turn a target into the request sent.
//! Reading the request is kpv-core's (through the HTTP code handed in).

use kpv_core::http::send::{HttpSend, RequestError};
use kpv_core::net::trace::Dest;
use kpv_core::session::replay::Target;
use leptos::prelude::*;

/// The request form's inputs, kept as typed (the text stays when it has an
/// error; an empty URL means the entry point's default request).
#[derive(Clone, Copy)]
pub struct HttpForm {
    pub method: RwSignal<String>,
    pub url: RwSignal<String>,
    pub headers: RwSignal<String>,
    pub error: RwSignal<Option<RequestError>>,
}

impl Default for HttpForm {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpForm {
    pub fn new() -> HttpForm {
        HttpForm {
            method: RwSignal::new("GET".into()),
            url: RwSignal::new(String::new()),
            headers: RwSignal::new(String::new()),
            error: RwSignal::new(None),
        }
    }

    /// Back to the entry point's default request.
    pub fn clear(&self) {
        self.method.set("GET".into());
        self.url.set(String::new());
        self.headers.set(String::new());
        self.error.set(None);
    }

    /// The target with the form's request, for an entry point (other
    /// targets pass through). A request that does not read sets the form's
    /// error and is not sent. (Entry points are targets only once HTTP
    /// routing's code is here.)
    pub fn apply(&self, mut target: Target) -> Result<Target, RequestError> {
        let Dest::Http(send) = &target.dst else {
            return Ok(target);
        };
        let Some(f) = crate::lazy_http::http() else {
            return Ok(target);
        };
        let url = self.url.get_untracked();
        let url = if url.trim().is_empty() {
            send.request.url()
        } else {
            url
        };
        let parsed = (f.parse_request)(
            &self.method.get_untracked().to_ascii_uppercase(),
            &url,
            &self.headers.get_untracked(),
        );
        match parsed {
            Ok(request) => {
                self.error.set(None);
                target.port = request.port;
                target.dst = Dest::Http(Box::new(HttpSend {
                    entry: send.entry.clone(),
                    request,
                }));
                Ok(target)
            }
            Err(e) => {
                self.error.set(Some(e));
                Err(e)
            }
        }
    }
}
