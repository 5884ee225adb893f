//! The web UI's files, compiled into the binary.

use axum::body::Body;
use axum::http::{header, HeaderValue};
use axum::response::Response;

const UI_HTML: &str = include_str!("../../web/index.html");

const UI_JS: &str = include_str!("../../web/app.js");

const UI_CSS: &str = include_str!("../../web/app.css");

fn asset(body: &'static str, ctype: &'static str) -> Response {
    let mut r = Response::new(Body::from(body));
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; frame-src 'self'; style-src 'self' 'unsafe-inline'",
        ),
    );
    r
}

pub(super) async fn ui_index() -> Response {
    asset(UI_HTML, "text/html; charset=utf-8")
}

pub(super) async fn ui_js() -> Response {
    asset(UI_JS, "text/javascript; charset=utf-8")
}

pub(super) async fn ui_css() -> Response {
    asset(UI_CSS, "text/css; charset=utf-8")
}
