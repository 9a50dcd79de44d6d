//! Pets: find, create, edit (name, category, status, description, price, photo) and
//! delete. The lists are drawn on the server; the forms are islands (see `admin`).

use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};
use strum::VariantArray;

use super::photo::PhotoEditor;
use super::{FormOutcome, NameField, invalid};
use crate::model::{CategorySummary, Currency, PHOTO_WIDTHS, PetCard, PetStatus};
use crate::server_fns::{DeletePet, RemovePhoto, SavePet, catalog, categories, pet};
use crate::ui::data;
use crate::ui::note::{Done, Note, NoteView, from_flash};
use crate::ui::widgets::{ErrorNotice, PageTitle, StatusBadge, confirm, price_text, query_string, store_currency};

#[component]
pub fn PetsConsole() -> impl IntoView {
    let (q, cursor) = use_query_map().with_untracked(|query| (query.get("q"), query.get("cursor")));
    let search = q.clone();
    let pets = data::resource(move || (q.clone(), cursor.clone()), |(q, cursor)| catalog(None, None, q, None, cursor));
    let category_list = data::resource(|| (), |_| categories());
    let note = from_flash(|flash| {
        flash
            .note::<SavePet>(|pet, _| {
                Done::new(format!("Created {} (pet #{}).", pet.name, pet.id))
                    .link(format!("/admin/pets/{}", pet.id), "Edit it")
                    .link(format!("/pets/{}", pet.id), "See it in the shop")
            })
            .or_else(|| flash.note::<DeletePet>(|(), id| Done::new(format!("Pet #{} was deleted.", id.unwrap_or(0)))))
    });
    // After "Delete" on a pet's page, the browser comes back here.
    let deleted = note.clone().filter(|note| note.is_of::<DeletePet>());
    let created = Note::for_form::<SavePet>(&note, None);
    let currency = store_currency();
    let table_currency = currency.clone();
    view! {
        <PageTitle text="Staff: pets"/>
        <h1>"Pets"</h1>
        {deleted.map(|note| view! { <div class="notice-line"><NoteView note/></div> })}
        <section class="panel" aria-labelledby="new-pet">
            <h2 id="new-pet">"New pet"</h2>
            <Suspense fallback=|| ()>
                {move || {
                    let (created, currency) = (created.clone(), currency.clone());
                    Suspend::new(async move {
                        let options = category_list.await.unwrap_or_default();
                        view! { <NewPetForm options currency note=created/> }
                    })
                }}
            </Suspense>
        </section>

        <form class="filters" method="get" action="/admin/pets" role="search" aria-label="Find pets">
            <label class="search">"Name"
                <input type="search" name="q" maxlength="100" value=search.clone().unwrap_or_default()/>
            </label>
            <button type="submit">"Find"</button>
        </form>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (q, currency) = (search.clone(), table_currency.clone());
                Suspend::new(async move {
                    match pets.await {
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                        Ok(page) => {
                            let next = page.next_cursor.map(|cursor| {
                                format!("/admin/pets{}", query_string([("q", q), ("cursor", Some(cursor))]))
                            });
                            view! {
                                <PetTable pets=page.items currency/>
                                {next.map(|href| view! { <nav class="pager" aria-label="Pages"><a href=href rel="next">"Next page →"</a></nav> })}
                            }.into_any()
                        }
                    }
                })
            }}
        </Suspense>
    }
}

/// Creating a pet: the page is shown again after each one, the form empty and a note
/// with links to it; a refusal keeps what was typed. `note` is what the form did.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn NewPetForm(options: Vec<CategorySummary>, currency: Currency, note: Option<Note>) -> impl IntoView {
    let save = ServerAction::<SavePet>::new();
    let result = save.value();
    let typed = |field: &str| note.as_ref().and_then(|note| note.typed(field));
    let (name, category, status) = (typed("name"), typed("category_id"), typed("status"));
    let (description, price) = (typed("description"), typed("price"));
    let (blame_name, blame_category, blame_price) = (note.clone(), note.clone(), note.clone());
    view! {
        <ActionForm action=save attr:class="row-form">
            <NameField invalid=move || invalid(&result.get(), &blame_name, "name") value=name/>
            <CategoryPicker options selected=category.and_then(|c| c.parse().ok())
                invalid=move || invalid(&result.get(), &blame_category, "categoryId")/>
            <StatusPicker current=None chosen=status/>
            <PriceField currency value=price invalid=move || invalid(&result.get(), &blame_price, "price")/>
            <DescriptionField value=description/>
            <button type="submit" disabled=move || save.pending().get()>"Create pet"</button>
        </ActionForm>
        <FormOutcome result=result.into() done="" note/>
    }
}

/// The price, typed in the currency's major units; empty for none.
#[component]
fn PriceField(currency: Currency, value: Option<String>, #[prop(into)] invalid: Signal<bool>) -> impl IntoView {
    let example = currency.plain(12_900);
    view! {
        <label>{format!("Price ({})", currency.code)}
            <input type="text" name="price" inputmode="decimal" size="10" autocomplete="off" value=value
                placeholder=example aria-invalid=move || invalid.get().to_string()/>
        </label>
    }
}

/// The description (plain text; a blank line starts a paragraph).
#[component]
fn DescriptionField(value: Option<String>) -> impl IntoView {
    view! {
        <label class="grow wide">"Description"
            <textarea name="description" rows="4" maxlength="2000">{value}</textarea>
        </label>
    }
}

#[component]
fn PetTable(pets: Vec<PetCard>, currency: Currency) -> impl IntoView {
    if pets.is_empty() {
        return view! { <p class="empty">"No pets match. " <a href="/admin/pets">"Show all"</a></p> }.into_any();
    }
    view! {
        <table class="table responsive">
            <thead><tr>
                <th scope="col" class="number">"Id"</th><th scope="col">"Photo"</th><th scope="col">"Name"</th>
                <th scope="col">"Category"</th><th scope="col">"Status"</th><th scope="col" class="number">"Price"</th>
                <th scope="col" class="number">"Stock"</th>
            </tr></thead>
            <tbody>
                {pets.into_iter().map(|pet| view! {
                    <tr data-pet-id=pet.id>
                        <td data-label="Id" class="number">{pet.id}</td>
                        <td data-label="Photo" class="thumb">{match pet.photo() {
                            // Beside the name, which says whose it is.
                            Some(photo) => view! {
                                <img src=photo.url(PHOTO_WIDTHS[0]) alt="" width="64" height="48" loading="lazy"/>
                            }.into_any(),
                            None => view! { <span class="meta">"None"</span> }.into_any(),
                        }}</td>
                        <td data-label="Name"><a href=format!("/admin/pets/{}", pet.id)>{pet.name}</a></td>
                        <td data-label="Category">{pet.category_name}</td>
                        <td data-label="Status"><StatusBadge status=pet.status/></td>
                        <td data-label="Price" class="number">{price_text(&currency, pet.price)}</td>
                        <td data-label="Stock" class="number">{pet.quantity}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

/// `/admin/pets/:id`: edit or delete one pet.
#[component]
pub fn PetEditor() -> impl IntoView {
    let id =
        use_params_map().with_untracked(|params| params.get("id").and_then(|raw| raw.parse::<i64>().ok()).unwrap_or(0));
    let card = data::resource(move || id, pet);
    let category_list = data::resource(|| (), |_| categories());
    let note = from_flash(|flash| {
        flash
            .note::<SavePet>(|_, _| Done::new("Saved."))
            .or_else(|| flash.note::<DeletePet>(|(), _| Done::new("Deleted.")))
            .or_else(|| flash.note::<RemovePhoto>(|(), _| Done::new("The photo was removed.")))
    });
    let currency = store_currency();
    view! {
        <PageTitle text="Staff: edit pet"/>
        <p class="crumbs"><a href="/admin/pets">"Pets"</a></p>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (note, currency) = (note.clone(), currency.clone());
                Suspend::new(async move {
                    match card.await {
                        Ok(card) => {
                            let options = category_list.await.unwrap_or_default();
                            let removed = Note::for_form::<RemovePhoto>(&note, Some(card.id));
                            view! {
                                <h1>{format!("Edit {}", card.name)}</h1>
                                <PetEditForm card=card.clone() options currency note=note.clone()/>
                                <section class="panel" aria-labelledby="photo-title">
                                    <h2 id="photo-title">"Photo"</h2>
                                    <PhotoEditor pet_id=card.id name=card.name.clone() photo=card.photo() note=removed/>
                                </section>
                                <DeletePetPanel card note/>
                            }.into_any()
                        }
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

/// The editor: saving shows the page again, saying so. `note` is what a form sent without JavaScript
/// did (or with it: the page is shown again either way).
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn PetEditForm(card: PetCard, options: Vec<CategorySummary>, currency: Currency, note: Option<Note>) -> impl IntoView {
    let save = ServerAction::<SavePet>::new();
    let result = save.value();
    let id = card.id;
    let saved_note = Note::for_form::<SavePet>(&note, Some(id));
    let typed = |field: &str| saved_note.as_ref().and_then(|note| note.typed(field));
    let name = typed("name").unwrap_or(card.name.clone());
    let category = typed("category_id").and_then(|c| c.parse().ok()).unwrap_or(card.category_id);
    let status = typed("status");
    let description = typed("description").or(card.description.clone());
    let price = typed("price").or_else(|| card.price.map(|price| currency.plain(price)));
    let (blame_name, blame_category, blame_price) = (saved_note.clone(), saved_note.clone(), saved_note.clone());
    view! {
        <section class="panel">
            <ActionForm action=save attr:class="row-form">
                <input type="hidden" name="id" value=id/>
                <NameField invalid=move || invalid(&result.get(), &blame_name, "name") value=Some(name)/>
                <CategoryPicker options selected=Some(category)
                    invalid=move || invalid(&result.get(), &blame_category, "categoryId")/>
                <StatusPicker current=Some(card.status) chosen=status/>
                <PriceField currency value=price invalid=move || invalid(&result.get(), &blame_price, "price")/>
                <DescriptionField value=description/>
                <button type="submit">"Save"</button>
            </ActionForm>
            <FormOutcome result=result.into() done="Saved." note=saved_note/>
            <p class="meta">{format!("{} in stock. Change stock on the ", card.quantity)}
                <a href="/admin/inventory">"inventory"</a>" page."</p>
        </section>
    }
}

/// Deleting the pet, after a confirmation (the list then says so).
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn DeletePetPanel(card: PetCard, note: Option<Note>) -> impl IntoView {
    let delete = ServerAction::<DeletePet>::new();
    let id = card.id;
    let deleted_note = Note::for_form::<DeletePet>(&note, Some(id));
    view! {
        <section class="panel danger">
            <h2>"Delete"</h2>
            {confirm(
                format!("Delete {}…", card.name),
                format!("Delete {} (pet #{id}) for good? Its stock goes with it.", card.name),
                view! {
                    <ActionForm action=delete attr:class="inline">
                        <input type="hidden" name="id" value=id/>
                        <button type="submit" class="danger">{format!("Yes, delete {}", card.name)}</button>
                    </ActionForm>
                },
            )}
            <FormOutcome result=delete.value().into() done="Deleted." note=deleted_note/>
        </section>
    }
}

#[component]
fn CategoryPicker(
    options: Vec<CategorySummary>,
    selected: Option<i64>,
    #[prop(into)] invalid: Signal<bool>,
) -> impl IntoView {
    view! {
        <label>"Category"
            <select name="category_id" required aria-invalid=move || invalid.get().to_string()>
                <option value="" selected=selected.is_none()>"Choose…"</option>
                {options.into_iter().map(|c| view! {
                    <option value=c.id selected=selected == Some(c.id)>{c.name}</option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// The status to set; by default none (a new pet is `available`, an edited one keeps
/// its status, `current`). `chosen` is what was picked before a refusal.
#[component]
fn StatusPicker(current: Option<PetStatus>, chosen: Option<String>) -> impl IntoView {
    let chosen = chosen.unwrap_or_default();
    view! {
        <label>"Status"
            <select name="status">
                <option value="" selected=chosen.is_empty()>
                    {match current {
                        Some(status) => format!("Unchanged ({})", status.label()),
                        None => "Available (the default)".to_owned(),
                    }}
                </option>
                {PetStatus::VARIANTS.iter().copied().map(|status| view! {
                    <option value=status.as_str() selected=chosen == status.as_str()>{status.label()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}
