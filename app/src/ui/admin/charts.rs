//! Small charts drawn as inline SVG by the app itself (no chart library, no CDN). Each
//! says what it shows in words too (`aria-label`), for screen readers.

use leptos::prelude::*;

const WIDTH: f64 = 400.0;
const HEIGHT: f64 = 180.0;
/// Room under the bars for their labels.
const LABEL_ROOM: f64 = 20.0;

/// One bar: its height, the label under it (may be empty), the text over it, and the
/// CSS class that colours it.
pub struct Bar {
    pub value: i64,
    pub label: String,
    pub caption: String,
    pub class: &'static str,
}

/// Vertical bars with a label under each.
#[component]
pub fn BarChart(
    bars: Vec<Bar>,
    /// What the chart shows, in words.
    #[prop(into)]
    summary: String,
) -> impl IntoView {
    let max = bars.iter().map(|b| b.value).max().unwrap_or(0).max(1) as f64;
    let slot = WIDTH / bars.len().max(1) as f64;
    let plot = HEIGHT - LABEL_ROOM;
    let drawn = bars
        .into_iter()
        .enumerate()
        .map(|(i, Bar { value, label, caption, class })| {
            let height = (value as f64 / max * (plot - 14.0)).max(if value > 0 { 1.0 } else { 0.0 });
            let x = i as f64 * slot + slot * 0.15;
            let y = plot - height;
            view! {
                <g>
                    <rect class=format!("bar {class}") x=x y=y width=slot * 0.7 height=height rx="2"></rect>
                    {(value > 0).then(|| view! {
                        <text class="bar-value" x=x + slot * 0.35 y=y - 3.0 text-anchor="middle">{caption}</text>
                    })}
                    <text class="bar-label" x=x + slot * 0.35 y=HEIGHT - 4.0 text-anchor="middle">{label}</text>
                </g>
            }
        })
        .collect_view();
    view! {
        <svg class="chart" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=summary>
            <line class="axis" x1="0" y1=plot x2=WIDTH y2=plot></line>
            {drawn}
        </svg>
    }
}

/// A line over evenly spaced points (oldest first), with its peak marked.
#[component]
pub fn LineChart(
    points: Vec<u32>,
    #[prop(into)] summary: String,
    /// Labels under the first and last point.
    first_label: &'static str,
    last_label: &'static str,
) -> impl IntoView {
    let max = points.iter().copied().max().unwrap_or(0).max(1) as f64;
    let plot = HEIGHT - LABEL_ROOM;
    let step = WIDTH / (points.len().max(2) - 1) as f64;
    let coordinates: Vec<(f64, f64)> =
        points.iter().enumerate().map(|(i, &n)| (i as f64 * step, plot - f64::from(n) / max * (plot - 14.0))).collect();
    let line = coordinates.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect::<Vec<_>>().join(" ");
    let area = format!("0,{plot} {line} {WIDTH},{plot}");
    let peak = points.iter().copied().max().unwrap_or(0);
    view! {
        <svg class="chart" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=summary>
            <line class="axis" x1="0" y1=plot x2=WIDTH y2=plot></line>
            <polygon class="area" points=area></polygon>
            <polyline class="line" points=line></polyline>
            <text class="bar-value" x="4" y="12">{format!("peak {peak}/min")}</text>
            <text class="bar-label" x="0" y=HEIGHT - 4.0>{first_label}</text>
            <text class="bar-label" x=WIDTH y=HEIGHT - 4.0 text-anchor="end">{last_label}</text>
        </svg>
    }
}
