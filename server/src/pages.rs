//! What anonymous visitors are sent: a page rendered for one is kept and sent to the
//! next, under the same rules as the catalog's read caches (`app::services::cache`):
//! while no write of this process has committed since it was rendered, nor a change to
//! the catalog by another process been seen (`Db::watch_catalog`). A page is found by
//! its path and the query parameters it reads (`app::ui::query_parameters`), in moka's
//! cache (TinyLFU admission: a burst of one-off addresses cannot push out the catalog).
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

use app::db::Db;
use app::server_fns::flash::FlashCookie;
use app::services::sessions::SessionCookie;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use leptos::nonce::Nonce;

/// Bytes of pages kept at most (catalog filters and pages, pet pages; a page is 10 to
/// 40 KB).
const PAGES_MAX_BYTES: u64 = 32 << 20;
/// How long a page nobody asks for is kept (pages of past generations end this way).
const PAGES_IDLE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

#[derive(Clone)]
pub struct PageCache {
    db: Db,
    session_cookie: SessionCookie,
    flash_cookie: FlashCookie,
    /// By the page's key, each with the generation it was rendered at.
    pages: moka::future::Cache<String, (u64, Arc<KeptPage>)>,
}

impl PageCache {
    pub fn new(db: Db, secure_cookies: bool) -> PageCache {
        PageCache {
            db,
            session_cookie: SessionCookie { secure: secure_cookies },
            flash_cookie: FlashCookie { secure: secure_cookies },
            pages: moka::future::Cache::builder()
                .max_capacity(PAGES_MAX_BYTES)
                .weigher(|_, (_, page): &(u64, Arc<KeptPage>)| u32::try_from(page.len()).unwrap_or(u32::MAX))
                .time_to_idle(PAGES_IDLE)
                .build(),
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
    fn len(&self) -> usize {
        self.pieces.iter().map(Bytes::len).sum()
    }

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
        Some(nonce) if !nonce.is_empty() && request.method() == Method::GET && !cache.personal(request.headers()) => {
            nonce
        }
        _ => return next.run(request).await,
    };
    let Some(key) = page_key(request.uri()) else { return next.run(request).await };
    // Taken before rendering: a write committed meanwhile makes this render stale.
    let generation = cache.db.generation();
    if let Some((rendered_at, page)) = cache.pages.get(&key).await
        && rendered_at >= generation
    {
        return page.response(&nonce);
    }
    // Concurrent misses each render (a page cannot be shared before it is known to be
    // keepable); the last to finish is kept.
    match keep(next.run(request).await, &nonce).await {
        Ok(page) => {
            cache.pages.insert(key, (generation, page.clone())).await;
            page.response(&nonce)
        }
        Err(not_kept) => not_kept,
    }
}

/// What a page is kept under: its path and the parameters it reads, in their order;
/// `None` (render, do not keep) when the query has any other parameter, or one twice.
fn page_key(uri: &axum::http::Uri) -> Option<String> {
    let path = uri.path();
    let Some(query) = uri.query() else { return Some(path.to_owned()) };
    let reads = app::ui::query_parameters(path);
    let mut given: Vec<(String, String)> = serde_urlencoded::from_str(query).ok()?;
    if given.iter().any(|(name, _)| !reads.contains(&name.as_str())) {
        return None;
    }
    given.sort_by_key(|(name, _)| reads.iter().position(|read| read == name));
    if given.windows(2).any(|pair| pair[0].0 == pair[1].0) {
        return None;
    }
    Some(format!("{path}?{}", serde_urlencoded::to_string(&given).ok()?))
}

/// The page to keep, or the response to send as it is.
#[expect(clippy::result_large_err, reason = "the Err is the response itself, sent at once; boxing it gains nothing")]
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

#[cfg(test)]
mod tests {
    use super::page_key;

    fn key(uri: &str) -> Option<String> {
        page_key(&uri.parse().unwrap())
    }

    #[test]
    fn pages_are_kept_by_the_parameters_they_read() {
        assert_eq!(key("/pets/3"), Some("/pets/3".into()));
        assert_eq!(key("/?q=rex&status=sold"), key("/?status=sold&q=rex"), "one entry, whatever the order");
        assert_eq!(key("/?status=sold&q=rex").unwrap(), "/?status=sold&q=rex");
        assert_eq!(key("/?q=a%20b"), key("/?q=a+b"));
        assert_ne!(key("/?q=rex"), key("/?q=max"));
        // Made-up parameters are never kept (random query strings cannot fill the cache).
        assert_eq!(key("/pets/3?x=1"), None);
        assert_eq!(key("/?utm_source=mail"), None);
        assert_eq!(key("/?q=a&q=b"), None);
        assert_eq!(key("/sign-in?next=%2Fpets%2F3").unwrap(), "/sign-in?next=%2Fpets%2F3");
    }
}
