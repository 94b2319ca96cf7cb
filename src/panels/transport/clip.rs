//! The clip export: the run on screen recorded as WebM for slides and chat,
//! with `MediaRecorder` on a canvas stream (no library).
//!
//! Which canvas: the fleet is two canvases stacked, the threads and boxes
//! underneath and the moving parts (the pulses, Redis and the origin, the
//! followed thread's ring) on the overlay above. Recording either alone
//! would lose half of the picture, so each frame of the recording copies
//! both, in their order, onto one canvas, under a band that says what the
//! clip shows, the clock and the proof's number (so a clip in a slide
//! carries its own caption), and that canvas's `captureStream()` is what
//! is recorded. In the A/B view both sides' fleets are recorded side by
//! side, each under its letter and title, and the band's numbers are both
//! sides'. The view on screen hands over what to record (a [`Source`],
//! from the app). In presenter mode the clip is at least 1280 px wide. The
//! timeline chart is left out: a clip is the fleet's picture.
//!
//! Hooks: `data-clip` (the box), `data-control="clip"` (Record / Stop),
//! `data-clip-length` (the recorded length while recording, then the
//! clip's length and size; while recording it carries `data-clip-size`,
//! the recorded canvas's `WxH`, and `data-clip-caption`, the band's line),
//! `data-clip-download` (the `.webm` link).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, Element, HtmlCanvasElement, MediaRecorder};

use catalogue::playlist::{Item, View};

use crate::dom::{button, el, put, set, set_text, Listeners};
pub use crate::stage::shot::{caption_line, Shot, Source};
use crate::web::{document, wall_now, window};

/// The types tried, best first; the first the browser records is used.
const TYPES: [&str; 3] = [
    "video/webm;codecs=vp9",
    "video/webm;codecs=vp8",
    "video/webm",
];

/// Frames a second asked of the canvas stream.
const FPS: f64 = 30.0;

type Stopped = Rc<std::cell::Cell<Option<f64>>>;
type Frame = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;

struct Recording {
    recorder: MediaRecorder,
    /// When Stop was pressed (wall ms): the frame loop ends, and the clip's
    /// length runs to it.
    stopped: Stopped,
}

/// "3.2 s" from milliseconds, in whole tenths (no float formatting).
pub fn length_text(ms: f64) -> String {
    let tenths = (ms.max(0.0) / 100.0) as u64;
    format!("{}.{} s", tenths / 10, tenths % 10)
}

/// "512 B", "38 KB".
pub fn size_text(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{} KB", (bytes + 512) / 1024)
    }
}

/// The view a page address shows, read as "Add this view" and the list's
/// strip read it ([`Item::from_link`]); `None` for an address that shows no
/// view of its own (an unknown drill or comparison).
fn view_of(href: &str) -> Option<Item> {
    let (rest, hash) = href.split_once('#').unwrap_or((href, ""));
    let query = rest.split_once('?').map_or("", |(_, q)| q);
    let hash = if hash.is_empty() {
        String::new()
    } else {
        format!("#{hash}")
    };
    Item::from_link(query, &hash).ok()
}

/// A clip's file name from the page's address and when it was recorded
/// (`YYYY-MM-DD-HHMM`): what it shows, so that a talk's clips sort and read
/// apart. `stampede-lab-tour-basics-2-….webm` for a tour step,
/// `stampede-lab-ab-layered-…` for an A/B view, `stampede-lab-drill-…` for
/// a drill, `stampede-lab-<preset>-…` for a preset's run (`-changed` when
/// knobs were turned), `stampede-lab-sandbox-…` for a run far from every
/// preset.
pub fn clip_name(href: &str, when: &str) -> String {
    let what = match view_of(href).map(|i| i.view) {
        Some(View::Tour(place)) => format!(
            "tour-{}",
            crate::page::slug(&catalogue::tour::place_name(place))
        ),
        Some(View::Compare { name, .. }) => format!("ab-{name}"),
        Some(View::Drill { name, .. }) => format!("drill-{name}"),
        // The run's scenario (the page writes a preset's link in its
        // shortest form, without `preset=`): the preset it is, or the one
        // it was made from with knobs turned.
        Some(View::Scenario { scenario, .. }) => match (
            stampede::scenario::preset_of(&scenario),
            stampede::scenario::closest_preset(&scenario),
        ) {
            (Some(p), _) => p.to_string(),
            (None, Some(p)) => format!("{p}-changed"),
            (None, None) => "sandbox".to_string(),
        },
        None => "sandbox".to_string(),
    };
    let what: String = what.chars().take(60).collect();
    let when = crate::page::slug(when);
    if when.is_empty() {
        format!("stampede-lab-{what}.webm")
    } else {
        format!("stampede-lab-{what}-{when}.webm")
    }
}

/// What a clip says above the fleet, from the page's address when the
/// recording starts: the view's title (the list's strip's, [`Item::title`])
/// and the counter that proves it (a tour step's own, a comparison's, else
/// the lesson's proof for the run's scenario).
pub fn caption_for(href: &str) -> (String, stampede::Metric) {
    let proof = |s: &stampede::Scenario| {
        catalogue::lesson::proof_for(s, stampede::scenario::closest_preset(s)).metric
    };
    let Some(item) = view_of(href) else {
        return (
            "Stampede Lab".to_string(),
            proof(&stampede::Scenario::default()),
        );
    };
    let title = item.title();
    match &item.view {
        View::Tour((level, k)) => (
            title,
            catalogue::tour::step(*level, *k).map_or(stampede::Metric::Recomputes, |s| s.metric),
        ),
        View::Drill { knobs, .. } => (format!("Drill: {title}"), proof(knobs)),
        View::Compare { name, .. } => (
            title,
            catalogue::presets::comparison(name).map_or(stampede::Metric::Recomputes, |c| c.metric),
        ),
        View::Scenario { scenario, .. } => (title, proof(scenario)),
    }
}

/// Now, as `YYYY-MM-DD-HHMM` in the visitor's time zone.
fn now_stamp() -> String {
    let d = js_sys::Date::new_0();
    format!(
        "{:04}-{:02}-{:02}-{:02}{:02}",
        d.get_full_year(),
        d.get_month() + 1,
        d.get_date(),
        d.get_hours(),
        d.get_minutes()
    )
}

/// The WebM type this browser records, if any.
fn webm_type() -> Option<&'static str> {
    let has = js_sys::Reflect::has(&window(), &JsValue::from_str("MediaRecorder")).unwrap_or(false);
    if !has {
        return None;
    }
    TYPES
        .into_iter()
        .find(|t| MediaRecorder::is_type_supported(t))
}

fn context(c: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    c.get_context("2d").ok()??.dyn_into().ok()
}

/// Builds the Record clip box into `parent`.
pub(crate) fn build(
    parent: &Element,
    on: &mut Listeners,
    reading: crate::page::Read<crate::reading::Reading>,
    source: Source,
) {
    let boxed = el("span", "clip");
    set(&boxed, "data-clip", "");
    let record = button("clip", "● Record clip");
    set(
        &record,
        "title",
        "Record the fleet as it plays, as a WebM video for slides and chat; press again to stop",
    );
    let length = el("output", "clip-length");
    set(&length, "data-clip-length", "");
    // It changes every frame while recording: not a live region (the page
    // speaks through one, the counters'); the button's words say the state.
    set(&length, "aria-live", "off");
    let link = el("a", "clip-download");
    set(&link, "data-clip-download", "");
    set(&link, "hidden", "");
    crate::dom::press_on_key("r", &record);
    set(&record, "aria-keyshortcuts", "r");
    put(&boxed, &record);
    put(&boxed, &length);
    put(&boxed, &link);
    put(parent, &boxed);

    let state: Rc<RefCell<Option<Recording>>> = Rc::default();
    let url: Rc<RefCell<Option<String>>> = Rc::default();
    on.on(&record, "click", {
        let record = record.clone();
        move |_| {
            let running = state.borrow_mut().take();
            match running {
                Some(r) => {
                    // The recorder's `stop` event then writes the link.
                    r.stopped.set(Some(wall_now()));
                    let _ = r.recorder.stop();
                    set_text(&record, "● Record clip");
                    set(&record, "aria-pressed", "false");
                }
                None => match start(&length, &link, &url, reading, source) {
                    Ok(r) => {
                        *state.borrow_mut() = Some(r);
                        set_text(&record, "■ Stop");
                        set(&record, "aria-pressed", "true");
                    }
                    Err(why) => set_text(&length, &why),
                },
            }
        }
    });
}

fn start(
    length: &Element,
    link: &Element,
    url: &Rc<RefCell<Option<String>>>,
    reading: crate::page::Read<crate::reading::Reading>,
    source: Source,
) -> Result<Recording, String> {
    use leptos::prelude::Callable;
    let Some(mime) = webm_type() else {
        return Err(
            "This browser cannot record WebM video (MediaRecorder has no video/webm).".into(),
        );
    };
    let Shot { panes, line } = source
        .try_run(())
        .flatten()
        .filter(|s| !s.panes.is_empty())
        .ok_or("There is no fleet on screen to record.")?;
    // The fleets side by side, a gap between them, under one band (and a
    // row of their labels where there are several).
    let gap = if panes.len() > 1 { 16 } else { 0 };
    let w = panes.iter().map(|p| p.base.width()).sum::<u32>() + gap * (panes.len() as u32 - 1);
    let h = panes.iter().map(|p| p.base.height()).max().unwrap_or(0);
    if panes
        .iter()
        .any(|p| p.base.width() == 0 || p.base.height() == 0)
    {
        return Err("There is no fleet on screen to record.".into());
    }
    let base = panes[0].base.clone();
    // In presenter mode the clip is for slides: at least 1280 px wide.
    let presenting = document()
        .body()
        .is_some_and(|b| b.class_list().contains("presenter"));
    let scale = if presenting {
        (1280.0 / f64::from(w)).max(1.0)
    } else {
        1.0
    };
    let (cw, ch) = (
        (f64::from(w) * scale).round(),
        (f64::from(h) * scale).round(),
    );
    // A band above the fleet: what it shows, the clock, the proof's number.
    let font_px = (cw / 40.0).clamp(14.0, 40.0).round();
    let labelled = panes.iter().any(|p| !p.label.is_empty());
    let line_h = (font_px * 1.6).round();
    let band = if labelled { 2.0 * line_h } else { line_h };
    let (title, metric) = caption_for(&window().location().href().unwrap_or_default());
    let mix: HtmlCanvasElement = el("canvas", "").unchecked_into();
    mix.set_width(cw as u32);
    mix.set_height((ch + band) as u32);
    set(
        length,
        "data-clip-size",
        &format!("{}x{}", cw as u32, (ch + band) as u32),
    );
    let said = Rc::new(RefCell::new(String::new()));
    let caption_host = length.clone();
    let ctx = context(&mix).ok_or("This browser gave no canvas to record into.")?;
    // The page's background under the fleet (the canvases are transparent).
    let bg = base
        .closest(".panel")
        .ok()
        .flatten()
        .and_then(|p| window().get_computed_style(&p).ok().flatten())
        .and_then(|s| s.get_property_value("background-color").ok())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "#ffffff".to_string());
    let ink = window()
        .get_computed_style(&base)
        .ok()
        .flatten()
        .and_then(|s| s.get_property_value("color").ok())
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| "#111111".to_string());
    let paint = move || {
        ctx.set_fill_style_str(&bg);
        ctx.fill_rect(0.0, 0.0, cw, ch + band);
        let text = match &line {
            Some(f) => f(&title, metric),
            None => reading
                .try_with_untracked(|r| caption_line(&title, metric, &r.report, r.now))
                .unwrap_or_default(),
        };
        ctx.set_fill_style_str(&ink);
        ctx.set_font(&format!(
            "600 {}px {}",
            stampede::decimal::format(font_px),
            crate::palette::SANS
        ));
        ctx.set_text_align("left");
        ctx.set_text_baseline("middle");
        let _ = ctx.fill_text_with_max_width(&text, font_px * 0.5, line_h / 2.0, cw - font_px);
        if *said.borrow() != text {
            set(&caption_host, "data-clip-caption", &text);
            *said.borrow_mut() = text;
        }
        let mut x = 0.0;
        for p in &panes {
            let pw = f64::from(p.base.width()) * scale;
            let ph = f64::from(p.base.height()) * scale;
            if labelled {
                let _ = ctx.fill_text_with_max_width(
                    &p.label,
                    x + font_px * 0.5,
                    line_h * 1.5,
                    pw - font_px,
                );
            }
            for c in [&p.base, &p.overlay] {
                if c.width() > 0 && c.height() > 0 {
                    let _ =
                        ctx.draw_image_with_html_canvas_element_and_dw_and_dh(c, x, band, pw, ph);
                }
            }
            x += pw + f64::from(gap) * scale;
        }
    };
    paint();
    let stream = mix
        .capture_stream_with_frame_request_rate(FPS)
        .map_err(|_| "This browser cannot stream a canvas (captureStream).".to_string())?;
    let options = web_sys::MediaRecorderOptions::new();
    options.set_mime_type(mime);
    let recorder =
        MediaRecorder::new_with_media_stream_and_media_recorder_options(&stream, &options)
            .map_err(|_| format!("This browser refused to record {mime}."))?;

    let chunks: Rc<RefCell<Vec<web_sys::Blob>>> = Rc::default();
    // The recorder's handlers belong to the recorder (JS collects them
    // with it): `into_js_value`, not a Rust owner that could drop them
    // before the last `dataavailable` and `stop` arrive.
    let data = Closure::<dyn FnMut(web_sys::BlobEvent)>::new({
        let chunks = chunks.clone();
        move |e: web_sys::BlobEvent| {
            if let Some(b) = e.data().filter(|b| b.size() > 0.0) {
                chunks.borrow_mut().push(b);
            }
        }
    });
    recorder.set_ondataavailable(Some(data.into_js_value().unchecked_ref()));
    let started = wall_now();
    let stopped: Stopped = Rc::default();
    let stop = Closure::<dyn FnMut()>::new({
        let (length, link, url, stopped) =
            (length.clone(), link.clone(), url.clone(), stopped.clone());
        move || {
            let took = stopped.get().unwrap_or_else(wall_now) - started;
            let parts = js_sys::Array::new();
            for b in chunks.borrow().iter() {
                parts.push(b);
            }
            let bag = web_sys::BlobPropertyBag::new();
            bag.set_type("video/webm");
            let Ok(blob) = web_sys::Blob::new_with_blob_sequence_and_options(&parts, &bag) else {
                set_text(&length, "The clip could not be put together.");
                return;
            };
            let bytes = blob.size() as u64;
            if let Some(old) = url.borrow_mut().take() {
                let _ = web_sys::Url::revoke_object_url(&old);
            }
            let Ok(href) = web_sys::Url::create_object_url_with_blob(&blob) else {
                set_text(&length, "The clip could not be offered for download.");
                return;
            };
            set(&link, "href", &href);
            let href_now = window().location().href().unwrap_or_default();
            set(&link, "download", &clip_name(&href_now, &now_stamp()));
            set(&link, "data-bytes", &bytes.to_string());
            set_text(&link, &format!("Download .webm ({})", size_text(bytes)));
            let _ = link.remove_attribute("hidden");
            set_text(&length, &format!("{} recorded", length_text(took)));
            *url.borrow_mut() = Some(href);
        }
    });
    recorder.set_onstop(Some(stop.into_js_value().unchecked_ref()));
    recorder
        .start_with_time_slice(1000)
        .map_err(|_| "The recorder would not start.".to_string())?;
    let _ = link.set_attribute("hidden", "");
    set_text(length, &format!("{} recorded", length_text(0.0)));

    // Each frame: the fleet's two canvases onto the recorded one, and the
    // length so far.
    let frame: Frame = Rc::default();
    let next = frame.clone();
    let (length, done) = (length.clone(), stopped.clone());
    *frame.borrow_mut() = Some(Closure::new(move || {
        if done.get().is_some() {
            next.borrow_mut().take();
            return;
        }
        paint();
        set_text(
            &length,
            &format!("● {} recorded", length_text(wall_now() - started)),
        );
        if let Some(cb) = next.borrow().as_ref() {
            let _ = window().request_animation_frame(cb.as_ref().unchecked_ref());
        }
    }));
    if let Some(cb) = frame.borrow().as_ref() {
        let _ = window().request_animation_frame(cb.as_ref().unchecked_ref());
    }
    Ok(Recording { recorder, stopped })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clip_is_named_for_what_it_shows() {
        let when = "2026-12-02-1105";
        for (href, name) in [
            (
                "https://x/lab/#tour/basics/2",
                "stampede-lab-tour-basics-2-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?cmp=claim-order&at=3000",
                "stampede-lab-ab-claim-order-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?drill=hot-key&l1=500",
                "stampede-lab-drill-hot-key-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?preset=holder-crash&seed=3&present=1",
                "stampede-lab-holder-crash-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?preset=burst&i=4",
                "stampede-lab-burst-changed-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?i=4&t=20",
                "stampede-lab-burst-changed-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?seed=1",
                "stampede-lab-burst-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?c=off&seed=2",
                "stampede-lab-singleflight-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?i=4&t=20&w=cold&k=900&rc=7&ct=9&dl=40&vt=11&sp=5",
                "stampede-lab-sandbox-2026-12-02-1105.webm",
            ),
            (
                "https://x/lab/?preset=..%2F..%2Fetc",
                "stampede-lab-burst-2026-12-02-1105.webm",
            ),
        ] {
            assert_eq!(clip_name(href, when), name, "{href}");
        }
        assert_eq!(
            clip_name("file:///a/index.html", ""),
            "stampede-lab-burst.webm"
        );
    }

    #[test]
    fn a_clip_says_what_it_shows_with_the_clock_and_the_proof() {
        let (title, metric) = caption_for("https://x/lab/#tour/basics/1");
        let step = catalogue::tour::step(catalogue::tour::Level::Basics, 0).unwrap();
        assert_eq!((title.as_str(), metric), (step.title, step.metric));
        let (title, metric) = caption_for("https://x/lab/?seed=1");
        assert_eq!(title, catalogue::presets::PRESETS[0].title);
        assert_eq!(metric, stampede::Metric::Recomputes);
        let (title, _) = caption_for("https://x/lab/?i=4&seed=1");
        assert!(title.ends_with(", changed"), "{title}");
        let (title, _) = caption_for("https://x/lab/?drill=hot-key");
        assert!(title.starts_with("Drill: "), "{title}");
        let r = stampede::Report {
            recomputes: 40,
            ..stampede::Report::default()
        };
        assert_eq!(
            caption_line(
                "Singleflight only",
                stampede::Metric::Recomputes,
                &r,
                206_250
            ),
            "Singleflight only · t = 206.3 ms · recomputes: 40"
        );
    }

    #[test]
    fn lengths_and_sizes_read_in_words() {
        assert_eq!(length_text(0.0), "0.0 s");
        assert_eq!(length_text(3_249.0), "3.2 s");
        assert_eq!(length_text(61_000.0), "61.0 s");
        assert_eq!(length_text(-5.0), "0.0 s");
        assert_eq!(size_text(0), "0 B");
        assert_eq!(size_text(1023), "1023 B");
        assert_eq!(size_text(1024), "1 KB");
        assert_eq!(size_text(38_000), "37 KB");
    }
}
