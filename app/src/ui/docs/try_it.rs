//! The try-it panels: fill the parameters and body, send the request from the browser
//! with gloo-net, and read the status, the headers (rate-limit ones highlighted) and
//! the body. One key for the whole page (the signed-in session's, or one pasted once)
//! is chosen in the key bar.

use leptos::prelude::*;

use crate::paths::encode;
use crate::reference::{KeyNeed, TryParam, TryRequest};
use crate::ui::widgets::query_string;

/// What came back.
#[derive(Clone, Debug, PartialEq)]
struct Answer {
    status: u16,
    status_text: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// Headers worth a second look: the rate limits and what a refusal or deprecation says.
fn highlighted(name: &str) -> bool {
    name.starts_with("x-ratelimit-") || matches!(name, "retry-after" | "deprecation" | "sunset" | "link")
}

/// The request the panel's values make: the URL path and query.
fn request_url<'a>(path: &str, params: impl IntoIterator<Item = (&'a TryParam, String)>) -> String {
    let mut url = format!("/api/v1{path}");
    let mut query = Vec::new();
    for (param, value) in params {
        if param.location == "path" {
            url = url.replace(&format!("{{{}}}", param.name), &encode(value.trim()));
        } else {
            query.push((param.name.as_str(), Some(value)));
        }
    }
    url.push_str(&query_string(query));
    url
}

/// A path parameter's first value: an id that often names something.
fn start_value(param: &TryParam) -> String {
    if param.location == "path" { "1".to_owned() } else { String::new() }
}

/// The same request as a `curl` line (the key as `$KEY`: a pasted key is never shown).
fn curl_line(method: &str, origin: &str, url: &str, needs_key: bool, body: Option<String>) -> String {
    let mut line = format!("curl -i -X {method} '{origin}{url}'");
    if needs_key {
        line.push_str(" -H \"X-API-Key: $KEY\"");
    }
    if let Some(body) = body.filter(|b| !b.trim().is_empty()) {
        // On one line: JSON's line breaks and indentation are never inside a string.
        let one_line = body.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        line.push_str(&format!(" -H 'Content-Type: application/json' -d '{}'", one_line.replace('\'', "'\\''")));
    }
    line
}

/// The key the page's panels send: the signed-in session's, or one pasted once in
/// the key bar at the top of the operations.
#[derive(Clone, Debug, Default, PartialEq)]
struct PageKey {
    use_session: bool,
    pasted: String,
}

impl PageKey {
    /// The `X-API-Key` to send: none with the session (its cookie goes instead, from
    /// this page) or when nothing was pasted.
    fn header(&self) -> Option<String> {
        (!self.use_session).then(|| self.pasted.trim().to_owned()).filter(|key| !key.is_empty())
    }
}

/// The page's one key, shared by the key bar and every panel. Each island is a root
/// of its own, so in the browser it lives in the page's WASM instance, made by
/// whichever island asks first; on the server each island draws the first state.
fn page_key(signed_in: bool) -> ArcRwSignal<PageKey> {
    let first = PageKey { use_session: signed_in, pasted: String::new() };
    #[cfg(feature = "hydrate")]
    {
        thread_local! {
            static SHARED: std::cell::OnceCell<ArcRwSignal<PageKey>> = const { std::cell::OnceCell::new() };
        }
        SHARED.with(|shared| shared.get_or_init(|| ArcRwSignal::new(first)).clone())
    }
    #[cfg(not(feature = "hydrate"))]
    ArcRwSignal::new(first)
}

/// The key bar: which key every try-it panel of the page sends. Started with the page,
/// from the module every page loads (11 KB of its brotli): as a lazy island, its files
/// came a round trip after the module, and `/docs` was interactive 0.4 s later on
/// Lighthouse's phone, with twice the blocking time (docs/PERFORMANCE.md, "WASM").
#[island]
pub fn KeyBar(signed_in: bool) -> impl IntoView {
    let key = page_key(signed_in);
    let (session, paste, pasted) = (key.clone(), key.clone(), key.clone());
    let checked = key.clone();
    let unchecked = key.clone();
    let disabled = key.clone();
    let shown = key;
    view! {
        <fieldset class="key-choice">
            <legend>"The key the try-it panels send"</legend>
            <input type="radio" id="try-key-session" name="try-key-choice"
                prop:checked=move || checked.get().use_session disabled=!signed_in
                on:change=move |_| session.update(|k| k.use_session = true)/>
            <label for="try-key-session">{if signed_in { "My signed-in key" } else { "My signed-in key (sign in first)" }}</label>
            <input type="radio" id="try-key-paste" name="try-key-choice"
                prop:checked=move || !unchecked.get().use_session
                on:change=move |_| paste.update(|k| k.use_session = false)/>
            <label for="try-key-paste">"A pasted key"</label>
            <label for="try-key-input" class="visually-hidden">"API key to send"</label>
            <input id="try-key-input" type="password" autocomplete="off" placeholder="psk_…"
                disabled=move || disabled.get().use_session
                prop:value=move || shown.get().pasted
                on:input=move |ev| pasted.update(|k| k.pasted = event_target_value(&ev))/>
            <p class="meta">"Get a key on the " <a href="/sign-up">"Sign up"</a> " page, or with " <code>"POST /keys"</code> "."</p>
        </fieldset>
    }
}

/// `origin` is the store's own address, for the curl line. The panel's form is drawn
/// when it is first opened: until then the island is a `<details>` and a line of text,
/// so that a page of thirty panels hydrates at once. Without JavaScript, opened, it
/// shows the request as a curl line.
///
/// It is hydrated when first opened (`data-hydrate-on-open`, read by `ui/hydrate.js`),
/// and lazy in release builds: its code, the largest part of the page's, is fetched
/// then, so that no page a shopper sees carries it and `/docs` starts without it.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
pub fn TryIt(request: TryRequest, signed_in: bool, origin: String) -> impl IntoView {
    let opened = RwSignal::new(false);
    // A panel opened before the page's script ran missed its `toggle`: seen here.
    let panel = NodeRef::<leptos::html::Details>::new();
    Effect::new(move |_| {
        if panel.get().is_some_and(|details| details.open()) {
            opened.set(true);
        }
    });
    let needs_key = request.key != KeyNeed::None;
    let first_url = request_url(&request.path, request.params.iter().map(|p| (p, start_value(p))));
    let first_curl = curl_line(&request.method, &origin, &first_url, needs_key, request.body_example.clone());
    let id = request.id.clone();
    view! {
        <details class="try-it" data-operation=id data-hydrate-on-open="" node_ref=panel on:toggle=move |_| opened.set(true)>
            <summary>"Try it"</summary>
            {move || match opened.get() {
                true => view! { <TryItForm request=request.clone() signed_in origin=origin.clone()/> }.into_any(),
                false => view! {
                    <p class="meta">"Trying it needs JavaScript. The same request with curl:"</p>
                    <pre class="curl"><code>{first_curl.clone()}</code></pre>
                }.into_any(),
            }}
        </details>
    }
}

#[component]
fn TryItForm(request: TryRequest, signed_in: bool, origin: String) -> impl IntoView {
    let id = request.id.clone();
    let values: Vec<(TryParam, RwSignal<String>)> =
        request.params.iter().map(|p| (p.clone(), RwSignal::new(start_value(p)))).collect();
    let body = request.body_example.clone().map(RwSignal::new);
    let key = page_key(signed_in);
    let answer = RwSignal::new(None::<Result<Answer, String>>);
    let pending = RwSignal::new(false);

    let method = request.method.clone();
    let path = request.path.clone();
    let params = values.clone();
    let url = Memo::new(move |_| request_url(&path, params.iter().map(|(p, value)| (p, value.get()))));
    let needs_key = request.key != KeyNeed::None;
    let curl = {
        let method = method.clone();
        move || curl_line(&method, &origin, &url.get(), needs_key, body.map(|b| b.get()))
    };
    let shown_request = {
        let method = method.clone();
        move || format!("{method} {}", url.get())
    };
    let sent_with = {
        let key = key.clone();
        let need = request.key;
        move || {
            let key = key.get();
            match need {
                KeyNeed::None => "Sent without a key: it needs none.",
                _ if key.use_session && signed_in => "Sent with your signed-in key.",
                _ if key.header().is_some() => "Sent with the key pasted above.",
                KeyNeed::Optional => "Sent without a key: POST /keys then signs up a Free key.",
                KeyNeed::Required => "Sent without a key: paste one above, or sign in.",
            }
        }
    };
    let send = move |_| {
        let url = url.get_untracked();
        let (session, header) = key.with_untracked(|key| (key.use_session, key.header()));
        let body = body.map(|b| b.get_untracked());
        pending.set(true);
        #[cfg(feature = "hydrate")]
        {
            let method = method.clone();
            leptos::task::spawn_local(async move {
                answer.set(Some(send_request(&method, &url, session, header, body).await));
                pending.set(false);
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (&method, url, session, header, body);
    };

    let body_id = format!("{id}-body");
    view! {
        <div class="try-it-form">
            {values.into_iter().map(|(param, value)| {
                let input_id = format!("{id}-{}", param.name);
                let label = view! {
                    <label for=input_id.clone()>
                        <code>{param.name.clone()}</code>
                        {format!(" ({}{})", param.location, if param.required { ", required" } else { "" })}
                    </label>
                };
                // A parameter of a few values (an enum, a boolean) is a picker.
                let field = if param.values.is_empty() {
                    view! {
                        <input id=input_id type="text" name=param.name
                            prop:value=move || value.get()
                            on:input=move |ev| value.set(event_target_value(&ev))/>
                    }.into_any()
                } else {
                    view! {
                        <select id=input_id name=param.name on:change=move |ev| value.set(event_target_value(&ev))>
                            {(!param.required).then(|| view! { <option value="" selected=true>"(none)"</option> })}
                            {param.values.iter().cloned().map(|v| { let shown = v.clone(); view! { <option value=v>{shown}</option> } }).collect_view()}
                        </select>
                    }.into_any()
                };
                view! { {label} {field} }
            }).collect_view()}
            {body.map(|body| view! {
                <label for=body_id.clone()>"Body (JSON)"</label>
                <textarea id=body_id rows="6" spellcheck="false"
                    prop:value=move || body.get()
                    on:input=move |ev| body.set(event_target_value(&ev))>{body.get_untracked()}</textarea>
            })}
            <p class="meta sent-with">{sent_with}" "<a href="#try-key">"Change the key"</a></p>
            <p class="request">"Request: "<code>{shown_request}</code></p>
            <pre class="curl" aria-label="The same request with curl"><code>{curl}</code></pre>
            <button type="button" class="send" on:click=send disabled=move || pending.get()>
                {move || if pending.get() { "Sending…" } else { "Send" }}
            </button>
        </div>
        <div class="try-it-answer" aria-live="polite">
            {move || answer.get().map(|answer| match answer {
                Err(problem) => view! { <p class="form-error" role="alert">{problem}</p> }.into_any(),
                Ok(answer) => view! { <AnswerView answer/> }.into_any(),
            })}
        </div>
    }
}

#[component]
fn AnswerView(answer: Answer) -> impl IntoView {
    let class = if answer.status < 400 { "status status-ok" } else { "status status-error" };
    view! {
        <p class=class>"Status "<strong class="status-code">{answer.status}</strong>" "{answer.status_text}</p>
        <pre class="body" tabindex="0" aria-label="Response body"><code>{answer.body}</code></pre>
        <table class="table compact headers">
            <caption>"Response headers"</caption>
            <tbody>
                {answer.headers.into_iter().map(|(name, value)| {
                    let hot = highlighted(&name);
                    let marker = name.clone();
                    // The reset is a Unix time: say when that is.
                    let when = (name == "x-ratelimit-reset").then(|| local_time(&value)).flatten();
                    view! {
                        <tr class:highlight=hot data-header=marker>
                            <th scope="row">{name}</th>
                            <td>{value}{when.map(|when| format!(" ({when})"))}{hot.then_some(" ★")}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// A Unix time (seconds) as the browser's local time of day.
fn local_time(unix: &str) -> Option<String> {
    let seconds: f64 = unix.trim().parse::<i64>().ok()? as f64;
    #[cfg(feature = "hydrate")]
    {
        let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(seconds * 1000.0));
        Some(String::from(date.to_locale_time_string("default")))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = seconds;
        None
    }
}

#[cfg(feature = "hydrate")]
/// `session`: whether the signed-in session's cookie goes with it. When the pasted key
/// was chosen it never does, so that a panel sent with no key is answered as one.
async fn send_request(
    method: &str,
    url: &str,
    session: bool,
    key: Option<String>,
    body: Option<String>,
) -> Result<Answer, String> {
    use gloo_net::http::Request;
    let mut builder = match method {
        "POST" => Request::post(url),
        "PUT" => Request::put(url),
        "PATCH" => Request::patch(url),
        "DELETE" => Request::delete(url),
        _ => Request::get(url),
    };
    if !session {
        builder = builder.credentials(web_sys::RequestCredentials::Omit);
    }
    if let Some(key) = key {
        builder = builder.header("X-API-Key", key.trim());
    }
    let request = match body.filter(|b| !b.trim().is_empty()) {
        Some(body) => builder.header("Content-Type", "application/json").body(body),
        None => builder.build(),
    }
    .map_err(|err| format!("could not build the request: {err}"))?;
    let response = request.send().await.map_err(|err| format!("the request failed: {err}"))?;
    let mut headers: Vec<(String, String)> = response.headers().entries().collect();
    headers.sort();
    let text = response.text().await.unwrap_or_default();
    // Pretty-printed when it is JSON, as sent otherwise.
    let body = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or(text);
    Ok(Answer { status: response.status(), status_text: response.status_text(), headers, body })
}
