//! The dashboard: first what an owner looks for (revenue today and this week, the open
//! orders to fulfil, the pets running low), then how the scheduled backups stand, stock by status, orders per hour
//! today, and API requests per minute over the last hour, for the whole API and the
//! busiest keys.

use leptos::prelude::*;

use crate::ui::data;
use crate::ui::widgets::PageTitle;

use super::charts::{Bar, BarChart, LineChart};
use crate::model::{BackupStatus, Sales, TrafficSeries};
use crate::server_fns::load_dashboard;
use crate::ui::widgets::ErrorNotice;

#[component]
pub fn DashboardPage() -> impl IntoView {
    let figures = data::resource(|| (), |_| load_dashboard());
    view! {
        <PageTitle text="Staff dashboard"/>
        <h1>"Dashboard"</h1>
        <Suspense fallback=|| view! { <p class="loading">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let figures = match figures.await {
                    Ok(figures) => figures,
                    Err(error) => return view! { <ErrorNotice error/> }.into_any(),
                };
                let stock_summary = figures
                    .stock
                    .iter()
                    .map(|s| format!("{}: {} pets, {} units", s.status, s.pets, s.units))
                    .collect::<Vec<_>>()
                    .join("; ");
                let stock_bars = figures
                    .stock
                    .iter()
                    .map(|s| Bar {
                        value: s.pets,
                        label: s.status.to_string(),
                        caption: s.pets.to_string(),
                        class: s.status.as_str(),
                    })
                    .collect();
                let orders_today: i64 = figures.orders_per_hour.iter().sum();
                let hour_now = figures.hour_now as usize;
                let busiest = figures
                    .orders_per_hour
                    .iter()
                    .enumerate()
                    .max_by_key(|&(hour, &n)| (n, std::cmp::Reverse(hour)))
                    .filter(|&(_, &n)| n > 0)
                    .map(|(hour, n)| format!(", most at {hour:02}:00 ({n})"))
                    .unwrap_or_default();
                let order_bars = figures
                    .orders_per_hour
                    .iter()
                    .enumerate()
                    .map(|(hour, &n)| {
                        let label = if hour % 3 == 0 { format!("{hour:02}") } else { String::new() };
                        // No count over each of 24 narrow bars: they would overlap. The
                        // caption names the day's total and its busiest hour.
                        Bar { value: n, label, caption: String::new(), class: if hour == hour_now { "now" } else { "past" } }
                    })
                    .collect();
                view! {
                    <SalesPanel sales=figures.sales/>
                    <BackupNote status=figures.backups/>
                    <div class="dashboard">
                        <figure class="panel">
                            <figcaption>"Pets by status"</figcaption>
                            <BarChart bars=stock_bars summary=format!("Pets by status. {stock_summary}")/>
                            <p class="chart-note">{stock_summary.clone()}</p>
                        </figure>
                        <figure class="panel">
                            <figcaption>{format!("Orders per hour today (UTC): {orders_today} so far{busiest}")}</figcaption>
                            <BarChart
                                bars=order_bars
                                summary=format!("Orders placed per hour today, UTC: {orders_today} in all; hour {hour_now} is now")
                            />
                        </figure>
                        <TrafficFigure series=figures.api/>
                        {figures.busiest.into_iter().map(|series| view! { <TrafficFigure series/> }).collect_view()}
                    </div>
                    {figures_empty_note(orders_today)}
                }
                .into_any()
            })}
        </Suspense>
    }
}

/// Revenue, orders to fulfil and pets running low, each leading to where it is dealt with.
#[component]
fn SalesPanel(sales: Sales) -> impl IntoView {
    let currency = crate::ui::widgets::store_currency();
    let open = sales.open_orders;
    let low = if sales.low_stock.is_empty() {
        view! { <p class="meta">"No pet for sale is running low."</p> }.into_any()
    } else {
        view! {
            <ul class="low-stock-list">
                {sales.low_stock.into_iter().map(|pet| view! {
                    <li>
                        <a href=format!("/admin/pets/{}", pet.id)>{pet.name}</a>
                        " "<span class="badge badge-low">{format!("{} left", pet.quantity)}</span>
                    </li>
                }).collect_view()}
            </ul>
        }
        .into_any()
    };
    view! {
        <section class="panel sales" aria-labelledby="sales-title">
            <h2 id="sales-title">"Sales"</h2>
            <dl class="sales-figures">
                <div><dt>"Revenue today"</dt><dd>{currency.format(sales.revenue_today)}</dd></div>
                <div><dt>"This week (since Monday)"</dt><dd>{currency.format(sales.revenue_this_week)}</dd></div>
                <div>
                    <dt>"Open orders to fulfil"</dt>
                    <dd><a href="/admin/orders?state=open">{format!("{open} →")}</a></dd>
                </div>
            </dl>
            <p class="meta">"Days are in UTC; cancelled orders are not counted."</p>
            <h3>"Running low"</h3>
            {low}
            <p><a href="/admin/inventory">"All stock →"</a></p>
        </section>
    }
}

fn figures_empty_note(orders_today: i64) -> Option<impl IntoView> {
    (orders_today == 0).then(|| view! { <p class="meta">"No orders yet today."</p> })
}

#[component]
fn TrafficFigure(series: TrafficSeries) -> impl IntoView {
    let total = series.total();
    let caption = match series.key_id {
        None => format!("API requests per minute, last hour: {total} in all"),
        Some(_) => format!("{}: {total} requests in the last hour", series.label),
    };
    view! {
        <figure class="panel">
            <figcaption>{caption.clone()}</figcaption>
            <LineChart points=series.per_minute summary=caption first_label="60 min ago" last_label="now"/>
        </figure>
    }
}

/// When the last scheduled backup was taken, or a warning when it is late or failing.
/// Nothing on a PostgreSQL store, which is backed up with PostgreSQL's own tools.
#[component]
fn BackupNote(status: Option<BackupStatus>) -> impl IntoView {
    let status = status?;
    let how = "docs/operations.md, \u{201c}Backups\u{201d}";
    Some(match (status.warning, status.last_success_at, status.every_seconds) {
        (Some(warning), _, _) => view! {
            <p class="notice notice-warning backups" role="alert">
                <strong>"Backups: "</strong>{warning}{format!(" See {how}.")}
            </p>
        }
        .into_any(),
        (None, Some(at), _) => {
            let ago = status.last_success_ago_seconds.map(crate::model::span_in_words).unwrap_or_default();
            let file = status.last_file.unwrap_or_default();
            view! {
                <p class="backups">
                    {format!("Last backup taken {ago} ago (")}<time datetime=at.clone()>{at.clone()}</time>
                    {format!("): {file}")}
                </p>
            }
            .into_any()
        }
        (None, None, Some(_)) => {
            view! { <p class="backups">"The first scheduled backup is being taken."</p> }.into_any()
        }
        (None, None, None) => view! {
            <p class="backups">{format!("Scheduled backups are off (start the server with --backup-dir; {how}).")}</p>
        }
        .into_any(),
    })
}
