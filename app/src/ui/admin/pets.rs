//! Pets: find, create, edit (name, category, status) and delete.

use leptos::prelude::*;

use crate::ui::data;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::{FormOutcome, NameField, invalid};
use crate::model::{CategorySummary, PetCard, PetStatus};
use crate::server_fns::{DeletePet, SavePet, catalog, categories, pet};
use crate::ui::widgets::{ErrorNotice, StatusBadge, query_string};

#[component]
pub fn PetsConsole() -> impl IntoView {
    let query = use_query_map();
    let (q, cursor) = query.with_untracked(|query| (query.get("q"), query.get("cursor")));
    view! {
        <Title text="Staff: pets"/>
        <PetsConsoleIsland q cursor/>
    }
}

/// The console page itself: a new pet shows in the list at once.
#[island]
fn PetsConsoleIsland(q: Option<String>, cursor: Option<String>) -> impl IntoView {
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

    view! {
        <h1>"Pets"</h1>
        <section class="panel" aria-labelledby="new-pet">
            <h2 id="new-pet">"New pet"</h2>
            <Suspense fallback=|| ()>
                {move || Suspend::new(async move {
                    let options = category_list.await.unwrap_or_default();
                    view! {
                        <ActionForm action=save attr:class="row-form">
                            <NameField invalid=move || invalid(&result.get(), "name")/>
                            <CategoryPicker options selected=None result=result.into()/>
                            <StatusPicker current=None/>
                            <button type="submit">"Create pet"</button>
                        </ActionForm>
                    }
                })}
            </Suspense>
            <FormOutcome result=result.into() done="Pet created."/>
        </section>

        <form class="filters" method="get" action="/admin/pets" role="search" aria-label="Find pets">
            <label>"Name"
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
        return view! { <p class="empty">"No pets match."</p> }.into_any();
    }
    view! {
        <table class="table">
            <thead><tr>
                <th scope="col">"Id"</th><th scope="col">"Name"</th><th scope="col">"Category"</th>
                <th scope="col">"Status"</th><th scope="col">"Stock"</th>
            </tr></thead>
            <tbody>
                {pets.into_iter().map(|pet| view! {
                    <tr data-pet-id=pet.id>
                        <td>{pet.id}</td>
                        <td><a href=format!("/admin/pets/{}", pet.id)>{pet.name}</a></td>
                        <td>{pet.category_name}</td>
                        <td><StatusBadge status=pet.status/></td>
                        <td>{pet.quantity}</td>
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
        <Title text="Staff: edit pet"/>
        <PetEditorIsland id/>
    }
}

/// The editor itself: saved in place; deleting goes back to the list (the server
/// function redirects).
#[island]
fn PetEditorIsland(id: i64) -> impl IntoView {
    let save = ServerAction::<SavePet>::new();
    let delete = ServerAction::<DeletePet>::new();
    let card = data::resource(move || (id, save.version().get()), |(id, _)| pet(id));
    let category_list = data::resource(|| (), |_| categories());
    let result = save.value();

    view! {
        <p class="crumbs"><a href="/admin/pets">"Pets"</a></p>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let card = match card.await {
                    Ok(card) => card,
                    Err(error) => return view! { <ErrorNotice error/> }.into_any(),
                };
                let options = category_list.await.unwrap_or_default();
                let (id, name, category_id, status) = (card.id, card.name.clone(), card.category_id, card.status);
                view! {
                    <h1>{format!("Edit {}", card.name.clone())}</h1>
                    <section class="panel">
                        <ActionForm action=save attr:class="row-form">
                            <input type="hidden" name="id" value=id/>
                            <NameField invalid=move || invalid(&result.get(), "name") value=name.clone()/>
                            <CategoryPicker options selected=Some(category_id) result=result.into()/>
                            <StatusPicker current=Some(status)/>
                            <button type="submit">"Save"</button>
                        </ActionForm>
                        <FormOutcome result=result.into() done="Saved."/>
                        <p class="meta">{format!("{} in stock. Change stock on the ", card.quantity)}
                            <a href="/admin/inventory">"inventory"</a>" page."</p>
                    </section>
                    <section class="panel danger">
                        <h2>"Delete"</h2>
                        <ActionForm action=delete attr:class="inline">
                            <input type="hidden" name="id" value=id/>
                            <button type="submit" class="danger">{format!("Delete {}", card.name.clone())}</button>
                        </ActionForm>
                        <FormOutcome result=delete.value().into() done="Deleted."/>
                    </section>
                }
                .into_any()
            })}
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
/// its status, `current`).
#[component]
fn StatusPicker(current: Option<PetStatus>) -> impl IntoView {
    view! {
        <label>"Status"
            <select name="status">
                <option value="" selected=true>
                    {match current {
                        Some(status) => format!("unchanged ({status})"),
                        None => "available (default)".to_string(),
                    }}
                </option>
                {PetStatus::ALL.into_iter().map(|status| view! {
                    <option value=status.as_str()>{status.as_str()}</option>
                }).collect_view()}
            </select>
        </label>
    }
}
