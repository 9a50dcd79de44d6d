//! The `/docs` page's data: the API reference the server read at start-up from its own
//! OpenAPI document.

use leptos::prelude::*;

use crate::error::AppError;
use crate::reference::ApiReference;

#[server(prefix = "/_app", endpoint = "api_reference")]
pub async fn load_api_reference() -> Result<ApiReference, AppError> {
    let call = super::call::Call::admit().await?;
    Ok(ApiReference::clone(&call.reference))
}
