//! The checks in front of the handlers: the host a request names and the site it comes
//! from ([`same_host`]), the bearer token ([`auth`]), a turn for an index read
//! ([`admit`]), and the request metrics ([`observe`], labelled by route). In front of
//! them all, [`route_of`] finds the request's row of [`ROUTES`] once and keeps it in
//! the request's extensions, where the others read it ([`Route::of`]).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::route::{Access, Route};
use super::routes::ROUTES;
use super::state::AppState;

/// The token of an `Authorization: Bearer TOKEN` value; the scheme name is
/// case-insensitive (RFC 9110, 11.1), spaces around the token are ignored.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

pub(super) async fn auth(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let on_host = Route::of(&req).is_some_and(|r| r.acts_on_host(&req));
    let needed = if on_host {
        Some(state.admin_token.as_str())
    } else {
        state.token.as_deref()
    };
    if let Some(token) = needed {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token);
        if given != Some(token) {
            let message = if state.token.is_none() {
                "this route needs the server's token (Authorization: Bearer TOKEN): it is in the serve file of the data dir, or give one with harvest serve --token"
            } else {
                "a bearer token is required (Authorization: Bearer TOKEN)"
            };
            let mut r = ApiError {
                status: StatusCode::UNAUTHORIZED,
                param: None,
                message: message.into(),
            }
            .into_response();
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"harvest\""),
            );
            return r;
        }
    }
    next.run(req).await
}

/// The host part of a `Host` value or an origin's authority, lowercased,
/// without its port (and an IPv6 literal without its brackets).
fn host_name(authority: &str) -> String {
    let a = authority.trim().to_ascii_lowercase();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default().to_string();
    }
    match a.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_string(),
        _ => a,
    }
}

/// Whether `host` may be named in a request: an IP address (what a DNS
/// rebinding attack cannot make a browser send for its own name),
/// `localhost`, or a name the operator allowed.
fn allowed_host(state: &AppState, host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
        || host == "localhost"
        || host.ends_with(".localhost")
        || state.allowed_hosts.iter().any(|h| h == host)
}

/// Refuses (403) a request that names a host this server does not answer
/// for (DNS rebinding: a web page whose name was pointed at 127.0.0.1) or
/// that comes from another site's page (`Origin` not this server: a
/// cross-site request). A [`Access::Probe`] route is exempt (load balancers' probes).
pub(super) async fn same_host(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    if Route::of(&req).is_some_and(|r| r.access == Access::Probe) {
        return next.run(req).await;
    }
    let refuse = |message: String| {
        ApiError {
            status: StatusCode::FORBIDDEN,
            param: None,
            message,
        }
        .into_response()
    };
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    if let Some(host) = &host {
        let name = host_name(host);
        if !allowed_host(&state, &name) {
            return refuse(format!(
                "this server does not answer for the host {name:?} (start it with --allow-host {name} if that is its name)"
            ));
        }
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        let same = match (authority, &host) {
            (Some(a), Some(h)) => a.eq_ignore_ascii_case(h.trim()),
            _ => false,
        };
        let allowed = authority.is_some_and(|a| {
            let name = host_name(a);
            state.allowed_hosts.contains(&name)
        });
        if !same && !allowed {
            return refuse(format!(
                "requests from other sites' pages are refused (Origin {origin:?})"
            ));
        }
    }
    next.run(req).await
}

/// `Retry-After` (seconds) of a request refused for load.
const RETRY_AFTER_SECS: u64 = 1;

/// Runs an index-reading request when it has a turn: at most
/// `max_queries` at once, waiters served newest first
/// ([`super::admission::Admission`]); a request that waited `queue_wait`, or that
/// finds `max_waiting` others waiting, is answered 503 with `Retry-After`, so the
/// requests that are served stay fast under overload.
pub(super) async fn admit(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    if !Route::of(&req).is_some_and(|r| r.queued) {
        return next.run(req).await;
    }
    let Some(turn) = state.admission.turn().await else {
        let mut r = ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            param: None,
            message: "the server is busy: try again shortly".into(),
        }
        .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        return r;
    };
    let resp = next.run(req).await;
    drop(turn);
    resp
}

/// Finds the request's route in [`ROUTES`] (by the path it was matched to) and keeps it
/// in the request's extensions (`&'static Route`) for the layers behind: the outermost
/// layer.
pub(super) async fn route_of(mut req: Request, next: Next) -> Response {
    if let Some(route) = Route::matched(ROUTES, &req) {
        req.extensions_mut().insert(route);
    }
    next.run(req).await
}

/// Counts the request and its time in the metrics, labelled by its route (`other` for
/// a path no route has).
pub(super) async fn observe(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let route = Route::of(&req).map_or("other", |r| r.label);
    let started = Instant::now();
    let resp = next.run(req).await;
    state
        .metrics
        .observe(route, resp.status().as_u16(), started.elapsed());
    resp
}
