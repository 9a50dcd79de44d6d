//! One pet: name, category, status and stock.

use leptos::prelude::*;

use crate::ui::data;
use crate::ui::widgets::PageTitle;
use leptos_router::hooks::use_params_map;

use super::note::{Done, Note, NoteView, from_flash};
use super::sign_in_href;
use super::widgets::{ErrorNotice, StatusBadge, set_status_404};
use crate::error::ErrorCode;
use crate::model::{PetCard, PetStatus};
use crate::server_fns::{PlaceOrder, pet, viewer};

#[component]
pub fn PetPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|raw| raw.parse::<i64>().ok()).filter(|id| *id > 0);
    let path = leptos_router::hooks::use_location().pathname.get_untracked();
    let who = data::resource(|| (), |_| viewer());
    let card = data::resource(id, |id| async move {
        match id {
            Some(id) => pet(id).await.map(Some),
            None => Ok(None),
        }
    });

    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let path = path.clone();
                Suspend::new(async move {
                    match card.await {
                        Ok(Some(card)) => {
                            let signed_in = who.await.ok().flatten().is_some();
                            // A form sent without JavaScript comes back here with its outcome.
                            let name = card.name.clone();
                            let note = from_flash(|flash| {
                                flash.note::<PlaceOrder>(|order, _| {
                                    Done::new(ordered(&order, &name))
                                        .link("/orders", "See my orders")
                                })
                            });
                            let note = Note::for_form::<PlaceOrder>(&note, Some(card.id));
                            let order_key = signed_in.then(form_key);
                            view! {
                                <PageTitle text=card.name.clone()/>
                                <PetDetails card signed_in=order_key note sign_in=sign_in_href(&path)/>
                            }
                            .into_any()
                        }
                        Ok(None) => missing().into_any(),
                        Err(error) if error.code == ErrorCode::NotFound => missing().into_any(),
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

/// A new idempotency key for an order form, made as the page is rendered (so the form
/// without JavaScript carries it too).
fn form_key() -> String {
    #[cfg(feature = "ssr")]
    return crate::services::keys::random_token::<16>().map(|token| format!("form-{token}")).unwrap_or_default();
    #[cfg(not(feature = "ssr"))]
    String::new()
}

/// The pet and the order box: an island, so that stock and status follow each order
/// at once. `signed_in` is the order form's idempotency key when someone is; `note`
/// what an order sent without JavaScript did.
#[island]
fn PetDetails(card: PetCard, signed_in: Option<String>, note: Option<Note>, sign_in: String) -> impl IntoView {
    let place = ServerAction::<PlaceOrder>::new();
    let id = card.id;
    let shown = RwSignal::new(card);
    // Read again after every order, placed or refused (the stock someone else took
    // shows too). Effects run in the browser only.
    let latest = StoredValue::new(0usize);
    Effect::new(move |seen: Option<usize>| {
        let version = place.version().get();
        if seen.is_some_and(|seen| seen != version) {
            latest.set_value(version);
            leptos::task::spawn_local(async move {
                let answer = pet(id).await;
                // A slow answer for an earlier order must not undo a later one's.
                if let (Ok(card), true) = (answer, latest.get_value() == version) {
                    shown.set(card);
                }
            });
        }
        version
    });
    move || {
        let card = shown.get();
        view! {
            <article class="pet">
                <p class="crumbs"><a href="/">"Catalog"</a> " / "
                    <a href=format!("/?category={}", card.category_id)>{card.category_name.clone()}</a>
                </p>
                <h1>{card.name.clone()}</h1>
                <dl class="facts">
                    <dt>"Category"</dt>
                    <dd>{card.category_name.clone()}</dd>
                    <dt>"Status"</dt>
                    <dd><StatusBadge status=card.status/></dd>
                    <dt>"In stock"</dt>
                    <dd class="stock">{card.quantity}</dd>
                    <dt>"Pet id"</dt>
                    <dd><code>{card.id}</code></dd>
                </dl>
                <OrderBox card place form_key=signed_in.clone() note=note.clone() sign_in=sign_in.clone()/>
            </article>
        }
    }
}

/// Ordering from the pet page: a quantity and a button, or why it cannot be ordered.
/// The form's idempotency key is the page's, numbered by the submissions made from it:
/// a double click (or a form sent twice) carries the same key and places one order,
/// and each answered submission moves on to the next key, so ordering again on purpose
/// is a new order.
#[component]
fn OrderBox(
    card: PetCard,
    place: ServerAction<PlaceOrder>,
    form_key: Option<String>,
    note: Option<Note>,
    sign_in: String,
) -> impl IntoView {
    let name = card.name.clone();
    let outcome = move || match place.value().get() {
        Some(Ok(order)) => view! {
            <p class="notice notice-success" role="status">
                {ordered(&order, &name)}" "
                <a href="/orders">"See my orders"</a>
            </p>
        }
        .into_any(),
        Some(Err(error)) => view! { <ErrorNotice error/> }.into_any(),
        None => note.clone().map(|note| view! { <div class="notice-line"><NoteView note/></div> }).into_any(),
    };
    let form = match form_key {
        None => view! { <p><a href=sign_in>"Sign in"</a> " or " <a href="/sign-up">"get a key"</a> " to order."</p> }
            .into_any(),
        Some(_) if card.status != PetStatus::Available || card.quantity == 0 => {
            view! { <p class="empty">"Not available to order right now."</p> }.into_any()
        }
        Some(key) => {
            let key = move || match place.version().get() {
                0 => key.clone(),
                sent => format!("{key}-{sent}"),
            };
            let pending = place.pending();
            view! {
                <ActionForm action=place attr:class="order-form">
                    <input type="hidden" name="pet_id" value=card.id/>
                    <input type="hidden" name="idempotency_key" value=key/>
                    <label>
                        "Quantity"
                        <input type="number" name="quantity" value="1" min="1" max=card.quantity.min(1000) required/>
                    </label>
                    <button type="submit" disabled=move || pending.get() aria-busy=move || pending.get().to_string()>
                        {move || if pending.get() { "Ordering…" } else { "Order" }}
                    </button>
                </ActionForm>
            }
            .into_any()
        }
    };
    view! {
        <section class="order-box" aria-label="Order">
            {form}
            {outcome}
        </section>
    }
}

fn missing() -> impl IntoView {
    set_status_404();
    view! {
        <PageTitle text="Pet not found"/>
        <section class="notice">
            <h1>"Pet not found"</h1>
            <p>"This pet does not exist (any more). " <a href="/">"Back to the catalog"</a></p>
        </section>
    }
}

/// What an order placed on this page says, with or without JavaScript.
fn ordered(order: &crate::model::Order, name: &str) -> String {
    format!("Ordered {} × {name} (order #{}).", order.quantity, order.id)
}
