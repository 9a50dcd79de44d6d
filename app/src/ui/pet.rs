//! One pet: name, category, status and stock.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use super::widgets::{ErrorNotice, StatusBadge, set_status_404};
use crate::error::ErrorCode;
use crate::server_fns::pet;

#[component]
pub fn PetPage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.read().get("id").and_then(|raw| raw.parse::<i64>().ok()).filter(|id| *id > 0);
    let card = Resource::new(id, |id| async move {
        match id {
            Some(id) => pet(id).await.map(Some),
            None => Ok(None),
        }
    });

    view! {
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match card.await {
                    Ok(Some(card)) => view! {
                        <Title text=card.name.clone()/>
                        <article class="pet">
                            <p class="crumbs"><a href="/">"Catalog"</a> " / "
                                <a href=format!("/?category={}", card.category_id)>{card.category_name.clone()}</a>
                            </p>
                            <h1>{card.name.clone()}</h1>
                            <dl class="facts">
                                <dt>"Category"</dt>
                                <dd>{card.category_name}</dd>
                                <dt>"Status"</dt>
                                <dd><StatusBadge status=card.status/></dd>
                                <dt>"In stock"</dt>
                                <dd class="stock">{card.quantity}</dd>
                                <dt>"Pet id"</dt>
                                <dd><code>{card.id}</code></dd>
                            </dl>
                        </article>
                    }
                        .into_any(),
                    Ok(None) => missing().into_any(),
                    Err(error) if error.code == ErrorCode::NotFound => missing().into_any(),
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

fn missing() -> impl IntoView {
    set_status_404();
    view! {
        <Title text="Pet not found"/>
        <section class="notice">
            <h1>"Pet not found"</h1>
            <p>"This pet does not exist (any more). " <a href="/">"Back to the catalog"</a></p>
        </section>
    }
}
