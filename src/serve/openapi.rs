//! The OpenAPI 3 document of the API, generated from the route table and
//! the parameter lists the handlers accept (so it cannot drift from them:
//! `tests/api.rs` walks every documented route and parameter).

use serde_json::{json, Map, Value};

use super::params::{
    DEFAULT_LIMIT, FILTER_PARAMS, MAX_LIMIT, RUNS_PARAMS, SEARCH_PARAMS, STATS_PARAMS,
    TOPICS_PARAMS, UPLOAD_PARAMS,
};
use super::route::{Access, Route};

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

/// The query parameters a route accepts.
pub fn route_params(path: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    match path {
        "/api/search" => {
            out.extend(FILTER_PARAMS.iter());
            out.extend(SEARCH_PARAMS);
        }
        "/api/stats" | "/api/stats.csv" | "/api/stats.json" => {
            out.extend(FILTER_PARAMS.iter());
            out.extend(STATS_PARAMS);
        }
        "/api/topics" => out.extend(TOPICS_PARAMS),
        "/api/runs" => out.extend(RUNS_PARAMS),
        "/api/uploads" => out.extend(UPLOAD_PARAMS),
        _ => {}
    }
    out
}

/// A response whose body is the `Error` schema.
fn error(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    })
}

/// The answer of `POST /api/cli` (`cli_command` and [`crate::remote::CliFrame`]).
fn cli_answer() -> Value {
    json!({
        "description": "The command was run (or refused as a usage error): its output streams as it is written, \
            `application/x-ndjson`, one JSON value a line, each a `CliFrame`: `{\"stdout\": BASE64}` (bytes of standard output), \
            `{\"stderr\": TEXT}` (messages and warnings), `{\"file\": BASE64}` (bytes of the file `--out` / `--plot` names, \
            for the caller to write; the first, empty, one creates it), the string `\"alive\"` (every 2 s while the command runs: \
            a caller that went away is noticed and the command cancelled), and last `{\"code\": N}`, the exit code \
            (0 success, 1 error, 2 usage: the arguments do not parse or name no archive command); nothing follows it. \
            The status is 200 whatever the exit code; an answer that ends without a `code` line was cut off (the server stopped).",
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}}
    })
}

/// Every status a route answers, with its description: what the handler
/// and the layers in front of it (`same_host` 403, `auth` 401, `admit` 503,
/// the body limit 413) can return. `tests/contracts.rs` checks a running
/// server's answers against this list.
pub fn responses_of(route: &Route, ok: Value) -> Vec<(u16, Value)> {
    let (method, path) = (route.method.name(), route.path);
    let host = route.access == Access::Host;
    let ok_status = match (method, path) {
        ("post", "/api/jobs/{name}/run") => 202,
        ("post", "/api/uploads") => 201,
        _ => 200,
    };
    let mut out = vec![(ok_status, ok)];
    if route.access == Access::Probe {
        // Exempt from every check: load balancers' probes.
        return out;
    }
    // Query parameters are checked (an unknown one is a 400 too) by every
    // route but the job list, job runs and the metrics.
    if !["/api/jobs", "/api/jobs/{name}/run", "/metrics", "/api/cli"].contains(&path) {
        out.push((400, error("Bad request: the error names the parameter")));
    }
    if path == "/api/cli" {
        out.push((
            400,
            json!({"description": "The body is not JSON (plain text naming the error)", "content": {"text/plain": {"schema": {"type": "string"}}}}),
        ));
        out.push((
            413,
            json!({"description": "The body is over 64 KiB", "content": {"text/plain": {"schema": {"type": "string"}}}}),
        ));
        out.push((
            415,
            json!({"description": "The body is not sent as `Content-Type: application/json`", "content": {"text/plain": {"schema": {"type": "string"}}}}),
        ));
        out.push((
            422,
            json!({"description": "The JSON body has no `args` list of strings", "content": {"text/plain": {"schema": {"type": "string"}}}}),
        ));
    }
    if host {
        out.push((
            401,
            json!({"description": "Missing or wrong bearer token: this route acts on the server's host and needs a token always (`--token`, else the one the server keeps in the serve file of its data dir)", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}),
        ));
    } else {
        out.push((
            401,
            json!({"description": "Missing or wrong bearer token (only when the server was started with `--token`)", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}),
        ));
    }
    out.push((
        403,
        error("The request names a host this server does not answer for (Host), or comes from another site's page (Origin)"),
    ));
    if path.starts_with("/api/pages/") {
        out.push((404, error("No such page")));
    }
    if path == "/api/jobs/{name}/run" {
        out.push((404, error("No such job (the message lists the known ones)")));
        out.push((409, error("The job is running in this server")));
    }
    if route.fallible {
        out.push((
            500,
            error("The index or a pack could not be read (or the upload written): the message says why"),
        ));
    }
    if route.queued {
        out.push((
            503,
            json!({"description": "Busy: more requests than the server runs at once have waited their turn (`--max-queries`, `--queue-wait-ms`); try again after `Retry-After` seconds", "headers": {"Retry-After": {"schema": {"type": "integer"}}}, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}),
        ));
    }
    if host {
        out.push((
            503,
            error("The server was started without a configuration (no jobs, no data dir for commands and uploads)"),
        ));
    }
    out
}

/// The whole document: every route of `routes` that has a summary.
pub fn document(routes: &[Route]) -> Value {
    let mut paths = Map::new();
    for route in routes {
        let Some(summary) = route.summary else {
            continue;
        };
        let (method, path) = (route.method.name(), &route.path);
        let mut params: Vec<Value> = route_params(path)
            .into_iter()
            .map(|name| {
                let (schema, description) = param_doc(name);
                let mut p = json!({"name": name, "in": "query", "required": false, "schema": schema, "description": description});
                if schema_is_array(&p) {
                    p["style"] = json!("form");
                    p["explode"] = json!(true);
                }
                p
            })
            .collect();
        if path.contains("{name}") {
            params.push(json!({"name": "name", "in": "path", "required": true, "schema": {"type": "string"}, "description": "Job name ([[job]] name)"}));
        }
        if path.contains("{id}") {
            params.push(json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "Page id from a search hit"}));
        }
        let ok = match *path {
            "/api/search" => {
                json!({"description": "One page of hits", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SearchPage"}}}})
            }
            "/api/stats" | "/api/stats.json" => {
                json!({"description": "Counts per bucket and series", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Stats"}}}})
            }
            "/api/stats.csv" => {
                json!({"description": "bucket,group,count rows", "content": {"text/csv": {"schema": {"type": "string"}}}})
            }
            "/api/pages/{id}" => {
                json!({"description": "The page", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PageDetail"}}}})
            }
            "/api/pages/{id}/copies" => {
                json!({"description": "The copies of the page's story", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Copies"}}}})
            }
            "/api/pages/{id}/raw" => {
                json!({"description": "The archived payload with its archived content type, sandboxed by CSP", "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}})
            }
            "/api/cli" => cli_answer(),
            "/api/uploads" => {
                json!({"description": "Kept (201): {\"upload\": \"upload:ID/NAME\", \"bytes\": N}; a forwarded import names the file by `upload`", "content": {"application/json": {"schema": {"type": "object", "required": ["upload", "bytes"]}}}})
            }
            "/api/jobs/{name}/run" => {
                json!({"description": "The run was started; it goes on in the server (`GET /api/jobs`, `/api/runs`)", "content": {"application/json": {"schema": {"type": "object", "required": ["job", "started"], "properties": {"job": {"type": "string"}, "started": {"type": "boolean", "enum": [true]}}}}}})
            }
            _ if route.access == Access::Probe => {
                json!({"description": "Plain text", "content": {"text/plain": {"schema": {"type": "string"}}}})
            }
            "/metrics" => {
                json!({"description": "Plain text", "content": {"text/plain": {"schema": {"type": "string"}}}})
            }
            _ => {
                json!({"description": "JSON", "content": {"application/json": {"schema": {"type": "object"}}}})
            }
        };
        let mut responses = Map::new();
        for (status, response) in responses_of(route, ok) {
            responses.insert(status.to_string(), response);
        }
        let mut op = json!({
            "summary": summary,
            "operationId": operation_id(path),
            "parameters": params,
            "responses": responses,
        });
        if *path == "/api/uploads" {
            op["requestBody"] = json!({"required": true, "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}});
        }
        if *path == "/api/cli" {
            op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["args"], "properties": {"args": {"type": "array", "items": {"type": "string"}}}}}}});
        }
        let entry = paths
            .entry(path.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        entry[method] = op;
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "harvest archive API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Search, statistics and archived pages of a harvest archive."
        },
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas(),
        },
        "security": [{"bearer": []}, {}],
    })
}

fn schema_is_array(p: &Value) -> bool {
    p["schema"]["type"] == "array"
}

fn operation_id(path: &str) -> String {
    path.trim_start_matches('/')
        .replace(['/', '.'], "_")
        .replace(['{', '}'], "")
}

fn schemas() -> Value {
    // One page: `read::PageJson` (also a line of `harvest query --format jsonl`).
    let pack = json!({"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}, "length": {"type": "integer"}}});
    // One json! of every property passes the macro's recursion limit: two halves.
    let mut properties = json!({
        "id": {"type": "string"}, "url": {"type": "string"}, "title": {"type": "string"},
        "published": {"type": "string", "format": "date-time", "nullable": true},
        "published_from": {"type": "string", "nullable": true},
        "fetched": {"type": "string", "format": "date-time"},
        "first_seen": {"type": "string", "format": "date-time", "nullable": true},
        "source": {"type": "string"}, "media": {"type": "string", "nullable": true},
        "media_from_host": {"type": "boolean"}, "outlet": {"type": "string"}, "author": {"type": "string", "nullable": true},
        "topic": {"type": "string"}, "topic_score": {"type": "number"},
        "comments": {"type": "integer", "nullable": true},
        "participants": {"type": "integer", "nullable": true},
        "keywords": {"type": "array", "items": {"type": "string"}},
        "cluster": {"type": "integer"}, "revisit": {"type": "boolean"}
    });
    let rest = json!({
        "near_duplicate": {"type": "boolean"},
        "near_duplicate_of": {"type": "string", "nullable": true},
        "copies": {"type": "integer", "minimum": 1, "description": "Archived copies of the page's story (near-duplicates), itself included"},
        "language": {"type": "string", "nullable": true}, "charset": {"type": "string", "nullable": true},
        "status": {"type": "integer"}, "digest": {"type": "string"}, "record_id": {"type": "string"},
        "simhash": {"type": "string", "nullable": true, "description": "16 hex digits"},
        "simhash_version": {"type": "integer", "nullable": true, "description": "recipe of the fingerprint (classifier::simhash::FINGERPRINT_VERSION); null for rows written before it was recorded"},
        "pack": pack.clone(),
        "pack_path": {"type": "string", "description": "pack.path"},
        "offset": {"type": "integer", "description": "pack.offset"},
        "length": {"type": "integer", "description": "pack.length"},
        "links": {"type": "object", "properties": {"page": {"type": "string"}, "raw": {"type": "string"}, "copies": {"type": "string"}}},
        "snippet": {"type": "string", "description": "With text=: a passage of the page's text, HTML-escaped, the query's words in <mark> (absent when the record cannot be read)"},
        "score": {"type": "number", "description": "With text= and sort=relevance: the page's BM25 score, to four decimals (absent otherwise)"}
    });
    if let (Some(all), Value::Object(rest)) = (properties.as_object_mut(), rest) {
        all.extend(rest);
    }
    let hit = json!({
        "type": "object",
        "required": ["id", "url", "title", "fetched", "source", "topic", "keywords", "links"],
        "properties": properties,
    });
    // Filter values no page of the selected sources has (topic, media): the
    // answer is empty or narrower for that reason.
    let warnings = json!({"type": "array", "items": {"$ref": "#/components/schemas/Warning"}});
    json!({
        "Warning": {"type": "object", "required": ["param", "value", "message"], "properties": {
            "param": {"type": "string", "enum": ["topic", "media"]}, "value": {"type": "string"}, "message": {"type": "string"}}},
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object", "required": ["message"], "properties": {"param": {"type": "string"}, "message": {"type": "string"}}}}},
        "Hit": hit,
        "SearchPage": {"type": "object", "required": ["hits", "next_cursor", "warnings"], "properties": {
            "hits": {"type": "array", "items": {"$ref": "#/components/schemas/Hit"}},
            "next_cursor": {"type": "string", "nullable": true},
            "warnings": warnings.clone(), "took_ms": {"type": "number"}}},
        "Stats": {"type": "object", "required": ["interval", "buckets", "series", "total", "warnings"], "properties": {
            "warnings": warnings,
            "interval": {"type": "string"}, "group_by": {"type": "string", "nullable": true}, "tz": {"type": "string"},
            "buckets": {"type": "array", "items": {"type": "string"}},
            "series": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "counts": {"type": "array", "items": {"type": "integer"}}}}},
            "total": {"type": "integer"}, "took_ms": {"type": "number"}}},
        "Copies": {"type": "object", "required": ["id", "story", "count", "copies"], "properties": {
            "id": {"type": "string"}, "story": {"type": "string", "description": "URL of the story's first archived page"},
            "count": {"type": "integer"},
            "by_source": {"type": "object", "additionalProperties": {"type": "integer"}},
            "by_media": {"type": "object", "additionalProperties": {"type": "integer"}},
            "copies": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "url": {"type": "string"}, "title": {"type": "string"},
                "source": {"type": "string"}, "media": {"type": "string", "nullable": true},
                "time": {"type": "string", "format": "date-time"}, "fetched": {"type": "string", "format": "date-time"},
                "distance": {"type": "integer"}, "revisit": {"type": "boolean"}, "simhash": {"type": "string"}}}}}},
        "PageDetail": {"allOf": [{"$ref": "#/components/schemas/Hit"}, {"type": "object", "required": ["captures", "history"], "properties": {
            "captures": {"type": "object", "properties": {"count": {"type": "integer"}, "first_seen": {"type": "string", "nullable": true}, "last_seen": {"type": "string"}}},
            "history": {"type": "array", "items": {"type": "object", "properties": {
                "time": {"type": "string", "format": "date-time"},
                "kind": {"type": "string", "enum": ["response", "revisit", "not_modified"]},
                "status": {"type": "integer"}, "digest": {"type": "string", "nullable": true},
                "record_id": {"type": "string"}, "pack": pack}}},
            "payload_captures": {"type": "integer"}}}]}
    })
}
