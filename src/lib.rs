//! The Stampede Lab page. It owns no stampede logic: every number it shows is
//! measured by running `stampede::sim::Fleet` in the browser on the current
//! knobs, so the page and the command-line tool cannot disagree.
//!
//! Its parts, from the top. A part imports only parts below it or of its
//! own layer, and a view never imports another view (checked by
//! `scripts/import-graph.py`, in `make test` and in the `layout` test
//! below):
//!
//! - app: `app`, the page, which wires the views with signals (and this
//!   file, which mounts it)
//! - the views: `panels` (`counters`, `code_panel`, `knobs`, `transport`,
//!   `conformance`: the numbers and the controls), `lesson` (the tour's
//!   bar, presenter mode, drills, practice), `compare` (the A/B view: two
//!   designs on the same traffic, from one clock), `kit` (the interviewer's
//!   kit, a second window, `?kit=1`), `playlist` (a trainer's list of
//!   views), `embed` (the run in an iframe, `embed=1`, and its snippet),
//!   `qr` (the link's QR code)
//! - the stage: `stage` (`fleet_layout`, `fleet_view`, `palette`, `pen`,
//!   `chart`: the canvases; `room`: what presenter mode asks of them) and
//!   `engine`, the animation loop the page and the A/B view drive
//! - the page: `page` (what the views share: the transport's commands,
//!   whom the code panel follows, the counters' labels, the contrast runs,
//!   `Page`, the page state a step or a link sets; `knob`, the knob table
//!   and each knob's control), `panic` (the crash screen)
//! - the experiment: `lab` (the fleet being animated, its comparison rows,
//!   chart samples, markers; host-testable, no web types), `clock` (speed,
//!   pacing, the frame budget), `url_state` (the share link), `reading`
//!   (what one frame measured)
//! - the web leaf: `web` (window, document, storage, wall time) and `dom`
//!   (the kit for parts built with plain DOM calls); they import nothing
//!   from the page

pub mod app;
pub mod compare;
pub mod dom;
pub mod embed;
pub mod engine;
pub mod experiment;
pub mod kit;
pub mod lesson;
pub mod page;
pub mod panels;
pub mod panic;
pub mod playlist;
pub mod qr;
pub mod relay;
pub mod stage;
pub mod web;

// Short paths for the modules (and for the tests that import them).
pub use experiment::{clock, lab, reading, url_state};
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
    // index.html holds a `<div id="lab">` for the page, with the static
    // reference after it; without one, the page takes the whole body.
    match web::document()
        .get_element_by_id("lab")
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        // A phone's vote page (with a relay): the room's vote alone.
        Some(root) if lesson::room_vote::wanted(&query) => {
            root.set_text_content(None);
            leptos::mount::mount_to(root, lesson::room_vote::Phone).forget()
        }
        Some(root) if kit::wanted(&query) => {
            root.set_text_content(None);
            leptos::mount::mount_to(root, kit::Kit).forget()
        }
        Some(root) => {
            let first = take_first_screen(&root);
            leptos::mount::mount_to(root, move || {
                if let Some(f) = first {
                    leptos::prelude::provide_context(f);
                }
                leptos::prelude::view! { <App /> }
            })
            .forget()
        }
        None => leptos::mount::mount_to_body(App),
    }
    if embed::wanted(&query) {
        embed::install();
    }
    embed::wire_snippet();
    qr::install();
}

/// Takes over the static first screen in `root` (index.html: the first
/// tour step and its options as plain HTML, there before the wasm): the
/// answer picked on it, if any, and then `root` emptied for the page. The
/// one place the page reads the static HTML it replaces.
fn take_first_screen(root: &web_sys::HtmlElement) -> Option<page::FirstPick> {
    let screen = root.query_selector("[data-first-screen]").ok().flatten();
    let pick = screen.and_then(|s| {
        let place = catalogue::tour::parse_hash(&format!(
            "#tour/{}",
            s.get_attribute("data-first-screen")?
        ))?;
        let option = s
            .query_selector("input[name=first-pick]:checked")
            .ok()
            .flatten()?
            .dyn_into::<web_sys::HtmlInputElement>()
            .ok()?
            .value()
            .parse()
            .ok()?;
        Some(page::FirstPick { place, option })
    });
    root.set_text_content(None);
    pick
}

/// The imports run one way: app, then the views (a view never imports
/// another), the stage, the page, the experiment, and the web leaf. The one
/// source of truth is `scripts/import-graph.py` (its table of layers, its
/// allowlist that can only shrink), which `make test` runs; this runs it
/// from `cargo test` too.
#[cfg(all(test, not(target_family = "wasm")))]
mod layout {
    #[test]
    fn imports_run_one_way_with_no_circle() {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/import-graph.py");
        let out = std::process::Command::new("python3")
            .arg(script)
            .output()
            .expect("python3 runs scripts/import-graph.py");
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
