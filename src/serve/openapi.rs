//! The OpenAPI 3.1 document of the API, generated from the route table: each route's
//! entry ([`super::route::Doc`]: answers, parameters, body) and the checks in front of
//! its handler. The schemas of the bodies are derived (`utoipa::ToSchema`) from the
//! types the handlers serialize, the query parameters' from their definitions
//! ([`crate::filters::defs`] for the filters): `tests/api.rs` walks every documented
//! route and parameter, `tests/contracts.rs` checks a running server's answers against
//! the document.

use serde_json::{json, Map, Value};

use super::params::{DEFAULT_LIMIT, FILTER_PARAMS, MAX_LIMIT};
use super::route::{Access, Body, BodySchema, Components, Reply, Route};

/// The OpenAPI version of the document (JSON Schema 2020-12 schemas: a value that may
/// be null has the type `[T, "null"]`, as `utoipa` 5 writes it).
pub const OPENAPI_VERSION: &str = "3.1.0";

/// Schema and description of a query parameter (a filter's from its definition).
fn param_doc(name: &str) -> (Value, &'static str) {
    if let Some(filter) = crate::filters::defs::by_param(name) {
        return (filter.schema(), filter.help);
    }
    let string = json!({"type": "string"});
    match name {
        "sort" => (
            json!({"type": "string", "enum": ["time", "time_asc", "comments", "relevance"], "default": "time"}),
            "Order: newest first, oldest first, most comments, most relevant (BM25 of the words of text, keyword and any)",
        ),
        "limit" => (
            json!({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT}),
            "Hits per page",
        ),
        "cursor" => (string, "next_cursor of the previous page"),
        "job" => (string, "Only this job's runs"),
        "name" => (
            string,
            "The file's name (one path component), kept in the import's messages",
        ),
        "interval" => (
            json!({"type": "string", "enum": ["day", "week", "month", "year"], "default": "day"}),
            "Time bucket (ISO weeks)",
        ),
        "group_by" => (
            json!({"type": "string", "enum": indexer::GroupBy::ALL.map(indexer::GroupBy::as_str)}),
            "One series per group (media: the outlet a page names or credits; outlet: the publishing site, its own name or host; story: `stories` = distinct stories, near-duplicates collapsed, and `copies` = pages)",
        ),
        _ => (string, ""),
    }
}

/// The query parameters a route accepts (none for a route outside the document).
pub fn route_params(route: &Route) -> Vec<&'static str> {
    let Some(doc) = &route.doc else {
        return Vec::new();
    };
    let mut out: Vec<&'static str> = Vec::new();
    if doc.filters {
        out.extend(FILTER_PARAMS.iter());
    }
    out.extend(doc.params);
    out
}

/// The document's entry of `body`: its media type and schema (a component's added to
/// `components`).
fn content(body: &Body, components: &mut Components) -> Value {
    let schema = match body.schema {
        BodySchema::Of(add) => json!({"$ref": format!("#/components/schemas/{}", add(components))}),
        BodySchema::Object => json!({"type": "object"}),
        BodySchema::Text => json!({"type": "string"}),
        BodySchema::Binary => json!({"type": "string", "format": "binary"}),
    };
    let mut out = Map::new();
    out.insert(body.media.to_string(), json!({ "schema": schema }));
    Value::Object(out)
}

fn response(reply: &Reply, components: &mut Components) -> Value {
    json!({"description": reply.description, "content": content(&reply.body, components)})
}

/// Every status a route answers: what its handler and the layers in front of it
/// (`same_host` 403, `auth` 401, `admit` 503) can return. `tests/contracts.rs` checks a
/// running server's answers against this list.
pub fn responses_of(route: &Route) -> Vec<Reply> {
    let Some(doc) = &route.doc else {
        return Vec::new();
    };
    let mut out = vec![doc.ok];
    if route.access == Access::Probe {
        // Exempt from every check: load balancers' probes.
        return out;
    }
    if doc.checks_params {
        out.push(Reply::error(
            400,
            "Bad request: the error names the parameter",
        ));
    }
    out.extend(doc.replies);
    out.push(Reply::error(
        401,
        if route.access == Access::Host {
            "Missing or wrong bearer token: this route acts on the server's host and needs a token always (`--token`, else the one the server keeps in the serve file of its data dir)"
        } else {
            "Missing or wrong bearer token (only when the server was started with `--token`)"
        },
    ));
    out.push(Reply::error(
        403,
        "The request names a host this server does not answer for (Host), or comes from another site's page (Origin)",
    ));
    if route.fallible {
        out.push(Reply::error(
            500,
            "The index or a pack could not be read (or the upload written): the message says why",
        ));
    }
    if route.queued {
        out.push(Reply::error(
            503,
            "Busy: more requests than the server runs at once have waited their turn (`--max-queries`, `--queue-wait-ms`); try again after `Retry-After` seconds",
        ));
    }
    if route.access == Access::Host {
        out.push(Reply::error(
            503,
            "The server was started without a configuration (no jobs, no data dir for commands and uploads)",
        ));
    }
    out
}

/// The operation of a documented route.
fn operation(route: &Route, components: &mut Components) -> Option<Value> {
    let doc = route.doc.as_ref()?;
    let mut params: Vec<Value> = route_params(route)
        .into_iter()
        .map(|name| {
            let (schema, description) = param_doc(name);
            let array = schema["type"] == "array";
            let mut p = json!({"name": name, "in": "query", "required": false, "schema": schema, "description": description});
            if array {
                p["style"] = json!("form");
                p["explode"] = json!(true);
            }
            p
        })
        .collect();
    for (name, description) in doc.path_params {
        params.push(json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}, "description": description}));
    }
    let mut responses = Map::new();
    for reply in responses_of(route) {
        let mut r = response(&reply, components);
        if reply.status == 503 && route.queued {
            r["headers"] = json!({"Retry-After": {"schema": {"type": "integer"}}});
        }
        responses.insert(reply.status.to_string(), r);
    }
    let mut op = json!({
        "summary": doc.summary,
        "operationId": operation_id(route.path),
        "parameters": params,
        "responses": responses,
    });
    if let Some(body) = &doc.request {
        op["requestBody"] = json!({"required": true, "content": content(body, components)});
    }
    Some(op)
}

/// The whole document: every route of `routes` that has a [`super::route::Doc`].
pub fn document(routes: &[Route]) -> Value {
    let mut components = Components::new();
    let mut paths = Map::new();
    for route in routes {
        let Some(op) = operation(route, &mut components) else {
            continue;
        };
        let entry = paths
            .entry(route.path.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        entry[route.method.name()] = op;
    }
    let schemas: Map<String, Value> = components
        .into_iter()
        .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or_default()))
        .collect();
    json!({
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "harvest archive API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Search, statistics and archived pages of a harvest archive."
        },
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas,
        },
        "security": [{"bearer": []}, {}],
    })
}

fn operation_id(path: &str) -> String {
    path.trim_start_matches('/')
        .replace(['/', '.'], "_")
        .replace(['{', '}'], "")
}
