//! Headers every response carries, caching rules for static files, and the refusal of
//! cross-site calls to the server functions.
//!
//! Pages get a Content-Security-Policy naming the nonce of their inline hydration
//! scripts: `ops::EveryRequest` makes the nonce, hands it to Leptos through the request
//! (see `page_nonce`), and writes the policy on the way out. Everything else (JSON, assets,
//! errors) gets the strictest policy, since none of it is meant to run or be framed.
//!
//! The policy used to be set by the page itself, through leptos_axum's
//! `ResponseOptions`; on lazily loaded routes (/docs, the console) that header was
//! missing from a few responses in a hundred, and the page then could not hydrate.

use app::error::{AppError, ErrorCode};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use leptos::nonce::Nonce;

/// For responses that are not pages: nothing may load, run or frame them.
const CSP_NOT_A_PAGE: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// A page's policy: scripts only from this origin or inline with this response's nonce,
/// WASM allowed to compile, styles only from the stylesheet, and no framing. Images (and
/// Chromium's second look at one that fails to decode) may also be `blob:` URLs, which
/// only this page's own script can make: the console shows a photo chosen for upload
/// so. Debug builds also allow the `cargo leptos watch` reload socket.
fn page_policy(nonce: &Nonce) -> Option<HeaderValue> {
    let reload = if cfg!(debug_assertions) { " ws:" } else { "" };
    HeaderValue::from_str(&format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; style-src 'self'; \
         img-src 'self' data: blob:; connect-src 'self' blob:{reload}; object-src 'none'; base-uri 'none'; \
         form-action 'self'; frame-ancestors 'none'"
    ))
    .ok()
}

/// What a request asks for, as far as these headers care, told from its path once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The REST API (`/api` and below): JSON, even for an unknown path.
    Api,
    /// A server function (`/_app/`): JSON for the app's own WASM.
    ServerFn,
    /// A built file under `/pkg/`, with or without a content hash in its name.
    Asset { hashed: bool },
    /// Anything else: a page, or another static file.
    Site,
}

impl Target {
    pub fn of(path: &str) -> Target {
        if crate::api::is_api_path(path) {
            Target::Api
        } else if path.starts_with(app::server_fns::PREFIX) {
            Target::ServerFn
        } else if path.starts_with("/pkg/") {
            Target::Asset { hashed: has_content_hash(path) }
        } else {
            Target::Site
        }
    }
}

/// The nonce this layer made for the request, for Leptos to put on its inline scripts
/// (provided as context to every page, in place of the one leptos_axum makes).
pub fn page_nonce(parts: &axum::http::request::Parts) -> Option<Nonce> {
    parts.extensions.get::<Nonce>().cloned()
}

/// Makes the nonce of a request that may be answered with a page, and puts it in the
/// request: any but the API's, which answers JSON even for an unknown path. (A missing
/// file under `/pkg/` or an unknown server function gets the HTML 404 page.)
pub fn page_nonce_for(target: Target, request: &mut Request) -> Option<Nonce> {
    if target == Target::Api {
        return None;
    }
    let nonce = Nonce::new();
    request.extensions_mut().insert(nonce.clone());
    Some(nonce)
}

/// The headers every response gets: pages name their nonce in their policy, anything
/// else gets the strictest one. A `personal` page (for a signed-in visitor) may not be
/// stored at all, so that Back after signing out does not show it from the cache.
pub fn set_headers(target: Target, nonce: Option<&Nonce>, personal: bool, response: &mut Response) {
    let headers = response.headers_mut();
    // Looked up once: each look-up hashes the name.
    let html = is_html(headers);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("strict-origin-when-cross-origin"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    let policy = nonce.filter(|_| html).and_then(page_policy);
    headers.insert(header::CONTENT_SECURITY_POLICY, policy.unwrap_or(HeaderValue::from_static(CSP_NOT_A_PAGE)));
    if personal && html {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    } else if let Some(policy) = cache_policy(target, html)
        && !headers.contains_key(header::CACHE_CONTROL)
    {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(policy));
    }
    // Pages and files may be kept by shared caches, and are compressed for clients that
    // accept it: say so even when this client did not (`ops::CompressWhenAccepted`
    // leaves such a request alone; the compression layer adds no second one).
    if target != Target::Api && !headers.contains_key(header::VARY) {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
}

/// Files whose name carries a content hash (`petstore.1a2b3c4d5e.wasm`) never change
/// under that name: cache them for a year. Other files and pages are revalidated; pages
/// differ per signed-in user, so shared caches must not keep them.
fn cache_policy(target: Target, html: bool) -> Option<&'static str> {
    if html {
        return Some("private, no-cache");
    }
    match target {
        Target::Asset { hashed: true } => Some("public, max-age=31536000, immutable"),
        // The API's answers say nothing about caching; clients do not cache them.
        Target::Api | Target::ServerFn => None,
        Target::Asset { hashed: false } | Target::Site => Some("no-cache"),
    }
}

pub fn is_html(headers: &HeaderMap) -> bool {
    // Bytes, not `to_str`, which checks the whole value is UTF-8 first.
    headers.get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"text/html"))
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
/// rides along), so a page on another site must not be able to call them: a request
/// whose `Origin` is not this store's, or that a browser marks as cross-site, is
/// refused. Requests with neither header come from outside a browser, where no cookie
/// is at risk. They take only the form-encoded bodies the app's own calls and forms
/// send (415 for anything else: a `text/plain` post is what a cross-site form could
/// send without a preflight).
pub fn refuse_server_fn_call(target: Target, request: &Request, public_url: Option<&str>) -> Option<Response> {
    if target != Target::ServerFn {
        return None;
    }
    if is_cross_site(request.headers(), public_url) {
        return Some(
            AppError::new(ErrorCode::Forbidden, "cross-site requests to the store's own functions are refused")
                .into_response(),
        );
    }
    let form = request.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|value| {
        value.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/x-www-form-urlencoded")
    });
    (request.method() == axum::http::Method::POST && !form).then(|| {
        AppError::new(
            ErrorCode::UnsupportedMediaType,
            "the store's own functions take only application/x-www-form-urlencoded bodies",
        )
        .into_response()
    })
}

/// A page's address as Leptos would read it for a no-JavaScript form's error
/// (`?__path=…&__err=<base64 JSON>`): that would show any text a link puts there as the
/// store's own ("your key expired, renew it at evil.example"). The store tells a form
/// its outcome another way (`ops::forms`), so these parameters are dropped before the
/// page is rendered, by their names as Leptos reads them: decoded, so that
/// `%5F%5Ferr` or `__e%72r` go too.
pub fn drop_action_error_params(request: &mut Request) {
    let Some(query) = request.uri().query() else { return };
    if !query.split('&').any(is_action_error_param) {
        return;
    }
    let kept: Vec<&str> = query.split('&').filter(|pair| !is_action_error_param(pair)).collect();
    let path = request.uri().path();
    let uri = if kept.is_empty() { path.to_owned() } else { format!("{path}?{}", kept.join("&")) };
    if let Ok(uri) = uri.parse() {
        *request.uri_mut() = uri;
    }
}

/// Whether a `name=value` pair of a query is Leptos's `__err` or `__path`, once its name
/// is decoded as a form's (`%XX` and `+`).
fn is_action_error_param(pair: &str) -> bool {
    // Cheap first: neither name can be written without an underscore or a `%`.
    if !pair.starts_with(['_', '%']) {
        return false;
    }
    let name = pair.split('=').next().unwrap_or(pair);
    let decoded: Vec<(String, String)> = serde_urlencoded::from_str(name).unwrap_or_default();
    decoded.first().is_some_and(|(name, _)| name == "__err" || name == "__path")
}

fn is_cross_site(headers: &HeaderMap, public_url: Option<&str>) -> bool {
    let text = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    // `Origin` first, whenever it is sent: `Sec-Fetch-Site: none` (a typed address, a
    // bookmark) says nothing about who wrote the request.
    if let Some(origin) = text(header::ORIGIN) {
        let own = public_url == Some(origin) || {
            let origin_host = origin.strip_prefix("https://").or_else(|| origin.strip_prefix("http://"));
            origin_host.is_some() && origin_host == text(header::HOST)
        };
        if !own {
            return true;
        }
    }
    match text(header::HeaderName::from_static("sec-fetch-site")) {
        Some(site) => !matches!(site, "same-origin" | "none"),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs.iter().map(|(k, v)| (header::HeaderName::from_static(k), HeaderValue::from_static(v))).collect()
    }

    #[test]
    fn cross_site_is_told_by_origin_then_fetch_metadata() {
        let cross = |pairs| is_cross_site(&headers(pairs), None);
        assert!(!cross(&[("sec-fetch-site", "same-origin")]));
        assert!(!cross(&[("sec-fetch-site", "none")]));
        assert!(cross(&[("sec-fetch-site", "cross-site"), ("origin", "http://a"), ("host", "a")]));
        assert!(cross(&[("sec-fetch-site", "same-site")]));
        assert!(!cross(&[("origin", "http://shop.test:3000"), ("host", "shop.test:3000")]));
        assert!(cross(&[("origin", "http://evil.test"), ("host", "shop.test:3000")]));
        assert!(cross(&[("origin", "null"), ("host", "shop.test")]));
        assert!(!cross(&[("host", "shop.test")]));
        // A foreign Origin is refused whatever Sec-Fetch-Site claims.
        assert!(cross(&[("sec-fetch-site", "none"), ("origin", "http://evil.test"), ("host", "shop.test")]));
        assert!(cross(&[("sec-fetch-site", "same-origin"), ("origin", "http://evil.test"), ("host", "shop.test")]));
        // Behind a proxy the public address is the store's own.
        let proxied = headers(&[("origin", "https://shop.example"), ("host", "10.0.0.5:3000")]);
        assert!(!is_cross_site(&proxied, Some("https://shop.example")));
        assert!(is_cross_site(&proxied, None));
    }

    #[test]
    fn action_error_params_are_dropped_from_page_addresses() {
        let mut request =
            Request::get("/sign-in?a=1&__path=/_app/sign_in&__err=eyJ9&b=2").body(Default::default()).unwrap();
        drop_action_error_params(&mut request);
        assert_eq!(request.uri(), "/sign-in?a=1&b=2");
        let mut request = Request::get("/sign-in?__err=eyJ9").body(Default::default()).unwrap();
        drop_action_error_params(&mut request);
        assert_eq!(request.uri(), "/sign-in");
        // However the names are written: Leptos decodes them before it reads them.
        for query in
            ["%5F%5Fpath=%2F_app%2Fsign_in&%5F%5Ferr=eyJ9", "%5f_err=eyJ9&_%5Fpath=x", "__e%72r=eyJ9&__pat%68=x"]
        {
            let mut request = Request::get(format!("/sign-in?{query}&q=cats")).body(Default::default()).unwrap();
            drop_action_error_params(&mut request);
            assert_eq!(request.uri(), "/sign-in?q=cats", "{query}");
        }
        // Other names that only look alike stay.
        let mut request = Request::get("/?__errata=1&_err=2&%5F%5Ferr2=3").body(Default::default()).unwrap();
        drop_action_error_params(&mut request);
        assert_eq!(request.uri(), "/?__errata=1&_err=2&%5F%5Ferr2=3");
    }

    #[test]
    fn only_hashed_file_names_are_immutable() {
        assert!(has_content_hash("/pkg/petstore.4f2a9c01bd.wasm"));
        assert!(!has_content_hash("/pkg/petstore.wasm"));
        assert!(!has_content_hash("/pkg/petstore_bg.js"));
        assert!(!has_content_hash("/favicon.ico"));
    }
}
