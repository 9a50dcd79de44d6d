//! Categories: create, rename, describe, delete. A category that still has pets says
//! so, and the refusal (`category_in_use`) is shown on its row.

use leptos::prelude::*;

use crate::ui::data;
use crate::ui::widgets::PageTitle;

use super::{FormOutcome, NameField, invalid};
use crate::model::CategorySummary;
use crate::server_fns::{DeleteCategory, SaveCategory, categories};
use crate::ui::widgets::ErrorNotice;

#[component]
pub fn CategoriesConsole() -> impl IntoView {
    view! {
        <PageTitle text="Staff: categories"/>
        <CategoriesConsoleIsland/>
    }
}

/// The console page itself: its forms update the list in place.
#[island]
fn CategoriesConsoleIsland() -> impl IntoView {
    let create = ServerAction::<SaveCategory>::new();
    // Bumped by each row when it saves or deletes, so the list is read again.
    let changed = RwSignal::new(0u32);
    let list = data::resource(move || (create.version().get(), changed.get()), |_| categories());
    let result = create.value();
    view! {
        <h1>"Categories"</h1>
        <section class="panel" aria-labelledby="new-category">
            <h2 id="new-category">"New category"</h2>
            <ActionForm action=create attr:class="row-form">
                <NameField invalid=move || invalid(&result.get(), "name")/>
                <label class="grow">"Description"
                    <input type="text" name="description" maxlength="1000"/>
                </label>
                <button type="submit">"Create category"</button>
            </ActionForm>
            <FormOutcome result=result.into() done="Category created."/>
        </section>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    Ok(list) => view! {
                        <ul class="console-list">
                            {list.into_iter().map(|category| view! { <CategoryRow category changed/> }).collect_view()}
                        </ul>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn CategoryRow(category: CategorySummary, changed: RwSignal<u32>) -> impl IntoView {
    let save = ServerAction::<SaveCategory>::new();
    let delete = ServerAction::<DeleteCategory>::new();
    Effect::new(move |previous: Option<(usize, usize)>| {
        let now = (save.version().get(), delete.version().get());
        // A successful delete takes the row away; a save keeps it as typed.
        if previous.is_some_and(|p| p.1 != now.1) && matches!(delete.value().get_untracked(), Some(Ok(()))) {
            changed.update(|n| *n += 1);
        }
        now
    });
    let in_use = match category.pet_count {
        0 => None,
        1 => Some("1 pet is in it: move or delete it first".to_string()),
        n => Some(format!("{n} pets are in it: move or delete them first")),
    };
    let label = format!("Category {}", category.name);
    let (id, name, description) =
        (category.id, category.name.clone(), category.description.clone().unwrap_or_default());
    let delete_label = format!("Delete {}", category.name);
    view! {
        <li class="panel" data-category-id=category.id aria-label=label>
            <ActionForm action=save attr:class="row-form">
                <input type="hidden" name="id" value=id/>
                <label>"Name"
                    <input type="text" name="name" required maxlength="100" value=name/>
                </label>
                <label class="grow">"Description"
                    <input type="text" name="description" maxlength="1000"
                        value=description/>
                </label>
                <button type="submit">"Save"</button>
            </ActionForm>
            <FormOutcome result=save.value().into() done="Saved."/>
            <div class="row-form">
                <span class="meta">{in_use.clone().unwrap_or_else(|| "No pets in it.".into())}</span>
                <ActionForm action=delete attr:class="inline">
                    <input type="hidden" name="id" value=id/>
                    <button type="submit" class="danger">{delete_label}</button>
                </ActionForm>
            </div>
            <FormOutcome result=delete.value().into() done="Deleted."/>
        </li>
    }
}
