//! Inventory: every pet's stock and status in one table, the stock editable in place.
//! Low stock stands out (in words too, not by colour alone).

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use super::FormOutcome;
use crate::model::{PetCard, PetStatus};
use crate::server_fns::{SetStock, inventory};
use crate::ui::data;
use crate::ui::note::{Done, Note, from_flash};
use crate::ui::widgets::{ErrorNotice, PageTitle, StatusBadge, query_string};

/// Stock at or under this, for a pet still for sale, is highlighted.
pub const LOW_STOCK: i64 = 2;

#[component]
pub fn InventoryConsole() -> impl IntoView {
    let query = use_query_map();
    let cursor = query.with_untracked(|query| query.get("cursor"));
    let note = from_flash(|flash| flash.note::<SetStock>(|_, _| Done::new("Saved.")));
    view! {
        <PageTitle text="Staff: inventory"/>
        <InventoryConsoleIsland cursor note/>
    }
}

/// The console page itself: stock is set in place, row by row. `note` is what a form
/// sent without JavaScript did.
#[island]
fn InventoryConsoleIsland(cursor: Option<String>, note: Option<Note>) -> impl IntoView {
    let page = data::resource(move || cursor.clone(), inventory);
    view! {
        <h1>"Inventory"</h1>
        <p class="meta">{format!("Stock of {LOW_STOCK} or less on a pet for sale is marked low.")}</p>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let note = note.clone();
                Suspend::new(async move {
                    match page.await {
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                        Ok(page) => {
                            let next = page.next_cursor.map(|c| format!("/admin/inventory{}", query_string([("cursor", Some(c))])));
                            view! {
                                <table class="table inventory responsive">
                                    <thead><tr>
                                        <th scope="col">"Pet"</th><th scope="col">"Category"</th>
                                        <th scope="col">"Status"</th><th scope="col">"Stock"</th>
                                    </tr></thead>
                                    <tbody>
                                        {page.items.into_iter().map(|pet| view! { <StockRow pet note=note.clone()/> }).collect_view()}
                                    </tbody>
                                </table>
                                {next.map(|href| view! { <nav class="pager" aria-label="Pages"><a href=href rel="next">"Next page →"</a></nav> })}
                            }.into_any()
                        }
                    }
                })
            }}
        </Suspense>
    }
}

#[component]
fn StockRow(pet: PetCard, note: Option<Note>) -> impl IntoView {
    let set = ServerAction::<SetStock>::new();
    let result = set.value();
    let note = Note::for_form::<SetStock>(&note, Some(pet.id));
    let typed = note.as_ref().and_then(|note| note.typed("quantity"));
    // After a save the row shows what the server answered (the status may change too).
    let state = move || match result.get() {
        Some(Ok(item)) => (item.quantity, item.status),
        _ => (pet.quantity, pet.status),
    };
    let low = move || {
        let (quantity, status) = state();
        status != PetStatus::Sold && quantity <= LOW_STOCK
    };
    let input_id = format!("stock-{}", pet.id);
    let shown = typed.unwrap_or_else(|| pet.quantity.to_string());
    view! {
        <tr data-pet-id=pet.id class:low-stock=low>
            <td data-label="Pet"><a href=format!("/admin/pets/{}", pet.id)>{pet.name.clone()}</a></td>
            <td data-label="Category">{pet.category_name}</td>
            <td data-label="Status">{move || view! { <StatusBadge status=state().1/> }}</td>
            <td data-label="Stock">
                <ActionForm action=set attr:class="inline stock-form">
                    <input type="hidden" name="pet_id" value=pet.id/>
                    <label class="visually-hidden" for=input_id.clone()>{format!("Stock of {}", pet.name)}</label>
                    <input id=input_id type="number" name="quantity" min="0" max="1000000" required value=shown
                        inputmode="numeric"/>
                    <button type="submit" class="secondary">"Set"</button>
                    <span class="badge badge-low" class:hidden=move || !low()>"Low"</span>
                </ActionForm>
                <FormOutcome result=result.into() done="Saved." note/>
            </td>
        </tr>
    }
}
