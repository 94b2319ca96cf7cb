//! Entry point of the page: install the panic hook, then mount the app.
//! Everything else lives in the library so the browser tests can reach it.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(stampede_lab::App);
}
