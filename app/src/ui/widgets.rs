//! Small pieces the pages share.

use leptos::prelude::*;

use crate::error::AppError;
use crate::model::PetStatus;

#[component]
pub fn StatusBadge(status: PetStatus) -> impl IntoView {
    view! { <span class=format!("badge badge-{status}")>{status.as_str()}</span> }
}

#[component]
pub fn ErrorNotice(error: AppError) -> impl IntoView {
    view! {
        <div class="notice notice-error" role="alert">
            <strong>"Something went wrong: "</strong>
            {error.message}
        </div>
    }
}

/// Makes the server answer this page with 404 (during SSR; a no-op in the browser).
pub fn set_status_404() {
    set_status(404);
}

/// Makes the server answer this page with `status` (during SSR; a no-op in the browser).
pub fn set_status(status: u16) {
    #[cfg(feature = "ssr")]
    if let (Some(response), Ok(status)) =
        (use_context::<leptos_axum::ResponseOptions>(), axum::http::StatusCode::from_u16(status))
    {
        response.set_status(status);
    }
    #[cfg(not(feature = "ssr"))]
    let _ = status;
}

/// A form-urlencoded query string from pairs, skipping empty values.
pub fn query_string<'a>(pairs: impl IntoIterator<Item = (&'a str, Option<String>)>) -> String {
    let encoded: Vec<String> = pairs
        .into_iter()
        .filter_map(|(key, value)| value.filter(|v| !v.is_empty()).map(|v| format!("{key}={}", encode(&v))))
        .collect();
    if encoded.is_empty() { String::new() } else { format!("?{}", encoded.join("&")) }
}

pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_string_encodes_and_skips_empty_values() {
        assert_eq!(query_string([("a", None), ("b", Some(String::new()))]), "");
        assert_eq!(
            query_string([("q", Some("big dog&cat".into())), ("status", Some("sold".into()))]),
            "?q=big+dog%26cat&status=sold"
        );
        assert_eq!(query_string([("q", Some("é".into()))]), "?q=%C3%A9");
    }
}
