//! The stage's part of the page: the fleet's canvas (and the overlay the
//! pulses are drawn on), the note said while the fleet is drawn as bands,
//! the legend, the timeline chart and its markers as a list. The canvases
//! are handed to the engine, which draws them each frame; a click on a
//! thread follows it through the read path.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::engine::{start_loop, Engine, Surface};
use crate::page::Follow;
use crate::palette::{colour, Glyph, LOOKS};
use crate::reading::Reading;

/// The fleet and the timeline. `animation`: the animation loop's handles
/// (whether the run plays, its speed, what each frame measured); `stage`,
/// `overlay` and `frame`: the fleet's canvases and their box, which the
/// app's clip and presenter mode read too.
pub(crate) fn stage(
    engine: StoredValue<Engine, LocalStorage>,
    follow: RwSignal<Follow>,
    animation: (RwSignal<bool>, RwSignal<f64>, RwSignal<Reading>),
    stage: NodeRef<leptos::html::Canvas>,
    overlay: NodeRef<leptos::html::Canvas>,
    frame: NodeRef<leptos::html::Div>,
) -> impl IntoView {
    let (playing, speed, reading) = animation;
    // Rebuilt only when the markers change, not on every frame's reading.
    let markers = Memo::new(move |_| reading.with(|r| r.markers.clone()));
    // Said only while the fleet is drawn as bands.
    let aggregated_ref = NodeRef::<leptos::html::P>::new();
    crate::dom::effect(move || {
        let Some(p) = aggregated_ref.get() else {
            return;
        };
        let (on, threads) = reading.with(|r| (r.aggregated, r.naive()));
        let _ = p.toggle_attribute_with_force("hidden", !on);
        if on {
            crate::dom::set_text(
                &p,
                &format!(
                    "Drawn aggregated: {threads} threads are too many to draw one by one, so each \
                     office shows how many of its threads are in each state, as bands."
                ),
            );
        }
    });
    // The timeline's markers as a list, rewritten when they change.
    let markers_ref = NodeRef::<leptos::html::Ol>::new();
    crate::dom::effect(move || {
        let Some(ol) = markers_ref.get() else {
            return;
        };
        markers.with(|m| {
            ol.set_text_content(None);
            for (t, what) in m {
                let at = crate::clock::now_ms_text(*t);
                let li = crate::dom::text_el("li", "", &format!("{what} at {at} ms"));
                crate::dom::set(&li, "data-marker-t", &t.to_string());
                crate::dom::put(&ol, &li);
            }
        });
    });
    let (stage_ref, overlay_ref) = (stage, overlay);
    let chart_ref = NodeRef::<leptos::html::Canvas>::new();
    crate::dom::effect(move || {
        let (Some(stage), Some(overlay), Some(chart)) =
            (stage_ref.get(), overlay_ref.get(), chart_ref.get())
        else {
            return;
        };
        // A click on a thread follows it through the read path.
        let click =
            Closure::<dyn FnMut(web_sys::MouseEvent)>::new(move |ev: web_sys::MouseEvent| {
                let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
                if let Some(g) = engine.try_with_value(|e| e.thread_at(x, y)).flatten() {
                    follow.set(Follow::Thread(g));
                }
            });
        let _ = stage.add_event_listener_with_callback("click", click.as_ref().unchecked_ref());
        click.forget();
        engine.update_value(|e| {
            e.stage = Surface::new(stage).zip(Surface::new(overlay));
            e.chart = Surface::new(chart);
        });
        set_timeout(
            move || {
                let _ = engine.try_update_value(Engine::warm_up);
            },
            std::time::Duration::ZERO,
        );
        start_loop(engine, playing, speed, reading);
    });

    view! {
            <section class="panel stage" aria-labelledby="stage-title">
                <h2 id="stage-title" class="sr-only">"The fleet"</h2>
                <div class="stage-canvas" node_ref=frame>
                    <canvas
                        node_ref=stage_ref
                        role="img"
                        aria-label="The fleet: one box per instance, one mark per thread, coloured by what the thread is doing; Redis and the origin on the right."
                    ></canvas>
                    <canvas node_ref=overlay_ref class="overlay" aria-hidden="true"></canvas>
                </div>
                <p class="aggregated-note" data-note="aggregated" node_ref=aggregated_ref hidden></p>
                <Legend />
            </section>
            <section class="panel chart" aria-labelledby="chart-title">
                <h2 id="chart-title">"Over virtual time"</h2>
                <div class="chart-canvas">
                    <canvas
                        node_ref=chart_ref
                        role="img"
                        aria-label="Timeline: recomputes running at the origin, Redis round trips, errors and timeouts, and stale answers over virtual time."
                    ></canvas>
                </div>
                <ol class="markers" aria-label="What happens when" node_ref=markers_ref></ol>
            </section>
    }
}

/// What Record clip records: `other`'s panes when it has them (the A/B
/// view's two fleets while it is open), else the sandbox's fleet.
pub(crate) fn clip_source(
    stage: NodeRef<leptos::html::Canvas>,
    overlay: NodeRef<leptos::html::Canvas>,
    other: crate::stage::shot::Source,
) -> crate::stage::shot::Source {
    Callback::new(move |_| {
        if let Some(shot) = other.run(()) {
            return Some(shot);
        }
        let (base, overlay) = (stage.get_untracked()?, overlay.get_untracked()?);
        Some(crate::stage::shot::Shot {
            panes: vec![crate::stage::shot::Pane {
                base,
                overlay,
                label: String::new(),
            }],
            line: None,
        })
    })
}

/// The key to the fleet's colours and shapes: static, built once from the
/// palette with plain DOM calls (each shape a few SVG attributes).
#[component]
fn Legend() -> impl IntoView {
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |r| build_legend(&r),
    );
    view! {
        <p class="legend-key" data-note="legend">
            <strong>"How to read it: "</strong>
            "each box is one instance (an office); each mark is one request thread in it, shaped and coloured by what it is doing. "
            "Redis and the origin sit on the right; dots travelling between them are requests on the wire. "
            "While only a few threads do the expensive work, a ring marks each of them."
        </p>
        <div node_ref=root></div>
    }
}

fn build_legend(root: &web_sys::Element) {
    use crate::dom::{el, put, set};
    use crate::web::document;
    let svg = |tag: &str, attrs: &[(&str, &str)]| {
        let e = document()
            .create_element_ns(Some("http://www.w3.org/2000/svg"), tag)
            .expect("an svg element");
        for (k, v) in attrs {
            set(&e, k, v);
        }
        e
    };
    let list = el("ul", "legend");
    set(&list, "aria-label", "Legend");
    for l in LOOKS.iter() {
        let (tag, class, attrs): (&str, &str, &[(&str, &str)]) = match l.glyph {
            Glyph::Square => (
                "rect",
                "fill",
                &[("x", "2"), ("y", "2"), ("width", "10"), ("height", "10")],
            ),
            Glyph::Ring => (
                "rect",
                "ring",
                &[("x", "2.5"), ("y", "2.5"), ("width", "9"), ("height", "9")],
            ),
            Glyph::Triangle => ("polygon", "fill", &[("points", "7,1 13,13 1,13")]),
            Glyph::Diamond => ("polygon", "fill", &[("points", "7,1 13,7 7,13 1,7")]),
            Glyph::Cross => ("path", "ring", &[("d", "M2 2 L12 12 M12 2 L2 12")]),
            Glyph::HollowDiamond => (
                "polygon",
                "ring",
                &[("points", "7,1.5 12.5,7 7,12.5 1.5,7")],
            ),
            Glyph::Circle => ("circle", "ring", &[("cx", "7"), ("cy", "7"), ("r", "5")]),
        };
        let li = el("li", "");
        set(&li, "title", l.help);
        // Custom properties through the CSSOM, which the page's
        // Content-Security-Policy allows (a style attribute it blocks).
        if let Some(h) = li.dyn_ref::<web_sys::HtmlElement>() {
            let _ = h.style().set_property("--c-light", colour(l, false));
            let _ = h.style().set_property("--c-dark", colour(l, true));
        }
        let icon = svg(
            "svg",
            &[
                ("width", "14"),
                ("height", "14"),
                ("viewBox", "0 0 14 14"),
                ("aria-hidden", "true"),
            ],
        );
        let shape = svg(tag, attrs);
        set(&shape, "class", class);
        put(&icon, &shape);
        put(&li, &icon);
        let _ = li.append_with_str_1(l.label);
        put(&list, &li);
    }
    put(root, &list);
    crate::fleet_view::build_terms(root);
}
