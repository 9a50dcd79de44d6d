//! The browser entry point: hydrates the server-rendered page.

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // Lazy: a page whose route code was split out (the docs, the staff console) loads
    // its WASM chunk before hydrating.
    leptos::mount::hydrate_lazy(app::App);
}
