//! The storefront: the HTML shell, the router and the pages.

pub(crate) mod account;
mod admin;
mod catalog;
mod categories;
mod data;
mod docs;
mod orders;
mod pet;
mod widgets;

use leptos::prelude::*;
use leptos_meta::{HashedStylesheet, MetaTags, Title, provide_meta_context};
use leptos_router::components::{A, ParentRoute, Route, Router, Routes};
use leptos_router::{Lazy, LazyRoute, SsrMode, lazy_route, path};

use crate::model::Role;
use crate::server_fns::viewer;
use account::{AccountActions, SignInPage, SignOutButton, SignUpPage};
use admin::{CategoriesConsole, ConsoleLayout, DashboardPage, InventoryConsole, KeysConsole, PetEditor, PetsConsole};
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
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
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
    // Runs only in the browser, once the WASM has taken over the page: tests and
    // styles can tell a hydrated page from a server-rendered one.
    Effect::new(move |_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });

    let actions =
        AccountActions { sign_in: ServerAction::new(), sign_up: ServerAction::new(), sign_out: ServerAction::new() };
    provide_context(actions);
    // Who is signed in; asked again after every sign-in, sign-up and sign-out.
    let who = data::resource(
        move || (actions.sign_in.version().get(), actions.sign_up.version().get(), actions.sign_out.version().get()),
        |_| viewer(),
    );

    view! {
        <Title formatter=|page: String| if page.is_empty() { "Pet Store".to_string() } else { format!("{page} · Pet Store") }/>
        <Router>
            <a class="skip-link" href="#main">"Skip to content"</a>
            <header class="site-header">
                <nav class="nav" aria-label="Main">
                    <A href="/" attr:class="brand">
                        <img src="/favicon.svg" alt="" width="22" height="22"/>
                        "Pet Store"
                    </A>
                    <A href="/" exact=true>"Catalog"</A>
                    <A href="/categories">"Categories"</A>
                    <A href="/docs">"API docs"</A>
                    <Transition>
                        {move || Suspend::new(async move {
                            match who.await.ok().flatten() {
                                Some(caller) => view! {
                                    <A href="/orders">{if caller.role == Role::Admin { "Orders" } else { "My orders" }}</A>
                                    {(caller.role == Role::Admin).then(|| view! { <A href="/admin">"Staff"</A> })}
                                    <span class="who">{format!("Signed in ({})", caller.role.as_str())}</span>
                                    <SignOutButton/>
                                }.into_any(),
                                None => view! {
                                    <A href="/sign-in">"Sign in"</A>
                                    <A href="/sign-up">"Get a key"</A>
                                }.into_any(),
                            }
                        })}
                    </Transition>
                </nav>
            </header>
            <main id="main" class="container">
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
                    // The docs and the staff console load their code only when visited
                    // (`cargo leptos build --split`): shoppers never download it.
                    <Route path=path!("/docs") view={Lazy::<DocsRoute>::new()} ssr=SsrMode::Async/>
                    <ParentRoute path=path!("/admin") view=ConsoleLayout ssr=SsrMode::Async>
                        <Route path=path!("") view={Lazy::<DashboardRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("pets") view={Lazy::<PetsRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("pets/:id") view={Lazy::<PetEditorRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("categories") view={Lazy::<CategoriesConsoleRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("inventory") view={Lazy::<InventoryRoute>::new()} ssr=SsrMode::Async/>
                        <Route path=path!("orders") view=OrdersPage ssr=SsrMode::Async/>
                        <Route path=path!("keys") view={Lazy::<KeysRoute>::new()} ssr=SsrMode::Async/>
                    </ParentRoute>
                </Routes>
            </main>
            <footer class="site-footer">
                <p>"Pet Store · REST API at " <code>"/api/v1"</code></p>
            </footer>
        </Router>
    }
}

/// A page whose code is split out of the main WASM and loaded when its route is visited.
macro_rules! lazy_page {
    ($($route:ident => $page:ident),* $(,)?) => {$(
        struct $route;

        #[lazy_route]
        impl LazyRoute for $route {
            fn data() -> Self {
                $route
            }

            fn view(_this: Self) -> AnyView {
                view! { <$page/> }.into_any()
            }
        }
    )*};
}

lazy_page! {
    DocsRoute => DocsPage,
    DashboardRoute => DashboardPage,
    PetsRoute => PetsConsole,
    PetEditorRoute => PetEditor,
    CategoriesConsoleRoute => CategoriesConsole,
    InventoryRoute => InventoryConsole,
    KeysRoute => KeysConsole,
}

#[component]
fn NotFound() -> impl IntoView {
    widgets::set_status_404();
    view! {
        <Title text="Not found"/>
        <section class="notice">
            <h1>"Page not found"</h1>
            <p>"There is nothing at this address. " <A href="/">"Back to the catalog"</A></p>
        </section>
    }
}
