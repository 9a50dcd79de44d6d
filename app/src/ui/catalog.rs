//! The catalog: pet cards with filters (category, status, name search) and paging.
//!
//! The filters are a plain GET form, so the page works without JavaScript; once the
//! WASM runs, a choice made with the pointer applies at once, and one made by keyboard
//! when it is made (Enter, or the Apply button), not at every arrow key.

use leptos::prelude::*;
use strum::VariantArray;

use crate::ui::data;
use crate::ui::widgets::PageTitle;
use leptos_router::hooks::use_query_map;

use super::widgets::{ErrorNotice, StatusBadge, query_string};
use crate::model::{CategorySummary, PetCard, PetStatus};
use crate::server_fns::{catalog, categories};

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct CatalogQuery {
    status: Option<String>,
    category: Option<String>,
    q: Option<String>,
    cursor: Option<String>,
}

impl CatalogQuery {
    /// The catalog URL for these filters; `cursor` picks the page.
    fn url(&self, cursor: Option<String>) -> String {
        format!(
            "/{}",
            query_string([
                ("category", self.category.clone()),
                ("status", self.status.clone()),
                ("q", self.q.clone()),
                ("cursor", cursor),
            ])
        )
    }
}

#[component]
pub fn CatalogPage() -> impl IntoView {
    let query_map = use_query_map();
    let query = Memo::new(move |_| {
        let map = query_map.read();
        let get = |key: &str| map.get(key).filter(|value| !value.is_empty());
        CatalogQuery { status: get("status"), category: get("category"), q: get("q"), cursor: get("cursor") }
    });
    let cards = data::resource(move || query.get(), |q| catalog(q.status, q.category, q.q, q.cursor));
    let category_list = data::resource(|| (), |_| categories());

    view! {
        <PageTitle text="Catalog"/>
        <h1>"Our pets"</h1>
        <Transition fallback=|| view! { <p class="loading">"Loading filters…"</p> }>
            {move || Suspend::new(async move {
                // A failed category list still leaves a usable form (status and name).
                let categories = category_list.await.unwrap_or_default();
                view! { <Filters categories query=query.get_untracked()/> }
            })}
        </Transition>

        <Transition fallback=|| view! { <p class="loading">"Loading pets…"</p> }>
            {move || Suspend::new(async move {
                match cards.await {
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                    Ok(page) => {
                        let current = query.get_untracked();
                        let first_page = current.cursor.is_some().then(|| current.url(None));
                        let next_page = page.next_cursor.clone().map(|cursor| current.url(Some(cursor)));
                        let filtered = current.category.is_some() || current.status.is_some() || current.q.is_some();
                        view! {
                            <PetCards cards=page.items filtered/>
                            <nav class="pager" aria-label="Pages">
                                {first_page.map(|href| view! { <a href=href rel="first">"← First page"</a> })}
                                {next_page.map(|href| view! { <a href=href rel="next">"Next page →"</a> })}
                            </nav>
                        }
                            .into_any()
                    }
                }
            })}
        </Transition>
    }
}

#[component]
fn PetCards(cards: Vec<PetCard>, filtered: bool) -> impl IntoView {
    if cards.is_empty() {
        return if filtered {
            view! { <p class="empty">"No pets match these filters. " <a href="/">"Clear the filters"</a></p> }
                .into_any()
        } else {
            view! { <p class="empty">"No pets yet."</p> }.into_any()
        };
    }
    view! {
        <ul class="cards">
            {cards
                .into_iter()
                .map(|card| {
                    view! {
                        <li class="card" data-pet-id=card.id>
                            <h2><a href=format!("/pets/{}", card.id)>{card.name}</a></h2>
                            <p class="meta">{card.category_name}</p>
                            <p class="meta">
                                <StatusBadge status=card.status/>
                                <span class="stock">{format!("{} in stock", card.quantity)}</span>
                            </p>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

/// The filters: a plain GET form; with JavaScript, a picker chosen with the pointer
/// applies at once (the first page of the new filter). Chosen by keyboard, it waits for
/// Enter or Apply: arrow keys change a closed picker's value (and fire `change`) at
/// every step, and loading a page at each would move focus to its top.
#[island]
fn Filters(categories: Vec<CategorySummary>, query: CatalogQuery) -> impl IntoView {
    let by_keyboard = StoredValue::new(false);
    let apply = {
        let query = query.clone();
        move |field: &'static str, value: String| {
            let mut next = query.clone();
            let value = Some(value).filter(|v| !v.is_empty());
            match field {
                "status" => next.status = value,
                _ => next.category = value,
            }
            let _ = window().location().assign(&next.url(None));
        }
    };
    let on_change = {
        let apply = apply.clone();
        move |field: &'static str| {
            let apply = apply.clone();
            move |ev: leptos::ev::Event| {
                if !by_keyboard.get_value() {
                    apply(field, event_target_value(&ev));
                }
            }
        }
    };
    let on_key = move |field: &'static str| {
        let apply = apply.clone();
        move |ev: leptos::ev::KeyboardEvent| {
            if ev.key() == "Enter" {
                ev.prevent_default();
                apply(field, event_target_value(&ev));
            } else if ev.key() != "Tab" {
                by_keyboard.set_value(true);
            }
        }
    };
    let by_pointer = move |_| by_keyboard.set_value(false);
    view! {
        <form class="filters" method="get" action="/" role="search" aria-label="Filter pets">
            <label>
                "Category"
                <select name="category" on:change=on_change("category") on:keydown=on_key("category")
                    on:pointerdown=by_pointer>
                    <option value="" selected=query.category.is_none()>"All categories"</option>
                    {categories
                        .into_iter()
                        .map(|c| {
                            let id = c.id.to_string();
                            let selected = query.category.as_deref() == Some(id.as_str());
                            view! { <option value=id selected=selected>{c.name}</option> }
                        })
                        .collect_view()}
                </select>
            </label>
            <label>
                "Status"
                <select name="status" on:change=on_change("status") on:keydown=on_key("status")
                    on:pointerdown=by_pointer>
                    <option value="" selected=query.status.is_none()>"Any status"</option>
                    {PetStatus::VARIANTS
                        .iter()
                        .copied()
                        .map(|status| {
                            let selected = query.status.as_deref() == Some(status.as_str());
                            view! { <option value=status.as_str() selected=selected>{status.label()}</option> }
                        })
                        .collect_view()}
                </select>
            </label>
            <label class="search">
                "Name"
                <input type="search" name="q" placeholder="Search by name" maxlength="100"
                    value=query.q.clone().unwrap_or_default()/>
            </label>
            <button type="submit">"Apply"</button>
        </form>
    }
}
