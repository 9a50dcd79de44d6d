//! Keys: create one (the secret shown once, with a copy button), revoke one, and see
//! each key's requests today against its plan's daily limit.

use leptos::prelude::*;

use crate::ui::data;
use crate::ui::widgets::PageTitle;

use super::{FormOutcome, NameField, invalid};
use crate::model::{Plan, Role};
use crate::server_fns::{CreateKey, KeyUsage, RevokeKey, admin_keys};
use crate::ui::account::NewKey;
use crate::ui::widgets::ErrorNotice;

#[component]
pub fn KeysConsole() -> impl IntoView {
    view! {
        <PageTitle text="Staff: keys"/>
        <KeysConsoleIsland/>
    }
}

/// The console page itself: a new key is shown once, in place.
#[island]
fn KeysConsoleIsland() -> impl IntoView {
    let create = ServerAction::<CreateKey>::new();
    let revoke = ServerAction::<RevokeKey>::new();
    let keys = data::resource(move || (create.version().get(), revoke.version().get()), |_| admin_keys());
    let result = create.value();
    view! {
        <h1>"API keys"</h1>
        <section class="panel" aria-labelledby="new-key-title">
            <h2 id="new-key-title">"New key"</h2>
            <ActionForm action=create attr:class="row-form">
                <NameField invalid=move || invalid(&result.get(), "name")/>
                <label>"Role"
                    <select name="role">
                        {Role::ALL.into_iter().map(|role| view! { <option value=role.as_str()>{role.as_str()}</option> }).collect_view()}
                    </select>
                </label>
                <label>"Plan"
                    <select name="plan">
                        {Plan::ALL.into_iter().map(|plan| view! { <option value=plan.as_str()>{plan_label(plan)}</option> }).collect_view()}
                    </select>
                </label>
                <label>"Per minute (Enterprise)"
                    <input type="number" name="per_minute" min="1" inputmode="numeric"
                        aria-invalid=move || invalid(&result.get(), "perMinute").to_string()/>
                </label>
                <label>"Per day (Enterprise)"
                    <input type="number" name="per_day" min="1" inputmode="numeric"
                        aria-invalid=move || invalid(&result.get(), "perDay").to_string()/>
                </label>
                <button type="submit">"Create key"</button>
            </ActionForm>
            {move || result.get().and_then(Result::ok).map(|created| view! { <NewKey key=created.key/> })}
            <FormOutcome result=result.into() done=""/>
        </section>
        <FormOutcome result=revoke.value().into() done="Key revoked."/>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match keys.await {
                    Ok(list) => view! {
                        <table class="table keys">
                            <thead><tr>
                                <th scope="col">"Id"</th><th scope="col">"Name"</th><th scope="col">"Role"</th>
                                <th scope="col">"Plan"</th><th scope="col">"Used today"</th><th scope="col">"State"</th>
                            </tr></thead>
                            <tbody>
                                {list.into_iter().map(|row| view! { <KeyRow row revoke/> }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

fn plan_label(plan: Plan) -> String {
    match plan.limits() {
        Some(limits) => format!("{} ({}/min, {}/day)", plan.as_str(), limits.per_minute, limits.per_day),
        None => format!("{} (limits below)", plan.as_str()),
    }
}

#[component]
fn KeyRow(row: KeyUsage, revoke: ServerAction<RevokeKey>) -> impl IntoView {
    let key = row.key;
    let per_day = i64::from(key.limits.per_day);
    // Whole per cent, rounded, in integers (formatting a float would bring its code into
    // the WASM).
    let percent = if per_day > 0 { (row.used_today * 100 + per_day / 2) / per_day } else { 0 };
    view! {
        <tr data-key-id=key.id>
            <td>{key.id}</td>
            <td>{key.name.clone()}</td>
            <td>{key.role.as_str()}</td>
            <td>{format!("{} ({}/min)", key.plan.as_str(), key.limits.per_minute)}</td>
            <td>
                <meter min="0" max=per_day value=row.used_today high=per_day * 8 / 10 optimum="0"
                    aria-label=format!("Requests today by key {}", key.id)></meter>
                " "{format!("{} / {} ({percent} %)", row.used_today, per_day)}
            </td>
            <td>
                {match key.revoked_at {
                    Some(at) => view! { <span class="meta">{format!("revoked {at}")}</span> }.into_any(),
                    None => view! {
                        <ActionForm action=revoke attr:class="inline">
                            <input type="hidden" name="id" value=key.id/>
                            <button type="submit" class="danger">{format!("Revoke key {}", key.id)}</button>
                        </ActionForm>
                    }.into_any(),
                }}
            </td>
        </tr>
    }
}
