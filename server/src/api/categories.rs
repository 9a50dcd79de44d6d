//! `/categories`: kinds of animal. Names are unique case-insensitively.

use app::error::{AppError, AppResult};
use app::model::{Category, NewCategory};
use app::services::{categories, paging::PageRequest};
use axum::extract::{OriginalUri, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::auth::{Admin, Customer};
use super::extract::{Id, Json, Query};
use super::{AuthErrors, BodyErrors, ListErrors, PageQuery, location, paged};
use crate::AppState;

/// List categories
///
/// Ordered by id, paged like `GET /pets`.
#[utoipa::path(get, path = "/categories", tag = "Pets", operation_id = "listCategories",
    params(PageQuery),
    responses(
        (status = 200, description = "One page of categories", body = Vec<Category>,
            headers(("Link" = String, description = "`<url>; rel=\"next\"` when there is a next page"))),
        ListErrors,
        AuthErrors,
    ))]
pub async fn list_categories(
    _: Customer,
    State(state): State<AppState>,
    uri: OriginalUri,
    Query(query): Query<PageQuery>,
) -> AppResult<Response> {
    let page = PageRequest::parse(query.limit.as_deref(), query.cursor.as_deref())?;
    Ok(paged(&uri, categories::list(&state.db, page).await?))
}

/// Create a category
///
/// Admin only. Names are unique regardless of case: "dogs" and "Dogs" are one category.
#[utoipa::path(post, path = "/categories", tag = "Pets", operation_id = "createCategory",
    request_body = NewCategory,
    responses(
        (status = 201, description = "Created", body = Category,
            headers(("Location" = String, description = "URL of the new category"))),
        (status = 409, description = "A category of that name exists (`duplicate_name`)", body = AppError),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn create_category(
    _: Admin,
    State(state): State<AppState>,
    Json(new): Json<NewCategory>,
) -> AppResult<impl IntoResponse> {
    let category = categories::create(&state.db, new).await?;
    Ok((StatusCode::CREATED, location(format!("/categories/{}", category.id)), axum::Json(category)))
}

/// Find a category by id
///
/// Any key. The category's name and description.
#[utoipa::path(get, path = "/categories/{categoryId}", tag = "Pets", operation_id = "getCategory",
    params(("categoryId" = i64, Path, description = "Id of the category", minimum = 1)),
    responses(
        (status = 200, description = "The category", body = Category),
        (status = 400, description = "`categoryId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such category (`not_found`)", body = AppError),
        AuthErrors,
    ))]
pub async fn get_category(_: Customer, State(state): State<AppState>, Id(id): Id) -> AppResult<axum::Json<Category>> {
    categories::get(&state.db, id).await.map(axum::Json)
}

/// Replace a category
///
/// The body replaces name and description; an omitted description is cleared.
#[utoipa::path(put, path = "/categories/{categoryId}", tag = "Pets", operation_id = "replaceCategory",
    params(("categoryId" = i64, Path, description = "Id of the category", minimum = 1)),
    request_body = NewCategory,
    responses(
        (status = 200, description = "The replaced category", body = Category),
        (status = 404, description = "No such category (`not_found`)", body = AppError),
        (status = 409, description = "Another category has that name (`duplicate_name`)", body = AppError),
        BodyErrors,
        AuthErrors,
    ))]
pub async fn replace_category(
    _: Admin,
    State(state): State<AppState>,
    Id(id): Id,
    Json(new): Json<NewCategory>,
) -> AppResult<axum::Json<Category>> {
    categories::replace(&state.db, id, new).await.map(axum::Json)
}

/// Delete a category
///
/// Refused while any pet belongs to it.
#[utoipa::path(delete, path = "/categories/{categoryId}", tag = "Pets", operation_id = "deleteCategory",
    params(("categoryId" = i64, Path, description = "Id of the category", minimum = 1)),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "`categoryId` is not an integer (`bad_request`)", body = AppError),
        (status = 404, description = "No such category (`not_found`)", body = AppError),
        (status = 409, description = "Pets still belong to it (`category_in_use`)", body = AppError),
        AuthErrors,
    ))]
pub async fn delete_category(_: Admin, State(state): State<AppState>, Id(id): Id) -> AppResult<StatusCode> {
    categories::delete(&state.db, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
