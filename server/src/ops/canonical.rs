//! One address per page: a trailing slash (`/docs/`) or an empty parameter left by a
//! filter form sent as it was (`/?category=&status=sold`) is sent on, with 308, to the
//! page's own address (`/docs`, `/?status=sold`), so that links, caches and histories
//! see one page, not several.

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;

use super::security::Target;

/// The redirect to the canonical address of a page request, if it has another one.
pub fn redirect(target: Target, request: &Request) -> Option<Response> {
    if target != Target::Site || !matches!(*request.method(), Method::GET | Method::HEAD) {
        return None;
    }
    let uri = request.uri();
    let path = uri.path();
    let trimmed = path.trim_end_matches('/');
    let path = if trimmed.is_empty() { "/" } else { trimmed };
    let query = uri.query().unwrap_or("");
    let kept: Vec<&str> = query.split('&').filter(|pair| !pair.is_empty() && !pair.ends_with('=')).collect();
    let clean_query = kept.join("&");
    if path == uri.path() && clean_query == query {
        return None;
    }
    let to = if clean_query.is_empty() { path.to_owned() } else { format!("{path}?{clean_query}") };
    // `//evil.example/` (or `/\evil.example/`, which browsers read alike) trimmed would
    // be an address on another site: such paths are left as they are.
    if to.starts_with("//") || to.contains('\\') {
        return None;
    }
    let location = HeaderValue::from_str(&to).ok()?;
    let mut response = Response::new(axum::body::Body::empty());
    *response.status_mut() = StatusCode::PERMANENT_REDIRECT;
    response.headers_mut().insert(header::LOCATION, location);
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(path: &str) -> Option<String> {
        let request = Request::get(path).body(axum::body::Body::empty()).unwrap();
        redirect(Target::of(path.split('?').next().unwrap()), &request)
            .map(|response| response.headers()[header::LOCATION].to_str().unwrap().to_owned())
    }

    #[test]
    fn pages_have_one_address() {
        assert_eq!(to("/docs/"), Some("/docs".into()));
        assert_eq!(to("/pets/1/"), Some("/pets/1".into()));
        assert_eq!(to("/admin/?x=1"), Some("/admin?x=1".into()));
        assert_eq!(to("/?category=&status=sold&q="), Some("/?status=sold".into()));
        assert_eq!(to("/?category="), Some("/".into()));
        assert_eq!(to("/"), None);
        assert_eq!(to("/?status=sold"), None);
        assert_eq!(to("/docs"), None);
        assert_eq!(to("/api/v1/pets/"), None, "the API answers for itself");
        assert_eq!(to("//evil.example/"), None);
        assert_eq!(to("/\\evil.example/"), None);
    }
}
