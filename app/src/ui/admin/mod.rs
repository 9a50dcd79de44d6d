//! The staff console under `/admin`: a dashboard, pets, categories, inventory, orders,
//! keys and webhooks. The layout lets only a signed-in admin through (during server rendering,
//! with a 401 or 403 status), and every server function it calls checks the role again.
//!
//! Every form is an `ActionForm`: a plain POST without JavaScript (the server sends the
//! browser back to the page), an update in place with it.

mod categories;
mod charts;
mod dashboard;
mod inventory;
mod keys;
mod pets;
mod photo;
mod webhooks;

use leptos::prelude::*;

use crate::ui::data;
use leptos_router::components::{A, Outlet};

pub use crate::ui::widgets::FormOutcome;
pub use categories::CategoriesConsole;
pub use dashboard::DashboardPage;
pub use inventory::InventoryConsole;
pub use keys::KeysConsole;
pub use pets::{PetEditor, PetsConsole};
pub use webhooks::{WebhookPage, WebhooksConsole};

use super::note::Note;
use super::widgets::{ErrorNotice, PageTitle, set_status};
use crate::error::{AppError, ErrorCode};
use crate::model::Role;
use crate::server_fns::viewer;

/// Around every console page: the console's own menu, or the refusal.
#[component]
pub fn ConsoleLayout() -> impl IntoView {
    let who = data::resource(|| (), |_| viewer());
    let path = leptos_router::hooks::use_location().pathname.get_untracked();
    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
            let path = path.clone();
            Suspend::new(async move {
                match who.await {
                    Ok(Some(caller)) if caller.role == Role::Admin => view! {
                        <nav class="console-nav" aria-label="Staff console">
                            <A href="/admin" exact=true>"Dashboard"</A>
                            <A href="/admin/pets">"Pets"</A>
                            <A href="/admin/categories">"Categories"</A>
                            <A href="/admin/inventory">"Inventory"</A>
                            <A href="/admin/orders">"Orders"</A>
                            <A href="/admin/keys">"Keys"</A>
                            <A href="/admin/webhooks">"Webhooks"</A>
                        </nav>
                        <Outlet/>
                    }.into_any(),
                    Ok(Some(_)) => refusal(AppError::new(ErrorCode::Forbidden, "not an admin key"), &path),
                    Ok(None) => refusal(AppError::new(ErrorCode::MissingApiKey, "not signed in"), &path),
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                }
            })
            }}
        </Suspense>
    }
}

/// "Staff only", with the refusal's status (403 for a customer, 401 signed out), its
/// own title (the page's is never drawn) and a way to sign in that comes back to `path`.
pub fn refusal(error: AppError, path: &str) -> AnyView {
    set_status(error.status);
    view! {
        <PageTitle text="Staff only"/>
        <section class="notice notice-error" role="alert">
            <h1>"Staff only"</h1>
            <p>{if error.code == ErrorCode::Forbidden {
                "Your key is a customer key; the staff console is for admin keys."
            } else {
                "Sign in with an admin key to use the staff console."
            }}</p>
            <p><a href=crate::paths::sign_in_href(path)>"Sign in"</a></p>
        </section>
    }
    .into_any()
}

/// The "Name" field of the console's forms (pets, categories, keys share its limits),
/// marked invalid while the last answer blames it.
#[component]
pub fn NameField(#[prop(into)] invalid: Signal<bool>, #[prop(default = None)] value: Option<String>) -> impl IntoView {
    view! {
        <label>"Name"
            <input type="text" name="name" required maxlength="100" value=value
                aria-invalid=move || invalid.get().to_string()/>
        </label>
    }
}

/// Whether the last answer (or, before any, the no-JavaScript `note`) is a validation
/// error about `field` (to mark the input).
pub fn invalid<T>(result: &Option<Result<T, AppError>>, note: &Option<Note>, field: &str) -> bool {
    match result {
        Some(Err(error)) => error.field() == Some(field),
        Some(Ok(_)) => false,
        None => note.as_ref().is_some_and(|note| note.field.as_deref() == Some(field)),
    }
}
