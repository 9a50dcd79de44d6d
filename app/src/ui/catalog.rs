//! The catalog: pet cards (photo, name, price, a line of description) with filters
//! (category, status, a search of names, categories and descriptions), a sort and paging.
//!
//! The filters are a plain GET form, so the page works without JavaScript; once the
//! WASM runs, a choice made with the pointer applies at once, and one made by keyboard
//! when it is made (Enter, or the Apply button), not at every arrow key.

use leptos::prelude::*;
use strum::VariantArray;

use crate::ui::data;
use crate::ui::widgets::PageTitle;
use leptos_router::hooks::use_query_map;

use super::photo::{Loading, PetPhoto};
use super::widgets::{ErrorNotice, StatusBadge, keep_out_of_caches, price_text, query_string, store_currency};
use crate::model::{CategorySummary, Currency, PetCard, PetSort, PetStatus};
use crate::server_fns::{catalog, categories};

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct CatalogQuery {
    status: Option<String>,
    category: Option<String>,
    q: Option<String>,
    sort: Option<String>,
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
                ("sort", self.sort.clone()),
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
        CatalogQuery {
            status: get("status"),
            category: get("category"),
            q: get("q"),
            sort: get("sort"),
            cursor: get("cursor"),
        }
    });
    let cards = data::resource(move || query.get(), |q| catalog(q.status, q.category, q.q, q.sort, q.cursor));
    let category_list = data::resource(|| (), |_| categories());
    let currency = store_currency();

    view! {
        <PageTitle text="Catalog"/>
        <h1>"Our pets"</h1>
        <Transition fallback=|| view! { <p class="loading">"Loading filters…"</p> }>
            {move || Suspend::new(async move {
                // A failed category list still leaves a usable form (status and name),
                // on a page that is not kept.
                let categories = category_list.await.unwrap_or_else(|_| {
                    keep_out_of_caches();
                    Vec::new()
                });
                view! { <Filters categories query=query.get_untracked()/> }
            })}
        </Transition>

        <Transition fallback=|| view! { <p class="loading">"Loading pets…"</p> }>
            {move || {
                let currency = currency.clone();
                Suspend::new(async move {
                    match cards.await {
                        Err(error) => view! { <ErrorNotice error/> }.into_any(),
                        Ok(page) => {
                            let current = query.get_untracked();
                            let first_page = current.cursor.is_some().then(|| current.url(None));
                            let next_page = page.next_cursor.clone().map(|cursor| current.url(Some(cursor)));
                            let filtered =
                                current.category.is_some() || current.status.is_some() || current.q.is_some();
                            view! {
                                <PetCards cards=page.items filtered currency/>
                                <super::live::LiveStock/>
                                <nav class="pager" aria-label="Pages">
                                    {first_page.map(|href| view! { <a href=href rel="first">"← First page"</a> })}
                                    {next_page.map(|href| view! { <a href=href rel="next">"Next page →"</a> })}
                                </nav>
                            }
                            .into_any()
                        }
                    }
                })
            }}
        </Transition>
    }
}

#[component]
fn PetCards(cards: Vec<PetCard>, filtered: bool, currency: Currency) -> impl IntoView {
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
            {cards.into_iter().map(|card| view! { <CardItem card currency=currency.clone() heading="h2"/> }).collect_view()}
        </ul>
    }
    .into_any()
}

/// One pet's card: photo, name (the card's one link), price, category, status and
/// stock, and the start of its description. `heading` is the level its name is, in the
/// page's outline (`h2` in the catalog, `h3` under the pet page's own headings).
#[component]
pub fn CardItem(card: PetCard, currency: Currency, heading: &'static str) -> impl IntoView {
    let href = format!("/pets/{}", card.id);
    let name = card.name.clone();
    let link = view! { <a href=href>{card.name.clone()}</a> };
    let title = match heading {
        "h3" => view! { <h3 class="card-title">{link}</h3> }.into_any(),
        _ => view! { <h2 class="card-title">{link}</h2> }.into_any(),
    };
    view! {
        <li class="card" data-pet-id=card.id>
            <PetPhoto photo=card.photo() name sizes="(max-width: 560px) 50vw, (max-width: 1100px) 33vw, 260px"
                loading=Loading::Lazy/>
            <div class="card-body">
                {title}
                <p class="price">{price_text(&currency, card.price)}</p>
                <p class="meta">
                    <span>{card.category_name.clone()}</span>
                    <StatusBadge status=card.status/>
                    <span class="stock">{format!("{} in stock", card.quantity)}</span>
                </p>
                {card.description.as_deref().map(|text| view! { <p class="blurb">{blurb(text, BLURB_CHARS)}</p> })}
            </div>
        </li>
    }
}

/// How much of a description a card shows.
const BLURB_CHARS: usize = 110;

/// The start of `text`, cut at a word to at most `max` characters (and an ellipsis);
/// its first paragraph only.
pub fn blurb(text: &str, max: usize) -> String {
    let first = text.split("\n\n").next().unwrap_or(text).split_whitespace().collect::<Vec<_>>().join(" ");
    if first.chars().count() <= max {
        return first;
    }
    let cut: String = first.chars().take(max).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(words, _)| words);
    format!("{}…", cut.trim_end_matches([',', '.', ';', ':']))
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
                "sort" => next.sort = value,
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
    let sort = query.sort.clone().unwrap_or_default();
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
            <label>
                "Sort"
                <select name="sort" on:change=on_change("sort") on:keydown=on_key("sort") on:pointerdown=by_pointer>
                    {PetSort::VARIANTS
                        .iter()
                        .copied()
                        .map(|choice| {
                            // The default order has no value: its address stays the plain one.
                            let value = if choice == PetSort::Added { "" } else { choice.as_str() };
                            view! { <option value=value selected=sort == value>{choice.label()}</option> }
                        })
                        .collect_view()}
                </select>
            </label>
            <label class="search">
                "Search"
                <input type="search" name="q" placeholder="Name, kind or a word about it" maxlength="100"
                    value=query.q.clone().unwrap_or_default()/>
            </label>
            <button type="submit">"Apply"</button>
        </form>
    }
}

#[cfg(test)]
mod tests {
    use super::blurb;

    #[test]
    fn a_blurb_is_the_first_paragraph_cut_at_a_word() {
        assert_eq!(blurb("Short and sweet.", 110), "Short and sweet.");
        assert_eq!(blurb("One line\nwrapped.\n\nSecond paragraph.", 110), "One line wrapped.");
        assert_eq!(blurb("A friendly, curious dog who loves walks", 20), "A friendly, curious…");
    }
}
