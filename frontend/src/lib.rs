//! The browser entry point: hydrates the server-rendered page.
#![recursion_limit = "256"]

#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    // Lazy: the admin pages are separate chunks (see app::admin_routes); a page opened directly
    // waits for its chunk before it hydrates.
    leptos::mount::hydrate_lazy(app::App);
}
