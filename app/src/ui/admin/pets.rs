//! Pets: find, create, edit (name, category, status) and delete.

use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::{FormOutcome, NameField, emptied_on_success, invalid};
use crate::model::{CategorySummary, PetCard, PetStatus};
use crate::server_fns::{DeletePet, SavePet, catalog, categories, pet};
use crate::ui::data;
use crate::ui::note::{Done, Note, NoteView, from_flash};
use crate::ui::widgets::{ErrorNotice, PageTitle, StatusBadge, confirm, query_string};

#[component]
pub fn PetsConsole() -> impl IntoView {
    let query = use_query_map();
    let (q, cursor) = query.with_untracked(|query| (query.get("q"), query.get("cursor")));
    let note = from_flash(|flash| {
        flash
            .note::<SavePet>(|pet, _| {
                Done::new(format!("Created {} (pet #{}).", pet.name, pet.id))
                    .link(format!("/admin/pets/{}", pet.id), "Edit it")
                    .link(format!("/pets/{}", pet.id), "See it in the shop")
            })
            .or_else(|| flash.note::<DeletePet>(|(), id| Done::new(format!("Pet #{} was deleted.", id.unwrap_or(0)))))
    });
    view! {
        <PageTitle text="Staff: pets"/>
        <PetsConsoleIsland q cursor note/>
    }
}

/// The console page itself: a new pet shows in the list at once, and the form is
/// emptied for the next one. `note` is what a form sent without JavaScript did (a pet
/// created or refused here, or deleted on its own page).
#[island]
fn PetsConsoleIsland(q: Option<String>, cursor: Option<String>, note: Option<Note>) -> impl IntoView {
    let search = (q, cursor);
    let save = ServerAction::<SavePet>::new();
    let pets = data::resource(
        {
            let search = search.clone();
            move || (search.clone(), save.version().get())
        },
        |((q, cursor), _)| catalog(None, None, q, cursor),
    );
    let category_list = data::resource(|| (), |_| categories());
    let result = save.value();
    let created = Note::for_form::<SavePet>(&note, None);
    let typed = |field: &str| created.as_ref().and_then(|note| note.typed(field));
    let (name, category, status) = (typed("name"), typed("category_id"), typed("status"));
    let form = emptied_on_success(save);
    let blamed = created.clone();
    // After "Delete" on a pet's page, the browser comes back here.
    let deleted = note
        .filter(|note| note.form.starts_with(<DeletePet as leptos::server_fn::ServerFn>::PATH))
        .map(|note| view! { <div class="notice-line"><NoteView note/></div> });

    view! {
        <h1>"Pets"</h1>
        {deleted}
        <section class="panel" aria-labelledby="new-pet">
            <h2 id="new-pet">"New pet"</h2>
            <Suspense fallback=|| ()>
                {move || {
                    let (name, category, status) = (name.clone(), category.clone(), status.clone());
                    let blamed = blamed.clone();
                    Suspend::new(async move {
                        let options = category_list.await.unwrap_or_default();
                        let category = category.and_then(|c| c.parse().ok());
                        view! {
                            <ActionForm action=save node_ref=form attr:class="row-form">
                                <NameField invalid={
                                    let blamed = blamed.clone();
                                    move || invalid(&result.get(), &blamed, "name")
                                } value=name/>
                                <CategoryPicker options selected=category invalid=move || invalid(&result.get(), &blamed, "categoryId")/>
                                <StatusPicker current=None chosen=status/>
                                <button type="submit">"Create pet"</button>
                            </ActionForm>
                        }
                    })
                }}
            </Suspense>
            {move || match result.get() {
                Some(Ok(pet)) => view! {
                    <p class="form-done" role="status">
                        {format!("Created {} (pet #{}). ", pet.name, pet.id)}
                        <a href=format!("/admin/pets/{}", pet.id)>"Edit it"</a>" · "
                        <a href=format!("/pets/{}", pet.id)>"See it in the shop"</a>
                    </p>
                }.into_any(),
                _ => view! { <FormOutcome result=result.into() done="" note=created.clone()/> }.into_any(),
            }}
        </section>

        <form class="filters" method="get" action="/admin/pets" role="search" aria-label="Find pets">
            <label class="search">"Name"
                <input type="search" name="q" maxlength="100"
                    value=search.0.clone().unwrap_or_default()/>
            </label>
            <button type="submit">"Find"</button>
        </form>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let q = search.0.clone();
                Suspend::new(async move {
                    match pets.await {
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                        Ok(page) => {
                            let next = page.next_cursor.map(|cursor| {
                                format!("/admin/pets{}", query_string([("q", q), ("cursor", Some(cursor))]))
                            });
                            view! {
                                <PetTable pets=page.items/>
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
fn PetTable(pets: Vec<PetCard>) -> impl IntoView {
    if pets.is_empty() {
        return view! { <p class="empty">"No pets match. " <a href="/admin/pets">"Show all"</a></p> }.into_any();
    }
    view! {
        <table class="table responsive">
            <thead><tr>
                <th scope="col" class="number">"Id"</th><th scope="col">"Name"</th><th scope="col">"Category"</th>
                <th scope="col">"Status"</th><th scope="col" class="number">"Stock"</th>
            </tr></thead>
            <tbody>
                {pets.into_iter().map(|pet| view! {
                    <tr data-pet-id=pet.id>
                        <td data-label="Id" class="number">{pet.id}</td>
                        <td data-label="Name"><a href=format!("/admin/pets/{}", pet.id)>{pet.name}</a></td>
                        <td data-label="Category">{pet.category_name}</td>
                        <td data-label="Status"><StatusBadge status=pet.status/></td>
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
    let params = use_params_map();
    let id = params.with_untracked(|params| params.get("id").and_then(|raw| raw.parse::<i64>().ok()).unwrap_or(0));
    let note = from_flash(|flash| {
        flash.note::<SavePet>(|_, _| Done::new("Saved.")).or_else(|| flash.note::<DeletePet>(|(), _| Done::new("Deleted.")))
    });
    view! {
        <PageTitle text="Staff: edit pet"/>
        <PetEditorIsland id note/>
    }
}

/// The editor itself: saved in place; deleting (after a confirmation) goes back to the
/// list, which says so.
#[island]
fn PetEditorIsland(id: i64, note: Option<Note>) -> impl IntoView {
    let save = ServerAction::<SavePet>::new();
    let delete = ServerAction::<DeletePet>::new();
    let card = data::resource(move || (id, save.version().get()), |(id, _)| pet(id));
    let category_list = data::resource(|| (), |_| categories());
    let (result, deleted) = (save.value(), delete.value());
    let (saved_note, deleted_note) = (Note::for_form::<SavePet>(&note, Some(id)), Note::for_form::<DeletePet>(&note, Some(id)));
    let typed = |field: &str| saved_note.as_ref().and_then(|note| note.typed(field));
    let (typed_name, typed_category, typed_status) = (typed("name"), typed("category_id"), typed("status"));

    view! {
        <p class="crumbs"><a href="/admin/pets">"Pets"</a></p>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (typed_name, typed_category, typed_status) = (typed_name.clone(), typed_category.clone(), typed_status.clone());
                let (saved_note, deleted_note) = (saved_note.clone(), deleted_note.clone());
                Suspend::new(async move {
                    let card = match card.await {
                        Ok(card) => card,
                        Err(error) => return view! { <ErrorNotice error/> }.into_any(),
                    };
                    let options = category_list.await.unwrap_or_default();
                    let name = typed_name.unwrap_or(card.name.clone());
                    let category = typed_category.and_then(|c| c.parse().ok()).unwrap_or(card.category_id);
                    let (blame_name, blame_category) = (saved_note.clone(), saved_note.clone());
                    view! {
                        <h1>{format!("Edit {}", card.name.clone())}</h1>
                        <section class="panel">
                            <ActionForm action=save attr:class="row-form">
                                <input type="hidden" name="id" value=card.id/>
                                <NameField invalid=move || invalid(&result.get(), &blame_name, "name") value=Some(name)/>
                                <CategoryPicker options selected=Some(category)
                                    invalid=move || invalid(&result.get(), &blame_category, "categoryId")/>
                                <StatusPicker current=Some(card.status) chosen=typed_status/>
                                <button type="submit">"Save"</button>
                            </ActionForm>
                            <FormOutcome result=result.into() done="Saved." note=saved_note.clone()/>
                            <p class="meta">{format!("{} in stock. Change stock on the ", card.quantity)}
                                <a href="/admin/inventory">"inventory"</a>" page."</p>
                        </section>
                        <section class="panel danger">
                            <h2>"Delete"</h2>
                            {confirm(
                                format!("Delete {}…", card.name),
                                format!("Delete {} (pet #{}) for good? Its stock goes with it.", card.name, card.id),
                                view! {
                                    <ActionForm action=delete attr:class="inline">
                                        <input type="hidden" name="id" value=card.id/>
                                        <button type="submit" class="danger">{format!("Yes, delete {}", card.name)}</button>
                                    </ActionForm>
                                },
                            )}
                            <FormOutcome result=deleted.into() done="Deleted." note=deleted_note/>
                        </section>
                    }
                    .into_any()
                })
            }}
        </Suspense>
    }
}

#[component]
fn CategoryPicker(options: Vec<CategorySummary>, selected: Option<i64>, #[prop(into)] invalid: Signal<bool>) -> impl IntoView {
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
                        None => "Available (the default)".to_string(),
                    }}
                </option>
                {PetStatus::ALL.into_iter().map(|status| view! {
                    <option value=status.as_str() selected=chosen == status.as_str()>{status.label()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}
