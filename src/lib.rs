//! The Stampede Lab page. It owns no stampede logic: every number it shows is
//! measured by running `stampede::sim::Fleet` in the browser on the current
//! knobs, so the page and the command-line tool cannot disagree.
//!
//! - `lab`: the experiment being animated (host-testable, no web types)
//! - `clock`: playback speed and the frame budget
//! - `url_state`: the share link, read and written
//! - `fleet_layout`, `fleet_view`, `palette`, `chart`, `pen`: the canvases
//! - `knobs`, `counters`, `code_panel`, `transport`: the controls and the numbers
//! - `app`: the page; `engine`: its animation loop; `panic`: the crash screen

pub mod app;
pub mod chart;
pub mod clock;
pub mod code_panel;
pub mod counters;
pub mod engine;
pub mod fleet_layout;
pub mod fleet_view;
pub mod knobs;
pub mod lab;
pub mod palette;
pub mod panic;
pub mod pen;
pub mod transport;
pub mod url_state;

pub use app::App;

/// Installs the crash screen, then mounts the page on `<body>`.
pub fn start() {
    panic::install();
    leptos::mount::mount_to_body(App);
}
