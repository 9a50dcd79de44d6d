//! `/keys`: self-service sign-up (no key needed), and the admin's list, create and
//! revoke.

use app::error::{AppError, AppResult, ErrorCode};
use app::model::{ApiKey, CreatedApiKey, NewApiKey, Role, SignUp};
use app::services::limits::WindowState;
use app::services::{keys, paging::PageRequest};
use axum::extract::{OriginalUri, State};
use axum::http::{Extensions, HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::auth::{Admin, MaybeCaller};
use super::extract::{Id, Query, RawBody, is_json, parse_json};
use super::{AuthErrors, BodyErrors, ListErrors, PageQuery, location, paged};
use crate::AppState;

/// Create a key (beta)
///
/// Without a key (or with a customer key): self-service sign-up, a Free customer key;
/// the body `SignUp`, `{"name"?}`, may be `{}` or left out. With an admin key: any role and plan, body
/// `NewApiKey` (Enterprise keys need `limits`). The secret is in `key`, shown this
/// once. Sign-ups are limited per client IP (5 a minute, 20 a day), and their answers'
/// rate-limit headers say that limit.
#[utoipa::path(post, path = "/keys", tag = "Store", operation_id = "createKey",
    request_body(content = NewApiKey, description = "`NewApiKey` with an admin key; else `SignUp` or nothing"),
    responses(
        (status = 201, description = "Created; `key` is the secret", body = CreatedApiKey,
            headers(
                ("Location" = String, description = "URL of the new key"),
                ("Cache-Control" = String, description = "`no-store`: the answer carries the secret"),
            )),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn create_key(
    MaybeCaller(caller): MaybeCaller,
    State(state): State<AppState>,
    extensions: Extensions,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Response {
    let admin = caller.is_some_and(|c| c.role == Role::Admin);
    let (created, sign_ups) = create(&state, admin, &extensions, &headers, &body).await;
    let mut response = match created {
        // The answer carries the secret: no cache along the way may keep it.
        Ok(created) => (
            StatusCode::CREATED,
            location(format!("/keys/{}", created.key_info.id)),
            [(header::CACHE_CONTROL, "no-store")],
            axum::Json(created),
        )
            .into_response(),
        Err(err) => err.into_response(),
    };
    // A sign-up's answer (its 429 too) says the sign-up limit in its rate-limit headers
    // (the guard writes the window it finds here rather than the request's own).
    if let Some(window) = sign_ups {
        response.extensions_mut().insert(window);
    }
    response
}

/// The key made (or why not), and for a sign-up, the window of the address's sign-ups.
async fn create(
    state: &AppState,
    admin: bool,
    extensions: &Extensions,
    headers: &HeaderMap,
    body: &[u8],
) -> (AppResult<CreatedApiKey>, Option<WindowState>) {
    let has_body = body.iter().any(|b| !b.is_ascii_whitespace());
    if has_body && !is_json(headers) {
        let refused =
            AppError::new(ErrorCode::UnsupportedMediaType, "the request body must be sent as application/json");
        return (Err(refused), None);
    }
    let now = state.clock.now();
    if admin {
        let created = match has_body {
            false => Err(AppError::new(ErrorCode::ValidationFailed, "missing field `name`, `role` and `plan`")),
            true => match parse_json::<NewApiKey>(body) {
                Ok(new) => keys::create(&state.db, now, new).await,
                Err(err) => Err(err),
            },
        };
        return (created, None);
    }
    let request = match has_body {
        false => SignUp::default(),
        true => match parse_json::<SignUp>(body) {
            Ok(request) => request,
            Err(err) => return (Err(err), None),
        },
    };
    let client = state.access.client(extensions, headers);
    keys::sign_up_counted(&state.db, &state.access.limiter, now, client, request).await
}

/// List keys (admin)
///
/// Every key, revoked ones included, by id; secrets are never shown again. Paged like
/// `GET /pets`.
#[utoipa::path(get, path = "/keys", tag = "Store", operation_id = "listKeys",
    params(PageQuery),
    responses(
        (status = 200, description = "One page of keys, without their secrets", body = Vec<ApiKey>,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when there is a next page"))),
        ListErrors,
        AuthErrors,
    ))]
pub async fn list_keys(
    _: Admin,
    State(state): State<AppState>,
    uri: OriginalUri,
    Query(query): Query<PageQuery>,
) -> AppResult<Response> {
    let page = PageRequest::parse(query.limit.as_deref(), query.cursor.as_deref())?;
    let rows = keys::list(&state.db, page).await?;
    let page = app::model::Page {
        items: rows.items.iter().map(|row| row.to_api()).collect::<Vec<_>>(),
        next_cursor: rows.next_cursor,
    };
    Ok(paged(&uri, page))
}

/// Revoke a key (admin)
///
/// The key stops working with the next request and its browser sessions end.
/// Revoking a revoked key changes nothing. The last active admin key cannot be revoked
/// (409 `last_admin_key`): create another admin key first.
#[utoipa::path(delete, path = "/keys/{keyId}", tag = "Store", operation_id = "revokeKey",
    params(("keyId" = i64, Path, description = "Id of the key", minimum = 1)),
    responses(
        (status = 200, description = "The revoked key", body = ApiKey),
        (status = 400, description = "`keyId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such key (`not_found`)", body = AppError),
        (status = 409, description = "The last active admin key (`last_admin_key`)", body = AppError),
        AuthErrors,
    ))]
pub async fn revoke_key(_: Admin, State(state): State<AppState>, Id(id): Id) -> AppResult<axum::Json<ApiKey>> {
    Ok(axum::Json(state.access.auth.revoke(id).await?.to_api()))
}
