//! Entry point of the web app: mount [`kpv_web::App`] on the page body.
fn main() {
    leptos::mount::mount_to_body(kpv_web::App);
}
