//! The benchmark's ceiling: a bare axum route, with none of the application's layers,
//! database or JSON encoding, answering a JSON body of the size asked for. `make bench`
//! runs it in the server's own process (`--bench-ceiling-addr`, hidden) and compares
//! every figure to it, since absolute figures on shared machines drift.

use axum::Router;
use axum::extract::Path;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

/// `GET /{bytes}`: `{"pad":"xxx…"}`, exactly `bytes` long (at least 11, at most 1 MiB).
pub fn router() -> Router {
    Router::new().route("/{bytes}", get(padded_json))
}

async fn padded_json(Path(bytes): Path<usize>) -> impl IntoResponse {
    let bytes = bytes.clamp(11, 1 << 20);
    let mut body = Vec::with_capacity(bytes);
    body.extend_from_slice(b"{\"pad\":\"");
    body.resize(bytes - 2, b'x');
    body.extend_from_slice(b"\"}");
    ([(header::CONTENT_TYPE, "application/json")], body)
}
