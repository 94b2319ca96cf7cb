//! The animation loop and what it owns between frames: the experiment, the
//! canvases and their drawing state. Each frame turns wall time into virtual
//! time, advances the experiment within the frame budget, draws the fleet and
//! the chart, and hands the page one `Reading`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use stampede::metrics::{one_decimal, Report};
use stampede::scenario::Scenario;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d as Ctx, HtmlCanvasElement, MediaQueryList};

use crate::clock::FRAME_BUDGET_MS;
use crate::fleet_view::{ActorStats, FleetView};
use crate::lab::{Defence, Lab};
use crate::page::Command;
use crate::palette::scheme;
use crate::reading::Reading;
use crate::web::{wall_now, window};
use crate::{chart, panic};

/// Fleets with more threads than this refresh their counters every
/// `BIG_FLEET_REPORT_MS` of wall time rather than every frame.
const BIG_FLEET: u64 = 200_000;
const BIG_FLEET_REPORT_MS: f64 = 200.0;

/// Height of the chart canvas (css px).
const CHART_HEIGHT: f64 = 204.0;

/// Writes a value onto `<html data-…>` (the frame-time probe reads these).
fn mark(key: &str, value: &str) {
    if let Some(el) = window()
        .document()
        .and_then(|d| d.document_element())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.dataset().set(key, value);
    }
}

type OnResize = Closure<dyn FnMut(js_sys::Array)>;

/// A canvas and its 2D context, sized to its parent's width. The width comes
/// from a ResizeObserver: reading `clientWidth` each frame would force a
/// synchronous layout of the whole page, which costs tens of milliseconds.
pub(crate) struct Surface {
    pub(crate) canvas: HtmlCanvasElement,
    pub(crate) ctx: Ctx,
    css: (f64, f64),
    width: Rc<Cell<f64>>,
    _observer: Option<(web_sys::ResizeObserver, OnResize)>,
}

/// A surface gone (the A/B view closed) stops observing: its callback is
/// dropped with it, and an observer left behind would call it ("closure
/// invoked recursively or after being dropped").
impl Drop for Surface {
    fn drop(&mut self) {
        if let Some((o, _)) = &self._observer {
            o.disconnect();
        }
    }
}

impl Surface {
    pub(crate) fn new(canvas: HtmlCanvasElement) -> Option<Surface> {
        let ctx = canvas.get_context("2d").ok()??.dyn_into::<Ctx>().ok()?;
        let width = Rc::new(Cell::new(0.0));
        let seen = width.clone();
        let on_resize = OnResize::new(move |entries: js_sys::Array| {
            if let Ok(e) = entries.get(0).dyn_into::<web_sys::ResizeObserverEntry>() {
                seen.set(e.content_rect().width());
            }
        });
        let observer = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()).ok();
        if let (Some(o), Some(parent)) = (&observer, canvas.parent_element()) {
            o.observe(&parent);
        }
        Some(Surface {
            canvas,
            ctx,
            css: (0.0, 0.0),
            width,
            _observer: observer.map(|o| (o, on_resize)),
        })
    }

    /// Matches the backing store to the css size; returns the css size, or
    /// None before the first layout.
    pub(crate) fn fit(&mut self, height_for: impl Fn(f64) -> f64) -> Option<(f64, f64)> {
        let w = self.width.get().floor();
        if w < 1.0 {
            return None;
        }
        let w = w.max(200.0);
        let h = height_for(w);
        if (w, h) != self.css {
            let dpr = window().device_pixel_ratio().clamp(1.0, 3.0);
            self.canvas.set_width((w * dpr).round() as u32);
            self.canvas.set_height((h * dpr).round() as u32);
            let _ = web_sys::HtmlElement::style(&self.canvas)
                .set_property("height", &format!("{}px", stampede::decimal::format(h)));
            let _ = self.ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
            self.css = (w, h);
        }
        Some(self.css)
    }
}

/// What a frame keeps under a fleet (its panel's padding and margin).
const FRAME_FOOT_PX: f64 = 14.0;
/// The least height of a fleet in a frame, however small the frame.
const FRAME_MIN_STAGE_PX: f64 = 140.0;

/// In a frame (embed mode), the height left from `canvas`'s top to the
/// frame's foot: a fleet sized to it is seen whole, Origin's box included.
/// The canvas's top does not move with its height, so this is no loop.
pub(crate) fn room_below(canvas: &HtmlCanvasElement) -> Option<f64> {
    let top = canvas.get_bounding_client_rect().top();
    let inner = window().inner_height().ok()?.as_f64()?;
    Some((inner - top - FRAME_FOOT_PX).floor())
}

/// A fleet's height: `page`'s (the page's proportion, or the room's), or in
/// a frame the room left below it, no taller than `page` and never under
/// [`FRAME_MIN_STAGE_PX`].
pub(crate) fn framed_height(framed: Option<f64>, page: f64) -> f64 {
    match framed {
        // max then min, not clamp: its bounds are not constants, and
        // f64::clamp would bring the float formatting of its panic message.
        Some(room) => room.max(FRAME_MIN_STAGE_PX.min(page)).min(page),
        None => page,
    }
}

/// Everything the animation loop owns between frames.
#[derive(Default)]
pub(crate) struct Engine {
    lab: Option<Lab>,
    view: FleetView,
    /// The fleet's two layers (offices and threads; pulses and actors) and the chart.
    pub(crate) stage: Option<(Surface, Surface)>,
    pub(crate) chart: Option<Surface>,
    dark: Option<MediaQueryList>,
    last_wall: Option<f64>,
    drew_first_frame: bool,
    longest_frame: f64,
    /// Where the last frame's time went, for the slowest-frame note.
    phases: String,
    /// The last report, the virtual time it is for, and when (wall ms) it was taken.
    report: Option<(Report, u64, f64)>,
    /// Fast-forward through quiet stretches.
    ramp: crate::clock::Ramp,
    /// Reduced motion: a run jumps to its end and the fleet is painted only
    /// once the clock settles, never mid-movement.
    pub(crate) reduced: bool,
    /// Whose path through the read path is followed (ringed on the stage,
    /// its line marked in the listing).
    pub(crate) follow: crate::page::Follow,
    /// Where playback pauses for the walk-through's question (µs).
    pub(crate) hold: Option<u64>,
    /// What the room's display asks of the stage (presenter mode).
    pub(crate) room: crate::stage::room::Display,
    /// In a frame (embed mode): the fleet fits the frame's height.
    pub(crate) embedded: bool,
    /// The virtual time last painted under reduced motion, and how many
    /// such paints there were (for the end-to-end test).
    settled: Option<(u64, f64, f64)>,
    settled_paints: u32,
    /// The scenario a curveball turned the running one into: the page sets
    /// it as its scenario, and that must not restart the run.
    thrown: Option<(Scenario, u64)>,
    /// The timeline markers' names, as text over the chart.
    names: MarkerNames,
    /// The scenario on screen, shared with each frame's reading.
    scenario: std::sync::Arc<Scenario>,
}

/// The markers' names as text elements over the chart canvas (readable,
/// selectable, and measurable by the end-to-end test), rewritten only when
/// where they go changes.
#[derive(Default)]
struct MarkerNames {
    host: Option<web_sys::Element>,
    shown: Vec<chart::Placed>,
}

impl MarkerNames {
    fn write(&mut self, canvas: &HtmlCanvasElement, placed: &[chart::Placed]) {
        use crate::dom::{el, put, set};
        if self.shown == placed {
            return;
        }
        if self.host.is_none() {
            let Some(parent) = canvas.parent_element() else {
                return;
            };
            let host = el("div", "marker-names");
            set(&host, "aria-hidden", "true");
            put(&parent, &host);
            self.host = Some(host);
        }
        let Some(host) = &self.host else { return };
        host.set_text_content(None);
        for p in placed {
            let span = crate::dom::text_el("span", "marker-name", p.text);
            set(&span, "data-marker-name", &p.t.to_string());
            if let Some(h) = span.dyn_ref::<web_sys::HtmlElement>() {
                let st = h.style();
                let _ = st.set_property("left", &format!("{}px", stampede::decimal::format(p.x)));
                let _ = st.set_property("top", &format!("{}px", stampede::decimal::format(p.y)));
            }
            put(host, &span);
        }
        self.shown = placed.to_vec();
    }
}

impl Engine {
    /// Uses the canvases' fonts once before the animation starts.
    pub(crate) fn warm_up(&mut self) {
        let dark = self.dark();
        if let Some((_, overlay)) = &self.stage {
            crate::fleet_view::warm_up(&overlay.ctx, scheme(dark));
        }
        if let Some(c) = &self.chart {
            let empty = chart::Timeline {
                samples: &[],
                markers: &[],
                span: 1_000,
                now: 0,
            };
            chart::draw(&c.ctx, scheme(dark), dark, (300.0, 150.0), &empty);
        }
    }

    pub(crate) fn rebuild(&mut self, s: &Scenario, seed: u64) {
        if let Some((thrown, sd)) = self.thrown.take() {
            if thrown == *s && sd == seed {
                return;
            }
        }
        let t0 = wall_now();
        self.lab = Some(Lab::new(s, seed));
        self.report = None;
        self.view.clear_pulses();
        mark("buildMs", &one_decimal(wall_now() - t0));
    }

    /// Throws a curveball so that it bites the run (see [`Lab::throw`]:
    /// now, at the next moment it finds work, or the run restarted with it
    /// at an earlier one) and returns the scenario it is now, for the
    /// page's link, and where it landed.
    pub(crate) fn throw(
        &mut self,
        ball: &catalogue::interview::Curveball,
    ) -> Result<(Scenario, crate::lab::Landed), String> {
        let lab = self.lab.as_mut().ok_or("the run has not started yet")?;
        let landed = lab.throw(ball)?;
        let s = lab.scenario().clone();
        self.thrown = Some((s.clone(), lab.seed()));
        self.report = None;
        self.view.clear_pulses();
        Ok((s, landed))
    }

    fn dark(&mut self) -> bool {
        if self.dark.is_none() {
            self.dark = window()
                .match_media("(prefers-color-scheme: dark)")
                .ok()
                .flatten();
        }
        self.room
            .dark(self.dark.as_ref().is_some_and(MediaQueryList::matches))
    }

    /// The thread drawn at a point of the stage (css px), if any.
    pub(crate) fn thread_at(&self, x: f64, y: f64) -> Option<u32> {
        self.view.layout()?.thread_at(x, y)
    }

    pub(crate) fn command(&mut self, c: Command, playing: bool) -> Option<bool> {
        let lab = self.lab.as_mut()?;
        self.view.clear_pulses();
        Some(match c {
            Command::TogglePlay => {
                if !playing && lab.at_end() {
                    lab.seek(0);
                }
                !playing
            }
            Command::Step => {
                let t = lab.next_step();
                lab.seek(t);
                false
            }
            Command::NextEvent => {
                if let Some(t) = lab.next_marker() {
                    lab.seek(t);
                }
                false
            }
            Command::StepBack => {
                let t = lab.prev_step();
                lab.seek(t);
                false
            }
            Command::Restart => {
                lab.seek(0);
                false
            }
            Command::Replay => {
                lab.seek(0);
                true
            }
            Command::Seek(t) => {
                lab.seek(t);
                false
            }
            Command::ThreadStep(g) => {
                if let Some(t) = lab.next_event_of(g) {
                    lab.seek(t);
                }
                false
            }
            Command::Tour | Command::Room => playing,
        })
    }

    /// One animation frame. Returns the reading and whether playback ended.
    fn frame(&mut self, start: f64, playing: bool, speed: f64) -> Option<(Reading, bool)> {
        let dark = self.dark();
        let dt = self.last_wall.map_or(0.0, |w| start - w);
        self.last_wall = Some(start);
        let lab = self.lab.as_mut()?;
        lab.set_hold(self.hold);
        if playing && self.reduced {
            lab.seek(lab.held(u64::MAX));
        } else if playing {
            self.ramp.play(lab, dt, speed);
        }
        let news = lab.news();
        // The very first frame only paints (the code is still cold then, and
        // painting 8,000 threads is task enough); the clock moves from the next.
        let caught_up =
            self.drew_first_frame && lab.advance(&|| wall_now() - start > FRAME_BUDGET_MS);
        // Quiet means nothing changed; a wait is the story (8,000 threads on
        // one recompute) for a while, then quiet too (`clock::Ramp`).
        self.ramp.after(lab, news, playing, caught_up);
        let advanced = wall_now();
        let (pulses, _dropped) = lab.take_pulses();
        let s = lab.scenario().clone();

        let (base, overlay) = self.stage.as_mut()?;
        let room = self.room;
        let framed = if self.embedded {
            room_below(&base.canvas)
        } else {
            None
        };
        let height_for = move |w: f64| framed_height(framed, room.stage_height(w));
        let (w, h) = base.fit(height_for)?;
        overlay.fit(height_for)?;
        let fitted = wall_now();
        let canvas = base.canvas.clone();
        let words = move || crate::stage::fleet_view::words_of(&canvas);
        if self.view.fit_worded(w, h, s.instances, s.threads, words) {
            // How large a thread is drawn (css px; 0 when the fleet is drawn
            // as bands) and whether it says its state in words: what the
            // small-fleet tests and the frame probe read.
            if let Some(l) = self.view.layout() {
                let px = if l.aggregated { 0.0 } else { l.glyph(0, 0).w };
                mark("threadGlyph", &stampede::decimal::format(px));
                mark("threadWords", if l.labelled { "1" } else { "0" });
            }
        }
        // Under reduced motion nothing moves: no pulses, and the fleet and
        // the chart are painted only when the clock has settled somewhere new.
        let here = (lab.now(), w, h);
        let paint =
            !self.reduced || !self.drew_first_frame || (caught_up && self.settled != Some(here));
        if self.reduced && paint {
            self.settled = Some(here);
            self.settled_paints += 1;
            mark("settledPaints", &self.settled_paints.to_string());
        }
        if !self.reduced {
            self.settled = None;
            self.view.add_pulses(&pulses, start);
        }
        let fleet = lab.fleet();
        // `Fleet::report` scans every thread (for `pinned`): at a million
        // threads that is a good part of a frame, so big fleets refresh the
        // numbers a few times a second, and always once the clock settles.
        let threads = u64::from(s.instances) * u64::from(s.threads);
        let fresh = match &self.report {
            Some((_, at, when)) => {
                threads <= BIG_FLEET
                    || start - when >= BIG_FLEET_REPORT_MS
                    || (caught_up && *at != lab.now())
            }
            None => true,
        };
        if fresh {
            self.report = Some((fleet.report(), lab.now(), start));
        }
        let report = self
            .report
            .as_ref()
            .map(|r| r.0.clone())
            .unwrap_or_default();
        let stats = ActorStats::of(fleet, &report, &s);
        // The very first frame paints the fleet only; pulses, actors and
        // the chart join from the next one, so no frame does everything.
        let first = !self.drew_first_frame;
        if paint {
            self.view.draw(
                (&base.ctx, (!first).then_some(&overlay.ctx)),
                fleet.thread_states(),
                &stats,
                dark,
                start,
            );
            // What the claim's clock under the Redis box shows, for tests
            // and readers of the DOM (docs/HOOKS.md).
            crate::dom::set_changed(&base.canvas, "data-claim-clock", &claim_clock_text(&stats));
        }
        // The followed thread: the claim holder is the first thread the core
        // saw win a claim (also one that died as it won), then that thread;
        // where it is on the read path is the core's (`read_path::Places`).
        let states = fleet.thread_states();
        let places = lab.places();
        if self.follow == crate::page::Follow::ClaimHolder(None) {
            if let Some(g) = places.first_winner() {
                self.follow = crate::page::Follow::ClaimHolder(Some(g));
            }
        }
        let followed = self.follow.thread().and_then(|g| {
            states
                .get(g as usize)
                .map(|s| (g, *s, places.of(g), places.crashed_at(g)))
        });
        if let (Some((g, a, ..)), Some(l), false) = (followed, self.view.layout(), first) {
            crate::stage::room::ring_followed(room.presenting, &overlay.ctx, l, g, a, scheme(dark));
        }
        let drawn = wall_now();
        if let Some((c, size)) = (!first && paint)
            .then_some(())
            .and(self.chart.as_mut())
            .and_then(|c| c.fit(|_| CHART_HEIGHT).map(|size| (c, size)))
        {
            let placed = chart::draw_lanes(
                &c.ctx,
                scheme(dark),
                dark,
                size,
                &chart::Timeline {
                    samples: lab.samples(),
                    markers: lab.markers(),
                    span: lab.span(),
                    now: lab.now(),
                },
            );
            self.names.write(&c.canvas, &placed);
        }
        self.phases = format!(
            "advance {}, fit {}, fleet {}, chart {}",
            one_decimal(advanced - start),
            one_decimal(fitted - advanced),
            one_decimal(drawn - fitted),
            one_decimal(wall_now() - drawn)
        );
        let reading = Reading {
            now: lab.now(),
            span: lab.span(),
            end: lab.end(),
            fields: report.fields(),
            report: report.clone(),
            recomputes: report.recomputes,
            instances: s.instances,
            threads: s.threads,
            scores: Defence::ALL.map(|d| lab.compared_score(d)),
            score: crate::lab::Score::of(&report, lab.at_end()),
            compared_behind: lab.compare_behind(),
            tally: *lab.tally(),
            burst: s.workload == stampede::scenario::Workload::Burst,
            cold: s.workload == stampede::scenario::Workload::Cold,
            defence: Defence::of(&s),
            catching_up: !caught_up,
            cut_off: lab.cut_off(),
            aggregated: self.view.layout().is_some_and(|l| l.aggregated),
            at_end: lab.at_end(),
            finality: lab.fleet().finality(),
            next_marker: lab.next_marker(),
            markers: lab
                .markers()
                .iter()
                .filter(|m| lab.end().is_none_or(|end| m.t <= end))
                .map(|m| (m.t, m.what.label()))
                .collect(),
            fast_forward: playing && self.ramp.active(),
            followed,
            scenario: {
                if *self.scenario != s {
                    self.scenario = std::sync::Arc::new(s.clone());
                }
                self.scenario.clone()
            },
            seed: lab.seed(),
        };
        self.drew_first_frame = true;
        Some((reading, lab.at_end()))
    }
}

/// What the animation loop drives: the sandbox's engine, or the A/B view's.
pub(crate) trait Animate {
    type Reading: PartialEq + Send + Sync + 'static;
    /// One frame at wall time `start`: the reading, and whether the run ended.
    fn frame(&mut self, start: f64, playing: bool, speed: f64) -> Option<(Self::Reading, bool)>;
    /// The frame took `ms` of wall time.
    fn took(&mut self, _ms: f64) {}
}

impl Animate for Engine {
    type Reading = Reading;

    fn frame(&mut self, start: f64, playing: bool, speed: f64) -> Option<(Reading, bool)> {
        Engine::frame(self, start, playing, speed)
    }

    fn took(&mut self, took: f64) {
        if took > self.longest_frame {
            self.longest_frame = took;
            mark("longestFrameMs", &one_decimal(took));
            mark("longestFramePhases", &self.phases);
        }
    }
}

type Loop = Rc<RefCell<Option<Closure<dyn FnMut(f64)>>>>;

thread_local! {
    static FIRST_FRAME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// One frame of whatever the loop drives: `Some(ended)` while it runs,
/// `None` once its engine is gone.
type Tick = Box<dyn Fn(f64, bool, f64) -> Option<bool>>;

/// Starts the requestAnimationFrame loop; it stops when the page is
/// unmounted (the engine is gone) or after a panic.
pub(crate) fn start_loop<E: Animate + 'static>(
    engine: StoredValue<E, LocalStorage>,
    playing: RwSignal<bool>,
    speed: RwSignal<f64>,
    reading: RwSignal<E::Reading>,
) {
    // Only this small adapter is generic; the loop itself exists once in
    // the wasm whatever it drives (each copy would cost kilobytes).
    let tick: Tick = Box::new(move |start, is_playing, speed| {
        let out = engine.try_update_value(|e| {
            let out = e.frame(start, is_playing, speed);
            e.took(wall_now() - start);
            out
        })?;
        let Some((r, ended)) = out else {
            return Some(false);
        };
        // The page's first frame, from whichever engine draws it (the A/B
        // view's when a link opens it): the probe's start-up time, and what
        // the stylesheet waits for before it lays out the reference.
        if !FIRST_FRAME.replace(true) {
            mark("firstFrame", &stampede::decimal::format(start));
            // What waits for the first frame (style/main.css: the panels
            // below the fold, the reference) is laid out in a task of its
            // own between this frame and the next, not in either.
            crate::dom::task(Box::new(|| mark("started", "")));
        }
        if reading.with_untracked(|old| *old != r) {
            let t0 = wall_now();
            reading.set(r);
            mark("lastSetMs", &one_decimal(wall_now() - t0));
        }
        Some(ended)
    });
    run_loop(tick, playing, speed);
}

#[inline(never)]
fn run_loop(tick: Tick, playing: RwSignal<bool>, speed: RwSignal<f64>) {
    let handle: Loop = Rc::new(RefCell::new(None));
    let next = handle.clone();
    *handle.borrow_mut() = Some(Closure::new(move |_ts: f64| {
        if panic::has_panicked() {
            next.borrow_mut().take();
            return;
        }
        let start = wall_now();
        let (Some(is_playing), Some(speed)) =
            (playing.try_get_untracked(), speed.try_get_untracked())
        else {
            next.borrow_mut().take();
            return;
        };
        let Some(ended) = tick(start, is_playing, speed) else {
            next.borrow_mut().take();
            return;
        };
        if ended && is_playing {
            playing.set(false);
        }
        if let Some(cb) = next.borrow().as_ref() {
            let _ = window().request_animation_frame(cb.as_ref().unchecked_ref());
        }
    }));
    if let Some(cb) = handle.borrow().as_ref() {
        let _ = window().request_animation_frame(cb.as_ref().unchecked_ref());
    };
}

/// The start-up link's moment to go to once its run is built: (scenario,
/// seed, ms, play on from there).
pub(crate) type Moment = StoredValue<Option<(Scenario, u64, u64, bool)>>;

/// The engine follows the page: a new scenario or seed starts a new run
/// from t = 0, at a link's moment (`at=`, or Back to a moment) if it has
/// one for this run, or held at its start for the reader's Play (an
/// embedded run, once). Building a big fleet takes tens of milliseconds: it
/// gets a task of its own instead of joining whatever task changed the knob
/// (or the mount).
pub(crate) fn follow_page(
    engine: StoredValue<Engine, LocalStorage>,
    page: crate::page::Page,
    moment: Moment,
    wait_for_play: StoredValue<bool>,
) {
    use crate::page::action::Action;
    crate::dom::effect(move || {
        let s = page.scenario().get();
        let sd = page.seed().get();
        set_timeout(
            move || {
                if engine.try_update_value(|e| e.rebuild(&s, sd)).is_some() {
                    // A link's moment (`at=`, or Back to a moment): there,
                    // paused or playing.
                    let here = moment
                        .try_with_value(|m| {
                            m.as_ref()
                                .filter(|(ms_s, ms_sd, ..)| *ms_s == s && *ms_sd == sd)
                                .map(|(.., ms, play)| (*ms, *play))
                        })
                        .flatten();
                    let at = here.map(|(ms, play)| {
                        engine.update_value(|e| {
                            e.command(Command::Seek(ms.saturating_mul(1000)), false);
                        });
                        play
                    });
                    let held = at.is_none()
                        && wait_for_play
                            .try_update_value(std::mem::take)
                            .unwrap_or(false);
                    page.act(Action::Built { at, held });
                }
            },
            std::time::Duration::ZERO,
        );
    });
}

/// What the room and the code panel ask of the engine (what it paints).
#[derive(Clone, Copy)]
pub(crate) struct RoomInputs {
    pub reduced: RwSignal<bool>,
    pub follow: RwSignal<crate::page::Follow>,
    pub dark: RwSignal<bool>,
    pub stage_h: RwSignal<f64>,
    pub hold: RwSignal<Option<u64>>,
}

/// Reduced motion, the followed thread, presenter mode's box and theme and
/// the walk-through's pause live in the engine, set from these. A new
/// scenario forgets the followed thread.
pub(crate) fn follow_room(engine: StoredValue<Engine, LocalStorage>, i: RoomInputs) {
    let page = crate::page::use_page();
    crate::dom::effect(move || {
        let r = i.reduced.get();
        engine.update_value(|e| e.reduced = r);
    });
    crate::dom::effect(move || {
        let f = i.follow.get();
        engine.update_value(|e| e.follow = f);
    });
    // What presenter mode asks of the stage: its box, its theme.
    crate::dom::effect(move || {
        let d = crate::stage::room::Display {
            presenting: page.presenting().get(),
            dark: i.dark.get(),
            stage_h: i.stage_h.get(),
        };
        engine.update_value(|e| e.room = d);
    });
    // The walk-through's pause (src/panels/code_panel.rs).
    crate::dom::effect(move || {
        let h = i.hold.get();
        engine.update_value(|e| e.hold = h);
    });
    crate::dom::effect(move || {
        page.scenario().track();
        i.follow.set(crate::page::Follow::Nobody);
    });
}

/// The claim clock drawn under the Redis box, as words: "free", or the
/// holder (global index), "dead" or "alive", the TTL left and the TTL (ms),
/// and how long the holder has worked (ms, "-" before its work).
fn claim_clock_text(stats: &ActorStats) -> String {
    let ms = crate::clock::now_ms_text;
    match &stats.claim {
        None => "free".into(),
        Some(c) => format!(
            "holder={} {} left={} ttl={} working={}",
            c.holder.map_or("-".into(), |g| g.to_string()),
            if c.dead { "dead" } else { "alive" },
            ms(c.left()),
            ms(c.ttl),
            c.working().map_or("-".into(), ms),
        ),
    }
}
