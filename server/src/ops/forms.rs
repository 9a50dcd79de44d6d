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
    let back = app::ui::referring_page(&parts.headers).unwrap_or("/").to_owned();
    let path = parts.uri.path().to_owned();
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
    let leaves = head.headers.contains_key(header::LOCATION);
    if plain || leaves {
        let outcome = match (&error, head.status.is_success()) {
            (_, true) => Ok(String::from_utf8_lossy(&body).into_owned()),
            (Some(error), false) => Err(error.clone()),
            (None, false) => Err(AppError::new(app::error::ErrorCode::BadRequest, "the form could not be handled")),
        };
        set_flash(&mut head.headers, flash_cookie, Flash { path, outcome, values: fields(&form) });
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
