//! Categories: create, rename, describe, delete. A category that still has pets says
//! so and offers no delete (it would be refused: `category_in_use`); an empty one is
//! deleted after a confirmation.

use leptos::prelude::*;

use super::{FormOutcome, NameField, emptied_on_success, invalid};
use crate::model::CategorySummary;
use crate::server_fns::{DeleteCategory, SaveCategory, categories};
use crate::ui::data;
use crate::ui::note::{Done, Note, NoteView, from_flash};
use crate::ui::widgets::{ErrorNotice, PageTitle, confirm};

#[component]
pub fn CategoriesConsole() -> impl IntoView {
    let note = from_flash(|flash| {
        flash
            .note::<SaveCategory>(|category, record| match record {
                Some(_) => Done::new("Saved."),
                None => Done::new(format!("Created {} (category #{}).", category.name, category.id))
                    .link(format!("#category-{}", category.id), "See it below")
                    .link(format!("/?category={}", category.id), "See it in the shop"),
            })
            .or_else(|| {
                flash.note::<DeleteCategory>(|(), id| Done::new(format!("Category #{} was deleted.", id.unwrap_or(0))))
            })
    });
    view! {
        <PageTitle text="Staff: categories"/>
        <CategoriesConsoleIsland note/>
    }
}

/// The console page itself: its forms update the list in place. `note` is what a form
/// sent without JavaScript did.
#[island]
fn CategoriesConsoleIsland(note: Option<Note>) -> impl IntoView {
    let create = ServerAction::<SaveCategory>::new();
    // Bumped by each row when it saves or deletes, so the list is read again.
    let changed = RwSignal::new(0u32);
    let list = data::resource(move || (create.version().get(), changed.get()), |_| categories());
    let result = create.value();
    let created = Note::for_form::<SaveCategory>(&note, None);
    let typed = |field: &str| created.as_ref().and_then(|note| note.typed(field));
    let (name, description) = (typed("name"), typed("description"));
    let form = emptied_on_success(create);
    // A category deleted without JavaScript is gone from the list: say so on top.
    let deleted = note
        .clone()
        .filter(|note| !note.is_refusal() && note.form.starts_with(<DeleteCategory as leptos::server_fn::ServerFn>::PATH));
    let blamed = created.clone();
    view! {
        <h1>"Categories"</h1>
        {deleted.map(|note| view! { <div class="notice-line"><NoteView note/></div> })}
        <section class="panel" aria-labelledby="new-category">
            <h2 id="new-category">"New category"</h2>
            <ActionForm action=create node_ref=form attr:class="row-form">
                <NameField invalid=move || invalid(&result.get(), &blamed, "name") value=name/>
                <label class="grow">"Description"
                    <input type="text" name="description" maxlength="1000" value=description/>
                </label>
                <button type="submit">"Create category"</button>
            </ActionForm>
            {move || match result.get() {
                Some(Ok(category)) => view! {
                    <p class="form-done" role="status">
                        {format!("Created {} (category #{}). ", category.name, category.id)}
                        <a href=format!("#category-{}", category.id)>"See it below"</a>" · "
                        <a href=format!("/?category={}", category.id)>"See it in the shop"</a>
                    </p>
                }.into_any(),
                _ => view! { <FormOutcome result=result.into() done="" note=created.clone()/> }.into_any(),
            }}
        </section>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let note = note.clone();
                Suspend::new(async move {
                    match list.await {
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                        Ok(list) => view! {
                            <ul class="console-list">
                                {list.into_iter().map(|category| view! { <CategoryRow category changed note=note.clone()/> }).collect_view()}
                            </ul>
                        }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

#[component]
fn CategoryRow(category: CategorySummary, changed: RwSignal<u32>, note: Option<Note>) -> impl IntoView {
    let id = category.id;
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
    let (saved, deleted) = (save.value(), delete.value());
    let (saved_note, deleted_note) =
        (Note::for_form::<SaveCategory>(&note, Some(id)), Note::for_form::<DeleteCategory>(&note, Some(id)));
    // After a refusal without JavaScript, what was typed; else what is stored.
    let typed = |field: &str| saved_note.as_ref().and_then(|note| note.typed(field));
    let name = typed("name").unwrap_or(category.name.clone());
    let description = typed("description").or(category.description.clone()).unwrap_or_default();
    let label = format!("Category {}", category.name);
    let blamed = saved_note.clone();
    view! {
        <li class="panel" id=format!("category-{id}") data-category-id=id aria-label=label>
            <ActionForm action=save attr:class="row-form">
                <input type="hidden" name="id" value=id/>
                <label>"Name"
                    <input type="text" name="name" required maxlength="100" value=name
                        aria-invalid=move || invalid(&saved.get(), &blamed, "name").to_string()/>
                </label>
                <label class="grow">"Description"
                    <input type="text" name="description" maxlength="1000" value=description/>
                </label>
                <button type="submit">"Save"</button>
            </ActionForm>
            <FormOutcome result=saved.into() done="Saved." note=saved_note/>
            <div class="row-form">
                {match category.pet_count {
                    0 => view! {
                        <span class="meta">"No pets in it."</span>
                        {confirm(
                            format!("Delete {}…", category.name),
                            format!("Delete the category {} for good?", category.name),
                            view! {
                                <ActionForm action=delete attr:class="inline">
                                    <input type="hidden" name="id" value=id/>
                                    <button type="submit" class="danger">{format!("Yes, delete {}", category.name)}</button>
                                </ActionForm>
                            },
                        )}
                    }.into_any(),
                    // Deleting would be refused: say why, and where to go instead.
                    count => view! {
                        <span class="meta">
                            {if count == 1 {
                                "1 pet is in it: move or delete it before deleting the category. ".to_string()
                            } else {
                                format!("{count} pets are in it: move or delete them before deleting the category. ")
                            }}
                            <a href=format!("/?category={id}")>"See them"</a>
                        </span>
                    }.into_any(),
                }}
            </div>
            <FormOutcome result=deleted.into() done="Deleted." note=deleted_note.filter(Note::is_refusal)/>
        </li>
    }
}
