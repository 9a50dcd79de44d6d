//! "My orders" for shoppers, every order for staff: newest first, cancelled ones kept in
//! their place and marked (so a row never moves under the pointer), cancelling behind a
//! confirmation, and (staff) completing. Stock and status on the catalog and pet pages
//! follow at once, since they are read fresh from the same tables.

use leptos::prelude::*;
use leptos_router::hooks::{use_location, use_query_map};

use super::note::{Done, Note, from_flash};
use super::widgets::{ErrorNotice, LocalTime, PageTitle, confirm, query_string, set_status};
use crate::error::{AppError, ErrorCode};
use crate::model::{Cancellation, Caller, Order, OrderState, OrderView, Role};
use crate::server_fns::{CancelOrder, CompleteOrder, list_orders, viewer};
use crate::ui::data;

/// The page's filters and page, as in its address (`?state=open&pet=rex&cursor=…`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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

/// What the list says of the last thing done: a form sent without JavaScript (its
/// note), or an action's answer.
#[derive(Clone)]
enum Said {
    Note(Note),
    Cancel(Result<Cancellation, AppError>),
    Complete(Result<Order, AppError>),
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
                    view! { <Orders path query staff note/> }
                })
            }}
        </Suspense>
    }
}

/// The list and its actions: a cancelled or completed order changes in place.
#[island]
fn Orders(path: String, query: OrdersQuery, staff: bool, note: Option<Note>) -> impl IntoView {
    let cancel = ServerAction::<CancelOrder>::new();
    let complete = ServerAction::<CompleteOrder>::new();
    // Read once: an order cancelled or completed here changes in its row, which stays
    // where it is (even when it no longer matches the filters), so nothing moves under
    // the pointer.
    let orders = data::resource(
        {
            let query = query.clone();
            move || query.clone()
        },
        |query| list_orders(query.state, query.pet, query.cursor),
    );
    // The last thing done here, in words: without JavaScript what the form sent did
    // (the note), with it each action's answer as it comes.
    let said = RwSignal::new(note.map(Said::Note));
    Effect::new(move |_| {
        if let Some(outcome) = cancel.value().get() {
            said.set(Some(Said::Cancel(outcome)));
        }
    });
    Effect::new(move |_| {
        if let Some(outcome) = complete.value().get() {
            said.set(Some(Said::Complete(outcome)));
        }
    });
    let said = move || {
        said.get().map(|said| match said {
            Said::Note(note) if note.is_refusal() => {
                view! { <div class="notice notice-error" role="alert">{note.text}</div> }.into_any()
            }
            Said::Note(note) => view! { <p class="notice notice-success" role="status">{note.text}</p> }.into_any(),
            Said::Cancel(Ok(cancellation)) => {
                view! { <p class="notice notice-success" role="status">{cancelled(&cancellation)}</p> }.into_any()
            }
            Said::Complete(Ok(order)) => {
                view! { <p class="notice notice-success" role="status">{format!("Completed order #{}.", order.id)}</p> }
                    .into_any()
            }
            Said::Cancel(Err(error)) | Said::Complete(Err(error)) => view! { <ErrorNotice error/> }.into_any(),
        })
    };

    view! {
        <h1>{if staff { "All orders" } else { "My orders" }}</h1>
        <OrderFilters action=path.clone() query=query.clone()/>
        <div aria-live="polite">{said}</div>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (path, query) = (path.clone(), query.clone());
                Suspend::new(async move {
                    match orders.await {
                        Ok(page) => {
                            let filtered = query.state.is_some() || query.pet.is_some();
                            let first = query.cursor.is_some().then(|| query.url(&path, None));
                            let next = page.next_cursor.map(|cursor| query.url(&path, Some(cursor)));
                            view! {
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
                                    view! { <OrderTable list=page.items cancel complete staff/> }.into_any()
                                }}
                                <nav class="pager" aria-label="Pages">
                                    {first.map(|href| view! { <a href=href rel="first">"← Newest orders"</a> })}
                                    {next.map(|href| view! { <a href=href rel="next">"Older orders →"</a> })}
                                </nav>
                            }.into_any()
                        }
                        Err(error) if error.code == ErrorCode::MissingApiKey => {
                            set_status(401);
                            view! {
                                <p class="notice">"Sign in to see your orders. "
                                    <a href=super::sign_in_href(&path)>"Sign in"</a></p>
                            }.into_any()
                        }
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

/// The orders as a table (a list of cards on a phone: see `.responsive` in the CSS).
#[component]
fn OrderTable(
    list: Vec<OrderView>,
    cancel: ServerAction<CancelOrder>,
    complete: ServerAction<CompleteOrder>,
    staff: bool,
) -> impl IntoView {
    view! {
        <table class="table orders responsive">
            <thead><tr>
                <th scope="col">"Order"</th><th scope="col">"Pet"</th><th scope="col" class="number">"Quantity"</th>
                <th scope="col">"Placed"</th><th scope="col">"State"</th><th scope="col">"Ship date"</th>
                <th scope="col" class="actions">"Actions"</th>
            </tr></thead>
            <tbody>
                {list.into_iter().map(|view| view! { <OrderRow view cancel complete staff/> }).collect_view()}
            </tbody>
        </table>
    }
}

/// One order. Cancelled or completed here, it changes in place: its state, its ship
/// date and its actions (hidden once it is no longer open), never its position.
#[component]
fn OrderRow(
    view: OrderView,
    cancel: ServerAction<CancelOrder>,
    complete: ServerAction<CompleteOrder>,
    staff: bool,
) -> impl IntoView {
    let order = view.order.clone();
    let id = order.id;
    let state = RwSignal::new((view.state, order.ship_date.clone()));
    Effect::new(move |_| {
        if let Some(Ok(cancelled)) = cancel.value().get().filter(|c| matches!(c, Ok(c) if c.order.order.id == id)) {
            state.set((cancelled.order.state, cancelled.order.order.ship_date));
        }
    });
    Effect::new(move |_| {
        if let Some(Ok(completed)) = complete.value().get().filter(|c| matches!(c, Ok(o) if o.id == id)) {
            state.set((OrderState::Completed, completed.ship_date));
        }
    });
    let open = move || state.get().0 == OrderState::Open;
    let what = view.what();
    let pet = view.pet_name.clone().unwrap_or_else(|| format!("pet {}", order.pet_id));
    view! {
        <tr data-order-id=id class=move || format!("order-{}", state.get().0.as_str())>
            <td data-label="Order">{format!("#{id}")}</td>
            <td data-label="Pet"><a href=format!("/pets/{}", order.pet_id)>{pet}</a></td>
            <td data-label="Quantity" class="number">{order.quantity}</td>
            <td data-label="Placed"><LocalTime iso=view.placed_at.clone()/></td>
            <td data-label="State">
                <span class=move || format!("badge order-status badge-{}", state.get().0.as_str())>
                    {move || state.get().0.label()}
                </span>
            </td>
            <td data-label="Ship date">
                {move || match state.get().1 {
                    Some(date) => view! { <LocalTime iso=date/> }.into_any(),
                    None => view! { <span class="meta">"—"</span> }.into_any(),
                }}
            </td>
            <td data-label="Actions" class="actions">
                // Only an open order has actions; they hide (rather than the row
                // changing shape) once it is cancelled or completed here.
                {(view.state == OrderState::Open).then(|| view! {
                    <div class="row-actions" class:hidden=move || !open()>
                        {confirm(
                            "Cancel…".into(),
                            format!("Cancel order #{id} ({what})?"),
                            view! {
                                <ActionForm action=cancel attr:class="inline">
                                    <input type="hidden" name="id" value=id/>
                                    <button type="submit" class="danger" disabled=move || cancel.pending().get()>
                                        {format!("Yes, cancel order #{id}")}
                                    </button>
                                </ActionForm>
                            },
                        )}
                        {staff.then(|| view! {
                            <ActionForm action=complete attr:class="inline">
                                <input type="hidden" name="id" value=id/>
                                <button type="submit">"Complete"</button>
                            </ActionForm>
                        })}
                    </div>
                })}
            </td>
        </tr>
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
                    {OrderState::ALL.into_iter().map(|state| view! {
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
