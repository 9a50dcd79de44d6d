//! Request extractors whose every rejection is the contract's Error object: JSON
//! bodies (415, 413, 400, 422 naming the field), integer path ids (400) and query
//! strings (422, naming the parameter).

use app::error::{AppError, ErrorCode};
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, RawPathParams, Request};
use axum::http::{header, request::Parts};
use serde::de::DeserializeOwned;

use crate::AppState;

/// Largest request body the API reads (contract: "Request bodies over 64 KiB get 413").
pub const BODY_LIMIT: usize = 64 * 1024;

/// The largest body a request may send: a photo upload's (`PUT /pets/{petId}/photo`)
/// is the photo itself, up to 5 MiB; every other body is JSON, up to [`BODY_LIMIT`].
pub fn body_limit(method: &axum::http::Method, path: &str) -> usize {
    if is_photo_upload(method, path) { app::services::photos::MAX_UPLOAD_BYTES } else { BODY_LIMIT }
}

/// Whether a request is a photo upload (`PUT /api/v1/pets/{petId}/photo`).
pub fn is_photo_upload(method: &axum::http::Method, path: &str) -> bool {
    *method == axum::http::Method::PUT
        && path
            .strip_prefix(super::BASE)
            .and_then(|rest| rest.strip_prefix("/pets/"))
            .and_then(|rest| rest.strip_suffix("/photo"))
            .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// The 413 for a body over `limit`.
pub fn too_large(limit: usize) -> AppError {
    AppError::new(ErrorCode::PayloadTooLarge, format!("the request body is larger than {limit} bytes"))
}

/// A JSON body deserialized into `T`. `T`'s types reject unknown fields.
pub struct Json<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for Json<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, AppError> {
        if !is_json(req.headers()) {
            return Err(AppError::new(
                ErrorCode::UnsupportedMediaType,
                "the request body must be JSON, sent with Content-Type: application/json",
            ));
        }
        let RawBody(bytes) = RawBody::from_request(req, state).await?;
        parse_json(&bytes).map(Json)
    }
}

/// The body's bytes, at most [`body_limit`] for the request (413 beyond, 400 when it
/// cannot be read), all of it within the request timeout (408 when it has not arrived
/// by then, however steadily it trickles in; the layers of `ops::wrap` answer 503 a
/// second later).
pub struct RawBody(pub Bytes);

impl FromRequest<AppState> for RawBody {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, AppError> {
        let limit = body_limit(req.method(), req.uri().path());
        let deadline = crate::ops::scope::arrived() + state.config.request_timeout;
        let read = tokio::time::timeout_at(deadline, Bytes::from_request(req, state))
            .await
            .map_err(|_| AppError::new(ErrorCode::RequestTimeout, "the request body did not arrive in time"))?;
        read.map(RawBody).map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                too_large(limit)
            } else {
                AppError::new(ErrorCode::BadRequest, format!("the request body could not be read: {rejection}"))
            }
        })
    }
}

/// Deserializes a body, which must be a JSON object (every request body of this API
/// is one; serde alone would also accept an array for a struct), telling malformed JSON (400) from well-formed JSON of the
/// wrong shape (422, naming the field by its path).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AppError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')) {
        // Well-formed or not, it is not an object: say what is expected.
        if serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok() {
            return Err(AppError::new(ErrorCode::ValidationFailed, "the request body must be a JSON object"));
        }
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        match inner.classify() {
            serde_json::error::Category::Data => {
                if path == "." {
                    AppError::new(ErrorCode::ValidationFailed, inner.to_string())
                } else {
                    AppError::validation(&path, inner)
                }
            }
            _ => AppError::new(ErrorCode::BadRequest, format!("the request body is not valid JSON: {inner}")),
        }
    })?;
    deserializer
        .end()
        .map_err(|err| AppError::new(ErrorCode::BadRequest, format!("the request body is not valid JSON: {err}")))?;
    Ok(value)
}

pub fn is_json(headers: &axum::http::HeaderMap) -> bool {
    let Some(content_type) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The one integer id in a resource path (`{petId}`, `{categoryId}`). Anything that is
/// not a 64-bit integer is a 400 naming the parameter; an integer that names nothing is
/// left to the service, which answers 404.
pub struct Id(pub i64);

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, AppError> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|e| AppError::new(ErrorCode::BadRequest, e.to_string()))?;
        let (name, value) =
            params.iter().next().ok_or_else(|| AppError::internal("path id", "route has no path parameter"))?;
        value.parse::<i64>().map(Id).map_err(|_| {
            AppError::new(ErrorCode::BadRequest, format!("{name} must be a 64-bit integer (got {value:?})"))
        })
    }
}

/// A query string deserialized into `T` (whose fields are optional strings checked
/// by the service); only a repeated parameter is rejected here.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, AppError> {
        let raw = parts.uri.query().unwrap_or("");
        // A parameter given twice is ambiguous: a 422 naming it, like any bad value.
        serde_urlencoded::from_str(raw)
            .map(Query)
            .map_err(|e| AppError::new(ErrorCode::ValidationFailed, format!("the query string is malformed: {e}")))
    }
}
