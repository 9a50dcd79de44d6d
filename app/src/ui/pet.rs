//! One pet: its photo, name, price, stock and description, the order form with its
//! total, and more pets of its category.

use leptos::prelude::*;

use crate::ui::data;
use crate::ui::widgets::PageTitle;
use leptos_router::hooks::use_params_map;

use super::catalog::CardItem;
use super::note::{Done, Note, NoteView, from_flash};
use super::photo::{Loading, PetPhoto};
use super::widgets::{
    ErrorNotice, FormFields, StatusBadge, keep_out_of_caches, post_form, price_text, set_status_404, store_currency,
};
use crate::error::ErrorCode;
use crate::model::{Currency, PetCard, PetStatus, typed_quantity};
use crate::paths::{sign_in_href, sign_up_href};
use crate::server_fns::{PlaceOrder, more_like, pet, viewer};

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
    let others = data::resource(id, |id| async move {
        match id {
            Some(id) => more_like(id).await,
            None => Ok(Vec::new()),
        }
    });
    let currency = store_currency();

    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (path, currency) = (path.clone(), currency.clone());
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
                            // A failed "more like this" leaves the page without it, and
                            // such a page is not kept.
                            let others = others.await.unwrap_or_else(|_| {
                                keep_out_of_caches();
                                Vec::new()
                            });
                            view! {
                                <PageTitle text=card.name.clone()/>
                                <article class="pet">
                                    <div class="pet-photo">
                                        <PetPhoto photo=card.photo() name=card.name.clone()
                                            sizes="(max-width: 800px) 100vw, 560px" loading=Loading::Eager/>
                                    </div>
                                    <div class="pet-about">
                                        <p class="crumbs"><a href="/">"Catalog"</a> " / "
                                            <a href=format!("/?category={}", card.category_id)>{card.category_name.clone()}</a>
                                        </p>
                                        <PetDetails card=card.clone() currency=currency.clone() signed_in=order_key note
                                            sign_in=sign_in_href(&path) sign_up=sign_up_href(&path)/>
                                        <Description text=card.description.clone()/>
                                    </div>
                                </article>
                                <MoreLike card others currency/>
                                <super::live::LiveStock/>
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

/// The description's paragraphs (plain text: blank lines part them).
#[component]
fn Description(text: Option<String>) -> impl IntoView {
    text.map(|text| {
        let paragraphs: Vec<String> =
            text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect();
        view! {
            <section class="description" aria-label="About">
                {paragraphs.into_iter().map(|paragraph| view! { <p>{paragraph}</p> }).collect_view()}
            </section>
        }
    })
}

/// "More in Dogs": other pets of the category that can be ordered now.
#[component]
fn MoreLike(card: PetCard, others: Vec<PetCard>, currency: Currency) -> impl IntoView {
    (!others.is_empty()).then(|| {
        view! {
            <section class="more" aria-labelledby="more-title">
                <h2 id="more-title">{format!("More in {}", card.category_name)}</h2>
                <ul class="cards cards-row">
                    {others
                        .into_iter()
                        .map(|other| view! { <CardItem card=other currency=currency.clone() heading="h3"/> })
                        .collect_view()}
                </ul>
                <p><a href=format!("/?category={}", card.category_id)>{format!("All of {}", card.category_name)}</a></p>
            </section>
        }
    })
}

/// A new idempotency key for an order form, made as the page is rendered (so the form
/// without JavaScript carries it too).
fn form_key() -> String {
    #[cfg(feature = "ssr")]
    return crate::services::keys::random_token::<16>().map(|token| format!("form-{token}")).unwrap_or_default();
    #[cfg(not(feature = "ssr"))]
    String::new()
}

/// The pet's name, price, the order box and its facts (category, status, stock): an
/// island, so that stock and status follow each order at once. `signed_in` is the order form's idempotency
/// key when someone is; `note` what an order sent without JavaScript did.
#[island]
fn PetDetails(
    card: PetCard,
    currency: Currency,
    signed_in: Option<String>,
    note: Option<Note>,
    sign_in: String,
    sign_up: String,
) -> impl IntoView {
    let place = ServerAction::<PlaceOrder>::new();
    let id = card.id;
    let shown = RwSignal::new(card);
    // The quantity as typed: kept here, so that a live update, which draws the order
    // box again, does not take it back to 1 (nor its total). A refused order sent
    // without JavaScript comes back with what was typed.
    let typed = note.as_ref().filter(|note| note.is_refusal()).and_then(|note| note.typed("quantity"));
    let quantity = RwSignal::new(typed.unwrap_or_else(|| "1".to_owned()));
    // Stock and status as the store's events say they are now (in the browser).
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        super::live::follow(move |kind, data| match kind {
            "inventory.updated" => {
                if let Some((pet, stock, status)) = super::live::stock_of(data)
                    && pet == id
                {
                    shown.update(|card| {
                        card.quantity = stock;
                        card.status = status;
                    });
                }
            }
            "pet.status_changed" | "pet.updated" if data.id == Some(id) => {
                if let Some(status) = data.status.as_deref().and_then(PetStatus::parse) {
                    shown.update(|card| card.status = status);
                }
            }
            _ => {}
        });
    });
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
    // Each fact follows the signal on its own, and the order box is drawn again only
    // when the pet becomes orderable or stops being so: a stock update never replaces
    // the button under a shopper's (or a test's) click.
    let price_currency = currency.clone();
    view! {
        <h1>{move || shown.with(|card| card.name.clone())}</h1>
        <p class="price price-large">{move || shown.with(|card| price_text(&price_currency, card.price))}</p>
        <OrderBox shown currency place quantity form_key=signed_in note sign_in sign_up/>
        // Its id: what the live stream reads again after missing events (`live`).
        <dl class="facts" data-pet-id=id>
            <dt>"Category"</dt>
            <dd>{move || shown.with(|card| card.category_name.clone())}</dd>
            <dt>"Status"</dt>
            <dd>{move || view! { <StatusBadge status=shown.with(|card| card.status)/> }}</dd>
            <dt>"In stock"</dt>
            <dd class="stock">{move || shown.with(|card| card.quantity)}</dd>
            <dt>"Pet id"</dt>
            // For shoppers who quote it to the shop: a number, not code.
            <dd>{id}</dd>
        </dl>
    }
}

/// Ordering from the pet page: a quantity, the total it comes to, and a button; or why
/// it cannot be ordered. The form's idempotency key is the page's, numbered by the
/// submissions made from it: a double click (or a form sent twice) carries the same key
/// and places one order, and each answered submission moves on to the next key, so
/// ordering again on purpose is a new order. A double click's second click is not
/// sent at all (it could come after the first order's answer, with the next key).
#[component]
fn OrderBox(
    shown: RwSignal<PetCard>,
    currency: Currency,
    place: ServerAction<PlaceOrder>,
    quantity: RwSignal<String>,
    form_key: Option<String>,
    note: Option<Note>,
    sign_in: String,
    sign_up: String,
) -> impl IntoView {
    let id = shown.with_untracked(|card| card.id);
    let orderable = Memo::new(move |_| shown.with(|card| card.status == PetStatus::Available && card.quantity > 0));
    // The button is disabled while an order is sent, and the box is drawn again with the
    // stock after it: the focus would fall to the page's body. Keyboard users carry on
    // from the answer instead (never taken from where they are, say the quantity).
    let outcome_box = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        if place.value().with(Option::is_some) {
            let lost = document().active_element().is_none_or(|active| active.tag_name() == "BODY");
            if let (true, Some(outcome)) = (lost, outcome_box.get()) {
                let _ = outcome.focus();
            }
        }
    });
    let outcome = move || match place.value().get() {
        Some(Ok(order)) => view! {
            <p class="notice notice-success" role="status">
                {ordered(&order, &shown.with_untracked(|card| card.name.clone()))}" "
                <a href="/orders">"See my orders"</a>
            </p>
        }
        .into_any(),
        Some(Err(error)) => view! { <ErrorNotice error/> }.into_any(),
        // A shopper is told what went wrong, without the Error object's code.
        None => {
            note.clone().map(|note| view! { <div class="notice-line"><NoteView note plain=true/></div> }).into_any()
        }
    };
    let form = match form_key {
        None => view! {
            <p class="sign-in-to-order">
                <a href=sign_in>"Sign in"</a> " or " <a href=sign_up>"create an account"</a> " to order."
            </p>
        }
        .into_any(),
        Some(key) => {
            let key = move || match place.version().get() {
                0 => key.clone(),
                sent => format!("{key}-{sent}"),
            };
            let pending = place.pending();
            // The total follows the quantity as it is typed (drawn by the server for
            // the quantity the form starts with), or says what is wrong with it.
            let total = move || {
                let price = shown.with(|card| card.price)?;
                Some(match typed_quantity(&quantity.read()) {
                    Ok(units) => {
                        view! { <span class="total" aria-live="polite">{format!("Total {}", currency.format(price.saturating_mul(units)))}</span> }
                    }
                    Err(problem) => {
                        view! { <span class="total total-problem" aria-live="polite">{format!("Quantity {problem}.")}</span> }
                    }
                })
            };
            let order_form = move || {
                if !orderable.get() {
                    return view! { <p class="empty">"Not available to order right now."</p> }.into_any();
                }
                let (key, total) = (key.clone(), total.clone());
                let order = move |fields: &FormFields| PlaceOrder {
                    pet_id: id,
                    quantity: fields.text("quantity").unwrap_or_default(),
                    idempotency_key: fields.text("idempotency_key"),
                };
                post_form(place, "order-form", order, view! {
                    <input type="hidden" name="pet_id" value=id/>
                    <input type="hidden" name="idempotency_key" value=key/>
                    <label>
                        "Quantity"
                        // Not capped at the stock: the store's answer says how many
                        // are left, in words, where a browser's own check would not.
                        <input type="number" name="quantity" value=quantity.get_untracked() min="1" max="1000" step="1" required
                            on:input=move |ev| quantity.set(event_target_value(&ev))/>
                    </label>
                    {total}
                    // The second click of a double-click sends nothing: on a fast
                    // store the first order's answer may arrive between the two,
                    // and the form, on to its next key, would place a second order.
                    <button type="submit" disabled=move || pending.get() aria-busy=move || pending.get().to_string()
                        on:click=ignore_repeated_click>
                        {move || if pending.get() { "Ordering…" } else { "Order" }}
                    </button>
                })
                .into_any()
            };
            order_form.into_any()
        }
    };
    view! {
        <section class="order-box" aria-label="Order">
            {form}
            <div class="order-outcome" tabindex="-1" node_ref=outcome_box>{outcome}</div>
        </section>
    }
}

/// A click that is the second (or later) of a multiple click, in the browser's count,
/// does not activate the button.
fn ignore_repeated_click(ev: leptos::ev::MouseEvent) {
    if ev.detail() > 1 {
        ev.prevent_default();
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
