//! The storefront's live stock: the pages' islands follow the store's own event stream
//! (`/live`: the catalog's and the stock's events, for visitors with or without a key),
//! so that a pet that sells out while someone looks at it shows so at once. In the
//! browser only; a page without JavaScript stays as it was drawn.

use leptos::prelude::*;

/// Calls `on_event` with each event's type and data, for as long as the page lives.
/// (The browser reconnects by itself after a dropped connection, sending the last id it
/// had as `Last-Event-ID`; `/live` then sends what it missed, if still in memory.)
#[cfg(feature = "hydrate")]
pub fn follow(on_event: impl Fn(&str, &serde_json::Value) + 'static) {
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;
    let Ok(source) = web_sys::EventSource::new("/live") else { return };
    let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |message: web_sys::MessageEvent| {
        let Some(text) = message.data().as_string() else { return };
        if let Ok(envelope) = serde_json::from_str::<serde_json::Value>(&text) {
            on_event(envelope["type"].as_str().unwrap_or_default(), &envelope["data"]);
        }
    });
    source.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // Both live as long as the page: the browser keeps an open stream, and its handler.
    on_message.forget();
}

/// A pet's stock and status from an `inventory.updated` event's data.
#[cfg(feature = "hydrate")]
pub fn stock_of(data: &serde_json::Value) -> Option<(i64, i64, crate::model::PetStatus)> {
    let status = crate::model::PetStatus::parse(data["status"].as_str()?)?;
    Some((data["petId"].as_i64()?, data["quantity"].as_i64()?, status))
}

/// Keeps the stock and status of the pet cards on the page (`.card[data-pet-id]`, drawn
/// on the server) as the store's events say they are now. Draws nothing itself.
#[island]
pub fn LiveStock() -> impl IntoView {
    #[cfg(feature = "hydrate")]
    Effect::new(|_| {
        follow(|kind, data| {
            if kind != "inventory.updated" {
                return;
            }
            let Some((pet, quantity, status)) = stock_of(data) else { return };
            let document = document();
            let Ok(cards) = document.query_selector_all(&format!(".card[data-pet-id=\"{pet}\"]")) else { return };
            for n in 0..cards.length() {
                let Some(card) =
                    cards.item(n).and_then(|node| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(node).ok())
                else {
                    continue;
                };
                if let Ok(Some(stock)) = card.query_selector(".stock") {
                    stock.set_text_content(Some(&format!("{quantity} in stock")));
                }
                if let Ok(Some(badge)) = card.query_selector(".badge") {
                    badge.set_class_name(&format!("badge badge-{}", status.as_str()));
                    badge.set_text_content(Some(status.label()));
                }
            }
        });
    });
}
