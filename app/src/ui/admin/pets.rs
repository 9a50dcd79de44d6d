//! Pets: find, create, edit (name, category, status) and delete.

use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::{FormOutcome, NameField, emptied_on_success, invalid, last_answer};
use crate::model::{CategorySummary, PetCard, PetStatus};
use crate::server_fns::flash::Flash;
use crate::server_fns::{DeletePet, SavePet, catalog, categories, pet};
use crate::ui::data;
use crate::ui::widgets::{Confirm, ErrorNotice, PageTitle, StatusBadge, flash, query_string};

#[component]
pub fn PetsConsole() -> impl IntoView {
    let query = use_query_map();
    let (q, cursor) = query.with_untracked(|query| (query.get("q"), query.get("cursor")));
    view! {
        <PageTitle text="Staff: pets"/>
        <PetsConsoleIsland q cursor sent=flash()/>
    }
}

/// The console page itself: a new pet shows in the list at once, and the form is
/// emptied for the next one. `sent` is what a form sent without JavaScript did.
#[island]
fn PetsConsoleIsland(q: Option<String>, cursor: Option<String>, sent: Option<Flash>) -> impl IntoView {
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
    let result = last_answer(save, sent.as_ref().and_then(|sent| sent.outcome_of::<SavePet>(None)));
    let typed = |field: &str| sent.as_ref().and_then(|sent| sent.typed::<SavePet>(None, field));
    let (name, category, status) = (typed("name"), typed("category_id"), typed("status"));
    let form = emptied_on_success(save);
    // After "Delete" on a pet's page, the browser comes back here.
    let deleted = sent.as_ref().and_then(|sent| sent.outcome_of_any::<DeletePet>()).and_then(|(id, outcome)| {
        outcome.ok().map(|()| view! { <p class="notice notice-success" role="status">{format!("Pet #{id} was deleted.")}</p> })
    });

    view! {
        <h1>"Pets"</h1>
        {deleted}
        <section class="panel" aria-labelledby="new-pet">
            <h2 id="new-pet">"New pet"</h2>
            <Suspense fallback=|| ()>
                {move || {
                    let (name, category, status) = (name.clone(), category.clone(), status.clone());
                    Suspend::new(async move {
                        let options = category_list.await.unwrap_or_default();
                        let category = category.and_then(|c| c.parse().ok());
                        view! {
                            <ActionForm action=save node_ref=form attr:class="row-form">
                                <NameField invalid=move || invalid(&result.get(), "name") value=name/>
                                <CategoryPicker options selected=category result/>
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
                _ => view! { <FormOutcome result done=""/> }.into_any(),
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
    view! {
        <PageTitle text="Staff: edit pet"/>
        <PetEditorIsland id sent=flash()/>
    }
}

/// The editor itself: saved in place; deleting (after a confirmation) goes back to the
/// list, which says so.
#[island]
fn PetEditorIsland(id: i64, sent: Option<Flash>) -> impl IntoView {
    let save = ServerAction::<SavePet>::new();
    let delete = ServerAction::<DeletePet>::new();
    let card = data::resource(move || (id, save.version().get()), |(id, _)| pet(id));
    let category_list = data::resource(|| (), |_| categories());
    let result = last_answer(save, sent.as_ref().and_then(|sent| sent.outcome_of::<SavePet>(Some(id))));
    let deleted = last_answer(delete, sent.as_ref().and_then(|sent| sent.outcome_of::<DeletePet>(Some(id))));
    let typed = |field: &str| sent.as_ref().and_then(|sent| sent.typed::<SavePet>(Some(id), field));
    let (typed_name, typed_category, typed_status) = (typed("name"), typed("category_id"), typed("status"));

    view! {
        <p class="crumbs"><a href="/admin/pets">"Pets"</a></p>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (typed_name, typed_category, typed_status) = (typed_name.clone(), typed_category.clone(), typed_status.clone());
                Suspend::new(async move {
                    let card = match card.await {
                        Ok(card) => card,
                        Err(error) => return view! { <ErrorNotice error/> }.into_any(),
                    };
                    let options = category_list.await.unwrap_or_default();
                    let name = typed_name.unwrap_or(card.name.clone());
                    let category = typed_category.and_then(|c| c.parse().ok()).unwrap_or(card.category_id);
                    view! {
                        <h1>{format!("Edit {}", card.name.clone())}</h1>
                        <section class="panel">
                            <ActionForm action=save attr:class="row-form">
                                <input type="hidden" name="id" value=card.id/>
                                <NameField invalid=move || invalid(&result.get(), "name") value=Some(name)/>
                                <CategoryPicker options selected=Some(category) result/>
                                <StatusPicker current=Some(card.status) chosen=typed_status/>
                                <button type="submit">"Save"</button>
                            </ActionForm>
                            <FormOutcome result done="Saved."/>
                            <p class="meta">{format!("{} in stock. Change stock on the ", card.quantity)}
                                <a href="/admin/inventory">"inventory"</a>" page."</p>
                        </section>
                        <section class="panel danger">
                            <h2>"Delete"</h2>
                            <Confirm summary=format!("Delete {}…", card.name)
                                question=format!("Delete {} (pet #{}) for good? Its stock goes with it.", card.name, card.id)>
                                <ActionForm action=delete attr:class="inline">
                                    <input type="hidden" name="id" value=card.id/>
                                    <button type="submit" class="danger">{format!("Yes, delete {}", card.name)}</button>
                                </ActionForm>
                            </Confirm>
                            <FormOutcome result=deleted done="Deleted."/>
                        </section>
                    }
                    .into_any()
                })
            }}
        </Suspense>
    }
}

#[component]
fn CategoryPicker<T: Clone + Send + Sync + 'static>(
    options: Vec<CategorySummary>,
    selected: Option<i64>,
    result: Signal<Option<Result<T, crate::error::AppError>>>,
) -> impl IntoView {
    view! {
        <label>"Category"
            <select name="category_id" required
                aria-invalid=move || invalid(&result.get(), "categoryId").to_string()>
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
