//! The code this app hands kpv-core: the mode compilers and HTTP routing
//! that have arrived so far ([`crate::modes`], [`crate::lazy_http`] keep
//! them; nothing else does).
//!
//! A memo that computes with it must also read the Store input that says
//! what has arrived (`Store::loads`, `Store::http_ready`), so that it runs
//! again when more code comes.

use kpv_core::Code;

/// Everything that is here now.
pub fn now() -> Code {
    Code {
        compilers: crate::modes::compilers(),
        http: crate::lazy_http::http(),
    }
}
