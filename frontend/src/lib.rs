//! The browser entry point. Pages are rendered on the server; the page's island script
//! (`app/src/ui/hydrate.js`) hydrates their interactive parts (the `#[island]`
//! components of `app`) once this has run, and then marks the body `data-hydrated`.

// Linked for its islands, which the island script finds among this module's exports
// (nothing here names it, hence the allow).
#[allow(unused_extern_crates)]
extern crate app;

use leptos::prelude::*;

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_islands();
    // A server function that redirects (signing in or out, deleting a pet) loads the
    // page it names: there is no client-side router to go there in place.
    let _ = leptos::server_fn::redirect::set_redirect_hook(|to: &str| {
        let _ = window().location().assign(to);
    });
}
