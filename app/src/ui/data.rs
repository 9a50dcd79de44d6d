//! How a page's data reaches the browser: each page asks for it through [`resource`].
//!
//! Rendered on the server inside an island, a resource's value travels in the page as
//! JSON for the browser to take over (hydration) without asking again (outside the
//! islands it stays on the server); after that, server functions
//! answer in JSON too. Leptos reads the first from a string and the second from bytes:
//! two JSON readers, and so two copies of every type's deserializer in the WASM. The
//! codec here reads the page's JSON from bytes as well, so there is one.

use leptos::prelude::*;
use leptos::server::codee::{Decoder, Encoder};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// JSON, read from bytes.
pub struct Json;

impl<T: Serialize> Encoder<T> for Json {
    type Error = serde_json::Error;
    type Encoded = String;

    fn encode(value: &T) -> Result<String, serde_json::Error> {
        serde_json::to_string(value)
    }
}

impl<T: DeserializeOwned> Decoder<T> for Json {
    type Error = serde_json::Error;
    type Encoded = str;

    fn decode(text: &str) -> Result<T, serde_json::Error> {
        serde_json::from_slice(text.as_bytes())
    }
}

/// `Resource::new`, with the codec above.
#[track_caller]
pub fn resource<S, T, Fut>(
    source: impl Fn() -> S + Send + Sync + 'static,
    fetcher: impl Fn(S) -> Fut + Send + Sync + 'static,
) -> Resource<T, Json>
where
    S: Send + Sync + Clone + PartialEq + 'static,
    T: Serialize + DeserializeOwned + Send + Sync + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    Resource::new_with_options(source, fetcher, false)
}
