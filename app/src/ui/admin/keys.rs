//! Keys: create one (the secret shown once, with a copy button), revoke one (after a
//! confirmation; the key the staff member is signed in with says so first; the last
//! active admin key is not offered, since the server refuses it), and see each key's
//! requests today against its plan's daily limit. The table is drawn on the server; the
//! forms are islands, and the page is shown again after each change.

use leptos::prelude::*;
use strum::VariantArray;

use super::{FormOutcome, NameField, invalid};
use crate::model::{Plan, Role};
use crate::server_fns::{CreateKey, KeyUsage, RevokeKey, SignInLink, admin_keys, viewer};
use crate::ui::account::{NewKey, NewKeyIsland, SignInLinkIsland};
use crate::ui::data;
use crate::ui::note::{Done, Note, NoteView, from_flash};
use crate::ui::widgets::{ErrorNotice, LocalTime, PageTitle, confirm};

#[component]
pub fn KeysConsole() -> impl IntoView {
    let who = data::resource(|| (), |_| viewer());
    let keys = data::resource(|| (), |_| admin_keys());
    let note = from_flash(|flash| {
        flash
            .note::<CreateKey>(|created, _| {
                let key = &created.key_info;
                let text = format!("Created key #{} ({}, {}).", key.id, key.name, key.plan.label());
                Done { secret: Some(created.key.clone()), ..Done::new(text) }
            })
            .or_else(|| flash.note::<RevokeKey>(|key, _| Done::new(format!("Revoked key #{} ({}).", key.id, key.name))))
            .or_else(|| {
                flash.note::<SignInLink>(|link, id| Done {
                    secret: Some(link),
                    ..Done::new(format!("A sign-in link for key #{}.", id.unwrap_or_default()))
                })
            })
    });
    let created = Note::for_form::<CreateKey>(&note, None);
    // A revocation or a sign-in link, whichever row it was for, is said above the table.
    let link = note.as_ref().filter(|note| note.is_of::<SignInLink>()).and_then(|note| note.secret.clone());
    let revoked = note.filter(|note| note.is_of::<RevokeKey>() || note.is_of::<SignInLink>());
    view! {
        <PageTitle text="Staff: keys"/>
        <h1>"API keys"</h1>
        <section class="panel" aria-labelledby="new-key-title">
            <h2 id="new-key-title">"New key"</h2>
            <NewKeyForm note=created.clone()/>
            // The new key's secret, this once (the flash carried it here).
            {created.and_then(|note| note.secret).map(|key| view! { <NewKeyIsland key/> })}
        </section>
        <div aria-live="polite">
            {revoked.map(|note| view! { <NoteView note/> })}
            {link.map(|link| view! { <SignInLinkIsland link/> })}
        </div>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let me = who.await.ok().flatten().map(|caller| caller.key_id);
                match keys.await {
                    Ok(list) => {
                        let active_admins = list
                            .iter()
                            .filter(|row| row.key.role == Role::Admin && row.key.revoked_at.is_none())
                            .count();
                        view! {
                            <table class="table keys responsive">
                                <thead><tr>
                                    <th scope="col" class="number">"Id"</th><th scope="col">"Name"</th><th scope="col">"Role"</th>
                                    <th scope="col">"Plan"</th><th scope="col">"Used today"</th><th scope="col">"State"</th>
                                </tr></thead>
                                <tbody>
                                    {list.into_iter().map(|row| {
                                        let last_admin = active_admins == 1 && row.key.role == Role::Admin;
                                        view! { <KeyRow row mine=me last_admin/> }
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any()
                    }
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// Creating a key: the page is shown again, with the secret once; a refusal keeps what
/// was typed.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn NewKeyForm(note: Option<Note>) -> impl IntoView {
    let create = ServerAction::<CreateKey>::new();
    let result = create.value();
    // (A note holds typed values only after a refusal.)
    let typed = |field: &str| note.as_ref().and_then(|note| note.typed(field));
    let (role, plan) = (typed("role").unwrap_or_default(), typed("plan").unwrap_or_default());
    let (name, per_minute, per_day) = (typed("name"), typed("per_minute"), typed("per_day"));
    let (blame_name, blame_minute, blame_day) = (note.clone(), note.clone(), note.clone());
    view! {
        <ActionForm action=create attr:class="row-form">
            <NameField invalid=move || invalid(&result.get(), &blame_name, "name") value=name/>
            <label>"Role"
                <select name="role">
                    {Role::VARIANTS.iter().copied().map(|r| view! {
                        <option value=r.as_str() selected=role == r.as_str()>{r.label()}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"Plan"
                <select name="plan">
                    {Plan::VARIANTS.iter().copied().map(|p| view! {
                        <option value=p.as_str() selected=plan == p.as_str()>{plan_label(p)}</option>
                    }).collect_view()}
                </select>
            </label>
            <label>"Per minute (Enterprise)"
                <input type="number" name="per_minute" min="1" inputmode="numeric" value=per_minute
                    aria-invalid=move || invalid(&result.get(), &blame_minute, "perMinute").to_string()/>
            </label>
            <label>"Per day (Enterprise)"
                <input type="number" name="per_day" min="1" inputmode="numeric" value=per_day
                    aria-invalid=move || invalid(&result.get(), &blame_day, "perDay").to_string()/>
            </label>
            <button type="submit" disabled=move || create.pending().get()>"Create key"</button>
        </ActionForm>
        <FormOutcome result=result.into() done="" note/>
        // With JavaScript the page stays, and the secret is shown from the answer (it
        // never comes back in a page of its own).
        {move || result.get().and_then(Result::ok).map(|created| view! {
            <p class="form-done" role="status">
                {format!("Created key #{} ({}).", created.key_info.id, created.key_info.name)}" "
                <a href="/admin/keys">"Show the list with it"</a>
            </p>
            <NewKey key=created.key/>
        })}
    }
}

fn plan_label(plan: Plan) -> String {
    match plan.limits() {
        Some(limits) => format!("{} ({}/min, {}/day)", plan.label(), limits.per_minute, limits.per_day),
        None => format!("{} (limits below)", plan.label()),
    }
}

#[component]
fn KeyRow(row: KeyUsage, mine: Option<i64>, last_admin: bool) -> impl IntoView {
    let key = row.key;
    let per_day = i64::from(key.limits.per_day);
    let active = key.revoked_at.is_none();
    // Whole per cent, rounded.
    let percent = if per_day > 0 { (row.used_today * 100 + per_day / 2) / per_day } else { 0 };
    let question = if mine == Some(key.id) {
        format!("Key #{} is the one you are signed in with: revoking it signs you out here. Revoke it?", key.id)
    } else {
        format!("Revoke key #{} ({})? Its next request fails and its sessions end.", key.id, key.name)
    };
    view! {
        <tr data-key-id=key.id>
            <td data-label="Id" class="number">{key.id}</td>
            <td data-label="Name">{key.name.clone()}{(mine == Some(key.id)).then(|| view! { " " <span class="meta">"(you)"</span> })}</td>
            <td data-label="Role">{key.role.label()}</td>
            <td data-label="Plan">{format!("{} ({}/min)", key.plan.label(), key.limits.per_minute)}</td>
            <td data-label="Used today">
                <meter min="0" max=per_day value=row.used_today high=per_day * 8 / 10 optimum="0"
                    aria-label=format!("Requests today by key {}", key.id)></meter>
                " "{format!("{} / {} ({percent} %)", row.used_today, per_day)}
            </td>
            <td data-label="State" class="actions">
                {match (key.revoked_at, last_admin) {
                    (Some(at), _) => view! { <span class="meta">"Revoked "<LocalTime iso=at/></span> }.into_any(),
                    (None, true) => view! {
                        <span class="meta">"Active: the last admin key, so it cannot be revoked"</span>
                    }.into_any(),
                    (None, false) => view! { <RevokeKeyForm id=key.id question/> }.into_any(),
                }}
                {active.then(|| view! { <SignInLinkForm id=key.id/> })}
            </td>
        </tr>
    }
}

/// A one-time sign-in link for the key's account (a plain form: the page is shown again
/// with the link, once).
#[component]
fn SignInLinkForm(id: i64) -> impl IntoView {
    let issue = ServerAction::<SignInLink>::new();
    view! {
        <ActionForm action=issue attr:class="inline">
            <input type="hidden" name="id" value=id/>
            <button type="submit" class="secondary small" aria-label=format!("Sign-in link for key {id}")>"Sign-in link"</button>
        </ActionForm>
    }
}

/// Revoking one key, after the question.
#[cfg_attr(feature = "lazy-islands", island(lazy))]
#[cfg_attr(not(feature = "lazy-islands"), island)]
fn RevokeKeyForm(id: i64, question: String) -> impl IntoView {
    let revoke = ServerAction::<RevokeKey>::new();
    view! {
        {confirm(
            format!("Revoke key {id}…"),
            question,
            view! {
                <ActionForm action=revoke attr:class="inline">
                    <input type="hidden" name="id" value=id/>
                    <button type="submit" class="danger" disabled=move || revoke.pending().get()>
                        {format!("Yes, revoke key {id}")}
                    </button>
                </ActionForm>
            },
        )}
        <FormOutcome result=revoke.value().into() done=""/>
    }
}
