//! The store's own paths, as the server functions and the pages both need them: where a
//! browser goes back to after a form or a sign-in, never off the site. Below every other
//! layer (it reads only text), so that both may use it.

/// Where to go back to after signing in or out: `next` when it is a path on this site
/// (`/pets/3?x=1`), else the catalog. Anything that could lead off the site (`//evil`,
/// `https://…`, a backslash, which browsers read as a slash) is refused, so the
/// parameter cannot make the store an open redirect; so are the sign-in and sign-up
/// pages themselves.
pub fn return_path(next: Option<&str>) -> &str {
    match next {
        Some(path) if is_return_path(path) => path,
        _ => "/",
    }
}

fn is_return_path(path: &str) -> bool {
    let page = path.split(['?', '#']).next().unwrap_or("");
    is_local_path(path) && !matches!(page, "/sign-in" | "/sign-up")
}

/// The path and query of a `Referer` on this site (`http://host/pets/3?x` →
/// `/pets/3?x`), if it is one a browser may safely be sent to.
pub fn page_of(referer: &str) -> Option<&str> {
    let after_scheme = referer.split_once("://").map_or(referer, |(_, rest)| rest);
    let path = &after_scheme[after_scheme.find('/')?..];
    is_local_path(path).then_some(path)
}

/// The page a request was sent from (its `Referer`'s path and query, by [`page_of`]):
/// where a form's sender goes back to, with or without JavaScript.
#[cfg(feature = "ssr")]
pub fn referring_page(headers: &axum::http::HeaderMap) -> Option<&str> {
    page_of(headers.get(axum::http::header::REFERER)?.to_str().ok()?)
}

/// Whether `path` is a path of this site that is safe to send a browser to (and to
/// put in a header): absolute, not `//host`, visible ASCII without backslashes.
pub fn is_local_path(path: &str) -> bool {
    path.starts_with('/')
        && !path.starts_with("//")
        && path.len() <= 2_000
        && path.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
}

/// The sign-in page's address, coming back to `path` afterwards.
pub fn sign_in_href(path: &str) -> String {
    with_next("/sign-in", path)
}

/// The sign-up page's address, offering a way back to `path` once the key is shown.
pub fn sign_up_href(path: &str) -> String {
    with_next("/sign-up", path)
}

/// The account page's address, with a way on to `path` (where a recovery code was used
/// from: the page offers adding a passkey first).
pub fn account_href(path: &str) -> String {
    with_next("/account", path)
}

fn with_next(page: &str, path: &str) -> String {
    if path == "/" || !is_return_path(path) {
        return page.into();
    }
    format!("{page}?next={}", encode(path))
}

/// Whether `path` shows only a signed-in visitor's own data (their orders, the staff
/// console): after signing out there is nothing there to go back to.
pub fn is_private(path: &str) -> bool {
    let page = path.split(['?', '#']).next().unwrap_or("");
    page == "/orders" || page == "/account" || page == "/admin" || page.starts_with("/admin/")
}

/// Where signing out on `next` lands: back on that page, or, from a private page, on
/// the sign-in page, which says the visitor is signed out (and signs back in to it).
pub fn signed_out_path(next: Option<&str>) -> String {
    let back = return_path(next);
    if is_private(back) { format!("/sign-in?signed_out=1&next={}", encode(back)) } else { back.to_owned() }
}

/// A query value, percent-encoded as a form's (`application/x-www-form-urlencoded`).
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
    fn signing_out_of_a_private_page_lands_on_the_sign_in_page() {
        assert_eq!(signed_out_path(Some("/pets/3?x=1")), "/pets/3?x=1");
        assert_eq!(signed_out_path(Some("/orders?state=open")), "/sign-in?signed_out=1&next=%2Forders%3Fstate%3Dopen");
        assert_eq!(signed_out_path(Some("/admin/keys")), "/sign-in?signed_out=1&next=%2Fadmin%2Fkeys");
        assert_eq!(signed_out_path(Some("/administer")), "/administer", "only the console itself");
        assert_eq!(signed_out_path(Some("//evil.example/")), "/");
        assert_eq!(sign_up_href("/pets/3"), "/sign-up?next=%2Fpets%2F3");
        assert_eq!(sign_up_href("/"), "/sign-up");
    }

    #[test]
    fn only_this_sites_paths_are_returned_to() {
        assert_eq!(return_path(Some("/pets/3?x=1")), "/pets/3?x=1");
        assert_eq!(return_path(Some("/orders")), "/orders");
        for bad in [
            None,
            Some(""),
            Some("pets/3"),
            Some("//evil.example/"),
            Some("https://evil.example/"),
            Some("/\\evil.example"),
            Some("/ok\nSet-Cookie: x"),
            Some("/sign-in?next=/x"),
            Some("/sign-up"),
        ] {
            assert_eq!(return_path(bad), "/", "{bad:?}");
        }
        assert_eq!(sign_in_href("/pets/3"), "/sign-in?next=%2Fpets%2F3");
        assert_eq!(sign_in_href("/"), "/sign-in");
        assert_eq!(sign_in_href("/sign-up"), "/sign-in");
    }

    #[test]
    fn the_page_to_go_back_to_is_a_path_of_this_site() {
        assert_eq!(page_of("http://127.0.0.1:3000/pets/3?x=1"), Some("/pets/3?x=1"));
        assert_eq!(page_of("https://shop.example/"), Some("/"));
        assert_eq!(page_of("https://shop.example"), None);
        assert_eq!(page_of("http://shop.example//evil.example/"), None);
    }
}
