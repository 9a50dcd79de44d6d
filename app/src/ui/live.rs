//! The storefront's live stock: the pages' islands follow the store's own event stream
//! (`/live`: the catalog's and the stock's events, for visitors with or without a key),
//! so that a pet that sells out while someone looks at it shows so at once. In the
//! browser only; a page without JavaScript stays as it was drawn.

use leptos::prelude::*;

/// Calls `on_event` with each event's type and data, for as long as the page lives.
///
/// A page holds one stream, whichever of its islands follow it (a pet page's facts and
/// its "More in" cards alike): a visitor's tabs, each one stream, fit well inside an
/// address's share (`server::streams::LIVE`). The browser reconnects by itself after a
/// dropped connection, sending the last id it had as `Last-Event-ID`. When it gives up
/// (the stream was refused: too many from one network, the server restarting) the page
/// tries again after 1, 2, 4 … up to 30 seconds, each with jitter so that many pages do
/// not come back at once. Whenever the stream opens after anything went wrong, events
/// may have been missed: the page reads the stock it shows again (`stock_now`) and hands
/// it to the islands as `inventory.updated` events.
#[cfg(feature = "hydrate")]
pub fn follow(on_event: impl Fn(&str, &EventData) + 'static) {
    stream::LISTENERS.with(|listeners| listeners.borrow_mut().push(std::rc::Rc::new(on_event)));
    if !stream::STARTED.replace(true) {
        stream::open();
    }
}

#[cfg(feature = "hydrate")]
mod stream {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;

    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    use super::{Envelope, EventData};

    type Listener = Rc<dyn Fn(&str, &EventData)>;

    thread_local! {
        pub static LISTENERS: RefCell<Vec<Listener>> = const { RefCell::new(Vec::new()) };
        pub static STARTED: Cell<bool> = const { Cell::new(false) };
        /// Attempts since the stream last opened: the back-off's exponent.
        static FAILURES: Cell<u32> = const { Cell::new(0) };
        /// Whether anything went wrong since the page was drawn, or since the stream
        /// last opened and read the stock again.
        static MISSED: Cell<bool> = const { Cell::new(false) };
    }

    /// The longest wait between two attempts.
    const MAX_WAIT_MS: f64 = 30_000.0;

    fn tell(kind: &str, data: &EventData) {
        // A copy: a listener may be added while the others are told.
        let listeners = LISTENERS.with(|listeners| listeners.borrow().clone());
        for listener in listeners {
            listener(kind, data);
        }
    }

    pub fn open() {
        let Ok(source) = web_sys::EventSource::new("/live") else { return };
        let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |message: web_sys::MessageEvent| {
            let Some(text) = message.data().as_string() else { return };
            if let Ok(envelope) = serde_json::from_str::<Envelope>(&text) {
                tell(&envelope.kind, &envelope.data);
            }
        });
        let on_open = Closure::<dyn FnMut()>::new(move || {
            FAILURES.set(0);
            if MISSED.replace(false) {
                read_again();
            }
        });
        let closed = source.clone();
        let on_error = Closure::<dyn FnMut()>::new(move || {
            MISSED.set(true);
            // CONNECTING: the browser tries again by itself. CLOSED: it gave up.
            if closed.ready_state() == web_sys::EventSource::CLOSED {
                closed.close();
                let failures = FAILURES.get();
                FAILURES.set(failures.saturating_add(1));
                let wait = (1_000.0 * 2f64.powi(failures.min(5) as i32)).min(MAX_WAIT_MS);
                let wait = wait * (0.5 + js_sys::Math::random());
                let again = Closure::once_into_js(open);
                let _ = web_sys::window().map(|window| {
                    window.set_timeout_with_callback_and_timeout_and_arguments_0(again.unchecked_ref(), wait as i32)
                });
            }
        });
        source.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        // They live as long as the stream, which lives as long as the page (a closed
        // one's are kept too: a few hundred bytes an attempt, at most one a 30 s).
        on_message.forget();
        on_open.forget();
        on_error.forget();
    }

    /// Reads the stock of every pet the page shows (the cards, and a pet page's own
    /// facts) and tells the islands, as if the events had come.
    fn read_again() {
        let Some(document) = web_sys::window().and_then(|window| window.document()) else { return };
        let Ok(nodes) = document.query_selector_all(".card[data-pet-id], .facts[data-pet-id]") else { return };
        let mut ids = Vec::new();
        for n in 0..nodes.length() {
            let id = nodes
                .item(n)
                .and_then(|node| node.dyn_into::<web_sys::Element>().ok())
                .and_then(|element| element.get_attribute("data-pet-id"));
            if let Some(id) = id.filter(|id| !ids.contains(id)) {
                ids.push(id);
            }
        }
        if ids.is_empty() {
            return;
        }
        leptos::task::spawn_local(async move {
            match crate::server_fns::stock_now(ids.join(",")).await {
                Ok(items) => {
                    for item in items {
                        let data = EventData {
                            pet_id: Some(item.pet_id),
                            quantity: Some(item.quantity),
                            status: Some(item.status.as_str().to_owned()),
                            ..EventData::default()
                        };
                        tell("inventory.updated", &data);
                    }
                }
                // Read when the stream next opens after a failure.
                Err(_) => MISSED.set(true),
            }
        });
    }
}

/// An event of the stream as the islands read it: its type and the few fields of its
/// data they use (the rest is skipped). Typed, not a `serde_json::Value`: a value's
/// reader and map would be code in the WASM every page loads. An event whose fields
/// are not of these types (none the islands follow) is left out.
#[cfg(feature = "hydrate")]
#[derive(serde::Deserialize)]
struct Envelope {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: EventData,
}

/// What the islands read of an event's data: a pet's `id` and `status` (`pet.*`
/// events), or the `petId`, `quantity` and `status` of `inventory.updated`.
#[cfg(feature = "hydrate")]
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct EventData {
    pub id: Option<i64>,
    pub pet_id: Option<i64>,
    pub quantity: Option<i64>,
    pub status: Option<String>,
}

/// A pet's stock and status from an `inventory.updated` event's data.
#[cfg(feature = "hydrate")]
pub fn stock_of(data: &EventData) -> Option<(i64, i64, crate::model::PetStatus)> {
    let status = crate::model::PetStatus::parse(data.status.as_deref()?)?;
    Some((data.pet_id?, data.quantity?, status))
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
