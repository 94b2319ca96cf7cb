//! What a clip records: the fleets on screen, handed over by the view
//! that shows them (the sandbox's one, the A/B view's two), and the band's
//! line over them, from the run on screen. Shared by the clip (a panel)
//! and the A/B view, so it sits below both.

use web_sys::HtmlCanvasElement;

/// One fleet a clip records: its two canvases, underneath first, and the
/// words over it (none for the sandbox's one fleet; a side's letter and
/// title in the A/B view).
pub struct Pane {
    pub base: HtmlCanvasElement,
    pub overlay: HtmlCanvasElement,
    pub label: String,
}

/// The band's line each frame, from the title and the caption's counter.
pub type Line = Box<dyn Fn(&str, stampede::Metric) -> String>;

/// What Record records, asked of the view on screen when it is pressed
/// (the app hands the clip a [`Source`]; no part is looked up by selector):
/// its fleets side by side, and, where the view has its own clock and
/// numbers (the A/B view), the band's line each frame from the title and
/// the caption's counter. Without one, the line is the sandbox's reading's.
pub struct Shot {
    pub panes: Vec<Pane>,
    pub line: Option<Line>,
}

/// Asked when Record is pressed: what is on screen to record, if anything.
pub type Source = leptos::prelude::Callback<(), Option<Shot>>;

/// The A/B view's band at one moment: the title, the one clock and both
/// sides' numbers of the comparison's counter.
pub fn ab_caption_line(
    title: &str,
    metric: stampede::Metric,
    reports: [&stampede::Report; 2],
    now_us: u64,
) -> String {
    let [a, b] = reports.map(|r| {
        catalogue::lesson::shown(metric, stampede::metrics::value(r, metric).unwrap_or(0.0))
    });
    format!(
        "{title} · t = {} ms · {}: A {a} · B {b}",
        stampede::metrics::one_decimal(now_us as f64 / 1000.0),
        crate::page::label(metric),
    )
}

/// The caption's line at one moment: the title, the clock and the proof's
/// number, all from the run on screen.
pub fn caption_line(
    title: &str,
    metric: stampede::Metric,
    report: &stampede::Report,
    now_us: u64,
) -> String {
    let value = stampede::metrics::value(report, metric).unwrap_or(0.0);
    format!(
        "{title} · t = {} ms · {}: {}",
        stampede::metrics::one_decimal(now_us as f64 / 1000.0),
        crate::page::label(metric),
        catalogue::lesson::shown(metric, value)
    )
}
