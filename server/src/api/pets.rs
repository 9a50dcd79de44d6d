//! `/pets`: the catalog's animals.

use app::error::{AppError, AppResult, ErrorCode};
use app::model::{NewPet, Pet};
use app::services::{paging::PageRequest, pets, photos, validate};
use axum::extract::{OriginalUri, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::time::SystemTime;
use time::OffsetDateTime;
use utoipa::IntoParams;

use super::auth::{Admin, Customer};
use super::extract::{Id, Json, Query, RawBody};
use super::{AuthErrors, BodyErrors, ListErrors, json_answer, location, paged_json};
use crate::{AppState, Config};

/// Query parameters of `GET /pets`, kept as text so that the service can name a bad
/// one in its 422.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct PetListQuery {
    /// Only pets with this status.
    #[param(value_type = Option<app::model::PetStatus>)]
    pub status: Option<String>,
    /// Only pets of this category.
    #[param(value_type = Option<i64>, minimum = 1)]
    pub category_id: Option<String>,
    /// Only pets whose name contains this text (case-insensitive).
    #[param(max_length = 100)]
    pub q: Option<String>,
    /// Only these pets: a comma-separated list of at most 100 ids.
    #[param(example = "1,2,3")]
    pub ids: Option<String>,
    /// Page size, 1 to 100 (default 20).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// Opaque cursor from the previous page's `Link: rel="next"` header.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
}

/// List pets
///
/// Filters combine (all must hold). Ordered by id. When more pets follow, the
/// response carries `Link: <…>; rel="next"`.
#[utoipa::path(get, path = "/pets", tag = "Pets", operation_id = "listPets",
    params(PetListQuery),
    responses(
        (status = 200, description = "One page of pets", body = Vec<Pet>,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when there is a next page"))),
        ListErrors,
        AuthErrors,
    ))]
pub async fn list_pets(
    _: Customer,
    State(state): State<AppState>,
    uri: OriginalUri,
    Query(query): Query<PetListQuery>,
) -> AppResult<Response> {
    let filter = validate::pet_filter(
        query.status.as_deref(),
        query.category_id.as_deref(),
        query.q.as_deref(),
        query.ids.as_deref(),
    )?;
    let page = PageRequest::parse(query.limit.as_deref(), query.cursor.as_deref())?;
    Ok(paged_json(&uri, pets::list_as_json(&state.db, &filter, page).await?))
}

/// Create a pet
///
/// A new pet is `available` unless a status is given; its stock starts at 1 when
/// available, else 0.
#[utoipa::path(post, path = "/pets", tag = "Pets", operation_id = "createPet",
    request_body = NewPet,
    responses(
        (status = 201, description = "Created", body = Pet,
            headers(("Location" = String, description = "URL of the new pet"))),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn create_pet(
    _: Admin,
    State(state): State<AppState>,
    Json(new): Json<NewPet>,
) -> AppResult<impl IntoResponse> {
    let pet = pets::create(&state.db, new).await?;
    Ok((StatusCode::CREATED, location(format!("/pets/{}", pet.id)), axum::Json(pet)))
}

/// Find a pet by id (deprecated)
///
/// Deprecated: use `GET /pets?ids={petId}`. Responses carry `Deprecation`, `Sunset`
/// and a `Link` to the successor; from the sunset date on this answers 410 `sunset`.
#[utoipa::path(get, path = "/pets/{petId}", tag = "Pets", operation_id = "getPetById",
    params(("petId" = i64, Path, description = "Id of the pet", minimum = 1)),
    responses(
        (status = 200, description = "The pet", body = Pet, headers(
            ("Deprecation" = String, description = "RFC 9745: `@<unix seconds>` of the deprecation"),
            ("Sunset" = String, description = "RFC 8594: HTTP-date after which this operation is gone"),
            ("Link" = String, description = "`</api/v1/pets?ids={petId}>; rel=\"successor-version\"`"),
        )),
        (status = 400, description = "`petId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such pet (`not_found`)", body = AppError),
        (status = 410, description = "Past the sunset date (`sunset`)", body = AppError),
        AuthErrors,
    ))]
pub async fn get_pet(
    caller: Result<Customer, Response>,
    State(state): State<AppState>,
    id: Result<Id, AppError>,
) -> Response {
    let pet_id = id.as_ref().ok().map(|Id(id)| *id);
    let mut response = match (caller, id) {
        (Err(rejection), _) => rejection,
        (Ok(_), Err(err)) => err.into_response(),
        (Ok(_), Ok(Id(id))) if state.deprecation.sunset_has_passed() => AppError::new(
            ErrorCode::Sunset,
            format!("GET /pets/{{petId}} was retired; use GET {}/pets?ids={id}", super::BASE),
        )
        .into_response(),
        (Ok(_), Ok(Id(id))) => pets::get_as_json(&state.db, id).await.map(json_answer).into_response(),
    };
    // Deprecation headers go on every response of this operation, 401s and 400s included.
    state.deprecation.add_to(response.headers_mut(), pet_id);
    response
}

/// Replace a pet
///
/// The body replaces name and category. A given `status` follows the admin status
/// rules (available ↔ pending freely; sold only without open orders, which empties
/// the stock; sold → available only with stock); an omitted one is left unchanged.
#[utoipa::path(put, path = "/pets/{petId}", tag = "Pets", operation_id = "replacePet",
    params(("petId" = i64, Path, description = "Id of the pet", minimum = 1)),
    request_body = NewPet,
    responses(
        (status = 200, description = "The replaced pet", body = Pet),
        (status = 404, description = "No such pet (`not_found`)", body = AppError),
        (status = 409, description = "The status change is not allowed (`invalid_transition`)", body = AppError),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn replace_pet(
    _: Admin,
    State(state): State<AppState>,
    Id(id): Id,
    Json(new): Json<NewPet>,
) -> AppResult<axum::Json<Pet>> {
    pets::replace(&state.db, id, new).await.map(axum::Json)
}

/// Delete a pet
///
/// Deletes the pet and its inventory entry.
#[utoipa::path(delete, path = "/pets/{petId}", tag = "Pets", operation_id = "deletePet",
    params(("petId" = i64, Path, description = "Id of the pet", minimum = 1)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "`petId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such pet (`not_found`)", body = AppError),
        (status = 409, description = "Open orders hold the pet (`pet_has_open_orders`)", body = AppError),
        AuthErrors,
    ))]
pub async fn delete_pet(_: Admin, State(state): State<AppState>, Id(id): Id) -> AppResult<StatusCode> {
    pets::delete(&state.db, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Set a pet's photo
///
/// The body is the image itself, sent as `image/jpeg`, `image/png` or `image/webp` (or
/// `application/octet-stream`, and its first bytes say which), at most 5 MiB. The store decodes it, turns it upright (EXIF orientation), keeps only
/// its pixels (no metadata) and stores it as WebP 320, 640 and 1280 pixels wide (never
/// enlarged); the pet's `photoUrls` name them, with the content's hash in each URL. A
/// new photo replaces the one before.
#[utoipa::path(put, path = "/pets/{petId}/photo", tag = "Pets", operation_id = "setPetPhoto",
    params(("petId" = i64, Path, description = "Id of the pet", minimum = 1)),
    responses(
        (status = 200, description = "The pet, its `photoUrls` naming the new photo", body = Pet),
        (status = 400, description = "`petId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such pet (`not_found`)", body = AppError),
        (status = 408, description = "The body did not fully arrive within the request timeout (`request_timeout`)", body = AppError),
        (status = 413, description = "The body is over 5 MiB (`payload_too_large`)", body = AppError),
        (status = 415, description = "The body is not sent as `image/jpeg`, `image/png`, `image/webp` or `application/octet-stream` (`unsupported_media_type`)", body = AppError),
        (status = 422, description = "The body is not the image its Content-Type says, is damaged, or has more than 50 megapixels or 20,000 pixels a side (`invalid_image`)", body = AppError),
        AuthErrors,
    ))]
pub async fn set_photo(
    _: Admin,
    State(state): State<AppState>,
    Id(id): Id,
    headers: HeaderMap,
    RawBody(bytes): RawBody,
) -> AppResult<axum::Json<Pet>> {
    let content_type = headers.get(header::CONTENT_TYPE).map(|value| value.to_str().unwrap_or("(not text)"));
    photos::set(&state.db, id, content_type, bytes).await.map(axum::Json)
}

/// Remove a pet's photo
///
/// The pet has no photo from then on (`photoUrls` is empty); its old URLs answer 404.
/// Answers 204 whether or not it had one.
#[utoipa::path(delete, path = "/pets/{petId}/photo", tag = "Pets", operation_id = "deletePetPhoto",
    params(("petId" = i64, Path, description = "Id of the pet", minimum = 1)),
    responses(
        (status = 204, description = "The pet has no photo"),
        (status = 400, description = "`petId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such pet (`not_found`)", body = AppError),
        AuthErrors,
    ))]
pub async fn delete_photo(_: Admin, State(state): State<AppState>, Id(id): Id) -> AppResult<StatusCode> {
    photos::remove(&state.db, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) of `GET /pets/{petId}`, written
/// once from the configuration rather than formatted for every answer.
#[derive(Clone, Debug)]
pub struct DeprecationHeaders {
    deprecation: HeaderValue,
    sunset: HeaderValue,
    /// The sunset as the system clock tells it (compared on every request).
    sunset_at: SystemTime,
}

impl DeprecationHeaders {
    pub fn new(config: &Config) -> DeprecationHeaders {
        // Leaked, once per `AppState` (once per server start; once per test app in the
        // tests): a static value is cloned into each answer without bumping a count that
        // both cores share (as a value made from a String would).
        let value = |text: String| HeaderValue::from_static(Box::leak(text.into_boxed_str()));
        DeprecationHeaders {
            deprecation: value(format!("@{}", config.deprecation.unix_timestamp())),
            sunset: value(http_date(config.sunset)),
            sunset_at: config.sunset.into(),
        }
    }

    /// Whether the operation has been retired (410 from then on).
    fn sunset_has_passed(&self) -> bool {
        SystemTime::now() >= self.sunset_at
    }

    /// Adds them, and the successor `Link` (for this pet, when the id is one).
    fn add_to(&self, headers: &mut HeaderMap, id: Option<i64>) {
        const DEPRECATION: HeaderName = HeaderName::from_static("deprecation");
        const SUNSET: HeaderName = HeaderName::from_static("sunset");
        headers.insert(DEPRECATION, self.deprecation.clone());
        headers.insert(SUNSET, self.sunset.clone());
        // Pieces pushed (the id by itoa) rather than `format!`, whose machinery was 670
        // of a read's instructions (callgrind).
        let mut link = String::with_capacity(64);
        link.push('<');
        link.push_str(super::BASE);
        link.push_str("/pets");
        if let Some(id) = id {
            link.push_str("?ids=");
            link.push_str(itoa::Buffer::new().format(id));
        }
        link.push_str(">; rel=\"successor-version\"");
        if let Ok(link) = HeaderValue::try_from(link) {
            headers.insert(header::LINK, link);
        }
    }
}

/// An IMF-fixdate (`Wed, 30 Jun 2027 00:00:00 GMT`), the HTTP-date form.
pub fn http_date(at: OffsetDateTime) -> String {
    let format = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    at.to_offset(time::UtcOffset::UTC).format(&format).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_date_is_imf_fixdate() {
        assert_eq!(http_date(Config::default().sunset), "Wed, 30 Jun 2027 00:00:00 GMT");
    }
}
