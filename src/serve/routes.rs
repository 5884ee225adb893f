//! What kind of route a path is, for the server's layers and the OpenAPI document
//! alike.

/// Whether a route reads the index and so takes a turn (the server's admission
/// layer, documented as a possible 503 in the OpenAPI document): not the command
/// bridge and uploads (long, streamed, token-only), not job runs, `/metrics` or the
/// UI's assets.
pub fn queued_route(path: &str) -> bool {
    path.starts_with("/api/")
        && path != crate::remote::CLI_ROUTE
        && path != crate::remote::UPLOAD_ROUTE
        && path != "/api/openapi.json"
        && !(path.starts_with("/api/jobs/") && path.ends_with("/run"))
}
