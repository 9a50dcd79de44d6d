//! The one error type of the product: the spec's Error object, `{code, message, status}`.
//!
//! Services return it, REST handlers turn it into an HTTP response (see `IntoResponse`
//! below), and server functions carry it to the browser unchanged.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use utoipa::ToSchema;

/// What went wrong, for programs to act on; each code always comes with the same HTTP
/// status.
// Every code of contract.md, "Errors".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadRequest,
    MissingApiKey,
    InvalidApiKey,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    PetNotAvailable,
    InsufficientStock,
    InvalidTransition,
    CategoryInUse,
    DuplicateName,
    OrderCompleted,
    PetHasOpenOrders,
    IdempotencyKeyReused,
    LastAdminKey,
    Sunset,
    RequestTimeout,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationFailed,
    InvalidImage,
    InvalidWebhookUrl,
    RateLimited,
    TemporarilyBanned,
    InternalError,
    InsufficientStorage,
    Unavailable,
}

impl ErrorCode {
    /// The HTTP status each code is answered with.
    pub fn status(self) -> u16 {
        use ErrorCode::{
            BadRequest, CategoryInUse, DuplicateName, Forbidden, IdempotencyKeyReused, InsufficientStock,
            InsufficientStorage, InternalError, InvalidApiKey, InvalidImage, InvalidTransition, InvalidWebhookUrl,
            LastAdminKey, MethodNotAllowed, MissingApiKey, NotFound, OrderCompleted, PayloadTooLarge, PetHasOpenOrders,
            PetNotAvailable, RateLimited, RequestTimeout, Sunset, TemporarilyBanned, Unavailable, UnsupportedMediaType,
            ValidationFailed,
        };
        match self {
            BadRequest => 400,
            MissingApiKey | InvalidApiKey => 401,
            Forbidden => 403,
            NotFound => 404,
            MethodNotAllowed => 405,
            PetNotAvailable | InsufficientStock | InvalidTransition | CategoryInUse | DuplicateName
            | OrderCompleted | PetHasOpenOrders | IdempotencyKeyReused | LastAdminKey => 409,
            RequestTimeout => 408,
            Sunset => 410,
            PayloadTooLarge => 413,
            UnsupportedMediaType => 415,
            ValidationFailed | InvalidImage | InvalidWebhookUrl => 422,
            RateLimited | TemporarilyBanned => 429,
            InternalError => 500,
            Unavailable => 503,
            InsufficientStorage => 507,
        }
    }

    pub fn as_str(self) -> &'static str {
        use ErrorCode::{
            BadRequest, CategoryInUse, DuplicateName, Forbidden, IdempotencyKeyReused, InsufficientStock,
            InsufficientStorage, InternalError, InvalidApiKey, InvalidImage, InvalidTransition, InvalidWebhookUrl,
            LastAdminKey, MethodNotAllowed, MissingApiKey, NotFound, OrderCompleted, PayloadTooLarge, PetHasOpenOrders,
            PetNotAvailable, RateLimited, RequestTimeout, Sunset, TemporarilyBanned, Unavailable, UnsupportedMediaType,
            ValidationFailed,
        };
        match self {
            BadRequest => "bad_request",
            MissingApiKey => "missing_api_key",
            InvalidApiKey => "invalid_api_key",
            Forbidden => "forbidden",
            NotFound => "not_found",
            MethodNotAllowed => "method_not_allowed",
            PetNotAvailable => "pet_not_available",
            InsufficientStock => "insufficient_stock",
            InvalidTransition => "invalid_transition",
            CategoryInUse => "category_in_use",
            DuplicateName => "duplicate_name",
            OrderCompleted => "order_completed",
            PetHasOpenOrders => "pet_has_open_orders",
            IdempotencyKeyReused => "idempotency_key_reused",
            LastAdminKey => "last_admin_key",
            RequestTimeout => "request_timeout",
            Sunset => "sunset",
            PayloadTooLarge => "payload_too_large",
            UnsupportedMediaType => "unsupported_media_type",
            ValidationFailed => "validation_failed",
            InvalidImage => "invalid_image",
            InvalidWebhookUrl => "invalid_webhook_url",
            RateLimited => "rate_limited",
            TemporarilyBanned => "temporarily_banned",
            InternalError => "internal_error",
            Unavailable => "unavailable",
            InsufficientStorage => "insufficient_storage",
        }
    }
}

/// What every error response carries: a machine-readable `code`, a `message` for
/// people, and the response's HTTP `status` (always the one that goes with `code`).
// The spec's Error object; `status` always equals `code.status()`.
#[derive(Clone, Debug, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(feature = "ssr", derive(ToSchema), schema(as = Error))]
#[error("{message}")]
pub struct AppError {
    pub code: ErrorCode,
    pub message: String,
    /// The HTTP status code of the response that carried this error.
    pub status: u16,
    /// The request field a `validation_failed` is about, as the client spelled it, for
    /// the storefront's forms (server functions carry it to the browser). Not part of
    /// the API's Error object: REST answers leave it out (`IntoResponse` below).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ssr", schema(ignore))]
    pub field: Option<String>,
    /// Seconds until a refused request may succeed, sent as `Retry-After` (not in the body).
    #[serde(skip)]
    pub retry_after: Option<i64>,
    /// What failed underneath (a database error, say), kept for the log with its own
    /// causes; never sent.
    #[serde(skip)]
    #[source]
    pub cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Two errors are the same answer: the cause is not compared.
impl PartialEq for AppError {
    fn eq(&self, other: &AppError) -> bool {
        (self.code, &self.message, self.status, &self.field, self.retry_after)
            == (other.code, &other.message, other.status, &other.field, other.retry_after)
    }
}

impl Eq for AppError {}

pub type AppResult<T> = Result<T, AppError>;

/// The refusals of a passkey and of a recovery code (`invalid_api_key`), written for
/// people: the storefront shows them as they are (`ui::messages`), not as a key's.
pub const PASSKEY_REFUSED: &str = "that passkey did not sign you in: try again, or use a recovery code or an API key";
pub const RECOVERY_CODE_REFUSED: &str =
    "that recovery code did not work: each code works once; check it, or try another";

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> AppError {
        AppError { code, message: message.into(), status: code.status(), field: None, retry_after: None, cause: None }
    }

    pub fn not_found(what: &str, id: i64) -> AppError {
        AppError::new(ErrorCode::NotFound, format!("{what} {id} does not exist"))
    }

    /// A request value broke a rule; `field` names it the way the client spelled it.
    pub fn validation(field: &str, problem: impl std::fmt::Display) -> AppError {
        AppError {
            field: Some(field.to_owned()),
            ..AppError::new(ErrorCode::ValidationFailed, format!("{field}: {problem}"))
        }
    }

    /// The field a validation error is about.
    pub fn field(&self) -> Option<&str> {
        self.field.as_deref().filter(|_| self.code == ErrorCode::ValidationFailed)
    }

    /// A 429 with its `Retry-After`.
    pub fn too_many(code: ErrorCode, message: impl Into<String>, retry_after: i64) -> AppError {
        AppError { retry_after: Some(retry_after.max(1)), ..AppError::new(code, message) }
    }

    /// A 503 `unavailable`: a passing condition (a busy or failing store), so it says
    /// when to try again (`Retry-After`: 1 s).
    pub fn unavailable(message: impl Into<String>) -> AppError {
        AppError { retry_after: Some(1), ..AppError::new(ErrorCode::Unavailable, message) }
    }

    /// The store's writers wait longer than they may (a lock held elsewhere, a queue
    /// too long): nothing was written, and a retry may succeed.
    pub fn busy() -> AppError {
        AppError::unavailable("the store is busy; retry shortly")
    }

    pub fn conflict(code: ErrorCode, message: impl Into<String>) -> AppError {
        debug_assert_eq!(code.status(), 409);
        AppError::new(code, message)
    }

    /// A failure that is ours, not the client's. The details go to the log (the cause
    /// and every cause under it), never to the client (no SQL, paths or stack traces
    /// in a response); the cause stays with the error as its `source`.
    #[cfg(feature = "ssr")]
    pub fn internal(context: &str, cause: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> AppError {
        let cause: Arc<dyn std::error::Error + Send + Sync> = Arc::from(cause.into());
        let request = crate::request_id::current();
        tracing::error!(request, error = &*cause as &(dyn std::error::Error + 'static), "{context}");
        AppError {
            cause: Some(cause),
            ..AppError::new(ErrorCode::InternalError, "the server failed to handle this request")
        }
    }
}

#[cfg(feature = "ssr")]
impl AppError {
    /// `Retry-After` for an answer carrying this error, in whole seconds (at least 1),
    /// when a retry has a time (the API's answers and the pages' alike).
    pub fn retry_after_header(&self) -> Option<axum::http::HeaderValue> {
        self.retry_after.map(|seconds| axum::http::HeaderValue::from(seconds.max(1)))
    }
}

#[cfg(feature = "ssr")]
impl axum::response::IntoResponse for AppError {
    fn into_response(self) -> axum::response::Response {
        let status =
            axum::http::StatusCode::from_u16(self.status).unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after = self.retry_after_header();
        // The spec's Error object, and nothing else.
        let body = serde_json::json!({"code": self.code, "message": self.message, "status": self.status});
        let mut response = (status, axum::Json(body)).into_response();
        if let Some(seconds) = retry_after {
            response.headers_mut().insert(axum::http::header::RETRY_AFTER, seconds);
        }
        response
    }
}

/// Server functions carry the same Error object to the browser; failures of the
/// server-function machinery itself (a bad request body, a lost connection) become
/// `bad_request` or `internal_error`.
impl leptos::server_fn::error::FromServerFnError for AppError {
    type Encoder = leptos::server_fn::codec::JsonEncoding;

    fn from_server_fn_error(err: leptos::server_fn::error::ServerFnErrorErr) -> AppError {
        use leptos::server_fn::error::ServerFnErrorErr as E;
        let code = match err {
            E::Args(_) | E::MissingArg(_) | E::Deserialization(_) | E::UnsupportedRequestMethod(_) => {
                ErrorCode::BadRequest
            }
            E::Request(_) | E::Response(_) => ErrorCode::Unavailable,
            _ => ErrorCode::InternalError,
        };
        AppError::new(code, err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_matches_code_and_serializes_as_the_error_object() {
        let err = AppError::new(ErrorCode::CategoryInUse, "in use");
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json, serde_json::json!({"code": "category_in_use", "message": "in use", "status": 409}));
    }

    #[test]
    fn a_validation_error_names_its_field_apart_from_its_message() {
        let err = AppError::validation("name", "must not be empty: it is blank");
        assert_eq!(err.field(), Some("name"));
        assert_eq!(err.message, "name: must not be empty: it is blank");
        // Carried to the storefront (server functions) with the field, back and forth.
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["field"], "name");
        assert_eq!(serde_json::from_value::<AppError>(json).unwrap(), err);
        // A message that merely looks like "field: problem" names no field.
        assert_eq!(AppError::new(ErrorCode::ValidationFailed, "limit: too big").field(), None);
    }

    #[cfg(feature = "ssr")]
    #[tokio::test]
    async fn a_rest_answer_is_the_error_object_alone_and_the_cause_stays_for_the_log() {
        use std::error::Error as _;
        let io = std::io::Error::other("disk on fire");
        let err = AppError::internal("saving", io);
        assert_eq!(err.source().unwrap().to_string(), "disk on fire");
        let response = axum::response::IntoResponse::into_response(AppError::validation("name", "blank"));
        let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body, serde_json::json!({"code": "validation_failed", "message": "name: blank", "status": 422}));
    }

    #[test]
    fn as_str_agrees_with_serde() {
        for code in
            [ErrorCode::BadRequest, ErrorCode::PetHasOpenOrders, ErrorCode::ValidationFailed, ErrorCode::Unavailable]
        {
            assert_eq!(serde_json::to_value(code).unwrap(), serde_json::json!(code.as_str()));
        }
    }

    /// Another process holding SQLite's lock past the busy timeout is a 503 the client
    /// may retry, told apart by SQLite's result code.
    #[cfg(feature = "ssr")]
    #[tokio::test]
    async fn a_lock_held_elsewhere_is_unavailable() {
        use sqlx::{ConnectOptions, Connection};
        let dir = tempfile::tempdir().unwrap();
        let options: sqlx::sqlite::SqliteConnectOptions =
            format!("sqlite://{}", dir.path().join("t.db").display()).parse().unwrap();
        let options = options.create_if_missing(true).busy_timeout(std::time::Duration::ZERO);
        let mut holder = options.connect().await.unwrap();
        sqlx::raw_sql("CREATE TABLE t (n INTEGER); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)")
            .execute(&mut holder)
            .await
            .unwrap();
        let mut writer = options.connect().await.unwrap();
        let err = sqlx::query("INSERT INTO t VALUES (2)").execute(&mut writer).await.unwrap_err();
        let err = AppError::from(err);
        assert_eq!((err.code, err.status), (ErrorCode::Unavailable, 503), "{err:?}");
        writer.close().await.unwrap();
        holder.close().await.unwrap();
    }
}
