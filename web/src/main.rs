//! Entry point of the web app: [`kpv_web::start`] mounts the app on the
//! page body.
fn main() {
    kpv_web::start();
}
