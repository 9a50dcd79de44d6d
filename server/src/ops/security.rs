//! Headers every response carries, caching rules for static files, and the refusal of
//! cross-site calls to the server functions.
//!
//! Pages set their own Content-Security-Policy, with the per-request nonce of their
//! hydration scripts (`app::csp`); everything else (JSON, assets, errors) gets the
//! strictest one, since none of it is meant to run or be framed.

use app::error::{AppError, ErrorCode};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// For responses that are not pages: nothing may load, run or frame them.
const CSP_NOT_A_PAGE: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// Where the server functions live (`app::server_fns`).
const SERVER_FN_PREFIX: &str = "/_app/";

pub async fn headers(request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("strict-origin-when-cross-origin"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP_NOT_A_PAGE));
    }
    if !headers.contains_key(header::CACHE_CONTROL) {
        if let Some(policy) = cache_policy(&path, headers) {
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(policy));
        }
    }
    response
}

/// Files whose name carries a content hash (`petstore.1a2b3c4d5e.wasm`) never change
/// under that name: cache them for a year. Other files and pages are revalidated; pages
/// differ per signed-in user, so shared caches must not keep them.
fn cache_policy(path: &str, headers: &HeaderMap) -> Option<&'static str> {
    let is_html =
        headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/html"));
    if is_html {
        Some("private, no-cache")
    } else if path.starts_with("/pkg/") {
        Some(if has_content_hash(path) { "public, max-age=31536000, immutable" } else { "no-cache" })
    } else if path.starts_with("/api/") || path.starts_with(SERVER_FN_PREFIX) {
        None // the API's answers say nothing about caching; clients do not cache them
    } else {
        Some("no-cache")
    }
}

/// `name.<hash>.ext`, where cargo-leptos's hash is at least 8 hexadecimal-ish characters.
fn has_content_hash(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or("");
    let parts: Vec<&str> = file.split('.').collect();
    parts.len() >= 3 && {
        let hash = parts[parts.len() - 2];
        hash.len() >= 8 && hash.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }
}

/// Server functions change state on behalf of the signed-in user (the session cookie
/// rides along), so a page on another site must not be able to call them: a request a
/// browser marks as cross-site, or whose `Origin` is not this host, is refused. Requests
/// without either header come from outside a browser, where no cookie is at risk.
pub async fn reject_cross_site(request: Request, next: Next) -> Response {
    if request.uri().path().starts_with(SERVER_FN_PREFIX) && is_cross_site(request.headers()) {
        return AppError::new(ErrorCode::Forbidden, "cross-site requests to the store's own functions are refused")
            .into_response();
    }
    next.run(request).await
}

/// server_fn answers every error with 500. Ours carry their own status (409 out of
/// stock, 401 not signed in, …): answer with it, so that logs and metrics tell a
/// refusal from a fault. (The browser side decodes any 4xx or 5xx the same way.)
pub async fn server_fn_error_status(request: Request, next: Next) -> Response {
    let is_server_fn = request.uri().path().starts_with(SERVER_FN_PREFIX);
    let response = next.run(request).await;
    if !is_server_fn || response.status() != axum::http::StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return AppError::internal("server function", "unreadable error body").into_response();
    };
    if let Ok(error) = serde_json::from_slice::<AppError>(&bytes) {
        if let Ok(status) = axum::http::StatusCode::from_u16(error.status) {
            parts.status = status;
        }
    }
    Response::from_parts(parts, axum::body::Body::from(bytes))
}

fn is_cross_site(headers: &HeaderMap) -> bool {
    let text = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    if let Some(site) = text(header::HeaderName::from_static("sec-fetch-site")) {
        return !matches!(site, "same-origin" | "none");
    }
    match (text(header::ORIGIN), text(header::HOST)) {
        (Some(origin), Some(host)) => {
            let origin_host = origin.strip_prefix("https://").or_else(|| origin.strip_prefix("http://"));
            origin_host != Some(host)
        }
        (Some(_), None) => true,
        (None, _) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs.iter().map(|(k, v)| (header::HeaderName::from_static(k), HeaderValue::from_static(v))).collect()
    }

    #[test]
    fn cross_site_is_told_by_fetch_metadata_then_origin() {
        assert!(!is_cross_site(&headers(&[("sec-fetch-site", "same-origin")])));
        assert!(!is_cross_site(&headers(&[("sec-fetch-site", "none")])));
        assert!(is_cross_site(&headers(&[("sec-fetch-site", "cross-site"), ("origin", "http://a"), ("host", "a")])));
        assert!(is_cross_site(&headers(&[("sec-fetch-site", "same-site")])));
        assert!(!is_cross_site(&headers(&[("origin", "http://shop.test:3000"), ("host", "shop.test:3000")])));
        assert!(is_cross_site(&headers(&[("origin", "http://evil.test"), ("host", "shop.test:3000")])));
        assert!(is_cross_site(&headers(&[("origin", "null"), ("host", "shop.test")])));
        assert!(!is_cross_site(&headers(&[("host", "shop.test")])));
    }

    #[test]
    fn only_hashed_file_names_are_immutable() {
        assert!(has_content_hash("/pkg/petstore.4f2a9c01bd.wasm"));
        assert!(!has_content_hash("/pkg/petstore.wasm"));
        assert!(!has_content_hash("/pkg/petstore_bg.js"));
        assert!(!has_content_hash("/favicon.ico"));
    }
}
