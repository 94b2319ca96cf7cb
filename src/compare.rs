//! Two designs on the same traffic, side by side (the A/B view). Both
//! fleets have the same shape and seed and run from one clock, so what the
//! two sides show at a virtual time is the same instant for both; their
//! charts share one time axis. The comparisons themselves (which two
//! designs, which counter the question is about, which side wins it) are
//! the catalogue's `presets::COMPARISONS`; this module only runs and draws them.

use catalogue::presets::{comparison, Comparison, COMPARISONS};
use leptos::prelude::*;
use stampede::metrics::{differences, Metric, Report};
use stampede::scenario::Scenario;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlCanvasElement};

use crate::chart;
use crate::clock::{speed_label, virtual_label, virtual_step, FRAME_BUDGET_MS};
use crate::dom::{button, el, put, set, set_text, text_el, Listeners};
use crate::engine::{framed_height, room_below, Animate, Surface};
use crate::fleet_layout::stage_height;
use crate::fleet_view::{ActorStats, FleetView};
use crate::lab::Lab;
use crate::page::action::Action;
use crate::page::label;
use crate::page::Command;
use crate::page::Page;
use crate::palette::scheme;
use crate::web::{wall_now, window};

/// Height of each side's chart (css px).
const CHART_HEIGHT: f64 = 150.0;

/// The counters each side shows, with `data-side` and `data-metric`.
pub const SIDE_METRICS: [Metric; 10] = [
    Metric::Recomputes,
    Metric::ClaimAttempts,
    Metric::RedisRoundTrips,
    Metric::OriginPeakConcurrency,
    Metric::Misses,
    Metric::StaleServed,
    Metric::Errors,
    Metric::Timeouts,
    Metric::P50Ms,
    Metric::P99Ms,
];

/// The recompute-cost control's range (ms): an indexed query to a slow,
/// rate-limited or billed call whose slow tail still fits in the callers'
/// 1 s deadline when only one instance makes it.
pub const COST_MIN_MS: u32 = 20;
pub const COST_MAX_MS: u32 = 700;
pub const COST_STEPS: u32 = 60;

/// A side's scenario: the comparison's design, with the shared recompute
/// cost where the comparison offers that control.
pub fn side_scenario(c: &Comparison, side: char, recompute_ms: Option<u32>) -> Scenario {
    let mut s = if side == 'a' { c.a() } else { c.b() };
    if let (true, Some(ms)) = (c.cost_control, recompute_ms) {
        s.recompute_ms = ms.clamp(COST_MIN_MS, COST_MAX_MS);
    }
    s
}

/// A side's fleet (base and overlay) and chart canvases.
type Canvases = (Surface, Surface, Surface);

struct Side {
    lab: Lab,
    view: FleetView,
}

/// What one frame of the A/B view measured (the numbers themselves go
/// straight into the view's elements).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AbReading {
    pub now: u64,
    pub at_end: bool,
    /// Both sides reached the clock's target (no seek replaying).
    pub caught_up: bool,
}

/// The two sides between frames, and the view they write into.
#[derive(Default)]
pub(crate) struct AbEngine {
    sides: Vec<Side>,
    last_wall: Option<f64>,
    /// The view, and each side's canvases (none where a canvas has no 2d
    /// context: the numbers still show).
    dom: Option<(AbDom, Vec<Canvases>, Controls)>,
    /// In a frame: the fleets fit its height.
    embedded: bool,
}

impl AbEngine {
    pub(crate) fn build(&mut self, a: &Scenario, b: &Scenario, seed: u64) {
        self.sides = [a, b]
            .into_iter()
            .map(|s| Side {
                lab: Lab::single(s, seed),
                view: FleetView::default(),
            })
            .collect();
        self.last_wall = None;
    }

    fn attach(&mut self, dom: AbDom, surfaces: Vec<Canvases>, k: Controls) {
        self.dom = Some((dom, surfaces, k));
    }

    /// Shows the counter `m` names on its side (once per follow: `marked`
    /// keeps the last one shown), and unmarks every other.
    fn mark(&self, m: Option<&crate::page::Mark>, marked: StoredValue<u32>) {
        let Some((dom, _, _)) = &self.dom else { return };
        for (k, side) in ['a', 'b'].into_iter().enumerate() {
            for (metric, (dd, _)) in SIDE_METRICS.iter().zip(&dom.values[k]) {
                match m.filter(|m| m.side == Some(side) && m.metric == Some(*metric)) {
                    Some(m) if marked.get_value() != m.seq => {
                        marked.set_value(m.seq);
                        crate::dom::show_marked(dd);
                    }
                    Some(_) => {}
                    None => {
                        let _ = dd.class_list().remove_1("from-question");
                    }
                }
            }
        }
    }

    fn at_end(&self) -> bool {
        !self.sides.is_empty() && self.sides.iter().all(|s| s.lab.at_end())
    }

    /// The one clock: the later side's time (a side that ended stays at its
    /// end while the other plays on).
    fn clock(&self) -> u64 {
        self.sides.iter().map(|s| s.lab.now()).max().unwrap_or(0)
    }

    /// Both sides run as fast as the frame budget allows to their end.
    pub(crate) fn skip_to_end(&mut self) {
        for s in &mut self.sides {
            s.lab.seek(u64::MAX);
        }
    }

    pub(crate) fn restart(&mut self) {
        for s in &mut self.sides {
            s.lab.seek(0);
        }
    }

    /// Both sides to `t`, one clock.
    fn seek(&mut self, t: u64) {
        for s in &mut self.sides {
            s.lab.seek(t);
        }
    }

    /// Where a command of the sandbox's keys takes the one clock: a step as
    /// the sandbox's, the next marker of either side.
    fn target(&self, c: Command) -> Option<u64> {
        let each = |f: fn(&Lab) -> Option<u64>| self.sides.iter().filter_map(move |s| f(&s.lab));
        match c {
            // A step of the one clock (the longer side's), or on to the
            // next event if both sides are quiet until then: the earlier
            // side's, so neither side's events are skipped.
            Command::Step => {
                let from = each(|l| Some(l.heading())).max()?;
                let min = from.saturating_add(each(|l| Some(l.step_length())).max()?);
                let next =
                    each(|l| (!l.at_end()).then(|| l.fleet().next_event_at()).flatten()).min();
                Some(next.map_or(min, |n| n.max(min)))
            }
            // From where the one clock heads, by the longer side's step.
            Command::StepBack => {
                let from = each(|l| Some(l.heading())).max()?;
                Some(from.saturating_sub(each(|l| Some(l.step_length())).max()?))
            }
            Command::NextEvent => each(Lab::next_marker).min(),
            Command::Seek(t) => Some(t),
            _ => None,
        }
    }
}

/// The open A/B view's controls, for the page's keys, the kit and the
/// playlist: the app holds the slot, the view fills it while it is open.
pub type Open = StoredValue<Option<Controls>, LocalStorage>;

/// An empty slot for the A/B view's controls.
pub fn open_slot() -> Open {
    StoredValue::new_local(None)
}

/// The A/B view's two fleets for a clip, each under its side's letter and
/// title, and the band's line: the one clock and both sides' numbers of
/// the caption's counter. None when no A/B view is open.
pub(crate) fn clip_shot(open: Open) -> Option<crate::stage::shot::Shot> {
    use crate::stage::shot::{ab_caption_line, Pane, Shot};
    let k = open.try_get_value().flatten()?;
    let c = k.current();
    let panes = k.engine.with_value(|e| {
        e.dom.as_ref().map(|(_, surfaces, _)| {
            surfaces
                .iter()
                .zip([("A", c.a_label), ("B", c.b_label)])
                .map(|((base, overlay, _), (letter, title))| Pane {
                    base: base.canvas.clone(),
                    overlay: overlay.canvas.clone(),
                    label: format!("{letter}: {title}"),
                })
                .collect::<Vec<_>>()
        })
    })?;
    let line = move |title: &str, metric: Metric| {
        k.engine
            .try_with_value(|e| match e.sides.as_slice() {
                [a, b] => {
                    ab_caption_line(title, metric, [&a.lab.report(), &b.lab.report()], e.clock())
                }
                _ => String::new(),
            })
            .unwrap_or_default()
    };
    Some(Shot {
        panes,
        line: Some(Box::new(line)),
    })
}

/// The sandbox's keys in the A/B view: Space and `.` play and pause, the
/// arrows (and Page Up/Down) step the one clock, `n` pauses at the next
/// marker, End jumps to the end. False when no A/B view is open.
pub(crate) fn key(open: Open, c: Command) -> bool {
    let Some(k) = open.try_get_value().flatten() else {
        return false;
    };
    let Some(playing) = k.playing.try_get_untracked() else {
        return false;
    };
    match c {
        Command::TogglePlay => {
            if !playing && k.engine.with_value(AbEngine::at_end) {
                k.engine.update_value(AbEngine::restart);
            }
            k.playing.set(!playing);
        }
        Command::Seek(_) if c == Command::Seek(u64::MAX) => {
            k.engine.update_value(AbEngine::skip_to_end);
            k.playing.set(true);
        }
        _ => {
            if let Some(t) = k.engine.with_value(|e| e.target(c)) {
                k.engine.update_value(|e| e.seek(t));
            }
            k.playing.set(false);
        }
    }
    true
}

/// The open A/B view's one clock (µs) and whether it plays: where a
/// playlist adds it from. None when no A/B view is open.
pub(crate) fn moment(open: Open) -> Option<(u64, bool)> {
    let k = open.try_get_value().flatten()?;
    let playing = k.playing.try_get_untracked()?;
    let now = k
        .engine
        .try_with_value(|e| (!e.sides.is_empty()).then(|| e.clock()))??;
    Some((now, playing))
}

/// Throws `ball` into both sides of the open A/B view at its one clock's
/// moment (the next whole millisecond): a side that has not reached it
/// takes it live, a side that ended earlier is rebuilt with it and taken
/// back to the clock, so both sides meet the same fault at the same
/// moment. Both or neither: a side that refuses it (no claim to hold)
/// refuses it for both. Returns the moment (ms); None when no A/B view is
/// open. (The app wires this before the sandbox's thrower.)
pub(crate) fn throw(
    open: Open,
    ball: &'static catalogue::interview::Curveball,
) -> Option<Result<u32, String>> {
    let k = open.try_get_value().flatten()?;
    // The page keeps what landed (`Action::Throw`): the link carries it.
    k.engine.try_update_value(|e| e.throw(ball))
}

impl AbEngine {
    fn throw(&mut self, ball: &catalogue::interview::Curveball) -> Result<u32, String> {
        if self.sides.len() != 2 {
            return Err("the A/B view has not started yet".into());
        }
        let at = u32::try_from(self.clock() / 1000 + 1)
            .map_err(|_| "the run is too long".to_string())?;
        // It must bite: thrown where neither run has work left for it, the
        // kit would say "Thrown" over counters that never move.
        if self
            .sides
            .iter()
            .any(|s| catalogue::interview::bites(s.lab.fleet(), ball, at))
        {
            self.throw_at(ball, at)?;
            return Ok(at);
        }
        // Nothing left for it ahead (both runs ended, say): as the
        // single-run view does, both runs restart with it at the latest
        // earlier moment where it finds work in either run (at most eight
        // tried, spread over the runs), the clock just before it.
        let mut behind: Vec<u32> = self
            .sides
            .iter()
            .flat_map(|s| catalogue::interview::aims(ball, s.lab.markers()))
            .filter(|m| *m < at)
            .collect();
        behind.sort_unstable();
        behind.dedup();
        let stride = behind.len().div_ceil(8).max(1);
        for earlier in behind.into_iter().rev().step_by(stride) {
            let bites = self.sides.iter().any(|s| {
                let fresh = stampede::sim::Fleet::new(s.lab.scenario(), s.lab.seed());
                catalogue::interview::bites(&fresh, ball, earlier)
            });
            if bites {
                self.throw_at(ball, earlier)?;
                self.seek(u64::from(earlier.saturating_sub(1)) * 1000);
                return Ok(earlier);
            }
        }
        Err(format!(
            "at {at} ms neither run has anything left for it, nor at any earlier moment (its {} counter would not move)",
            stampede::metrics::label(ball.metric)
        ))
    }

    /// Throws `ball` into both sides at `at` ms, or into neither.
    fn throw_at(&mut self, ball: &catalogue::interview::Curveball, at: u32) -> Result<(), String> {
        for (side, name) in self.sides.iter().zip(["A", "B"]) {
            let mut fleet = stampede::sim::Fleet::new(side.lab.scenario(), side.lab.seed());
            catalogue::interview::throw(&mut fleet, ball, at)
                .map_err(|why| format!("side {name}: {why}"))?;
        }
        for side in &mut self.sides {
            side.lab.throw_at_moment(ball, at)?;
            side.view.clear_pulses();
        }
        Ok(())
    }
}

/// Takes the open A/B view's clock to `ms` and plays on from there or not
/// (a link's `at=` reached by Back, Forward or a playlist's step).
pub(crate) fn seek_to(open: Open, ms: u64, play: bool) {
    let Some(k) = open.try_get_value().flatten() else {
        return;
    };
    if k.engine
        .try_update_value(|e| e.seek(ms.saturating_mul(1000)))
        .is_some()
    {
        k.playing.set(play);
    }
}

impl Animate for AbEngine {
    type Reading = AbReading;

    fn frame(&mut self, start: f64, playing: bool, speed: f64) -> Option<(AbReading, bool)> {
        let dark = window()
            .match_media("(prefers-color-scheme: dark)")
            .ok()
            .flatten()
            .is_some_and(|m| m.matches());
        let dt = self.last_wall.map_or(0.0, |w| start - w);
        self.last_wall = Some(start);
        if self.sides.len() != 2 {
            return None;
        }
        let (dom, surfaces, k) = self.dom.as_mut()?;
        // One clock: both sides head for the same virtual time, each with
        // half of the frame's budget.
        let mut caught_up = true;
        for (i, side) in self.sides.iter_mut().enumerate() {
            if playing {
                side.lab.play_for(virtual_step(dt, speed));
            }
            let until = FRAME_BUDGET_MS * (i + 1) as f64 / 2.0;
            caught_up &= side.lab.advance(&|| wall_now() - start > until);
        }
        let span = self.sides.iter().map(|s| s.lab.span()).max().unwrap_or(1);
        // In a frame (embed mode) the fleets take the height left under the
        // question and the verdict, so that both fit it whole; on the page
        // they keep the page's proportion.
        let framed = if self.embedded {
            surfaces.first().and_then(|c| room_below(&c.0.canvas))
        } else {
            None
        };
        let stage_height = move |w: f64| framed_height(framed, stage_height(w));
        let mut reports: [Report; 2] = Default::default();
        for ((side, (base, overlay, chart_surface)), report) in self
            .sides
            .iter_mut()
            .zip(surfaces.iter_mut())
            .zip(reports.iter_mut())
        {
            let s = side.lab.scenario().clone();
            *report = side.lab.report();
            let _ = side.lab.take_pulses();
            if let (Some((w, h)), Some(_)) = (base.fit(stage_height), overlay.fit(stage_height)) {
                let canvas = base.canvas.clone();
                let words = move || crate::stage::fleet_view::words_of(&canvas);
                let _ = side.view.fit_worded(w, h, s.instances, s.threads, words);
                let fleet = side.lab.fleet();
                let stats = ActorStats::of(fleet, report, &s);
                side.view.draw(
                    (&base.ctx, Some(&overlay.ctx)),
                    fleet.thread_states(),
                    &stats,
                    dark,
                    start,
                );
            }
            if let Some(size) = chart_surface.fit(|_| CHART_HEIGHT) {
                chart::draw(
                    &chart_surface.ctx,
                    scheme(dark),
                    dark,
                    size,
                    &chart::Timeline {
                        samples: side.lab.samples(),
                        markers: side.lab.markers(),
                        span,
                        now: side.lab.now(),
                    },
                );
            }
        }
        // The one clock (`clock`, with `dom` borrowed); while a seek
        // replays, the side furthest behind, as the sandbox shows its replay.
        let nows = self.sides.iter().map(|s| s.lab.now());
        let now = if caught_up { nows.max() } else { nows.min() }.unwrap_or(0);
        let at_end = self.sides.iter().all(|s| s.lab.at_end());
        let frame = Frame {
            now,
            playing,
            speed,
            at_end,
        };
        dom.write(k.current(), k.cost_ms(), &reports, frame);
        let _ = dom
            .catching
            .toggle_attribute_with_force("hidden", caught_up);
        Some((
            AbReading {
                now,
                at_end,
                caught_up,
            },
            at_end,
        ))
    }
}

/// The differences in words, the question's counter first: (counter,
/// sentence, is the question's subject).
///
/// A side is "better" on a counter only once both runs are over; until
/// then it is better "so far", as the verdict is.
fn diff_rows(a: &Report, b: &Report, subject: Metric, at_end: bool) -> Vec<(Metric, String, bool)> {
    let num = stampede::decimal::format;
    // The factor between the sides, read from the larger one: "B is 200× A".
    let factor = |x: &stampede::metrics::Difference| {
        let (hi, lo, side) = if x.b >= x.a {
            (x.b, x.a, "B")
        } else {
            (x.a, x.b, "A")
        };
        if lo <= 0.0 {
            return String::new();
        }
        let f = hi / lo;
        let f = if f < 10.0 {
            (f * 10.0).round() / 10.0
        } else {
            f.round()
        };
        if f <= 1.0 {
            return String::new(); // equal to a tenth: no factor worth a word
        }
        let other = if side == "A" { "B" } else { "A" };
        format!(" ({side} is {}× {other})", num(f))
    };
    // The question's counter first, the rest in the report's order (a
    // partition: no sort, whose code the wasm would carry for this alone).
    let (first, rest): (Vec<_>, Vec<_>) = differences(a, b)
        .into_iter()
        .partition(|x| x.metric == subject);
    first
        .into_iter()
        .chain(rest)
        .map(|x| {
            let so_far = if at_end { "" } else { " so far" };
            let better = match x.better {
                Some('a') => format!(" — A is better{so_far}"),
                Some('b') => format!(" — B is better{so_far}"),
                _ => String::new(),
            };
            let text = format!(
                "{}: A {} vs B {}{}{better}",
                label(x.metric),
                num(x.a),
                num(x.b),
                factor(&x)
            );
            (x.metric, text, x.metric == subject)
        })
        .collect()
}

/// Where the two runs stand this frame.
#[derive(Clone, Copy)]
struct Frame {
    now: u64,
    playing: bool,
    speed: f64,
    /// Both runs are over: the verdict is no longer "so far".
    at_end: bool,
}

/// The view's elements, built once; each frame writes only the text that
/// changed. Built with plain DOM calls rather than `view!`: the view is a
/// fixed table of numbers redrawn every frame, like the canvases beside
/// it, and each reactive binding would cost the wasm its own code.
struct AbDom {
    question: Element,
    clock: Element,
    catching: Element,
    play: Element,
    cost_box: Element,
    cost_label: Element,
    cost_input: web_sys::HtmlInputElement,
    select: web_sys::HtmlSelectElement,
    titles: [Element; 2],
    /// Per side, per `SIDE_METRICS` entry: the value's element and its box.
    values: [Vec<(Element, Element)>; 2],
    diffs: Element,
    /// The overall verdict, by the core's declared objective.
    verdict: Element,
    shown: Vec<String>,
    shown_diffs: Vec<(Metric, String, bool)>,
    /// The rows were written for two runs that were both over.
    shown_final: bool,
    _listeners: Listeners,
}

/// Everything the controls change, in one place.
#[derive(Clone, Copy)]
pub struct Controls {
    page: Page,
    compare: crate::page::Read<Option<&'static str>>,
    cost: crate::page::Read<Option<u32>>,
    seed: crate::page::Read<u64>,
    playing: RwSignal<bool>,
    speed: RwSignal<f64>,
    engine: StoredValue<AbEngine, LocalStorage>,
    /// The first build waits at t = 0 for Play (an embedded view, a slide).
    waits: StoredValue<bool>,
    /// The curveballs thrown into both runs (name, ms), in the order
    /// thrown: the link carries them and a build replays them.
    throws: crate::page::Read<Vec<(&'static str, u32)>>,
}

impl Controls {
    fn current(&self) -> &'static Comparison {
        self.compare
            .get_untracked()
            .and_then(comparison)
            .unwrap_or(&COMPARISONS[0])
    }

    fn cost_ms(&self) -> u32 {
        let c = self.current();
        self.cost
            .get_untracked()
            .map_or(c.a().recompute_ms, |ms| ms.clamp(COST_MIN_MS, COST_MAX_MS))
    }

    /// Builds both sides again from t = 0 for the current comparison, cost
    /// and seed.
    fn rebuild(&self) {
        let c = self.current();
        let rc = Some(self.cost_ms());
        let (a, b) = (side_scenario(c, 'a', rc), side_scenario(c, 'b', rc));
        self.speed
            .set(crate::clock::default_speed(&a).min(crate::clock::default_speed(&b)));
        let seed = self.seed.get_untracked();
        let throws = self.throws.get_untracked();
        self.engine.update_value(|e| {
            e.build(&a, &b, seed);
            // What the link says was thrown lands again at its moment; one
            // neither run can take (a comparison picked since) is dropped.
            for (kind, at) in &throws {
                if let Some(ball) = catalogue::interview::curveball(kind) {
                    let _ = e.throw_at(ball, *at);
                }
            }
        });
        let wait = self.waits.try_update_value(std::mem::take).unwrap_or(false);
        self.playing.set(!wait);
    }
}

impl AbDom {
    /// Builds the view into `root` and wires its controls.
    fn build(root: &Element, k: Controls) -> (AbDom, Vec<Canvases>) {
        let mut listeners = Listeners::default();
        let mut on =
            |t: &Element, ev: &str, f: Box<dyn FnMut(web_sys::Event)>| listeners.on(t, ev, f);
        let head = el("section", "panel ab-head");
        set(&head, "aria-labelledby", "ab-title");
        let pick = el("div", "ab-pick");
        let title = text_el("h2", "", "Compare two designs");
        set(&title, "id", "ab-title");
        put(&pick, &title);
        let select: web_sys::HtmlSelectElement = el("select", "").unchecked_into();
        set(&select, "aria-label", "Comparison");
        set(&select, "data-control", "compare-preset");
        for c in COMPARISONS {
            let o = text_el("option", "", c.question);
            set(&o, "value", c.name);
            put(&select, &o);
        }
        select.set_value(k.current().name);
        on(
            &select,
            "change",
            Box::new(move |ev| {
                let v = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
                    .map(|s| s.value())
                    .unwrap_or_default();
                // The view's effect builds both sides for the new pick.
                if let Some(c) = comparison(&v) {
                    k.page.act(Action::Compare(c.name));
                }
            }),
        );
        put(&pick, &select);
        put(&head, &pick);
        let question = text_el("p", "ab-question", "");
        put(&head, &question);

        let transport = el("div", "ab-transport");
        let play = button("compare-play", "");
        on(
            &play,
            "click",
            Box::new(move |_| {
                let ended = k.engine.with_value(AbEngine::at_end);
                if !k.playing.get_untracked() && ended {
                    k.engine.update_value(AbEngine::restart);
                }
                k.playing.update(|p| *p = !*p);
            }),
        );
        put(&transport, &play);
        for (name, label) in [
            ("compare-restart", "Restart both"),
            ("compare-end", "Skip to the end"),
        ] {
            let b = button(name, label);
            let end = name == "compare-end";
            on(
                &b,
                "click",
                Box::new(move |_| {
                    k.engine.update_value(if end {
                        AbEngine::skip_to_end
                    } else {
                        AbEngine::restart
                    });
                    k.playing.set(true);
                }),
            );
            put(&transport, &b);
        }
        let clock = text_el("span", "clock", "");
        put(&transport, &clock);
        // As the sandbox's: a seek back replays, and the clock shows it.
        let catching = text_el("span", "catching-up", "catching up…");
        set(&catching, "role", "status");
        set(&catching, "hidden", "");
        put(&transport, &catching);
        let cost_box = el("label", "ab-cost");
        let cost_label = text_el("span", "", "");
        put(&cost_box, &cost_label);
        let cost_input: web_sys::HtmlInputElement = el("input", "").unchecked_into();
        for (n, v) in [
            ("type", "range"),
            ("data-control", "compare-cost"),
            ("aria-label", "Recompute cost"),
            ("min", "0"),
            ("step", "1"),
        ] {
            set(&cost_input, n, v);
        }
        set(&cost_input, "max", &COST_STEPS.to_string());
        on(
            &cost_input,
            "change",
            Box::new(move |ev| {
                let pos = ev
                    .target()
                    .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                    .and_then(|i| stampede::scenario::parse_u32(&i.value()).ok());
                if let Some(p) = pos {
                    k.page.act(Action::Cost(cost_at(p)));
                }
            }),
        );
        put(&cost_box, &cost_input);
        put(&transport, &cost_box);
        put(&head, &transport);
        put(root, &head);

        let sides_box = el("div", "ab-sides");
        let mut titles = Vec::new();
        let mut values: [Vec<(Element, Element)>; 2] = Default::default();
        let mut surfaces = Vec::new();
        for (k, side) in ["a", "b"].iter().enumerate() {
            let sec = el("section", "panel ab-side");
            set(&sec, "data-side", side);
            let h = el("h2", "ab-title");
            put(
                &h,
                &text_el("span", "ab-letter", &side.to_ascii_uppercase()),
            );
            let t = text_el("span", "", "");
            put(&h, &t);
            titles.push(t);
            put(&sec, &h);
            let stage = el("div", "stage-canvas");
            let base = el("canvas", "");
            set(&base, "role", "img");
            set(
                &base,
                "aria-label",
                "This side's fleet: one box per instance, one mark per thread.",
            );
            let overlay = el("canvas", "overlay");
            set(&overlay, "aria-hidden", "true");
            put(&stage, &base);
            put(&stage, &overlay);
            put(&sec, &stage);
            let dl = el("dl", "ab-metrics");
            for m in SIDE_METRICS {
                let boxed = el("div", "metric");
                put(&boxed, &text_el("dt", "", label(m)));
                let dd = el("dd", "");
                set(&dd, "data-metric", m.name());
                put(&boxed, &dd);
                put(&dl, &boxed);
                values[k].push((dd, boxed));
            }
            put(&sec, &dl);
            let chart_box = el("div", "chart-canvas");
            let chart = el("canvas", "");
            set(&chart, "role", "img");
            set(
                &chart,
                "aria-label",
                "This side's timeline, on the same time axis as the other side's.",
            );
            put(&chart_box, &chart);
            put(&sec, &chart_box);
            put(&sides_box, &sec);
            surfaces.push((base, overlay, chart));
        }
        put(root, &sides_box);

        let diff_sec = el("section", "panel ab-diffs");
        set(&diff_sec, "aria-labelledby", "ab-diff-title");
        let dh = text_el("h2", "", "What differs");
        set(&dh, "id", "ab-diff-title");
        put(&diff_sec, &dh);
        // One overall verdict, by the objective the core declares (the
        // per-counter "better" below follows each counter's own way).
        let verdict = text_el("p", "ab-verdict", "");
        set(&verdict, "data-verdict", "");
        set(&verdict, "role", "status");
        put(&diff_sec, &verdict);
        let diffs = el("ol", "ab-diff");
        put(&diff_sec, &diffs);
        put(
            &diff_sec,
            &text_el("p", "ab-objective", stampede::metrics::OBJECTIVE),
        );
        put(root, &diff_sec);

        // The canvases are in the document now, so their surfaces can
        // measure their boxes.
        let surfaces: Vec<_> = surfaces
            .into_iter()
            .filter_map(|(b, o, c)| {
                let s = |e: Element| Surface::new(e.unchecked_into::<HtmlCanvasElement>());
                Some((s(b)?, s(o)?, s(c)?))
            })
            .collect();
        let [ta, tb] = match titles.try_into() {
            Ok(t) => t,
            Err(_) => unreachable!("two sides"),
        };
        (
            AbDom {
                question,
                clock,
                catching,
                play,
                cost_box,
                cost_label,
                cost_input,
                select,
                titles: [ta, tb],
                values,
                diffs,
                verdict,
                shown: Vec::new(),
                shown_diffs: Vec::new(),
                shown_final: false,
                _listeners: listeners,
            },
            surfaces,
        )
    }

    /// Writes one frame's numbers; only what changed touches the DOM.
    fn write(&mut self, c: &Comparison, cost_ms: u32, reports: &[Report; 2], frame: Frame) {
        let Frame {
            now,
            playing,
            speed,
            at_end,
        } = frame;
        set_text(&self.question, c.question);
        // "so far" until both runs are over.
        let (side, verdict) =
            stampede::metrics::verdict_on(&reports[0], &reports[1], at_end, c.metric);
        set_text(&self.verdict, &verdict);
        set(
            &self.verdict,
            "data-better",
            side.map_or("none", |s| if s == 'a' { "a" } else { "b" }),
        );
        if self.select.value() != c.name {
            self.select.set_value(c.name);
        }
        set_text(&self.titles[0], c.a_label);
        set_text(&self.titles[1], c.b_label);
        set_text(&self.play, if playing { "❚❚ Pause" } else { "▶ Play" });
        set(
            &self.play,
            "aria-pressed",
            if playing { "true" } else { "false" },
        );
        set_text(
            &self.clock,
            &format!(
                "t = {} ms at {}",
                crate::clock::now_ms_text(now),
                speed_label(speed)
            ),
        );
        let _ = self
            .cost_box
            .toggle_attribute_with_force("hidden", !c.cost_control);
        set_text(
            &self.cost_label,
            &format!(
                "Recompute cost: {}",
                virtual_label(u64::from(cost_ms) * 1000)
            ),
        );
        let pos = cost_position(cost_ms).to_string();
        if self.cost_input.value() != pos {
            self.cost_input.set_value(&pos);
        }
        let mut shown = Vec::with_capacity(2 * SIDE_METRICS.len());
        for (k, r) in reports.iter().enumerate() {
            for (m, (dd, boxed)) in SIDE_METRICS.iter().zip(&self.values[k]) {
                let v = r.text(*m);
                set_text(dd, &v);
                let subject = *m == c.metric;
                if boxed.class_list().contains("subject") != subject {
                    let _ = boxed.class_list().toggle("subject");
                }
                shown.push(v);
            }
        }
        if shown == self.shown && at_end == self.shown_final {
            return;
        }
        self.shown = shown;
        self.shown_final = at_end;
        let rows = diff_rows(&reports[0], &reports[1], c.metric, at_end);
        if rows != self.shown_diffs {
            self.diffs.set_text_content(None);
            for (m, text, subject) in &rows {
                let li = text_el("li", if *subject { "subject" } else { "" }, text);
                set(&li, "data-diff", m.name());
                put(&self.diffs, &li);
            }
            self.shown_diffs = rows;
        }
    }
}

/// The A/B view: the comparison picker and its question, one clock for
/// both sides, the recompute-cost control where it applies, the two sides,
/// and the differences called out.
#[component]
pub fn CompareView(
    /// A link's moment to open at (ms, play on from there), taken by the
    /// first build: `?cmp=…&at=MS`, as the sandbox's.
    moment: StoredValue<Option<(u64, bool)>>,
    /// Where the view stands paused mid-run (ms), for the address to keep.
    paused_at: RwSignal<Option<u64>>,
    /// The app's slot for the open view's controls.
    open: Open,
    /// In a frame (a slide, a wiki page): the runs wait at their start for
    /// the reader's Play, and both fleets fit the frame's height. On the
    /// page they play as the view opens.
    #[prop(default = false)]
    embedded: bool,
) -> impl IntoView {
    let page = crate::page::use_page();
    // The curveballs thrown into both runs, as the link carries them; a
    // question link's counter on one side, shown here.
    let (compare, cost, seed, throws, mark) = (
        page.compare(),
        page.cost(),
        page.seed(),
        page.ab_throws(),
        page.mark(),
    );
    let engine = StoredValue::new_local(AbEngine {
        embedded,
        ..AbEngine::default()
    });
    let autoplay = !embedded;
    let k = Controls {
        page,
        compare,
        cost,
        seed,
        playing: RwSignal::new(autoplay),
        speed: RwSignal::new(crate::clock::STEADY_SPEED),
        engine,
        waits: StoredValue::new(!autoplay),
        throws,
    };
    let reading = RwSignal::new(AbReading::default());
    open.set_value(Some(k));
    on_cleanup(move || {
        open.try_set_value(None);
    });
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::effect(move || {
        if let Some(r) = root.get() {
            let (dom, surfaces) = AbDom::build(&r, k);
            k.rebuild();
            engine.update_value(|e| e.attach(dom, surfaces, k));
            if let Some((ms, play)) = moment.try_update_value(Option::take).flatten() {
                engine.update_value(|e| e.seek(ms.saturating_mul(1000)));
                k.playing.set(play);
            }
        }
    });
    // A question's link that names a side's counter: that counter, brought
    // into view once per follow (after the view is built: it reads the root).
    let marked = StoredValue::new(0u32);
    crate::dom::effect(move || {
        let _ = root.get();
        mark.with(|m| engine.with_value(|e| e.mark(m.as_ref(), marked)));
    });
    // The runs follow the comparison, its cost and its seed: a change of
    // any of them (the picker, the cost slider, the seed box, a list's next
    // item, Back and Forward, the kit) builds both sides again from t = 0.
    // The open view is kept across those, so nothing else would.
    let built = StoredValue::new(None::<(Option<&'static str>, Option<u32>, u64)>);
    crate::dom::effect(move || {
        let now = (compare.get(), cost.get(), seed.get());
        if built.get_value().is_some_and(|was| was != now) {
            k.rebuild();
        }
        built.set_value(Some(now));
    });
    crate::engine::start_loop(engine, k.playing, k.speed, reading);
    // Paused mid-run, caught up: the moment the address keeps (a replay's
    // passing times are not moments to share).
    crate::dom::effect(move || {
        let r = reading.get();
        if !r.caught_up {
            return;
        }
        let at = (!k.playing.get() && !r.at_end && r.now >= 1000).then_some(r.now / 1000);
        if paused_at.get_untracked() != at {
            paused_at.set(at);
        }
    });
    on_cleanup(move || paused_at.set(None));
    view! { <div class="ab" node_ref=root></div> }
}

/// The A/B view's switch in the header: the first comparison, or back to
/// the sandbox.
#[component]
pub fn Switch() -> impl IntoView {
    let page = crate::page::use_page();
    let compare = page.compare();
    view! {
        <button type="button" class="to-compare" data-control="compare"
            aria-pressed=move || compare.get().is_some().to_string()
            title="Two designs on the same traffic, side by side"
            on:click=move |_| {
                page.act(if compare.get_untracked().is_some() {
                    Action::Sandbox
                } else {
                    Action::Compare(COMPARISONS[0].name)
                });
            }>
            {move || if compare.get().is_some() { "Back to the sandbox" } else { "Compare two designs" }}
        </button>
    }
}

/// The cost slider: 0..=COST_STEPS on a log scale from COST_MIN_MS to
/// COST_MAX_MS, each step at least a millisecond apart.
pub fn cost_at(pos: u32) -> u32 {
    let f = f64::from(pos.min(COST_STEPS)) / f64::from(COST_STEPS);
    let (lo, hi) = (f64::from(COST_MIN_MS).ln(), f64::from(COST_MAX_MS).ln());
    (lo + f * (hi - lo)).exp().round() as u32
}

pub fn cost_position(ms: u32) -> u32 {
    let (lo, hi) = (f64::from(COST_MIN_MS).ln(), f64::from(COST_MAX_MS).ln());
    let v = f64::from(ms.clamp(COST_MIN_MS, COST_MAX_MS)).ln();
    ((v - lo) / (hi - lo) * f64::from(COST_STEPS)).round() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cost_slider_spans_a_query_to_a_billed_call() {
        assert_eq!(cost_at(0), COST_MIN_MS);
        assert_eq!(cost_at(COST_STEPS), COST_MAX_MS);
        for p in 0..=COST_STEPS {
            assert_eq!(cost_position(cost_at(p)), p, "{p}");
        }
    }

    #[test]
    fn the_cost_applies_only_where_the_comparison_offers_it() {
        let cost = comparison("cost").unwrap();
        assert_eq!(side_scenario(cost, 'a', Some(500)).recompute_ms, 500);
        assert_eq!(side_scenario(cost, 'b', Some(500)).recompute_ms, 500);
        assert_eq!(side_scenario(cost, 'b', Some(1)).recompute_ms, COST_MIN_MS);
        let layered = comparison("layered").unwrap();
        assert_eq!(side_scenario(layered, 'b', Some(500)), layered.b());
        // Both sides of every comparison share the fleet's shape.
        for c in COMPARISONS {
            let (a, b) = (c.a(), c.b());
            assert_eq!(
                (a.instances, a.threads),
                (b.instances, b.threads),
                "{}",
                c.name
            );
        }
    }

    /// A counter's "better" side is a verdict too: "so far" until both
    /// runs are over, as the overall one.
    #[test]
    fn a_counter_is_better_only_so_far_until_both_runs_end() {
        let c = comparison("layered").unwrap();
        let (a, b) = (c.a(), c.b());
        let (ra, rb) = (
            stampede::Fleet::new(&a, 1).run(),
            stampede::Fleet::new(&b, 1).run(),
        );
        let marked = |at_end| -> Vec<String> {
            diff_rows(&ra, &rb, c.metric, at_end)
                .into_iter()
                .map(|(_, t, _)| t)
                .filter(|t| t.contains(" is better"))
                .collect()
        };
        let (mid, end) = (marked(false), marked(true));
        assert!(!mid.is_empty());
        assert_eq!(mid.len(), end.len());
        for (m, e) in mid.iter().zip(&end) {
            assert!(m.ends_with(" is better so far"), "{m}");
            assert!(e.ends_with(" is better"), "{e}");
        }
    }
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    /// Both sides at the end, then back and forth by the keys: a step back
    /// lands a step before the one clock, a step forward never passes an
    /// event of either side that comes after a step's length.
    #[test]
    fn the_keys_step_the_one_clock_without_skipping_a_side() {
        for c in COMPARISONS {
            let mut e = AbEngine::default();
            let (mut a, mut b) = (c.a(), c.b());
            for s in [&mut a, &mut b] {
                s.instances = s.instances.min(6);
                s.threads = s.threads.min(30);
            }
            e.build(&a, &b, 1);
            let settle = |e: &mut AbEngine| {
                for s in &mut e.sides {
                    while !s.lab.advance(&|| false) {}
                }
            };
            e.skip_to_end();
            settle(&mut e);
            assert!(e.at_end(), "{}", c.name);
            let end = e.clock();
            for _ in 0..3 {
                let before = e.clock();
                let t = e.target(Command::StepBack).unwrap();
                assert!(
                    t < before || before == 0,
                    "{}: back from {before} to {t}",
                    c.name
                );
                e.seek(t);
                settle(&mut e);
                assert_eq!(e.clock(), t, "{}", c.name);
            }
            while e.clock() < end {
                let from = e.clock();
                let len = e.sides.iter().map(|s| s.lab.step_length()).max().unwrap();
                let t = e.target(Command::Step).unwrap();
                assert!(t > from, "{}", c.name);
                // Past a step's length only while both sides are quiet.
                if t > from + len {
                    for s in &e.sides {
                        let next = s.lab.fleet().next_event_at();
                        assert!(
                            s.lab.at_end() || next.is_none_or(|n| n >= t),
                            "{}: a step to {t} skips an event at {next:?}",
                            c.name
                        );
                    }
                }
                e.seek(t);
                settle(&mut e);
            }
        }
    }
}

#[cfg(test)]
mod throw_tests {
    use super::*;

    /// What a link's `throw=` replays: the curveball lands in both runs at
    /// its moment when the view is built, and it bites both.
    #[test]
    fn a_link_s_curveballs_land_again_in_both_runs() {
        let c = comparison("layered").unwrap();
        let (mut a, mut b) = (c.a(), c.b());
        for s in [&mut a, &mut b] {
            s.instances = s.instances.min(6);
            s.threads = s.threads.min(30);
        }
        let ball = catalogue::interview::curveball("origin").unwrap();
        let end = |throw: bool| {
            let mut e = AbEngine::default();
            e.build(&a, &b, 1);
            if throw {
                e.throw_at(ball, 1).unwrap();
            }
            e.sides
                .iter_mut()
                .map(|s| {
                    s.lab.seek(u64::MAX);
                    while !s.lab.advance(&|| false) {}
                    (
                        s.lab.scenario().faults.len(),
                        s.lab.report().origin_failures,
                    )
                })
                .collect::<Vec<_>>()
        };
        let (plain, thrown) = (end(false), end(true));
        for ((f0, e0), (f1, e1)) in plain.iter().zip(&thrown) {
            assert_eq!(f1, &(f0 + 1), "{plain:?} {thrown:?}");
            assert!(e1 > e0, "{plain:?} {thrown:?}");
        }
    }

    /// A curveball thrown into the A/B view lands at the one clock's moment
    /// on both sides: live on a side still running, and on a side that had
    /// ended the run is rebuilt with it and taken back to where it was.
    /// Each side's run is then the run its scenario's link replays.
    #[test]
    fn a_curveball_lands_on_both_sides_at_the_one_clock_s_moment() {
        let c = comparison("layered").unwrap();
        let (mut a, mut b) = (c.a(), c.b());
        for s in [&mut a, &mut b] {
            s.instances = 6;
            s.threads = 30;
        }
        let ball = catalogue::interview::curveball("redis").unwrap();
        // Past both runs' ends there is nothing left ahead: both restart
        // with it at an earlier moment, the clock just before it, as the
        // single-run view does (it was refused, issue 40), and it bites.
        let mut e = AbEngine::default();
        e.build(&a, &b, 1);
        e.seek(400_000);
        for s in &mut e.sides {
            while !s.lab.advance(&|| false) {}
        }
        let clock = e.clock();
        let at = e.throw(ball).expect("thrown at an earlier moment");
        assert!(u64::from(at) * 1000 < clock, "{at} ms, clock {clock}");
        let quiet: Vec<f64> = e
            .sides
            .iter()
            .map(|s| {
                let mut q = s.lab.scenario().clone();
                q.faults.clear();
                stampede::metrics::value(&stampede::sim::Fleet::new(&q, 1).run(), ball.metric)
                    .unwrap_or(0.0)
            })
            .collect();
        let mut bit = false;
        for (s, quiet) in e.sides.iter_mut().zip(quiet) {
            assert_eq!(s.lab.scenario().faults.last().map(|f| f.start_ms), Some(at));
            assert!(s.lab.target() < u64::from(at) * 1000, "the clock went back");
            s.lab.seek(u64::MAX);
            while !s.lab.advance(&|| false) {}
            let link = stampede::sim::Fleet::new(s.lab.scenario(), 1).run();
            assert_eq!(s.lab.fleet().report(), link);
            bit |= stampede::metrics::value(&link, ball.metric).unwrap_or(0.0) > quiet;
        }
        assert!(bit, "the curveball moved its counter in neither run");
        for t in [2_000u64] {
            let mut e = AbEngine::default();
            e.build(&a, &b, 1);
            e.seek(t);
            for s in &mut e.sides {
                while !s.lab.advance(&|| false) {}
            }
            let clock = e.clock();
            let at = e.throw(ball).unwrap();
            assert_eq!(u64::from(at), clock / 1000 + 1, "at {t}");
            for s in &mut e.sides {
                assert_eq!(
                    s.lab.scenario().faults.last().map(|f| f.start_ms),
                    Some(at),
                    "at {t}"
                );
                assert_eq!(s.lab.target(), clock.min(s.lab.target()), "at {t}");
                s.lab.seek(u64::MAX);
                while !s.lab.advance(&|| false) {}
                let link = stampede::sim::Fleet::new(s.lab.scenario(), 1).run();
                assert_eq!(s.lab.fleet().report(), link, "at {t}");
            }
        }
    }
}
