//! Inventory: every pet's stock and status in one table, the stock editable in place.
//! Low stock stands out (in words too, not by colour alone).

use leptos::prelude::*;

use crate::ui::data;
use crate::ui::widgets::PageTitle;
use leptos_router::hooks::use_query_map;

use super::FormOutcome;
use crate::model::{PetCard, PetStatus};
use crate::server_fns::{SetStock, inventory};
use crate::ui::widgets::{ErrorNotice, StatusBadge, query_string};

/// Stock at or under this, for a pet still for sale, is highlighted.
pub const LOW_STOCK: i64 = 2;

#[component]
pub fn InventoryConsole() -> impl IntoView {
    let query = use_query_map();
    let cursor = query.with_untracked(|query| query.get("cursor"));
    view! {
        <PageTitle text="Staff: inventory"/>
        <InventoryConsoleIsland cursor/>
    }
}

/// The console page itself: stock is set in place, row by row.
#[island]
fn InventoryConsoleIsland(cursor: Option<String>) -> impl IntoView {
    let page = data::resource(move || cursor.clone(), inventory);
    view! {
        <h1>"Inventory"</h1>
        <p class="meta">{format!("Stock of {LOW_STOCK} or less on a pet for sale is marked low.")}</p>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    Ok(page) => {
                        let next = page.next_cursor.map(|c| format!("/admin/inventory{}", query_string([("cursor", Some(c))])));
                        view! {
                            <table class="table inventory">
                                <thead><tr>
                                    <th scope="col">"Pet"</th><th scope="col">"Category"</th>
                                    <th scope="col">"Status"</th><th scope="col">"Stock"</th>
                                </tr></thead>
                                <tbody>
                                    {page.items.into_iter().map(|pet| view! { <StockRow pet/> }).collect_view()}
                                </tbody>
                            </table>
                            {next.map(|href| view! { <nav class="pager" aria-label="Pages"><a href=href rel="next">"Next page →"</a></nav> })}
                        }.into_any()
                    }
                }
            })}
        </Suspense>
    }
}

#[component]
fn StockRow(pet: PetCard) -> impl IntoView {
    let set = ServerAction::<SetStock>::new();
    // After a save the row shows what the server answered (the status may change too).
    let state = Memo::new(move |_| match set.value().get() {
        Some(Ok(item)) => (item.quantity, item.status),
        _ => (pet.quantity, pet.status),
    });
    let low = move || {
        let (quantity, status) = state.get();
        status != PetStatus::Sold && quantity <= LOW_STOCK
    };
    let input_id = format!("stock-{}", pet.id);
    view! {
        <tr data-pet-id=pet.id class:low-stock=low>
            <td><a href=format!("/admin/pets/{}", pet.id)>{pet.name.clone()}</a></td>
            <td>{pet.category_name}</td>
            <td>{move || view! { <StatusBadge status=state.get().1/> }}</td>
            <td>
                <ActionForm action=set attr:class="inline stock-form">
                    <input type="hidden" name="pet_id" value=pet.id/>
                    <label class="visually-hidden" for=input_id.clone()>{format!("Stock of {}", pet.name)}</label>
                    <input id=input_id type="number" name="quantity" min="0" max="1000000" required
                        value=pet.quantity prop:value=move || state.get().0.to_string()/>
                    <button type="submit" class="secondary">"Set"</button>
                    {move || low().then(|| view! { <span class="badge badge-low">"low"</span> })}
                </ActionForm>
                <FormOutcome result=set.value().into() done="Saved."/>
            </td>
        </tr>
    }
}
