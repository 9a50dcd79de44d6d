//! Who is signed in, shared by the islands of one page: the header shows it, and the
//! sign-up form changes it without a page load (the new key must stay on screen).
//! Signing in and out load a page (the server function redirects), so they need none
//! of this.

use leptos::prelude::*;

use crate::model::Caller;

#[cfg(feature = "hydrate")]
thread_local! {
    /// The header's signal, once its island runs (in the browser only: on the server
    /// every request renders its own header).
    static SHOWN: std::cell::Cell<Option<RwSignal<Option<Caller>>>> = const { std::cell::Cell::new(None) };
}

/// The header's view of the session, starting from what the server rendered.
pub fn shown(initial: Option<Caller>) -> RwSignal<Option<Caller>> {
    let signal = RwSignal::new(initial);
    #[cfg(feature = "hydrate")]
    SHOWN.with(|shown| shown.set(Some(signal)));
    signal
}

/// Tells the header that this browser is now signed in as `caller`.
pub fn signed_in(caller: Caller) {
    #[cfg(feature = "hydrate")]
    if let Some(signal) = SHOWN.with(std::cell::Cell::get) {
        signal.set(Some(caller));
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = caller;
}
