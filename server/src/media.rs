//! `/media/…`: the pets' photos, served outside the API like the site's own assets: no
//! key and no rate limit (a catalog page shows a dozen; they must not spend a visitor's
//! requests), and kept by browsers and proxies for a year, since a URL names its bytes
//! by their hash (`app::services::photos`): a new photo has new URLs.

use app::services::photos;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::AppState;

/// What every photo answer carries: it never changes under its URL.
const FOREVER: HeaderValue = HeaderValue::from_static("public, max-age=31536000, immutable");

pub fn routes<S>(state: AppState) -> Router<S> {
    Router::new().route("/media/pets/{pet_id}/{file}", get(photo)).with_state(state)
}

/// `/media/pets/{petId}/{hash}-{width}.webp`.
async fn photo(
    State(state): State<AppState>,
    Path((pet_id, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let Some((pet_id, hash, width)) = parse(&pet_id, &file) else { return not_found() };
    let etag = format!("\"{hash}-{width}\"");
    let Ok(etag) = HeaderValue::from_str(&etag) else { return not_found() };
    // A browser holding it already (a reload asks again) is told so, its bytes unread.
    let held = headers.get(header::IF_NONE_MATCH).is_some_and(|sent| {
        sent.to_str().is_ok_and(|sent| sent.split(',').any(|tag| tag.trim().trim_start_matches("W/") == etag))
    });
    let mut response = if held {
        match photos::still_there(&state.db, pet_id, hash, width).await {
            Ok(true) => StatusCode::NOT_MODIFIED.into_response(),
            Ok(false) => return not_found(),
            Err(err) => return err.into_response(),
        }
    } else {
        match photos::variant(&state.db, pet_id, hash, width).await {
            Ok(Some(bytes)) => {
                ([(header::CONTENT_TYPE, HeaderValue::from_static("image/webp"))], bytes).into_response()
            }
            Ok(None) => return not_found(),
            Err(err) => return err.into_response(),
        }
    };
    response.headers_mut().insert(header::ETAG, etag);
    response.headers_mut().insert(header::CACHE_CONTROL, FOREVER);
    response
}

/// The pet, hash and width a photo's path names; `None` when it is no photo's path.
fn parse<'a>(pet_id: &str, file: &'a str) -> Option<(i64, &'a str, u32)> {
    let pet_id: i64 = pet_id.parse().ok().filter(|id| *id > 0)?;
    let (hash, width) = file.strip_suffix(".webp")?.rsplit_once('-')?;
    let hex = hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let width: u32 = width.parse().ok().filter(|width| app::model::PHOTO_WIDTHS.contains(width))?;
    hex.then_some((pet_id, hash, width))
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, [(header::CACHE_CONTROL, "no-store")], "no such photo").into_response()
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn only_photo_paths_are_read() {
        assert_eq!(parse("3", "0123456789abcdef-640.webp"), Some((3, "0123456789abcdef", 640)));
        for (pet, file) in [
            ("0", "0123456789abcdef-640.webp"),
            ("x", "0123456789abcdef-640.webp"),
            ("3", "0123456789abcdef-641.webp"),
            ("3", "0123456789ABCDEF-640.webp"),
            ("3", "0123456789abcdef-640.png"),
            ("3", "0123456789abcde-640.webp"),
            ("3", "-640.webp"),
        ] {
            assert_eq!(parse(pet, file), None, "{pet}/{file}");
        }
    }
}
