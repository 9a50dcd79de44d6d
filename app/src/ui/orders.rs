//! "My orders" for shoppers, every order for staff: cancel an open one, and (staff)
//! complete it. Stock and status on the catalog and pet pages follow at once, since
//! they are read fresh from the same tables.

use leptos::prelude::*;
use leptos_meta::Title;

use super::widgets::{ErrorNotice, set_status};
use crate::error::ErrorCode;
use crate::model::{Caller, Role};
use crate::server_fns::{CancelOrder, CompleteOrder, list_orders, viewer};

#[component]
pub fn OrdersPage() -> impl IntoView {
    let cancel = ServerAction::<CancelOrder>::new();
    let complete = ServerAction::<CompleteOrder>::new();
    let orders = Resource::new(move || (cancel.version().get(), complete.version().get()), |_| list_orders());
    let who = Resource::new(|| (), |_| viewer());
    let failure = move || match (cancel.value().get(), complete.value().get()) {
        (Some(Err(error)), _) | (_, Some(Err(error))) => Some(view! { <ErrorNotice error/> }),
        _ => None,
    };

    view! {
        <Title text="Orders"/>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let staff = matches!(who.await, Ok(Some(Caller { role: Role::Admin, .. })));
                match orders.await {
                    Ok(list) => view! {
                        <h1>{if staff { "All orders" } else { "My orders" }}</h1>
                        {failure}
                        {if list.is_empty() {
                            view! { <p class="empty">"No orders yet. " <a href="/">"Browse the catalog"</a></p> }.into_any()
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
            })}
        </Suspense>
    }
}
