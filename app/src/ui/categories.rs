//! The categories, each with its number of pets and a link to them in the catalog.

use leptos::prelude::*;

use crate::ui::data;
use crate::ui::widgets::PageTitle;

use super::widgets::ErrorNotice;
use crate::server_fns::categories;

#[component]
pub fn CategoriesPage() -> impl IntoView {
    let list = data::resource(|| (), |_| categories());
    view! {
        <PageTitle text="Categories"/>
        <h1>"Categories"</h1>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    Ok(list) if list.is_empty() => view! { <p class="empty">"No categories yet."</p> }.into_any(),
                    Ok(list) => view! {
                        <ul class="cards categories">
                            {list
                                .into_iter()
                                .map(|c| view! {
                                    <li class="card">
                                        <h2><a href=format!("/?category={}", c.id)>{c.name}</a></h2>
                                        {c.description.map(|d| view! { <p>{d}</p> })}
                                        <p class="meta">{match c.pet_count {
                                            1 => "1 pet".to_owned(),
                                            n => format!("{n} pets"),
                                        }}</p>
                                    </li>
                                })
                                .collect_view()}
                        </ul>
                    }
                        .into_any(),
                }
            })}
        </Suspense>
    }
}
