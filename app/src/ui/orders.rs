//! "My orders" for shoppers, every order for staff: cancel an open one, and (staff)
//! complete it. Stock and status on the catalog and pet pages follow at once, since
//! they are read fresh from the same tables.

use leptos::prelude::*;

use crate::ui::data;
use leptos_meta::Title;
use leptos_router::hooks::{use_location, use_query_map};

use super::widgets::{ErrorNotice, set_status};
use crate::error::ErrorCode;
use crate::model::{Caller, Role};
use crate::server_fns::{CancelOrder, CompleteOrder, list_orders, viewer};

#[component]
pub fn OrdersPage() -> impl IntoView {
    // Filters from the address (`?complete=false&petId=3`), as on `GET /store/orders`.
    let query = use_query_map();
    let (complete, pet_id) = query.with_untracked(|query| (query.get("complete"), query.get("petId")));
    let path = use_location().pathname.get_untracked();
    let who = data::resource(|| (), |_| viewer());
    view! {
        <Title text="Orders"/>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (path, complete, pet_id) = (path.clone(), complete.clone(), pet_id.clone());
                Suspend::new(async move {
                    let staff = matches!(who.await, Ok(Some(Caller { role: Role::Admin, .. })));
                    view! { <Orders path filters=(complete, pet_id) staff/> }
                })
            }}
        </Suspense>
    }
}

/// The list and its actions: a cancelled or completed order changes in place.
#[island]
fn Orders(path: String, filters: (Option<String>, Option<String>), staff: bool) -> impl IntoView {
    let cancel = ServerAction::<CancelOrder>::new();
    let complete = ServerAction::<CompleteOrder>::new();
    let orders = data::resource(
        {
            let filters = filters.clone();
            move || (filters.clone(), cancel.version().get(), complete.version().get())
        },
        |((complete, pet_id), _, _)| list_orders(complete, pet_id),
    );
    let failure = move || match (cancel.value().get(), complete.value().get()) {
        (Some(Err(error)), _) | (_, Some(Err(error))) => Some(view! { <ErrorNotice error/> }),
        _ => None,
    };

    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (path, filters) = (path.clone(), filters.clone());
                Suspend::new(async move {
                    match orders.await {
                        Ok(list) => view! {
                            <h1>{if staff { "All orders" } else { "My orders" }}</h1>
                            <OrderFilters action=path filters/>
                            {failure}
                            {if list.is_empty() {
                                view! { <p class="empty">"No orders here. " <a href="/">"Browse the catalog"</a></p> }.into_any()
                            } else {
                                view! {
                                    <table class="table orders">
                                        <thead><tr>
                                            <th scope="col">"Order"</th><th scope="col">"Pet"</th><th scope="col">"Quantity"</th>
                                            <th scope="col">"Status"</th><th scope="col">"Ship date"</th><th scope="col">"Actions"</th>
                                        </tr></thead>
                                        <tbody>
                                            {list.into_iter().map(|view| {
                                                let order = view.order;
                                                let pet = view.pet_name.unwrap_or_else(|| format!("pet {}", order.pet_id));
                                                view! {
                                                    <tr data-order-id=order.id>
                                                        <td>{format!("#{}", order.id)}</td>
                                                        <td><a href=format!("/pets/{}", order.pet_id)>{pet}</a></td>
                                                        <td>{order.quantity}</td>
                                                        <td class="order-status">{if order.complete { "Completed" } else { "Open" }}</td>
                                                        <td>{order.ship_date.unwrap_or_else(|| "—".into())}</td>
                                                        <td class="actions">
                                                            {(!order.complete).then(|| view! {
                                                                <ActionForm action=cancel attr:class="inline">
                                                                    <input type="hidden" name="id" value=order.id/>
                                                                    <button type="submit" class="secondary">"Cancel"</button>
                                                                </ActionForm>
                                                            })}
                                                            {(staff && !order.complete).then(|| view! {
                                                                <ActionForm action=complete attr:class="inline">
                                                                    <input type="hidden" name="id" value=order.id/>
                                                                    <button type="submit">"Complete"</button>
                                                                </ActionForm>
                                                            })}
                                                        </td>
                                                    </tr>
                                                }
                                            }).collect_view()}
                                        </tbody>
                                    </table>
                                }.into_any()
                            }}
                        }.into_any(),
                        Err(error) if error.code == ErrorCode::MissingApiKey => {
                            set_status(401);
                            view! {
                                <h1>"My orders"</h1>
                                <p class="notice">"Sign in to see your orders. " <a href="/sign-in">"Sign in"</a></p>
                            }.into_any()
                        }
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

/// Open or complete, and one pet: a plain GET form, so it works without JavaScript.
#[component]
fn OrderFilters(action: String, filters: (Option<String>, Option<String>)) -> impl IntoView {
    let (complete, pet_id) = filters;
    let chosen = move |value: &str| complete.as_deref().unwrap_or("") == value;
    view! {
        <form class="filters" method="get" action=action role="search" aria-label="Filter orders">
            <label>"State"
                <select name="complete">
                    <option value="" selected=chosen("")>"Any"</option>
                    <option value="false" selected=chosen("false")>"Open"</option>
                    <option value="true" selected=chosen("true")>"Completed"</option>
                </select>
            </label>
            <label>"Pet id"
                <input type="number" name="petId" min="1" value=pet_id.unwrap_or_default()/>
            </label>
            <button type="submit">"Apply"</button>
        </form>
    }
}
