//! What a route is: its method and path, its label in the metrics, its entry in the API
//! document ([`Doc`]), the checks in front of it and its handler. Routes are declared
//! once, in [`super::routes::ROUTES`]; the router, the metrics' labels, the token and
//! admission layers and the OpenAPI document all read that table.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request};
use axum::routing::MethodRouter;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;

use super::error::ErrorBody;
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
    /// Its entry in the API document; `None` for a route outside the API (the UI's
    /// files).
    pub doc: Option<Doc>,
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

/// The component schemas of the API document, by name.
pub type Components = Vec<(String, RefOr<Schema>)>;

/// Adds the schema of `T` (and of the types it names) to `out`; its name, the one
/// its references use. The schemas of the document's bodies are derived
/// (`#[derive(utoipa::ToSchema)]`) on the types the handlers serialize.
pub fn component<T: utoipa::ToSchema>(out: &mut Components) -> String {
    let name = T::name().into_owned();
    out.push((name.clone(), T::schema()));
    T::schemas(out);
    name
}

/// The schema of a body in the API document.
#[derive(Clone, Copy)]
pub enum BodySchema {
    /// A type's, [`component`]`::<T>`: a component of the document, referenced.
    Of(fn(&mut Components) -> String),
    /// Any JSON object.
    Object,
    /// A string (plain text, CSV, JSON lines).
    Text,
    /// Bytes.
    Binary,
}

/// A request's or answer's body in the API document: its media type and schema.
#[derive(Clone, Copy)]
pub struct Body {
    pub media: &'static str,
    pub schema: BodySchema,
}

/// An answer in the API document.
#[derive(Clone, Copy)]
pub struct Reply {
    pub status: u16,
    pub description: &'static str,
    pub body: Body,
}

impl Reply {
    /// JSON, its schema `T`'s ([`component`]`::<T>`).
    pub const fn json(
        status: u16,
        description: &'static str,
        schema: fn(&mut Components) -> String,
    ) -> Reply {
        Reply {
            status,
            description,
            body: Body {
                media: "application/json",
                schema: BodySchema::Of(schema),
            },
        }
    }

    /// A string of the media type `media`.
    pub const fn text(status: u16, description: &'static str, media: &'static str) -> Reply {
        Reply {
            status,
            description,
            body: Body {
                media,
                schema: BodySchema::Text,
            },
        }
    }

    /// An error of the API: [`ErrorBody`] as JSON.
    pub const fn error(status: u16, description: &'static str) -> Reply {
        Reply::json(status, description, component::<ErrorBody>)
    }
}

/// A route's entry in the API document. What the layers in front of its handler may
/// answer (401, 403, 503) follows from [`Route::access`] and [`Route::queued`], a 500
/// from [`Route::fallible`], a 400 from [`Doc::checks_params`].
pub struct Doc {
    pub summary: &'static str,
    /// Its answer on success (200, 201 Created or 202 Accepted).
    pub ok: Reply,
    /// Whether it takes the filters (`crate::filters::defs::FILTERS`), before
    /// [`Doc::params`].
    pub filters: bool,
    /// Its other query parameters (documented by `super::openapi::param_doc`).
    pub params: &'static [&'static str],
    /// Whether it refuses a parameter it does not take or a bad value (a 400 naming
    /// the parameter).
    pub checks_params: bool,
    /// Its path parameters (each `{name}` of its path) and their descriptions.
    pub path_params: &'static [(&'static str, &'static str)],
    /// Its request body.
    pub request: Option<Body>,
    /// Its handler's other answers.
    pub replies: &'static [Reply],
}

impl Doc {
    /// A route with `summary` that answers `ok` and takes nothing: no parameter (and
    /// refuses any), no body.
    pub const fn new(summary: &'static str, ok: Reply) -> Doc {
        Doc {
            summary,
            ok,
            filters: false,
            params: &[],
            checks_params: true,
            path_params: &[],
            request: None,
            replies: &[],
        }
    }

    /// It takes the filters and `params`.
    pub const fn filters(mut self, params: &'static [&'static str]) -> Doc {
        self.filters = true;
        self.params = params;
        self
    }

    /// It takes the query parameters `params`.
    pub const fn params(mut self, params: &'static [&'static str]) -> Doc {
        self.params = params;
        self
    }

    /// It takes the query string as it comes (no 400 for a parameter it does not take).
    pub const fn unchecked(mut self) -> Doc {
        self.checks_params = false;
        self
    }

    /// Its path parameters.
    pub const fn path(mut self, params: &'static [(&'static str, &'static str)]) -> Doc {
        self.path_params = params;
        self
    }

    /// Its request body.
    pub const fn request(mut self, media: &'static str, schema: BodySchema) -> Doc {
        self.request = Some(Body { media, schema });
        self
    }

    /// Its handler's other answers.
    pub const fn replies(mut self, replies: &'static [Reply]) -> Doc {
        self.replies = replies;
        self
    }
}
