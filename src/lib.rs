//! The Stampede Lab page. It owns no stampede logic: every number it shows is
//! measured by running `stampede::sim::Fleet` in the browser on the current
//! knobs, so the page and the command-line tool cannot disagree.
//!
//! Its parts, with arrows pointing one way (panels and stage read the
//! experiment; the experiment reads only the core):
//!
//! - `experiment`: `lab` (the fleet being animated, its comparison rows,
//!   chart samples, markers; host-testable, no web types), `clock` (speed,
//!   pacing, the frame budget), `url_state` (the share link), `reading`
//!   (what one frame measured)
//! - `stage`: `fleet_layout`, `fleet_view`, `palette`, `pen`, `chart` (the
//!   canvases)
//! - `panels`: `counters`, `code_panel`, `knobs`, `transport` (the numbers
//!   and the controls)
//! - `kit`: the interviewer's kit, a second window (`?kit=1`); `embed`:
//!   the run in an iframe (`embed=1`) and its snippet; `qr`: the link's QR code;
//!   `playlist`: a trainer's list of views, built, linked and stepped
//! - `more`: the two builds (the tour build a first visit loads, the full
//!   build everything else) and the way from one to the other; `tour_only`
//!   holds the tour build's stand-ins for the full build's parts
//! - `app`: the page; `compare`: the A/B view (two designs on the same
//!   traffic, from one clock); `engine`: the animation loop both drive;
//!   `panic`: the crash screen

pub mod app;
#[cfg(feature = "full")]
pub mod compare;
pub mod dom;
pub mod embed;
pub mod engine;
pub mod experiment;
pub mod kit;
pub mod lesson;
pub mod more;
pub mod page;
pub mod panels;
pub mod panic;
#[cfg(feature = "full")]
pub mod playlist;
#[cfg(feature = "full")]
pub mod qr;
pub mod stage;
#[cfg(not(feature = "full"))]
mod tour_only;
pub mod web;
#[cfg(not(feature = "full"))]
pub use tour_only::{compare, playlist, qr};

// Short paths for the modules (and for the tests that import them).
pub use experiment::{clock, lab, reading, url_state};
#[cfg(feature = "full")]
pub use panels::knobs;
pub use panels::{code_panel, counters, transport};
pub use stage::{chart, fleet_layout, fleet_view, palette, pen};

pub use app::App;
use wasm_bindgen::JsCast;

/// Installs the crash screen, then mounts the page, in a task of its own:
/// on a cold browser, finishing the module's compilation is a task's worth
/// of work already.
pub fn start() {
    panic::install();
    leptos::prelude::set_timeout(mount, std::time::Duration::ZERO);
}

fn mount() {
    let query = web::window().location().search().unwrap_or_default();
    // The tour build shows only the tour; anything else is the full build's
    // (the loader chose by the same rule; this keeps the two from parting).
    if !more::FULL {
        let hash = web::window().location().hash().unwrap_or_default();
        if !more::tour_only(&query, &hash) {
            more::upgrade(None);
            return;
        }
    }
    // index.html holds a `<div id="lab">` for the page, with the static
    // reference after it; without one, the page takes the whole body.
    match web::document()
        .get_element_by_id("lab")
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        #[cfg(feature = "full")]
        Some(root) if kit::wanted(&query) => leptos::mount::mount_to(root, kit::Kit).forget(),
        Some(root) => leptos::mount::mount_to(root, App).forget(),
        None => leptos::mount::mount_to_body(App),
    }
    if embed::wanted(&query) {
        embed::install();
    }
    embed::wire_snippet();
    qr::install();
}

#[cfg(test)]
mod layout {
    //! The arrows point one way: the experiment reads only the core; the
    //! stage reads the experiment; the panels read both. A new import that
    //! points back fails here.

    const EXPERIMENT: [(&str, &str); 4] = [
        ("lab", include_str!("experiment/lab.rs")),
        ("clock", include_str!("experiment/clock.rs")),
        ("url_state", include_str!("experiment/url_state.rs")),
        ("reading", include_str!("experiment/reading.rs")),
    ];
    const STAGE: [(&str, &str); 5] = [
        ("chart", include_str!("stage/chart.rs")),
        ("fleet_layout", include_str!("stage/fleet_layout.rs")),
        ("fleet_view", include_str!("stage/fleet_view.rs")),
        ("palette", include_str!("stage/palette.rs")),
        ("pen", include_str!("stage/pen.rs")),
    ];
    const PANELS: [&str; 4] = ["counters", "code_panel", "knobs", "transport"];
    const STAGE_NAMES: [&str; 5] = ["chart", "fleet_layout", "fleet_view", "palette", "pen"];
    const TOP: [&str; 4] = ["app", "compare", "engine", "panic"];

    fn imports(src: &str, module: &str) -> bool {
        src.contains(&format!("crate::{module}::")) || src.contains(&format!("crate::{module};"))
    }

    #[test]
    fn the_experiment_reads_only_the_core() {
        for (name, src) in EXPERIMENT {
            for m in PANELS.iter().chain(&STAGE_NAMES).chain(&TOP) {
                assert!(!imports(src, m), "experiment/{name} imports {m}");
            }
        }
    }

    #[test]
    fn the_stage_does_not_read_the_panels() {
        for (name, src) in STAGE {
            for m in PANELS.iter().chain(&TOP) {
                assert!(!imports(src, m), "stage/{name} imports {m}");
            }
        }
    }
}
