//! Categories: create, rename, describe, delete. The list is drawn on the server; each
//! category's forms are an island. A category that still has pets says so and offers
//! no delete (it would be refused: `category_in_use`); an empty one is deleted after a
//! confirmation.

use leptos::prelude::*;

use super::{FormOutcome, NameField, invalid};
use crate::model::CategorySummary;
use crate::server_fns::{DeleteCategory, SaveCategory, categories};
use crate::ui::data;
use crate::ui::note::{Done, Note, NoteView, from_flash};
use crate::ui::widgets::{ErrorNotice, PageTitle, confirm};

#[component]
pub fn CategoriesConsole() -> impl IntoView {
    let list = data::resource(|| (), |_| categories());
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
    // A category deleted is gone from the list: said on top.
    let deleted = note.clone().filter(|note| !note.is_refusal() && note.is_of::<DeleteCategory>());
    let created = Note::for_form::<SaveCategory>(&note, None);
    view! {
        <PageTitle text="Staff: categories"/>
        <h1>"Categories"</h1>
        {deleted.map(|note| view! { <div class="notice-line"><NoteView note/></div> })}
        <section class="panel" aria-labelledby="new-category">
            <h2 id="new-category">"New category"</h2>
            <NewCategoryForm note=created/>
        </section>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let note = note.clone();
                Suspend::new(async move {
                    match list.await {
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                        Ok(list) => view! {
                            <ul class="console-list">
                                {list.into_iter().map(|category| {
                                    let (id, label) = (category.id, format!("Category {}", category.name));
                                    let note = Note::for_form::<SaveCategory>(&note, Some(id))
                                        .or_else(|| Note::for_form::<DeleteCategory>(&note, Some(id)));
                                    view! {
                                        <li class="panel" id=format!("category-{id}") data-category-id=id
                                            aria-label=label>
                                            <CategoryForms category note/>
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                        }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

/// Creating a category: the page is shown again with it in the list (and a note with
/// links to it); a refusal keeps what was typed.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn NewCategoryForm(note: Option<Note>) -> impl IntoView {
    let create = ServerAction::<SaveCategory>::new();
    let result = create.value();
    let typed = |field: &str| note.as_ref().and_then(|note| note.typed(field));
    let (name, description) = (typed("name"), typed("description"));
    let blamed = note.clone();
    view! {
        <ActionForm action=create attr:class="row-form">
            <NameField invalid=move || invalid(&result.get(), &blamed, "name") value=name/>
            <label class="grow">"Description"
                <input type="text" name="description" maxlength="1000" value=description/>
            </label>
            <button type="submit" disabled=move || create.pending().get()>"Create category"</button>
        </ActionForm>
        <FormOutcome result=result.into() done="" note/>
    }
}

/// One category's forms: rename and describe (in place), and delete (after a
/// confirmation; the page is shown again without it). `note` is what one of them did.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn CategoryForms(category: CategorySummary, note: Option<Note>) -> impl IntoView {
    let id = category.id;
    let save = ServerAction::<SaveCategory>::new();
    let delete = ServerAction::<DeleteCategory>::new();
    let (saved, deleted) = (save.value(), delete.value());
    let (saved_note, deleted_note) =
        (Note::for_form::<SaveCategory>(&note, Some(id)), Note::for_form::<DeleteCategory>(&note, Some(id)));
    // After a refusal, what was typed; else what is stored.
    let typed = |field: &str| saved_note.as_ref().and_then(|note| note.typed(field));
    let name = typed("name").unwrap_or(category.name.clone());
    let description = typed("description").or(category.description.clone()).unwrap_or_default();
    let blamed = saved_note.clone();
    view! {
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
                            "1 pet is in it: move or delete it before deleting the category. ".to_owned()
                        } else {
                            format!("{count} pets are in it: move or delete them before deleting the category. ")
                        }}
                        <a href=format!("/?category={id}")>"See them"</a>
                    </span>
                }.into_any(),
            }}
        </div>
        <FormOutcome result=deleted.into() done="Deleted." note=deleted_note/>
    }
}
