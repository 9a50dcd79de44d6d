//! Inventory: every pet's stock and status in one table, drawn on the server, the stock
//! set row by row (each row's form an island; the page is shown again after a change,
//! with the row's new status). Low stock stands out (in words too, not by colour alone).

use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use super::FormOutcome;
use crate::model::{LOW_STOCK, PetCard, PetStatus};
use crate::server_fns::{SetStock, inventory};
use crate::ui::data;
use crate::ui::note::{Done, Note, from_flash};
use crate::ui::widgets::{ErrorNotice, PageTitle, StatusBadge, query_string};

#[component]
pub fn InventoryConsole() -> impl IntoView {
    let cursor = use_query_map().with_untracked(|query| query.get("cursor"));
    let page = data::resource(move || cursor.clone(), inventory);
    let note = from_flash(|flash| flash.note::<SetStock>(|_, _| Done::new("Saved.")));
    view! {
        <PageTitle text="Staff: inventory"/>
        <h1>"Inventory"</h1>
        <p class="meta">{format!("A pet for sale with {LOW_STOCK} or fewer left is marked low; one whose last unit was ordered (pending, none left) is marked out.")}</p>
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
                                        {page.items.into_iter().map(|pet| {
                                            let note = Note::for_form::<SetStock>(&note, Some(pet.id));
                                            view! { <StockRow pet note/> }
                                        }).collect_view()}
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
    // A pet for sale runs low; one that sold its last unit (pending, none left) is out.
    // Another pending pet is held back on purpose, and a sold one is gone: neither is marked.
    let mark = match (pet.status, pet.quantity) {
        (PetStatus::Available, stock) if stock <= LOW_STOCK => Some("Low"),
        (PetStatus::Pending, 0) => Some("Out"),
        _ => None,
    };
    let low = mark.is_some();
    view! {
        <tr data-pet-id=pet.id class:low-stock=low>
            <td data-label="Pet"><a href=format!("/admin/pets/{}", pet.id)>{pet.name.clone()}</a></td>
            <td data-label="Category">{pet.category_name.clone()}</td>
            <td data-label="Status"><StatusBadge status=pet.status/></td>
            <td data-label="Stock">
                <StockForm pet_id=pet.id name=pet.name quantity=pet.quantity note/>
                {mark.map(|mark| view! { <span class="badge badge-low">{mark}</span> })}
            </td>
        </tr>
    }
}

/// One pet's stock: set it, and the page is shown again with the row's new status.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn StockForm(pet_id: i64, name: String, quantity: i64, note: Option<Note>) -> impl IntoView {
    let set = ServerAction::<SetStock>::new();
    let input_id = format!("stock-{pet_id}");
    // After a refusal, what was typed.
    let shown = note.as_ref().and_then(|note| note.typed("quantity")).unwrap_or_else(|| quantity.to_string());
    view! {
        <ActionForm action=set attr:class="inline stock-form">
            <input type="hidden" name="pet_id" value=pet_id/>
            <label class="visually-hidden" for=input_id.clone()>{format!("Stock of {name}")}</label>
            <input id=input_id type="number" name="quantity" min="0" max="1000000" required value=shown
                inputmode="numeric"/>
            <button type="submit" class="secondary" disabled=move || set.pending().get()>"Set"</button>
        </ActionForm>
        <FormOutcome result=set.value().into() done="Saved." note/>
    }
}
