//! The staff page: every key with its usage today. Refused on the server to anyone
//! but an admin (the server function checks the role), and hidden from the menu.

use leptos::prelude::*;
use leptos_meta::Title;

use super::widgets::{ErrorNotice, set_status};
use crate::error::ErrorCode;
use crate::server_fns::admin_keys;

#[component]
pub fn AdminPage() -> impl IntoView {
    let keys = Resource::new(|| (), |_| admin_keys());
    view! {
        <Title text="Staff"/>
        <h1>"Staff: API keys"</h1>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match keys.await {
                    Ok(list) => view! {
                        <table class="table">
                            <thead><tr>
                                <th scope="col">"Id"</th><th scope="col">"Name"</th><th scope="col">"Role"</th>
                                <th scope="col">"Plan"</th><th scope="col">"Used today"</th><th scope="col">"Revoked"</th>
                            </tr></thead>
                            <tbody>
                                {list.into_iter().map(|row| view! {
                                    <tr>
                                        <td>{row.key.id}</td>
                                        <td>{row.key.name}</td>
                                        <td>{row.key.role.as_str()}</td>
                                        <td>{row.key.plan.as_str()}</td>
                                        <td>{format!("{} / {}", row.used_today, row.key.limits.per_day)}</td>
                                        <td>{row.key.revoked_at.unwrap_or_else(|| "—".into())}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    }.into_any(),
                    Err(error) if matches!(error.code, ErrorCode::Forbidden | ErrorCode::MissingApiKey) => {
                        set_status(error.status);
                        view! {
                            <section class="notice notice-error" role="alert">
                                <h2>"Staff only"</h2>
                                <p>{if error.code == ErrorCode::Forbidden {
                                    "Your key is a customer key; this page is for staff."
                                } else {
                                    "Sign in with a staff key to see this page."
                                }}</p>
                                <p><a href="/sign-in">"Sign in"</a></p>
                            </section>
                        }.into_any()
                    }
                    Err(error) => view! { <ErrorNotice error/> }.into_any(),
                }
            })}
        </Suspense>
    }
}
