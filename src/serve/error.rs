//! The API's errors: a status and a JSON body naming the parameter when there is one;
//! and the blocking pool the handlers read the index on.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

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

/// The body of an error answer of the API.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Error)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// What went wrong (and what would do).
    pub message: String,
    /// The query or path parameter at fault, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub param: Option<String>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                message: self.message,
                param: self.param,
            },
        };
        (self.status, Json(body)).into_response()
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
