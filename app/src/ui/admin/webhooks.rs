//! Webhooks: the endpoints that receive the store's events. The list shows each one's
//! event types and state (the store disables an endpoint whose deliveries have failed
//! for three days, and says why), with its actions: send a test ping, disable or enable,
//! rotate the signing secret (shown once, as a new key's), delete. An endpoint's own
//! page edits it and shows its delivery log, newest first, each attempt with its
//! answer, time taken and error, and a retry. Tables are drawn on the server; the forms
//! are islands, and the page is shown again after each change.

use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::FormOutcome;
use crate::model::{Delivery, DeliveryStatus, EventType, Webhook};
use crate::server_fns::flash::Flash;
use crate::server_fns::{SaveWebhook, WebhookAction, admin_webhooks, webhook_log};
use crate::ui::account::ShownOnce;
use crate::ui::data;
use crate::ui::note::{Done, Note, NoteView, from_flash};
use crate::ui::widgets::{ErrorNotice, LocalTime, PageTitle, confirm, query_string};

fn endpoint_page(id: i64) -> String {
    format!("/admin/webhooks/{id}")
}

/// What a form of these pages did, as its note: the words, a new secret, and a link to
/// the endpoint's log after registering it or sending it a test.
fn note_of(flash: &Flash) -> Option<Note> {
    let to_log = flash.value("action") == Some("test") || flash.record().is_none();
    let done = |done: crate::server_fns::EndpointDone, _| {
        let text = Done { secret: done.secret, ..Done::new(done.text) };
        if to_log { text.link(endpoint_page(done.id), "Its deliveries") } else { text }
    };
    flash.note::<SaveWebhook>(done).or_else(|| flash.note::<WebhookAction>(done))
}

#[component]
pub fn WebhooksConsole() -> impl IntoView {
    let hooks = data::resource(|| (), |_| admin_webhooks());
    let note = from_flash(note_of);
    let created = Note::for_form::<SaveWebhook>(&note, None);
    // What was done to a row (a secret rotated too) is said above the table.
    let other = note.filter(|note| note.is_of::<WebhookAction>());
    let rotated_secret = other.as_ref().and_then(|note| note.secret.clone());
    view! {
        <PageTitle text="Staff: webhooks"/>
        <h1>"Webhooks"</h1>
        <p class="meta">
            "The store POSTs each event to the endpoints that take its type, signed with the endpoint's "
            "secret (Standard Webhooks headers), and retries a failed delivery with backoff for 24 hours."
        </p>
        <section class="panel" aria-labelledby="new-webhook-title">
            <h2 id="new-webhook-title">"New endpoint"</h2>
            <NewEndpointForm note=created.clone()/>
            {created.and_then(|note| note.secret).map(|secret| view! { <SigningSecret secret/> })}
        </section>
        <div aria-live="polite">
            {other.map(|note| view! { <NoteView note/> })}
            {rotated_secret.map(|secret| view! { <SigningSecret secret/> })}
        </div>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match hooks.await {
                    Ok(list) if list.is_empty() => view! { <p class="empty">"No endpoints yet."</p> }.into_any(),
                    Ok(list) => view! {
                        <table class="table webhooks responsive">
                            <thead><tr>
                                <th scope="col" class="number">"Id"</th><th scope="col">"Endpoint"</th>
                                <th scope="col">"Events"</th><th scope="col">"State"</th><th scope="col">"Actions"</th>
                            </tr></thead>
                            <tbody>{list.into_iter().map(|hook| view! { <EndpointRow hook/> }).collect_view()}</tbody>
                        </table>
                    }.into_any(),
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The signing secret, this once, with its copy button (on a page drawn with it).
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn SigningSecret(secret: String) -> impl IntoView {
    view! { <SigningSecretView secret/> }
}

/// An answer of the forms below with JavaScript: what was done and, when the answer
/// carries one, the new secret (such an answer leaves the browser on its page).
#[component]
fn Answered(done: crate::server_fns::EndpointDone) -> impl IntoView {
    done.secret.map(|secret| {
        view! {
            <p class="form-done" role="status">
                {done.text}" "<a href=endpoint_page(done.id)>"Its deliveries"</a>" · "
                <a href="/admin/webhooks">"Show the list with it"</a>
            </p>
            <SigningSecretView secret/>
        }
    })
}

#[component]
fn SigningSecretView(secret: String) -> impl IntoView {
    view! {
        <ShownOnce secret id="webhook-secret" title="The signing secret (shown only this once: copy it now):">
            <p>"Receivers check each delivery's " <code>"webhook-signature"</code>
               " with it, as the "<a href="/docs">"API guide"</a>" shows."</p>
        </ShownOnce>
    }
}

fn events_text(events: &[String]) -> String {
    if events.iter().any(|kind| kind == "*") { "All events".to_owned() } else { events.join(", ") }
}

/// An endpoint's state in words (not by colour alone).
#[component]
fn EndpointState(hook: Webhook) -> impl IntoView {
    match (hook.enabled, hook.disabled_reason) {
        (true, _) => view! { <span class="badge badge-available">"Enabled"</span> }.into_any(),
        (false, Some(reason)) => view! {
            <span class="badge badge-sold">"Disabled by the store"</span>" "<span class="meta">{reason}</span>
        }
        .into_any(),
        (false, None) => view! { <span class="badge badge-pending">"Disabled"</span> }.into_any(),
    }
}

#[component]
fn EndpointRow(hook: Webhook) -> impl IntoView {
    let (id, enabled) = (hook.id, hook.enabled);
    view! {
        <tr data-webhook-id=id>
            <td data-label="Id" class="number">{id}</td>
            <td data-label="Endpoint">
                <a href=endpoint_page(id) class="endpoint-url">{hook.url.clone()}</a>
                {hook.description.clone().map(|text| view! { <br/><span class="meta">{text}</span> })}
            </td>
            <td data-label="Events">{events_text(&hook.events)}</td>
            <td data-label="State"><EndpointState hook=hook.clone()/></td>
            <td data-label="Actions" class="actions"><EndpointActions id enabled/></td>
        </tr>
    }
}

/// A row's actions: test, disable or enable, and (after a question) rotate and delete.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn EndpointActions(id: i64, enabled: bool) -> impl IntoView {
    let act = ServerAction::<WebhookAction>::new();
    let form = move |action: &'static str, label: String, class: &'static str| {
        view! {
            <ActionForm action=act attr:class="inline">
                <input type="hidden" name="id" value=id/>
                <input type="hidden" name="action" value=action/>
                <button type="submit" class=class disabled=move || act.pending().get()>{label}</button>
            </ActionForm>
        }
    };
    view! {
        <div class="endpoint-actions">
            {form("test", "Send test".to_owned(), "secondary")}
            {if enabled { form("disable", "Disable".to_owned(), "secondary") } else { form("enable", "Enable".to_owned(), "secondary") }}
            {confirm(
                "Rotate secret…".to_owned(),
                format!("Make a new signing secret for endpoint {id}? The current one keeps signing too for 24 hours."),
                form("rotate", "Yes, rotate it".to_owned(), ""),
            )}
            {confirm(
                format!("Delete endpoint {id}…"),
                format!("Delete endpoint {id}? Its pending deliveries are dropped and its log goes with it."),
                form("delete", format!("Yes, delete endpoint {id}"), "danger"),
            )}
        </div>
        <FormOutcome result=act.value().into() done=""/>
        {move || act.value().get().and_then(Result::ok).map(|done| view! { <Answered done/> })}
    }
}

/// The URL, description and event-type fields, filled with `url`, `description` and
/// `events` (what the endpoint has, or what was typed before a refusal).
#[component]
fn EndpointFields(url: String, description: String, events: Vec<String>, invalid: Option<String>) -> impl IntoView {
    let all = events.iter().any(|kind| kind == "*");
    let blamed = move |field: &str| (invalid.as_deref() == Some(field)).to_string();
    view! {
        <label class="grow">"URL"
            <input type="url" name="url" required maxlength="2000" value=url placeholder="https://example.com/hooks/petstore"
                aria-invalid=blamed("url")/>
        </label>
        <label class="grow">"Description"
            <input type="text" name="description" maxlength="1000" value=description/>
        </label>
        <fieldset class="event-types" aria-invalid=blamed("events")>
            <legend>"Events"</legend>
            <label class="check"><input type="checkbox" name="events[]" value="*" checked=all/>"All events"</label>
            {EventType::subscribable().map(|kind| {
                let checked = events.iter().any(|taken| taken == kind.as_str());
                view! { <label class="check"><input type="checkbox" name="events[]" value=kind.as_str() checked=checked/><code>{kind.as_str()}</code></label> }
            }).collect_view()}
        </fieldset>
    }
}

/// After a refusal, the event types that were ticked.
fn ticked(note: &Option<Note>) -> Option<Vec<String>> {
    let note = note.as_ref().filter(|note| note.is_refusal())?;
    Some(note.values.iter().filter(|(name, _)| name == "events[]").map(|(_, value)| value.clone()).collect())
}

/// Registering an endpoint: the page is shown again with its secret, once; a refusal
/// keeps what was typed.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn NewEndpointForm(note: Option<Note>) -> impl IntoView {
    let create = ServerAction::<SaveWebhook>::new();
    let typed = |field: &str| note.as_ref().and_then(|note| note.typed(field)).unwrap_or_default();
    let (url, description) = (typed("url"), typed("description"));
    let events = ticked(&note).unwrap_or_else(|| vec!["*".to_owned()]);
    let invalid = note.as_ref().and_then(|note| note.field.clone());
    view! {
        <ActionForm action=create attr:class="row-form">
            <EndpointFields url description events invalid/>
            <button type="submit" disabled=move || create.pending().get()>"Register endpoint"</button>
        </ActionForm>
        <FormOutcome result=create.value().into() done="" note/>
        {move || create.value().get().and_then(Result::ok).map(|done| view! { <Answered done/> })}
    }
}

/// Changing an endpoint's URL, description and event types (what it has now, or after
/// a refusal what was typed).
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn EditEndpointForm(
    id: i64,
    url: String,
    description: String,
    events: Vec<String>,
    note: Option<Note>,
) -> impl IntoView {
    let edit = ServerAction::<SaveWebhook>::new();
    let refused = note.as_ref().filter(|note| note.is_refusal());
    let typed = |field: &str, had: String| refused.and_then(|note| note.typed(field)).unwrap_or(had);
    let (url, description) = (typed("url", url), typed("description", description));
    let events = ticked(&note).unwrap_or(events);
    let invalid = note.as_ref().and_then(|note| note.field.clone());
    view! {
        <ActionForm action=edit attr:class="row-form">
            <input type="hidden" name="id" value=id/>
            <EndpointFields url description events invalid/>
            <button type="submit" disabled=move || edit.pending().get()>"Save"</button>
        </ActionForm>
        <FormOutcome result=edit.value().into() done="" note/>
    }
}

/// One endpoint: its settings and its delivery log.
#[component]
pub fn WebhookPage() -> impl IntoView {
    let id =
        use_params_map().with_untracked(|params| params.get("id").and_then(|raw| raw.parse::<i64>().ok()).unwrap_or(0));
    let cursor = use_query_map().with_untracked(|query| query.get("cursor"));
    let log = data::resource(move || cursor.clone(), move |cursor| webhook_log(id, cursor));
    let note = from_flash(note_of);
    let edited = Note::for_form::<SaveWebhook>(&note, Some(id));
    let retried = note.filter(|note| note.is_of::<WebhookAction>());
    view! {
        <PageTitle text=format!("Staff: webhook {id}")/>
        <p><a href="/admin/webhooks">"← All endpoints"</a></p>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || {
                let (edited, retried) = (edited.clone(), retried.clone());
                Suspend::new(async move {
                    match log.await {
                        Err(error) => view! { <h1>{format!("Endpoint {id}")}</h1><ErrorNotice error/> }.into_any(),
                        Ok(log) => {
                            let hook = log.webhook;
                            let next = log.deliveries.next_cursor.map(|c| format!("{}{}", endpoint_page(id), query_string([("cursor", Some(c))])));
                            view! {
                                <h1>{format!("Endpoint {id}")}</h1>
                                <p><code class="endpoint-url">{hook.url.clone()}</code>" "<EndpointState hook=hook.clone()/></p>
                                <section class="panel" aria-labelledby="edit-webhook-title">
                                    <h2 id="edit-webhook-title">"Settings"</h2>
                                    <EditEndpointForm id url=hook.url.clone() description=hook.description.clone().unwrap_or_default()
                                        events=hook.events.clone() note=edited/>
                                </section>
                                <h2>"Deliveries"</h2>
                                <div aria-live="polite">{retried.map(|note| view! { <NoteView note/> })}</div>
                                <DeliveryTable webhook_id=id deliveries=log.deliveries.items/>
                                {next.map(|href| view! { <nav class="pager" aria-label="Pages"><a href=href rel="next">"Older deliveries →"</a></nav> })}
                            }.into_any()
                        }
                    }
                })
            }}
        </Suspense>
    }
}

/// The log, newest first. Each event's newest attempt offers "Send again" (the older
/// ones are its history).
#[component]
fn DeliveryTable(webhook_id: i64, deliveries: Vec<Delivery>) -> impl IntoView {
    if deliveries.is_empty() {
        return view! { <p class="empty">"Nothing sent yet: events from now on will be listed here."</p> }.into_any();
    }
    let mut seen = std::collections::HashSet::new();
    view! {
        <table class="table deliveries responsive">
            <thead><tr>
                <th scope="col">"Made"</th><th scope="col">"Event"</th><th scope="col" class="number">"Attempt"</th>
                <th scope="col">"Outcome"</th><th scope="col">"Answer"</th><th scope="col" class="number">"Time"</th>
                <th scope="col">"Next"</th>
            </tr></thead>
            <tbody>
                {deliveries.into_iter().map(|delivery| {
                    let newest = seen.insert(delivery.event_id.clone());
                    view! { <DeliveryRow webhook_id delivery newest/> }
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

#[component]
fn DeliveryRow(webhook_id: i64, delivery: Delivery, newest: bool) -> impl IntoView {
    let outcome = match delivery.status {
        DeliveryStatus::Succeeded => view! { <span class="badge badge-available">"Delivered"</span> },
        DeliveryStatus::Pending => view! { <span class="badge badge-pending">"Pending"</span> },
        DeliveryStatus::Failed => view! { <span class="badge badge-failed">"Failed"</span> },
    };
    let answer = match (delivery.response_status, delivery.error.clone()) {
        (Some(status), Some(error)) => format!("HTTP {status}: {error}"),
        (Some(status), None) => format!("HTTP {status}"),
        (None, Some(error)) => error,
        (None, None) => "—".to_owned(),
    };
    let took = delivery.duration_ms.map_or_else(|| "—".to_owned(), |ms| format!("{ms} ms"));
    let sent = serde_json::to_string_pretty(&delivery.payload).unwrap_or_default();
    let answered = delivery.response_body.clone();
    // A pending attempt is made then; after a failure, the next one is.
    let next = delivery.next_attempt_at.map(|at| {
        let label = if delivery.status == DeliveryStatus::Pending { "Due " } else { "Next attempt " };
        view! { <span class="meta next-attempt">{label}<LocalTime iso=at/></span> }
    });
    view! {
        <tr data-delivery-id=delivery.id>
            <td data-label="Made"><LocalTime iso=delivery.created_at/></td>
            <td data-label="Event"><code>{delivery.event_type.as_str()}</code><br/><span class="meta event-id">{delivery.event_id}</span></td>
            <td data-label="Attempt" class="number">{delivery.attempt}</td>
            <td data-label="Outcome">{outcome}</td>
            <td data-label="Answer" class="answer">{answer}</td>
            <td data-label="Time" class="number">{took}</td>
            <td data-label="Next">
                {next}
                {newest.then(|| view! { <RetryForm id=delivery.id webhook_id/> })}
            </td>
        </tr>
        // What was sent and what came back, folded under the attempt, the width of the table.
        <tr class="delivery-more">
            <td colspan="7">
                <details class="delivery-details">
                    <summary>"What was sent and answered"</summary>
                    <p class="meta">"Sent (the request's body)"</p>
                    <pre class="payload"><code>{sent}</code></pre>
                    <p class="meta">"Answered (the first 2 KB of the response's body)"</p>
                    {match answered {
                        Some(body) => view! { <pre class="response-body"><code>{body}</code></pre> }.into_any(),
                        None => view! { <p class="response-body empty">"No answer body."</p> }.into_any(),
                    }}
                </details>
            </td>
        </tr>
    }
}

/// Sending a delivery's event again now.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn RetryForm(id: i64, webhook_id: i64) -> impl IntoView {
    let retry = ServerAction::<WebhookAction>::new();
    view! {
        <ActionForm action=retry attr:class="inline">
            <input type="hidden" name="id" value=webhook_id/>
            <input type="hidden" name="action" value="retry"/>
            <input type="hidden" name="delivery" value=id/>
            <button type="submit" class="secondary" disabled=move || retry.pending().get()>"Send again"</button>
        </ActionForm>
        <FormOutcome result=retry.value().into() done=""/>
    }
}
