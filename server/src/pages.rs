//! What anonymous visitors are sent: a page rendered for one is kept and sent to the
//! next, under the same rules as the catalog's read caches (`app::db::cache`):
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
//! Only a whole 200 HTML page without `Set-Cookie` is kept: an error page and a
//! redirect are rendered every time. A `GET` without a session cookie (nor a form's
//! outcome, `ops::forms`) is served the kept page. A signed-in visitor's page names
//! them in its header: on the catalog and the categories page that island is the only
//! part that is theirs, so they are sent the kept page with the island drawn for them
//! (`app::ui::account_nav_html`, kept per caller and page) in place of the anonymous
//! one: 86 µs of the server's CPU a page instead of 464 for a whole render (`make
//! bench`, runs N and L), before the island was kept. Every other page of a signed-in
//! visitor is rendered for them.

use std::sync::Arc;

use app::db::Db;
use app::model::Caller;
use app::server_fns::flash::{Flash, FlashCookie};
use app::services::Services;
use app::services::access::{Admitted, ClientAddr, Counting, Credentials};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use leptos::nonce::Nonce;

/// Bytes of pages kept at most (catalog filters and pages, pet pages; a page is 10 to
/// 40 KB).
const PAGES_MAX_BYTES: u64 = 32 << 20;
/// Bytes of account islands kept at most (one is about 0.7 KB: its HTML and its props).
const ACCOUNTS_MAX_BYTES: u64 = 4 << 20;
/// How long a page nobody asks for is kept (pages of past generations end this way).
const PAGES_IDLE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

#[derive(Clone)]
pub struct PageCache {
    db: Db,
    /// The session cookie and the gate a signed-in visitor passes (`services::access`),
    /// as the page's own render would.
    services: Services,
    flash_cookie: FlashCookie,
    /// By the page's key, each with the generation it was rendered at.
    pages: moka::future::Cache<String, (u64, Arc<KeptPage>)>,
    /// The header's account island as drawn for a caller on a page (its path and
    /// query): drawing it was most of a signed-in page's CPU, and a shopper reloads and
    /// pages through the catalog as the same caller. It shows nothing of the catalog,
    /// so it never goes stale; the session is checked on every request all the same.
    accounts: moka::future::Cache<(Caller, String), Arc<str>>,
}

impl PageCache {
    pub fn new(services: Services, secure_cookies: bool) -> PageCache {
        PageCache {
            db: services.db.clone(),
            services,
            flash_cookie: FlashCookie { secure: secure_cookies },
            pages: moka::future::Cache::builder()
                .max_capacity(PAGES_MAX_BYTES)
                .weigher(|_, (_, page): &(u64, Arc<KeptPage>)| u32::try_from(page.len()).unwrap_or(u32::MAX))
                .time_to_idle(PAGES_IDLE)
                .build(),
            accounts: moka::future::Cache::builder()
                .max_capacity(ACCOUNTS_MAX_BYTES)
                .weigher(|(_, path): &(Caller, String), html: &Arc<str>| {
                    u32::try_from(path.len() + html.len()).unwrap_or(u32::MAX)
                })
                .time_to_idle(PAGES_IDLE)
                .build(),
        }
    }
}

/// The pages on which nothing but the header's account island is the visitor's own
/// (`a_signed_in_visitor_gets_the_kept_page_with_their_own_header` holds them to it).
fn only_the_header_is_personal(path: &str) -> bool {
    matches!(path, "/" | "/categories")
}

/// A rendered page, its body cut where its nonce was and around the header's account
/// island: `pieces` with a `Joint` between each two.
struct KeptPage {
    headers: HeaderMap,
    pieces: Vec<Bytes>,
    joints: Vec<Joint>,
    /// The account island as drawn for an anonymous visitor.
    anonymous_account: Bytes,
}

#[derive(Clone, Copy, PartialEq)]
enum Joint {
    Nonce,
    Account,
}

impl KeptPage {
    fn len(&self) -> usize {
        self.pieces.iter().map(Bytes::len).sum::<usize>() + self.anonymous_account.len()
    }

    /// The page with this answer's nonce, and `account` (the visitor's own header
    /// island) or else the anonymous one.
    fn response(&self, nonce: &str, account: Option<&str>) -> Response {
        let account = account.map_or(&self.anonymous_account[..], str::as_bytes);
        let joint = |joint: &Joint| match joint {
            Joint::Nonce => nonce.as_bytes(),
            Joint::Account => account,
        };
        let length = self.pieces.iter().map(Bytes::len).sum::<usize>()
            + self.joints.iter().map(|j| joint(j).len()).sum::<usize>();
        let mut body = Vec::with_capacity(length);
        for (n, piece) in self.pieces.iter().enumerate() {
            if n > 0 {
                body.extend_from_slice(joint(&self.joints[n - 1]));
            }
            body.extend_from_slice(piece);
        }
        let mut response = Response::new(Body::from(body));
        *response.headers_mut() = self.headers.clone();
        response
    }
}

/// How a page was answered, for `petstore_pages_total`.
fn count(how: &'static str) {
    metrics::counter!("petstore_pages_total", "how" => how).increment(1);
}

/// The middleware on the pages' routes.
pub async fn serve_kept(State(cache): State<PageCache>, request: Request, next: Next) -> Response {
    let nonce = request.extensions().get::<Nonce>().cloned();
    let nonce = match nonce {
        Some(nonce) if !nonce.is_empty() && request.method() == Method::GET => nonce,
        // The server functions' routes pass here too: not pages.
        _ => return next.run(request).await,
    };
    // A form's outcome, in its cookie or handed in by `ops::forms`: this visitor's page.
    if cache.flash_cookie.is_in(request.headers()) || request.extensions().get::<Flash>().is_some() {
        return rendered(next, request).await;
    }
    let token = cache.services.session_cookie.token_in_headers(request.headers()).map(str::to_owned);
    let signed_in = match token {
        None => None,
        Some(token) if only_the_header_is_personal(request.uri().path()) => {
            let client = cache.services.access.client(request.extensions(), request.headers());
            match caller(&cache, client, &token).await {
                Some(caller) => Some(caller),
                // A session that has ended, a ban, a fault: the page's own render
                // says so as it always has.
                None => return rendered(next, request).await,
            }
        }
        Some(_) => return rendered(next, request).await,
    };
    let Some(key) = page_key(request.uri()) else { return rendered(next, request).await };
    let account = match signed_in {
        Some(caller) => Some(account_island(&cache, caller, request.uri()).await),
        None => None,
    };
    let how = if account.is_some() { "assembled" } else { "kept" };
    // Taken before rendering: a write committed meanwhile makes this render stale.
    let generation = cache.db.generation();
    if let Some((rendered_at, page)) = cache.pages.get(&key).await
        && rendered_at >= generation
        && (account.is_none() || page.joints.contains(&Joint::Account))
    {
        count(how);
        return page.response(&nonce, account.as_deref());
    }
    // Rendered for an anonymous visitor, whoever asked, so that it can be kept: a
    // signed-in visitor's cookies are left out of the render. Concurrent misses each
    // render (a page cannot be shared before it is known to be keepable); the last to
    // finish is kept.
    let (parts, body) = request.into_parts();
    let mut anonymous = Request::from_parts(parts.clone(), body);
    anonymous.headers_mut().remove(header::COOKIE);
    match keep(next.clone().run(anonymous).await, &nonce).await {
        Ok(page) if account.is_none() || page.joints.contains(&Joint::Account) => {
            cache.pages.insert(key, (generation, page.clone())).await;
            count("rendered");
            page.response(&nonce, account.as_deref())
        }
        // A page without the island to put theirs in: theirs, rendered.
        Ok(_) => rendered(next, Request::from_parts(parts, Body::empty())).await,
        // Not a page to keep (an error page, say): a signed-in visitor gets theirs.
        Err(_) if account.is_some() => rendered(next, Request::from_parts(parts, Body::empty())).await,
        Err(not_kept) => {
            count("rendered");
            not_kept
        }
    }
}

/// The header's account island as the page would draw it for `caller`: on this page,
/// its query included.
async fn account_island(cache: &PageCache, caller: Caller, uri: &axum::http::Uri) -> Arc<str> {
    let path = match uri.query() {
        Some(query) if !query.is_empty() => format!("{}?{query}", uri.path()),
        _ => uri.path().to_owned(),
    };
    let key = (caller, path);
    if let Some(html) = cache.accounts.get(&key).await {
        return html;
    }
    let html: Arc<str> = app::ui::account_nav_html(Some(caller), key.1.clone()).into();
    cache.accounts.insert(key, html.clone()).await;
    html
}

/// The page rendered for this request alone.
async fn rendered(next: Next, request: Request) -> Response {
    count("rendered");
    next.run(request).await
}

/// Who the session `token` is, through the same gate as the page's own render (a
/// page's data counts nothing against the limits; a ban refuses it): `None` when it is
/// nobody's now, or the gate refuses.
async fn caller(cache: &PageCache, client: ClientAddr, token: &str) -> Option<Caller> {
    match cache.services.access.admit(Credentials::Session(token), client, Counting::BansOnly).await {
        Ok(Admitted { caller: Ok(Some(caller)), .. }) => Some(caller),
        _ => None,
    }
}

const ISLAND_END: &str = "</leptos-island>";

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
    // A page drawn without part of its data says `no-store` (`ui::widgets::keep_out_of_caches`).
    let no_store = response
        .headers()
        .get(header::CACHE_CONTROL)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("no-store"));
    if response.status() != StatusCode::OK || !html || no_store || response.headers().contains_key(header::SET_COOKIE) {
        return Err(response);
    }
    let (parts, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(body) => body,
        Err(err) => {
            let request = app::request_id::current();
            tracing::error!(request, error = %err, "rendering a page");
            return Err(StatusCode::INTERNAL_SERVER_ERROR.into_response());
        }
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return Err(Response::from_parts(parts, Body::from(body)));
    };
    // The header's account island, cut out whole (it holds no other island when drawn
    // for nobody), and the rest cut at the nonce.
    let island = text.find(app::ui::ACCOUNT_NAV_START).and_then(|start| {
        let end = start + text[start..].find(ISLAND_END)? + ISLAND_END.len();
        Some((start, end))
    });
    let (before, account, after) = match island {
        Some((start, end)) => (&text[..start], &text[start..end], Some(&text[end..])),
        None => (text, "", None),
    };
    let (mut pieces, mut joints) = (Vec::new(), Vec::new());
    let cut = |part: &str, pieces: &mut Vec<Bytes>, joints: &mut Vec<Joint>| {
        for (n, piece) in part.split(nonce).enumerate() {
            if n > 0 {
                joints.push(Joint::Nonce);
            }
            pieces.push(body.slice_ref(piece.as_bytes()));
        }
    };
    cut(before, &mut pieces, &mut joints);
    if let Some(after) = after {
        joints.push(Joint::Account);
        cut(after, &mut pieces, &mut joints);
    }
    let anonymous_account = body.slice_ref(account.as_bytes());
    Ok(Arc::new(KeptPage { headers: parts.headers, pieces, joints, anonymous_account }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 200 page, as the render answers it, with these extra headers.
    fn page(headers: &[(header::HeaderName, &'static str)]) -> Response {
        let mut response = Response::new(Body::from("<html><body>page</body></html>"));
        response.headers_mut().insert(header::CONTENT_TYPE, "text/html; charset=utf-8".parse().unwrap());
        for (name, value) in headers {
            response.headers_mut().insert(name, value.parse().unwrap());
        }
        response
    }

    #[tokio::test]
    async fn a_page_drawn_without_part_of_its_data_is_not_kept() {
        assert!(keep(page(&[]), "n").await.is_ok(), "a whole page is kept");
        let partial = keep(page(&[(header::CACHE_CONTROL, "no-store")]), "n").await;
        assert!(partial.is_err(), "a page that says no-store is sent, not kept");
        assert!(keep(page(&[(header::SET_COOKIE, "a=b")]), "n").await.is_err());
    }

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
