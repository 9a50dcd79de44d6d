//! "My orders" for shoppers, every order for staff: newest first, cancelled ones kept in
//! their place and marked (so a row never moves under the pointer), cancelling behind a
//! confirmation, and (staff) completing. The list is drawn on the server; each open
//! order's actions are an island, and the page is shown again after one, saying what
//! was done. Stock and status on the catalog and pet pages follow at once, since they
//! are read fresh from the same tables.

use leptos::prelude::*;
use leptos_router::hooks::{use_location, use_query_map};
use strum::VariantArray;

use super::note::{Done, NoteView, from_flash};
use super::widgets::{
    ErrorNotice, FormFields, FormOutcome, LocalTime, PageTitle, confirm, post_form, query_string, set_status,
};
use crate::error::ErrorCode;
use crate::model::{Caller, Cancellation, OrderState, OrderView, Role};
use crate::server_fns::{CancelOrder, CompleteOrder, list_orders, viewer};
use crate::ui::data;

/// The page's filters and page, as in its address (`?state=open&pet=rex&cursor=…`).
#[derive(Clone, Debug, Default, PartialEq)]
struct OrdersQuery {
    state: Option<String>,
    pet: Option<String>,
    cursor: Option<String>,
}

impl OrdersQuery {
    fn url(&self, path: &str, cursor: Option<String>) -> String {
        let query = query_string([("state", self.state.clone()), ("pet", self.pet.clone()), ("cursor", cursor)]);
        format!("{path}{query}")
    }
}

/// What cancelling did, in words.
fn cancelled(cancellation: &Cancellation) -> String {
    let order = &cancellation.order;
    if cancellation.already {
        format!("Order #{} ({}) was already cancelled.", order.order.id, order.what())
    } else {
        format!("Cancelled order #{} ({}); its units are back in stock.", order.order.id, order.what())
    }
}

#[component]
pub fn OrdersPage() -> impl IntoView {
    let query = use_query_map().with_untracked(|query| {
        let get = |key: &str| query.get(key).filter(|value| !value.is_empty());
        OrdersQuery { state: get("state"), pet: get("pet"), cursor: get("cursor") }
    });
    let path = use_location().pathname.get_untracked();
    let who = data::resource(|| (), |_| viewer());
    let orders = data::resource(
        {
            let query = query.clone();
            move || query.clone()
        },
        |query| list_orders(query.state, query.pet, query.cursor),
    );
    // What the last cancel or complete did (sent with or without JavaScript: the page
    // is shown again either way).
    let note = from_flash(|flash| {
        flash
            .note::<CancelOrder>(|cancellation, _| Done::new(cancelled(&cancellation)))
            .or_else(|| flash.note::<CompleteOrder>(|order, _| Done::new(format!("Completed order #{}.", order.id))))
    });
    view! {
        <PageTitle text="Orders"/>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (path, query, note) = (path.clone(), query.clone(), note.clone());
                Suspend::new(async move {
                    let staff = matches!(who.await, Ok(Some(Caller { role: Role::Admin, .. })));
                    let page = match orders.await {
                        Ok(page) => page,
                        Err(error) if error.code == ErrorCode::MissingApiKey => {
                            set_status(401);
                            return view! {
                                <h1>"My orders"</h1>
                                <p class="notice">"Sign in to see your orders. "
                                    <a href=crate::paths::sign_in_href(&path)>"Sign in"</a></p>
                            }.into_any();
                        }
                        Err(error) => return view! { <ErrorNotice error/> }.into_any(),
                    };
                    let filtered = query.state.is_some() || query.pet.is_some();
                    let first = query.cursor.is_some().then(|| query.url(&path, None));
                    let next = page.next_cursor.clone().map(|cursor| query.url(&path, Some(cursor)));
                    view! {
                        <h1>{if staff { "All orders" } else { "My orders" }}</h1>
                        <OrderFilters action=path.clone() query=query.clone()/>
                        <div aria-live="polite">
                            {note.map(|note| view! { <div class="notice-line"><NoteView note/></div> })}
                        </div>
                        {if page.items.is_empty() {
                            view! {
                                <p class="empty">
                                    {if filtered { "No orders match these filters. " } else { "No orders yet. " }}
                                    {if filtered {
                                        view! { <a href=path.clone()>"Clear the filters"</a> }.into_any()
                                    } else {
                                        view! { <a href="/">"Browse the catalog"</a> }.into_any()
                                    }}
                                </p>
                            }.into_any()
                        } else {
                            view! { <OrderTable list=page.items staff/> }.into_any()
                        }}
                        <nav class="pager" aria-label="Pages">
                            {first.map(|href| view! { <a href=href rel="first">"← Newest orders"</a> })}
                            {next.map(|href| view! { <a href=href rel="next">"Older orders →"</a> })}
                        </nav>
                    }.into_any()
                })
            }}
        </Suspense>
    }
}

/// The orders as a table (a list of cards on a phone: see `.responsive` in the CSS).
#[component]
fn OrderTable(list: Vec<OrderView>, staff: bool) -> impl IntoView {
    let currency = crate::ui::widgets::store_currency();
    view! {
        <table class="table orders responsive">
            <thead><tr>
                <th scope="col">"Order"</th><th scope="col">"Pet"</th><th scope="col" class="number">"Quantity"</th>
                <th scope="col" class="number">"Total"</th><th scope="col">"Placed"</th><th scope="col">"State"</th><th scope="col">"Ship date"</th>
                <th scope="col" class="actions">"Actions"</th>
            </tr></thead>
            <tbody>
                {list.into_iter().map(|view| {
                    let order = view.order.clone();
                    let what = view.what();
                    let pet = view.pet_name.clone().unwrap_or_else(|| format!("pet {}", order.pet_id));
                    view! {
                        <tr data-order-id=order.id class=format!("order-{}", view.state.as_str())>
                            <td data-label="Order">{format!("#{}", order.id)}</td>
                            <td data-label="Pet"><a href=format!("/pets/{}", order.pet_id)>{pet}</a></td>
                            <td data-label="Quantity" class="number">{order.quantity}</td>
                            // Fixed when it was placed; an order for a pet without a price has none.
                            <td data-label="Total" class="number">
                                {order.total.map_or_else(|| "—".to_owned(), |total| currency.format(total))}
                            </td>
                            <td data-label="Placed"><LocalTime iso=view.placed_at.clone()/></td>
                            <td data-label="State">
                                <span class=format!("badge order-status badge-{}", view.state.as_str())>{view.state.label()}</span>
                            </td>
                            <td data-label="Ship date">
                                {match order.ship_date.clone() {
                                    Some(date) => view! { <LocalTime iso=date/> }.into_any(),
                                    None => view! { <span class="meta">"—"</span> }.into_any(),
                                }}
                            </td>
                            <td data-label="Actions" class="actions">
                                {(view.state == OrderState::Open).then(|| view! { <OrderActions id=order.id what staff/> })}
                            </td>
                        </tr>
                    }
                    // Erased: the row's full type nests deep enough to stop the compiler.
                    .into_any()
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// An open order's actions: cancel (after the question) and, for staff, complete.
#[island]
fn OrderActions(id: i64, what: String, staff: bool) -> impl IntoView {
    let cancel = ServerAction::<CancelOrder>::new();
    let complete = ServerAction::<CompleteOrder>::new();
    let sending = move || cancel.pending().get() || complete.pending().get();
    view! {
        <div class="row-actions">
            {confirm(
                "Cancel…".into(),
                format!("Cancel order #{id} ({what})?"),
                post_form(cancel, "inline", move |_: &FormFields| CancelOrder { id }, view! {
                    <input type="hidden" name="id" value=id/>
                    <button type="submit" class="danger" disabled=sending>{format!("Yes, cancel order #{id}")}</button>
                }),
            )}
            {staff.then(|| post_form(complete, "inline", move |_: &FormFields| CompleteOrder { id }, view! {
                <input type="hidden" name="id" value=id/>
                <button type="submit" disabled=sending>"Complete"</button>
            }))}
        </div>
        <FormOutcome result=cancel.value().into() done=""/>
        <FormOutcome result=complete.value().into() done=""/>
    }
}

/// A state and part of a pet's name: a plain GET form, so it works without JavaScript.
#[component]
fn OrderFilters(action: String, query: OrdersQuery) -> impl IntoView {
    let chosen = query.state.clone().unwrap_or_default();
    view! {
        <form class="filters" method="get" action=action role="search" aria-label="Filter orders">
            <label>"State"
                <select name="state">
                    <option value="" selected=chosen.is_empty()>"Any"</option>
                    {OrderState::VARIANTS.iter().copied().map(|state| view! {
                        <option value=state.as_str() selected=chosen == state.as_str()>{state.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label class="search">"Pet"
                <input type="search" name="pet" maxlength="100" placeholder="Part of its name"
                    value=query.pet.clone().unwrap_or_default()/>
            </label>
            <button type="submit">"Apply"</button>
        </form>
    }
}
