//! Server function calls and the flash (`app::server_fns::flash`).
//!
//! A browser without the WASM sends an `ActionForm` as a plain HTML form and expects a
//! page back. Leptos would call the function and send the browser back to the form's
//! page with any error written into its address, where every form of the same
//! function reads it (and so does anyone who crafts such a link). Here the function is
//! called as the WASM would call it (JSON back), and the browser is sent on with the
//! outcome in the flash cookie: to where the function redirects (signing in, deleting
//! a pet), else back to the page the form was on.
//!
//! A call from the WASM is answered as it is, but when its function sends the browser
//! to another page (the redirect hook follows it), that page gets the flash too, so it
//! can say what happened ("pet 12 deleted") with or without JavaScript alike.
//!
//! An answer that carries a secret (a new key, a webhook's signing secret: its function
//! marks it `no-store`) never goes into the flash, a cookie the browser keeps: a plain
//! form post is answered with the page it would have been sent to, rendered with the
//! outcome handed to it inside the server, and a call from the WASM stays on its page,
//! whose island shows the answer. Either way the secret leaves the server once, in
//! the body of an answer no cache may keep.

use app::error::AppError;
use app::server_fns::flash::{Flash, FlashCookie};
use axum::body::{Body, Bytes, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

/// The largest form a server function takes (the API's body limit, as for JSON).
const FORM_LIMIT: usize = crate::api::extract::BODY_LIMIT;

/// Whether a request to a server function is a browser's plain form post (it asks for
/// a page back, as navigations do; the WASM's calls ask for JSON).
fn is_plain_form_post(request: &Request) -> bool {
    request.method() == Method::POST
        && request
            .headers()
            .get(header::ACCEPT)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|accept| accept.contains("text/html"))
}

/// Calls the server function behind `app` and answers: a plain form post with a
/// redirect carrying the flash, a call from the WASM as the function answered it.
pub async fn answer<S: crate::HttpService>(app: S, request: Request, flash_cookie: FlashCookie) -> Response {
    let plain = is_plain_form_post(&request);
    let (mut parts, body) = request.into_parts();
    let Ok(form) = to_bytes(body, FORM_LIMIT).await else {
        return AppError::new(app::error::ErrorCode::PayloadTooLarge, "the form is larger than 64 KiB").into_response();
    };
    let back = app::paths::referring_page(&parts.headers).unwrap_or("/").to_owned();
    let path = parts.uri.path().to_owned();
    // What the page shown in place of a redirect is asked with (a plain post only).
    let asked = plain.then(|| (app.clone(), parts.headers.clone(), parts.extensions.clone()));
    if plain {
        parts.headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    }
    let Ok(response) = app.oneshot(Request::from_parts(parts, Body::from(form.clone()))).await;
    let (mut head, body) = response.into_parts();
    let Ok(body) = to_bytes(body, usize::MAX).await else {
        return AppError::internal("a server function's answer", "unreadable body").into_response();
    };
    let json =
        head.headers.get(header::CONTENT_TYPE).is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    // Our functions' errors are the Error object; anything else (no such function) is
    // passed on as it is.
    let error = if head.status.is_success() || !json { None } else { serde_json::from_slice::<AppError>(&body).ok() };
    let secret = head.status.is_success() && carries_a_secret(&head.headers);
    if secret && !plain {
        // The WASM stays on its page, whose island shows the answer: a redirect would
        // load a page with nothing to show it from.
        head.headers.remove(header::LOCATION);
        head.headers.remove(REDIRECT_HEADER);
    }
    let leaves = head.headers.contains_key(header::LOCATION);
    if plain || leaves {
        let outcome = match (&error, head.status.is_success()) {
            (_, true) => Ok(String::from_utf8_lossy(&body).into_owned()),
            (Some(error), false) => Err(error.clone()),
            (None, false) => Err(AppError::new(app::error::ErrorCode::BadRequest, "the form could not be handled")),
        };
        let flash = Flash::new(path, outcome, fields(&form));
        if let (true, Some((app, headers, extensions))) = (secret, asked) {
            let to = head.headers.get(header::LOCATION).and_then(|to| to.to_str().ok()).unwrap_or(&back).to_owned();
            let cookies: Vec<HeaderValue> = head.headers.get_all(header::SET_COOKIE).iter().cloned().collect();
            return page_in_place(app, &to, headers, extensions, flash, cookies).await;
        }
        set_flash(&mut head.headers, flash_cookie, flash);
    }
    if !plain {
        // server_fn answers every error with 500; ours carry their own status (409 out
        // of stock, 401 not signed in, …), so that logs and metrics tell a refusal
        // from a fault. (The browser side decodes any 4xx or 5xx the same way.)
        if let Some(status) = error.and_then(|error| StatusCode::from_u16(error.status).ok()) {
            head.status = status;
        }
        return Response::from_parts(head, Body::from(body));
    }
    let to = head
        .headers
        .get(header::LOCATION)
        .cloned()
        .unwrap_or_else(|| HeaderValue::from_str(&back).unwrap_or(HeaderValue::from_static("/")));
    let mut redirect = Response::new(Body::empty());
    *redirect.status_mut() = StatusCode::SEE_OTHER;
    let headers = redirect.headers_mut();
    headers.insert(header::LOCATION, to);
    // The function's own cookies (a new session) and the flash go along.
    for cookie in head.headers.get_all(header::SET_COOKIE) {
        headers.append(header::SET_COOKIE, cookie.clone());
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    redirect
}

/// The header by which server_fn tells its WASM client to go to another page.
const REDIRECT_HEADER: &str = leptos::server_fn::redirect::REDIRECT_HEADER;

/// Whether a function's answer carries a secret: it is marked `no-store`
/// (`Call::no_store`).
fn carries_a_secret(headers: &HeaderMap) -> bool {
    headers.get(header::CACHE_CONTROL).is_some_and(|value| value.as_bytes() == b"no-store")
}

/// The page at `to`, rendered as the answer to a plain form post whose outcome carries
/// a secret: asked for as the browser would after the redirect (its cookies, with the
/// ones the function set), with the outcome handed to the page in the request (the
/// page reads it as it reads the flash), and sent `no-store` with the function's
/// cookies.
async fn page_in_place<S: crate::HttpService>(
    app: S,
    to: &str,
    mut headers: HeaderMap,
    mut extensions: axum::http::Extensions,
    flash: Flash,
    set_cookies: Vec<HeaderValue>,
) -> Response {
    for sent in [header::CONTENT_TYPE, header::CONTENT_LENGTH, header::ORIGIN] {
        headers.remove(sent);
    }
    headers.insert(header::ACCEPT, HeaderValue::from_static("text/html"));
    match with_cookies_set(&headers, &set_cookies) {
        Some(cookies) => headers.insert(header::COOKIE, cookies),
        None => headers.remove(header::COOKIE),
    };
    extensions.insert(flash);
    let mut page = Request::new(Body::empty());
    *page.uri_mut() = to.parse().unwrap_or_else(|_| axum::http::Uri::from_static("/"));
    *page.headers_mut() = headers;
    *page.extensions_mut() = extensions;
    let Ok(mut response) = app.oneshot(page).await;
    let answer = response.headers_mut();
    for cookie in set_cookies {
        answer.append(header::SET_COOKIE, cookie);
    }
    answer.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The `Cookie` header a browser would send after taking `set_cookies` (`None`: no
/// cookie left).
fn with_cookies_set(headers: &HeaderMap, set_cookies: &[HeaderValue]) -> Option<HeaderValue> {
    let set: Vec<(&str, bool)> = set_cookies
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter_map(|value| {
            let pair = value.split(';').next()?.trim();
            Some((pair, value.contains("Max-Age=0")))
        })
        .collect();
    let name_of = |pair: &str| pair.split('=').next().unwrap_or("").trim().to_owned();
    let replaced: Vec<String> = set.iter().map(|(pair, _)| name_of(pair)).collect();
    let mut pairs: Vec<String> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|cookies| cookies.split(';'))
        .map(str::trim)
        .filter(|pair| !pair.is_empty() && !replaced.contains(&name_of(pair)))
        .map(str::to_owned)
        .collect();
    pairs.extend(set.iter().filter(|(_, removed)| !removed).map(|(pair, _)| (*pair).to_owned()));
    (!pairs.is_empty()).then(|| HeaderValue::from_str(&pairs.join("; ")).ok()).flatten()
}

/// The form's fields, as sent.
fn fields(form: &Bytes) -> Vec<(String, String)> {
    serde_urlencoded::from_bytes(form).unwrap_or_default()
}

fn set_flash(headers: &mut HeaderMap, cookie: FlashCookie, mut flash: Flash) {
    let mut value = flash.encode();
    if value.len() > FlashCookie::MAX_VALUE {
        // Too much typed to keep: the outcome and which record it was about still go.
        flash.values.retain(|(field, _)| field == "id" || field == "pet_id");
        if let Ok(outcome) = &flash.outcome
            && outcome.len() > FlashCookie::MAX_VALUE / 2
        {
            flash.outcome = Ok("null".into());
        }
        value = flash.encode();
    }
    if let Ok(set) = HeaderValue::from_str(&cookie.set(Some(&value))) {
        headers.append(header::SET_COOKIE, set);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_in_place_is_asked_with_the_cookies_the_function_set() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_static("petstore_session=old; theme=dark"));
        let set = [HeaderValue::from_static("petstore_session=new; Path=/; HttpOnly; SameSite=Lax")];
        assert_eq!(with_cookies_set(&headers, &set).unwrap(), "theme=dark; petstore_session=new");
        let cleared = [HeaderValue::from_static("petstore_session=; Path=/; Max-Age=0")];
        assert_eq!(with_cookies_set(&headers, &cleared).unwrap(), "theme=dark");
        assert_eq!(with_cookies_set(&HeaderMap::new(), &cleared), None);
        assert_eq!(with_cookies_set(&HeaderMap::new(), &set).unwrap(), "petstore_session=new");
    }
}
