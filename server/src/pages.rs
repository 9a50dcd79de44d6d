//! What anonymous visitors are sent: a page rendered for one is kept and sent to the
//! next, under the same rules as the catalog's read caches (`app::services::cache`):
//! while no write of this process has committed since it was rendered, nor a change to
//! the catalog by another process been seen (`app::db::watch_catalog`).
//!
//! Why: leptos's rendering is most of what a page costs. Rendered every time, the
//! catalog page came at 3,400 to 4,500 pages/s, against 26,000 to 36,000 answers/s for
//! a pet's JSON (`make bench`, 2026-11-23). A page's only per-request part is the nonce
//! of its inline scripts (`ops::security`), so the page is kept cut where the nonce was
//! and joined again with each request's own.
//!
//! Only a `GET` without a session cookie (or a form's outcome, `ops::forms`) is served
//! from here, and only a whole 200 HTML page without `Set-Cookie` is kept: a signed-in
//! visitor's page (its header names them), an error page and a redirect are rendered
//! every time.

use std::sync::Arc;

use app::db::Pool;
use app::services::cache::ReadCache;
use app::server_fns::flash::FlashCookie;
use app::services::sessions::SessionCookie;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use leptos::nonce::Nonce;

/// Pages kept at most (catalog filters and pages, pet pages); when full, the cache
/// empties and refills.
const PAGES_MAX: usize = 2_000;

#[derive(Clone)]
pub struct PageCache {
    pool: Pool,
    session_cookie: SessionCookie,
    flash_cookie: FlashCookie,
    pages: Arc<ReadCache<String, Arc<KeptPage>>>,
}

impl PageCache {
    pub fn new(pool: Pool, secure_cookies: bool) -> PageCache {
        PageCache {
            pool,
            session_cookie: SessionCookie { secure: secure_cookies },
            flash_cookie: FlashCookie { secure: secure_cookies },
            pages: Arc::new(ReadCache::new(PAGES_MAX)),
        }
    }

    /// Whether the page for this request is the visitor's own: signed in, or showing
    /// what a form they sent did.
    fn personal(&self, headers: &HeaderMap) -> bool {
        self.session_cookie.token_in_headers(headers).is_some() || self.flash_cookie.is_in(headers)
    }
}

/// A rendered page, its body cut where its nonce was.
struct KeptPage {
    headers: HeaderMap,
    pieces: Vec<Bytes>,
}

impl KeptPage {
    fn response(&self, nonce: &str) -> Response {
        let length = self.pieces.iter().map(Bytes::len).sum::<usize>() + nonce.len() * (self.pieces.len() - 1);
        let mut body = Vec::with_capacity(length);
        for (n, piece) in self.pieces.iter().enumerate() {
            if n > 0 {
                body.extend_from_slice(nonce.as_bytes());
            }
            body.extend_from_slice(piece);
        }
        let mut response = Response::new(Body::from(body));
        *response.headers_mut() = self.headers.clone();
        response
    }
}

/// The middleware on the pages' routes.
pub async fn serve_kept(State(cache): State<PageCache>, request: Request, next: Next) -> Response {
    let nonce = request.extensions().get::<Nonce>().cloned();
    let nonce = match nonce {
        Some(nonce)
            if !nonce.is_empty()
                && request.method() == Method::GET
                && !cache.personal(request.headers()) =>
        {
            nonce
        }
        _ => return next.run(request).await,
    };
    let key = request.uri().to_string();
    let render = || async {
        let response = next.run(request).await;
        keep(response, &nonce).await
    };
    match cache.pages.get_or_read(&cache.pool, key, render).await {
        Ok(page) => page.response(&nonce),
        Err(not_kept) => not_kept,
    }
}

/// The page to keep, or the response to send as it is.
async fn keep(response: Response, nonce: &str) -> Result<Arc<KeptPage>, Response> {
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/html"));
    // (The server functions' routes pass here too: never kept, being POSTs and JSON.)
    if response.status() != StatusCode::OK || !html || response.headers().contains_key(header::SET_COOKIE) {
        return Err(response);
    }
    let (parts, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(body) => body,
        Err(err) => {
            tracing::error!(error = %err, "rendering a page");
            return Err(StatusCode::INTERNAL_SERVER_ERROR.into_response());
        }
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return Err(Response::from_parts(parts, Body::from(body)));
    };
    let pieces = text.split(nonce).map(|piece| body.slice_ref(piece.as_bytes())).collect();
    Ok(Arc::new(KeptPage { headers: parts.headers, pieces }))
}
