//! Keys: create one (the secret shown once, with a copy button), revoke one (after a
//! confirmation; the key the staff member is signed in with says so first; the last
//! active admin key is not offered, since the server refuses it), and see each key's
//! requests today against its plan's daily limit.

use leptos::prelude::*;

use super::{FormOutcome, NameField, emptied_on_success, invalid};
use crate::model::{Plan, Role};
use crate::server_fns::{CreateKey, KeyUsage, RevokeKey, admin_keys, viewer};
use crate::ui::account::NewKey;
use crate::ui::data;
use crate::ui::note::{Done, Note, NoteView, from_flash};
use crate::ui::widgets::{ErrorNotice, LocalTime, PageTitle, confirm};

#[component]
pub fn KeysConsole() -> impl IntoView {
    let who = data::resource(|| (), |_| viewer());
    let note = from_flash(|flash| {
        flash
            .note::<CreateKey>(|created, _| {
                let key = &created.key_info;
                Done { secret: Some(created.key.clone()), ..Done::new(format!("Created key #{} ({}, {}).", key.id, key.name, key.plan.label())) }
            })
            .or_else(|| flash.note::<RevokeKey>(|key, _| Done::new(format!("Revoked key #{} ({}).", key.id, key.name))))
    });
    view! {
        <PageTitle text="Staff: keys"/>
        <Suspense fallback=|| ()>
            {move || {
                let note = note.clone();
                Suspend::new(async move {
                    let me = who.await.ok().flatten().map(|caller| caller.key_id);
                    view! { <KeysConsoleIsland me note/> }
                })
            }}
        </Suspense>
    }
}

/// The console page itself: a new key is shown once, in place. `me` is the key the
/// page is used with; `note` what a form sent without JavaScript did.
#[island]
fn KeysConsoleIsland(me: Option<i64>, note: Option<Note>) -> impl IntoView {
    let create = ServerAction::<CreateKey>::new();
    let revoke = ServerAction::<RevokeKey>::new();
    let keys = data::resource(move || (create.version().get(), revoke.version().get()), |_| admin_keys());
    let (result, revoked) = (create.value(), revoke.value());
    let created = Note::for_form::<CreateKey>(&note, None);
    // A revocation sent without JavaScript, whichever row it was.
    let revoked_note =
        note.filter(|note| note.form.starts_with(<RevokeKey as leptos::server_fn::ServerFn>::PATH));
    let typed = |field: &str| created.as_ref().and_then(|note| note.typed(field));
    let (name, role, plan) = (typed("name"), typed("role"), typed("plan"));
    let (per_minute, per_day) = (typed("per_minute"), typed("per_day"));
    let form = emptied_on_success(create);
    // Revoking the key this page is used with ends its session: nothing here works
    // any more, so go to the sign-in page.
    Effect::new(move |_| {
        if let (Some(Ok(key)), Some(me)) = (revoke.value().get(), me) {
            if key.id == me {
                let _ = window().location().assign("/sign-in");
            }
        }
    });
    view! {
        <h1>"API keys"</h1>
        <section class="panel" aria-labelledby="new-key-title">
            <h2 id="new-key-title">"New key"</h2>
            {
                let (role, plan) = (role.unwrap_or_default(), plan.unwrap_or_default());
                let blamed = created.clone();
                view! {
                    <ActionForm action=create node_ref=form attr:class="row-form">
                        <NameField invalid={
                            let blamed = blamed.clone();
                            move || invalid(&result.get(), &blamed, "name")
                        } value=name/>
                        <label>"Role"
                            <select name="role">
                                {Role::ALL.into_iter().map(|r| view! {
                                    <option value=r.as_str() selected=role == r.as_str()>{r.label()}</option>
                                }).collect_view()}
                            </select>
                        </label>
                        <label>"Plan"
                            <select name="plan">
                                {Plan::ALL.into_iter().map(|p| view! {
                                    <option value=p.as_str() selected=plan == p.as_str()>{plan_label(p)}</option>
                                }).collect_view()}
                            </select>
                        </label>
                        <label>"Per minute (Enterprise)"
                            <input type="number" name="per_minute" min="1" inputmode="numeric" value=per_minute
                                aria-invalid={
                                let blamed = blamed.clone();
                                move || invalid(&result.get(), &blamed, "perMinute").to_string()
                            }/>
                        </label>
                        <label>"Per day (Enterprise)"
                            <input type="number" name="per_day" min="1" inputmode="numeric" value=per_day
                                aria-invalid={
                                let blamed = blamed.clone();
                                move || invalid(&result.get(), &blamed, "perDay").to_string()
                            }/>
                        </label>
                        <button type="submit">"Create key"</button>
                    </ActionForm>
                }
            }
            {move || result.get().and_then(Result::ok).map(|created| view! {
                <p class="form-done" role="status">
                    {format!("Created key #{} ({}, {}).", created.key_info.id, created.key_info.name, created.key_info.plan.as_str())}
                </p>
                <NewKey key=created.key/>
            })}
            // Without JavaScript: the new key (or the refusal), from the note.
            {created.clone().filter(|_| result.get_untracked().is_none()).map(|note| view! {
                {note.secret.clone().map(|key| view! { <NewKey key/> })}
            })}
            <FormOutcome result=result.into() done="" note=created.clone()/>
        </section>
        <div aria-live="polite">
            {move || match revoked.get() {
                Some(Ok(key)) => view! {
                    <p class="notice notice-success" role="status">{format!("Revoked key #{} ({}).", key.id, key.name)}</p>
                }.into_any(),
                Some(Err(error)) => view! { <FormOutcome result=Signal::derive(move || Some(Err::<(), _>(error.clone()))) done=""/> }.into_any(),
                None => revoked_note.clone().map(|note| view! { <NoteView note/> }).into_any(),
            }}
        </div>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
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
                                        view! { <KeyRow row revoke mine=me last_admin/> }
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

fn plan_label(plan: Plan) -> String {
    match plan.limits() {
        Some(limits) => format!("{} ({}/min, {}/day)", plan.label(), limits.per_minute, limits.per_day),
        None => format!("{} (limits below)", plan.label()),
    }
}

#[component]
fn KeyRow(row: KeyUsage, revoke: ServerAction<RevokeKey>, mine: Option<i64>, last_admin: bool) -> impl IntoView {
    let key = row.key;
    let per_day = i64::from(key.limits.per_day);
    // Whole per cent, rounded, in integers (formatting a float would bring its code into
    // the WASM).
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
                    (None, false) => view! {
                        {confirm(
                            format!("Revoke key {}…", key.id),
                            question,
                            view! {
                                <ActionForm action=revoke attr:class="inline">
                                    <input type="hidden" name="id" value=key.id/>
                                    <button type="submit" class="danger">{format!("Yes, revoke key {}", key.id)}</button>
                                </ActionForm>
                            },
                        )}
                    }.into_any(),
                }}
            </td>
        </tr>
    }
}
