//! The API's errors: a status and a JSON body naming the parameter when there is one;
//! and the blocking pool the handlers read the index on.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::filters::ParamError;

/// An API error: a status and a JSON body naming the parameter when there is one.
#[derive(Debug)]
pub struct ApiError {
    pub(super) status: StatusCode,
    pub(super) param: Option<String>,
    pub(super) message: String,
}

impl ApiError {
    pub(super) fn bad(e: ParamError) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            param: Some(e.param),
            message: e.message,
        }
    }

    pub(super) fn not_found(message: String) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            param: None,
            message,
        }
    }

    pub(super) fn internal(e: anyhow::Error) -> ApiError {
        tracing::error!(error = %format!("{e:#}"), "request failed");
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            param: None,
            message: format!("{e:#}"),
        }
    }
}

impl From<ParamError> for ApiError {
    fn from(e: ParamError) -> ApiError {
        ApiError::bad(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut err = json!({ "message": self.message });
        if let Some(p) = self.param {
            err["param"] = Value::String(p);
        }
        (self.status, Json(json!({ "error": err }))).into_response()
    }
}

pub(super) type ApiResult<T> = std::result::Result<T, ApiError>;

/// Run `f` on the blocking pool (index and pack reads are synchronous).
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> ApiResult<T> {
    // On a plain thread below the blocking pool: the HDFS pack store refuses
    // calls made with a tokio context.
    tokio::task::spawn_blocking(move || crate::jobs::off_runtime(f))
        .await
        .map_err(|e| ApiError::internal(anyhow::anyhow!("worker failed: {e}")))?
        .map_err(ApiError::internal)
}
