//! The storefront: the HTML shell, the router and the pages.
//!
//! Leptos's islands mode: every page is rendered on the server (links are plain page
//! loads), and only its interactive parts, the `#[island]` components, ship as WASM and
//! hydrate in the browser: the header's account links, the catalog's pickers, the pet
//! page's facts and order box, the sign-in and sign-up forms, the forms of the staff
//! console and of the order list (their tables are drawn on the server, and a change
//! shows the page again), times in the browser's locale and the docs' try-it panels. An island's props travel in the page
//! as JSON, so they are plain data; router hooks and contexts stay outside (the page
//! around the island reads them and passes what it needs; only the server's own, such
//! as the response's status, are used inside, during server rendering). Everything
//! else never reaches the browser, which keeps the WASM of the whole app small
//! (docs/PERFORMANCE.md). In release builds the staff console's islands, the sign-in
//! and sign-up forms, the passkey buttons and the docs' try-it panels are lazy
//! (`#[island(lazy)]` under the `lazy-islands` feature): each is a WASM file of its
//! own, fetched when a page has one (a try-it panel's when it is first opened), so the
//! other pages load none of their code. (The docs' key bar stays in the one module:
//! docs/PERFORMANCE.md, "WASM".)

pub(crate) mod account;
mod admin;
mod catalog;
mod categories;
mod data;
mod docs;
mod help;
mod live;
pub mod messages;
mod my_account;
pub mod note;
mod orders;
mod passkeys;
mod pet;
mod photo;
mod session;
#[cfg(feature = "hydrate")]
mod webauthn;
mod widgets;

use leptos::prelude::*;
use leptos_meta::{HashedStylesheet, MetaTags, Title, provide_meta_context};
use leptos_router::components::{A, ParentRoute, Route, Router, Routes};
use leptos_router::{SsrMode, path};

use crate::model::{Caller, Role};
use crate::paths::{sign_in_href, sign_up_href};
use crate::server_fns::viewer;
use account::{SignInPage, SignOutButton, SignUpPage};
use admin::{
    CategoriesConsole, ConsoleLayout, DashboardPage, InventoryConsole, KeysConsole, PetEditor, PetsConsole,
    WebhookPage, WebhooksConsole,
};
use catalog::CatalogPage;
use categories::CategoriesPage;
use docs::DocsPage;
use orders::OrdersPage;
use pet::PetPage;

/// The document around the app, rendered on the server only.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    // Its Content-Security-Policy, with this request's nonce on every inline script,
    // is set by the server's `ops::security` layer.
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <meta name="description" content="A pet store: browse our animals by category and status."/>
                <HashedStylesheet id="leptos" options=options.clone()/>
                // Before anything is drawn, so that a chosen theme never flashes the other.
                <script nonce=leptos::nonce::use_nonce() inner_html=THEME_SCRIPT></script>
                <AutoReload options=options.clone()/>
                // The names of the JS and the WASM, with their preloads, from Leptos; the
                // islands are started by `HYDRATE` once the page has loaded and been painted.
                <template id="hydration"><HydrationScripts options islands=true/></template>
                <script nonce=leptos::nonce::use_nonce() inner_html=HYDRATE></script>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // Who is signed in (the page is rendered again after every sign-in and sign-out).
    let who = data::resource(|| (), |_| viewer());

    view! {
        <Title formatter=|page: String| if page.is_empty() { "Pet Store".to_owned() } else { format!("{page} · Pet Store") }/>
        <Router>
            <a class="skip-link" href="#main">"Skip to content"</a>
            <header class="site-header">
                // Drawn folded (on a phone): the menu button's island keeps this up to date.
                <nav class="nav" id="site-nav" aria-label="Main" data-menu="closed">
                    <A href="/" attr:class="brand">
                        // Inline, in the brand's colour: the favicon file's fixed green
                        // is lost on the dark theme's header.
                        <svg class="paw" viewBox="0 0 64 64" width="26" height="26" aria-hidden="true" fill="currentColor">
                            <circle cx="32" cy="40" r="14"/><circle cx="14" cy="24" r="7"/><circle cx="26" cy="12" r="7"/>
                            <circle cx="40" cy="12" r="7"/><circle cx="52" cy="24" r="7"/>
                        </svg>
                        "Pet Store"
                    </A>
                    <MenuButton/>
                    <div class="menu" id="site-menu">
                        <div class="menu-links">
                            <A href="/" exact=true>"Catalog"</A>
                            <A href="/categories">"Categories"</A>
                            <A href="/docs">"API docs"</A>
                            <ThemeSwitch/>
                        </div>
                        <Transition>
                            {move || Suspend::new(async move {
                                let location = leptos_router::hooks::use_location();
                                let (page, query) = (location.pathname.get_untracked(), location.search.get_untracked());
                                let query = query.trim_start_matches('?');
                                let path = if query.is_empty() { page } else { format!("{page}?{query}") };
                                view! { <AccountNav caller=who.await.ok().flatten() path/> }
                            })}
                        </Transition>
                    </div>
                </nav>
            </header>
            <main id="main" class="container">
                <SignedInNote/>
                <Routes fallback=|| view! { <NotFound/> }>
                    // Async: the server sends each page whole, data included, so it reads
                    // without JavaScript (streamed chunks need a script to fall into
                    // place) and an unknown pet can answer with a real 404 status.
                    <Route path=path!("/") view=CatalogPage ssr=SsrMode::Async/>
                    <Route path=path!("/pets/:id") view=PetPage ssr=SsrMode::Async/>
                    <Route path=path!("/categories") view=CategoriesPage ssr=SsrMode::Async/>
                    <Route path=path!("/sign-in") view=SignInPage ssr=SsrMode::Async/>
                    <Route path=path!("/sign-up") view=SignUpPage ssr=SsrMode::Async/>
                    <Route path=path!("/orders") view=OrdersPage ssr=SsrMode::Async/>
                    <Route path=path!("/account") view=my_account::AccountPage ssr=SsrMode::Async/>
                    <Route path=path!("/docs") view=DocsPage ssr=SsrMode::Async/>
                    <Route path=path!("/help") view=help::HelpPage ssr=SsrMode::Async/>
                    <ParentRoute path=path!("/admin") view=ConsoleLayout ssr=SsrMode::Async>
                        <Route path=path!("") view=DashboardPage ssr=SsrMode::Async/>
                        <Route path=path!("pets") view=PetsConsole ssr=SsrMode::Async/>
                        <Route path=path!("pets/:id") view=PetEditor ssr=SsrMode::Async/>
                        <Route path=path!("categories") view=CategoriesConsole ssr=SsrMode::Async/>
                        <Route path=path!("inventory") view=InventoryConsole ssr=SsrMode::Async/>
                        <Route path=path!("orders") view=OrdersPage ssr=SsrMode::Async/>
                        <Route path=path!("keys") view=KeysConsole ssr=SsrMode::Async/>
                        <Route path=path!("webhooks") view=WebhooksConsole ssr=SsrMode::Async/>
                        <Route path=path!("webhooks/:id") view=WebhookPage ssr=SsrMode::Async/>
                    </ParentRoute>
                </Routes>
            </main>
            <footer class="site-footer">
                <p>"Pet Store · REST API at " <code>"/api/v1"</code> " · " <a href="/help">"Help"</a></p>
            </footer>
        </Router>
    }
}

/// "You are signed in", on the page a sign-in went on to (its flash), holding the
/// focus (`NoteView`): the page is a new one, and the keyboard's place on the sign-in
/// form is gone. Drawn on the server only: the flash is read there.
#[component]
fn SignedInNote() -> impl IntoView {
    let note = note::from_flash(|flash| {
        flash.note::<crate::server_fns::SignIn>(|(), _| note::Done::new("You are signed in."))
    })
    .filter(|note| !note.is_refusal());
    note.map(|note| view! { <div class="notice-line"><note::NoteView note/></div> })
}

/// The header's account part, in one place at its end: who is signed in, their pages
/// and a sign-out button, or the ways to sign in. An island, so that signing up shows
/// its new session at once. `path` is the page's (with its query), to mark the link to
/// it (as the router's links mark theirs) and to come back to after signing in or out.
#[island]
fn AccountNav(caller: Option<Caller>, path: String) -> impl IntoView {
    let shown = session::shown(caller);
    let page = path.split('?').next().unwrap_or_default().to_owned();
    let current = move |href: &str| {
        let here = page == href || page.strip_prefix(href).is_some_and(|rest| rest.starts_with('/'));
        here.then_some("page")
    };
    move || {
        match shown.get() {
        Some(caller) => view! {
            <div class="account" role="group" aria-label="Your account">
                <a href="/orders" aria-current=current("/orders")>
                    {if caller.role == Role::Admin { "Orders" } else { "My orders" }}
                </a>
                {(caller.role == Role::Admin).then(|| view! { <a href="/admin" aria-current=current("/admin")>"Staff"</a> })}
                // Who is signed in, leading to their account (passkeys, API key).
                <a class="who" href="/account" aria-current=current("/account") title="Your account">
                    <span class="who-dot" aria-hidden="true"></span>
                    // On a phone's bar the role alone (the menu has room for the rest).
                    <span class="who-label">"Signed in · "</span>
                    {caller.role.label()}
                </a>
                <SignOutButton path=path.clone()/>
            </div>
        }
        .into_any(),
        None => view! {
            <div class="account" role="group" aria-label="Your account">
                <a href=sign_in_href(&path) class="sign-in" aria-current=current("/sign-in")>"Sign in"</a>
                <a href=sign_up_href(&path) class="button small" aria-current=current("/sign-up")>"Sign up"</a>
            </div>
        }
        .into_any(),
    }
    }
}

/// Where the header's account island begins in a page, as leptos writes it.
pub const ACCOUNT_NAV_START: &str = "<leptos-island data-component=\"AccountNav_";

/// The header's account island as a page draws it for `caller` on `path` (with its
/// query): on the pages that show nobody's data but the visitor's name in the header,
/// the one part that differs between visitors. The server keeps the rest of such a
/// page and sends a signed-in visitor the kept page with this in its place
/// (`server::pages`), instead of rendering the whole page for each of them.
#[cfg(feature = "ssr")]
pub fn account_nav_html(caller: Option<Caller>, path: String) -> String {
    Owner::new().with(|| view! { <AccountNav caller path/> }.to_html())
}

/// The header's menu button on phones: the server draws the header folded behind it,
/// so nothing moves when this starts (without scripting, CSS leaves the links in
/// view, wrapped, and hides the button).
#[island]
fn MenuButton() -> impl IntoView {
    let open = RwSignal::new(false);
    // In the browser only: the header says the button works, and whether it is open.
    Effect::new(move |_| {
        let state = if open.get() { "open" } else { "closed" };
        if let Some(nav) = document().get_element_by_id("site-nav") {
            let _ = nav.set_attribute("data-menu", state);
        }
    });
    view! {
        <button type="button" class="menu-toggle" aria-controls="site-menu"
            aria-expanded=move || open.get().to_string() on:click=move |_| open.update(|open| *open = !*open)>
            <span class="menu-icon" aria-hidden="true"></span>
            <span class="menu-label">
                "Menu"
            </span>
        </button>
    }
}

/// The theme a visitor chose with the switch, put on `<html>` by the page's first
/// script (the system's setting otherwise). Kept in the browser (`localStorage`): the
/// server never sees it, so every visitor can be sent the same kept page.
const THEME_SCRIPT: &str = "try{var t=localStorage.getItem('theme');\
    if(t==='light'||t==='dark')document.documentElement.setAttribute('data-theme',t)}catch(e){}";

/// Starts the page's islands. When: once the page has loaded and its first content
/// has been painted. The islands' WASM (about 300 KB on the wire) would otherwise be
/// fetched at high priority beside the stylesheet and the pictures the page shows
/// first, and on a slow phone connection the page would be drawn that much later
/// (docs/PERFORMANCE.md, "The first load on a phone"). The page works before then: it
/// is drawn by the server and its forms post without JavaScript. The paint is the
/// browser's own record of it; a browser without one, or a page that paints nothing
/// within 3 s of loading (a tab in the background), starts anyway.
///
/// How: as Leptos's island script does (the file names come from its
/// `HydrationScripts`, kept in `<template id="hydration">` for its preload links, its
/// own script left out), but yielding to the browser before each island, so that a page
/// of many islands (`/docs` has 36) is hydrated in many short tasks rather than one
/// long one that blocks input. When every island is hydrated the body gets
/// `data-hydrated="true"`, which tests and styles use.
const HYDRATE: &str = include_str!("hydrate.js");

/// The header's theme switch: a toggle button, pressed while the page is dark. It
/// sets the theme for this browser whatever the system's setting. Without scripting
/// CSS hides it (the system's theme then).
#[island]
fn ThemeSwitch() -> impl IntoView {
    // What the page shows, known in the browser only (after hydration).
    let dark = RwSignal::new(false);
    Effect::new(move |_| dark.set(theme::is_dark()));
    view! {
        <button type="button" class="theme-switch" aria-pressed=move || dark.get().to_string()
            on:click=move |_| {
                let next = !dark.get_untracked();
                theme::choose(next);
                dark.set(next);
            }>
            <span aria-hidden="true" class="theme-icon"></span>
            "Dark theme"
        </button>
    }
}

mod theme {
    /// Whether the page is dark now: the chosen theme, else the system's.
    pub fn is_dark() -> bool {
        #[cfg(feature = "hydrate")]
        {
            let chosen =
                leptos::prelude::document().document_element().and_then(|html| html.get_attribute("data-theme"));
            match chosen.as_deref() {
                Some("dark") => true,
                Some("light") => false,
                _ => leptos::prelude::window()
                    .match_media("(prefers-color-scheme: dark)")
                    .ok()
                    .flatten()
                    .is_some_and(|query| query.matches()),
            }
        }
        #[cfg(not(feature = "hydrate"))]
        false
    }

    /// Shows the page `dark` or light, and keeps the choice for the next pages.
    pub fn choose(dark: bool) {
        #[cfg(feature = "hydrate")]
        {
            let theme = if dark { "dark" } else { "light" };
            if let Some(html) = leptos::prelude::document().document_element() {
                let _ = html.set_attribute("data-theme", theme);
            }
            // Private browsing may refuse storage: the choice then lasts this page.
            if let Ok(Some(storage)) = leptos::prelude::window().local_storage() {
                let _ = storage.set_item("theme", theme);
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = dark;
    }
}

#[component]
fn NotFound() -> impl IntoView {
    widgets::set_status_404();
    view! {
        <widgets::PageTitle text="Not found"/>
        <section class="notice">
            <h1>"Page not found"</h1>
            <p>"There is nothing at this address. " <A href="/">"Back to the catalog"</A></p>
        </section>
    }
}

/// The query parameters each page reads, by path. A kept page (the server's page
/// cache) is found by these alone, so a request with any other parameter is rendered
/// for itself and never kept: made-up query strings cannot fill the cache. (The
/// header's sign-in link carries the whole query, which is why such a request is not
/// simply served the page without it.) Keep in step with the pages' `use_query_map`.
pub fn query_parameters(path: &str) -> &'static [&'static str] {
    match path {
        "/" => &["status", "category", "q", "sort", "cursor"],
        "/sign-in" => &["next", "signed_out", "code"],
        "/sign-up" => &["next"],
        "/account" => &["next", "added"],
        "/orders" | "/admin/orders" => &["state", "pet", "cursor"],
        "/admin/pets" => &["q", "cursor"],
        "/admin/inventory" => &["cursor"],
        _ => &[],
    }
}
