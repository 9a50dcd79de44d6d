//! Small charts drawn as inline SVG by the app itself (no chart library, no CDN). Each
//! says what it shows in words too (`aria-label`), for screen readers.

use leptos::prelude::*;

/// About as wide as a dashboard panel draws it on a desktop or a phone, so that its
/// words (in the drawing's units) come out near their size in the style sheet.
const WIDTH: f64 = 300.0;
const HEIGHT: f64 = 135.0;
/// Room under the bars for their labels.
const LABEL_ROOM: f64 = 20.0;
const VIEW_BOX: &str = "0 0 300 135";

/// A coordinate to one decimal, written with integer formatting only: the browser's
/// code for formatting floats (`f64`'s `Display`) is about 14 KB of WASM, used
/// nowhere else.
fn coordinate(value: f64) -> String {
    let tenths = (value * 10.0).round() as i64;
    let sign = if tenths < 0 { "-" } else { "" };
    format!("{sign}{}.{}", tenths.abs() / 10, tenths.abs() % 10)
}

/// One bar: its height, the label under it and the text over it (either may be empty),
/// and the CSS class that colours it.
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
            let x = slot.mul_add(0.15, i as f64 * slot);
            let y = plot - height;
            view! {
                <g>
                    <rect class=format!("bar {class}") x=coordinate(x) y=coordinate(y) width=coordinate(slot * 0.7)
                        height=coordinate(height) rx="2"></rect>
                    {(value > 0 && !caption.is_empty()).then(|| view! {
                        <text class="bar-value" x=coordinate(slot.mul_add(0.35, x)) y=coordinate(y - 3.0) text-anchor="middle">{caption}</text>
                    })}
                    <text class="bar-label" x=coordinate(slot.mul_add(0.35, x)) y=coordinate(HEIGHT - 4.0) text-anchor="middle">{label}</text>
                </g>
            }
        })
        .collect_view();
    view! {
        <svg class="chart" viewBox=VIEW_BOX role="img" aria-label=summary>
            <line class="axis" x1="0" y1=coordinate(plot) x2=coordinate(WIDTH) y2=coordinate(plot)></line>
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
    let coordinates: Vec<(f64, f64)> = points
        .iter()
        .enumerate()
        .map(|(i, &n)| (i as f64 * step, (f64::from(n) / max).mul_add(-(plot - 14.0), plot)))
        .collect();
    let line =
        coordinates.iter().map(|&(x, y)| format!("{},{}", coordinate(x), coordinate(y))).collect::<Vec<_>>().join(" ");
    let area = format!("0,{plot} {line} {width},{plot}", plot = coordinate(plot), width = coordinate(WIDTH));
    let peak = points.iter().copied().max().unwrap_or(0);
    view! {
        <svg class="chart" viewBox=VIEW_BOX role="img" aria-label=summary>
            <line class="axis" x1="0" y1=coordinate(plot) x2=coordinate(WIDTH) y2=coordinate(plot)></line>
            <polygon class="area" points=area></polygon>
            <polyline class="line" points=line></polyline>
            <text class="bar-value" x="4" y="12">{format!("peak {peak}/min")}</text>
            <text class="bar-label" x="0" y=coordinate(HEIGHT - 4.0)>{first_label}</text>
            <text class="bar-label" x=coordinate(WIDTH) y=coordinate(HEIGHT - 4.0) text-anchor="end">{last_label}</text>
        </svg>
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn coordinates_have_one_decimal() {
        assert_eq!(super::coordinate(12.34), "12.3");
        assert_eq!(super::coordinate(0.0), "0.0");
        assert_eq!(super::coordinate(159.96), "160.0");
        assert_eq!(super::coordinate(-2.25), "-2.3");
        assert_eq!(super::coordinate(-0.04), "0.0");
    }
}
