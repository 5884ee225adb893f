//! What a route is: its method and path, its label in the metrics, its line in the API
//! document, the checks in front of it and its handler. Routes are declared once, in
//! [`super::routes::ROUTES`]; the router, the metrics' labels, the token and admission
//! layers and the OpenAPI document all read that table.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request};
use axum::routing::MethodRouter;

use super::state::AppState;

/// The method of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

impl Method {
    /// Its name in the OpenAPI document.
    pub fn name(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Post => "post",
        }
    }

    fn is(self, m: &axum::http::Method) -> bool {
        match self {
            Method::Get => m == axum::http::Method::GET,
            Method::Post => m == axum::http::Method::POST,
        }
    }
}

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone who reaches the server, and exempt from every check, the host check
    /// included: liveness, for load balancers' probes. Its answer is its only status in
    /// the API document.
    Probe,
    /// Anyone who reaches the server from a host it answers for: the UI's files.
    Open,
    /// The server's token, when it was started with one (`--token`).
    Token,
    /// The route acts on the server's host rather than reading the index (the command
    /// bridge, uploads, job runs): it needs a token always, the configured one, else the
    /// one the server keeps in its serve file.
    Host,
}

/// One route of the server.
pub struct Route {
    pub method: Method,
    /// Its path, with `{name}` for a path parameter (axum's syntax and OpenAPI's).
    pub path: &'static str,
    /// Its `route` label in the metrics.
    pub label: &'static str,
    /// Its summary in the API document; `None` for a route outside the API (the UI's
    /// files).
    pub summary: Option<&'static str>,
    pub access: Access,
    /// Whether it reads the index and so waits for a turn (the admission layer), which
    /// may end in a 503.
    pub queued: bool,
    /// Whether its handler reads the index or a pack (or writes an upload) on the
    /// blocking pool, where a failure is a 500.
    pub fallible: bool,
    pub handler: fn() -> MethodRouter<Arc<AppState>>,
}

impl Route {
    /// The route of `path` among `routes`.
    pub fn find(routes: &'static [Route], path: &str) -> Option<&'static Route> {
        routes.iter().find(|r| r.path == path)
    }

    /// The route a request was routed to, by its matched path (none for a path no route
    /// has). Looked up once, by [`super::guard::route_of`], which keeps it in the
    /// request's extensions for the layers behind it ([`Route::of`]).
    pub fn matched(routes: &'static [Route], req: &Request) -> Option<&'static Route> {
        let matched = req.extensions().get::<MatchedPath>()?;
        Route::find(routes, matched.as_str())
    }

    /// The route [`super::guard::route_of`] found for `req` (none for a path no route
    /// has).
    pub fn of(req: &Request) -> Option<&'static Route> {
        req.extensions().get::<&'static Route>().copied()
    }

    /// Whether `req` calls this route's host action (its method, on a [`Access::Host`]
    /// route): a token is needed always.
    pub fn acts_on_host(&self, req: &Request) -> bool {
        self.access == Access::Host && self.method.is(req.method())
    }

    /// Whether the token and admission layers are in front of it (not for
    /// [`Access::Probe`] and [`Access::Open`]).
    pub fn guarded(&self) -> bool {
        matches!(self.access, Access::Token | Access::Host)
    }
}
