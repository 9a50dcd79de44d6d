//! The try-it panel: fill the parameters and body, choose the key (the signed-in
//! session's or a pasted one), send the request from the browser with gloo-net, and
//! read the status, the headers (rate-limit ones highlighted) and the body.

use leptos::prelude::*;

use crate::paths::encode;
use crate::reference::{KeyNeed, OperationDoc};
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
fn request_url(path: &str, params: &[(crate::reference::ParamDoc, RwSignal<String>)]) -> String {
    let mut url = format!("/api/v1{path}");
    let mut query = Vec::new();
    for (param, value) in params {
        let value = value.get();
        if param.location == "path" {
            url = url.replace(&format!("{{{}}}", param.name), &encode(value.trim()));
        } else {
            query.push((param.name.as_str(), Some(value)));
        }
    }
    url.push_str(&query_string(query));
    url
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

/// `origin` is the store's own address, for the curl line.
#[island]
pub fn TryIt(operation: OperationDoc, signed_in: bool, origin: String) -> impl IntoView {
    let id = operation.id.clone();
    let values: Vec<(crate::reference::ParamDoc, RwSignal<String>)> = operation
        .params
        .iter()
        .filter(|p| p.location == "path" || p.location == "query")
        .cloned()
        .map(|p| {
            let start = if p.location == "path" { "1".to_owned() } else { String::new() };
            (p, RwSignal::new(start))
        })
        .collect();
    let body = operation.body.as_ref().map(|b| RwSignal::new(b.example.clone()));
    let use_session = RwSignal::new(signed_in);
    let pasted = RwSignal::new(String::new());
    let answer = RwSignal::new(None::<Result<Answer, String>>);
    let pending = RwSignal::new(false);

    let method = operation.method.clone();
    let path = operation.path.clone();
    let params = values.clone();
    let url = Memo::new(move |_| request_url(&path, &params));
    let needs_key = operation.key != KeyNeed::None;
    let curl = {
        let method = method.clone();
        move || curl_line(&method, &origin, &url.get(), needs_key, body.map(|b| b.get()))
    };
    let shown_request = {
        let method = method.clone();
        move || format!("{method} {}", url.get())
    };
    let send = move |_| {
        let url = url.get_untracked();
        let key = (!use_session.get_untracked()).then(|| pasted.get_untracked()).filter(|k| !k.trim().is_empty());
        let body = body.map(|b| b.get_untracked());
        pending.set(true);
        #[cfg(feature = "hydrate")]
        {
            let method = method.clone();
            leptos::task::spawn_local(async move {
                answer.set(Some(send_request(&method, &url, key, body).await));
                pending.set(false);
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (&method, url, key, body);
    };

    let key_need = match operation.key {
        KeyNeed::Required => "This operation needs a key.",
        KeyNeed::Optional => "A key is optional here (without one, POST /keys signs up a Free key).",
        KeyNeed::None => "This operation needs no key.",
    };
    let session_id = format!("{id}-session");
    let paste_id = format!("{id}-paste");
    let key_id = format!("{id}-key");
    let body_id = format!("{id}-body");
    view! {
        <details class="try-it" data-operation=id.clone()>
            <summary>"Try it"</summary>
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
                <fieldset class="key-choice">
                    <legend>"Key"</legend>
                    <p class="meta">{key_need}</p>
                    <input type="radio" id=session_id.clone() name=format!("{id}-key-choice")
                        prop:checked=move || use_session.get() disabled=!signed_in
                        on:change=move |_| use_session.set(true)/>
                    <label for=session_id>{if signed_in { "My signed-in key" } else { "My signed-in key (sign in first)" }}</label>
                    <input type="radio" id=paste_id.clone() name=format!("{id}-key-choice")
                        prop:checked=move || !use_session.get()
                        on:change=move |_| use_session.set(false)/>
                    <label for=paste_id>"A pasted key"</label>
                    <label for=key_id.clone() class="visually-hidden">"API key to send"</label>
                    <input id=key_id type="password" autocomplete="off" placeholder="psk_…"
                        disabled=move || use_session.get()
                        prop:value=move || pasted.get()
                        on:input=move |ev| pasted.set(event_target_value(&ev))/>
                </fieldset>
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
        </details>
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
async fn send_request(method: &str, url: &str, key: Option<String>, body: Option<String>) -> Result<Answer, String> {
    use gloo_net::http::Request;
    let mut builder = match method {
        "POST" => Request::post(url),
        "PUT" => Request::put(url),
        "PATCH" => Request::patch(url),
        "DELETE" => Request::delete(url),
        _ => Request::get(url),
    };
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
