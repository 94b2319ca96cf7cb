//! Two designs on the same traffic, side by side (the A/B view). Both
//! fleets have the same shape and seed and run from one clock, so what the
//! two sides show at a virtual time is the same instant for both; their
//! charts share one time axis. The comparisons themselves (which two
//! designs, which counter the question is about, which side wins it) are
//! the core's `scenario::COMPARISONS`; this module only runs and draws them.

use leptos::prelude::*;
use stampede::metrics::{differences, Report};
use stampede::scenario::{comparison, Comparison, Scenario, COMPARISONS};

use crate::chart;
use crate::clock::{speed_label, virtual_label, virtual_step, FRAME_BUDGET_MS};
use crate::counters::label_of;
use crate::engine::{wall_now, window, Animate, Surface};
use crate::fleet_layout::stage_height;
use crate::fleet_view::{ActorStats, FleetView};
use crate::lab::Lab;
use crate::palette::scheme;

/// Height of each side's chart (css px).
const CHART_HEIGHT: f64 = 150.0;

/// The counters each side shows, with `data-side` and `data-metric`.
pub const SIDE_METRICS: [&str; 10] = [
    "recomputes",
    "claim_attempts",
    "redis_round_trips",
    "origin_peak_concurrency",
    "misses",
    "stale_served",
    "errors",
    "timeouts",
    "p50_ms",
    "p99_ms",
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

struct Side {
    lab: Lab,
    view: FleetView,
    stage: Option<(Surface, Surface)>,
    chart: Option<Surface>,
}

/// What one frame of the A/B view measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AbReading {
    pub now: u64,
    pub reports: [Report; 2],
    pub at_end: bool,
}

/// The two sides between frames.
#[derive(Default)]
pub(crate) struct AbEngine {
    sides: Vec<Side>,
    last_wall: Option<f64>,
}

impl AbEngine {
    pub(crate) fn build(&mut self, a: &Scenario, b: &Scenario, seed: u64) {
        let canvases: Vec<_> = self
            .sides
            .drain(..)
            .map(|s| (s.stage, s.chart))
            .chain(std::iter::repeat_with(|| (None, None)))
            .take(2)
            .collect();
        self.sides = [a, b]
            .into_iter()
            .zip(canvases)
            .map(|(s, (stage, chart))| Side {
                lab: Lab::single(s, seed),
                view: FleetView::default(),
                stage,
                chart,
            })
            .collect();
        self.last_wall = None;
    }

    pub(crate) fn attach(&mut self, k: usize, stage: (Surface, Surface), chart: Surface) {
        if let Some(s) = self.sides.get_mut(k) {
            s.stage = Some(stage);
            s.chart = Some(chart);
        }
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
        // One clock: both sides head for the same virtual time, each with
        // half of the frame's budget.
        for (k, side) in self.sides.iter_mut().enumerate() {
            if playing {
                side.lab.play_for(virtual_step(dt, speed));
            }
            let until = FRAME_BUDGET_MS * (k + 1) as f64 / 2.0;
            side.lab.advance(&|| wall_now() - start > until);
        }
        let span = self.sides.iter().map(|s| s.lab.span()).max().unwrap_or(1);
        let mut reports: [Report; 2] = Default::default();
        for (k, side) in self.sides.iter_mut().enumerate() {
            let s = side.lab.scenario().clone();
            let report = side.lab.report();
            let _ = side.lab.take_pulses();
            if let Some((base, overlay)) = side.stage.as_mut() {
                if let (Some((w, h)), Some(_)) = (base.fit(stage_height), overlay.fit(stage_height))
                {
                    side.view.fit(w, h, s.instances, s.threads);
                    let fleet = side.lab.fleet();
                    let stats = ActorStats {
                        redis_round_trips: report.redis_round_trips,
                        live_claims: fleet.live_claims() as u64,
                        claim_attempts: report.claim_attempts,
                        origin_running: fleet.origin_running(),
                        origin_capacity: s.origin_capacity,
                        recomputes: report.recomputes,
                        redis_errors: report.redis_errors,
                        releases_refused: report.releases_refused,
                        overlapping_recomputes: report.overlapping_recomputes,
                        origin_timeouts: report.origin_timeouts,
                        origin_failures: report.origin_failures,
                    };
                    side.view.draw(
                        (&base.ctx, Some(&overlay.ctx)),
                        fleet.thread_states(),
                        &stats,
                        dark,
                        start,
                    );
                }
            }
            if let Some(c) = side.chart.as_mut() {
                if let Some(size) = c.fit(|_| CHART_HEIGHT) {
                    chart::draw(
                        &c.ctx,
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
            reports[k] = report;
        }
        let now = self.sides.iter().map(|s| s.lab.now()).min().unwrap_or(0);
        let at_end = self.sides.iter().all(|s| s.lab.at_end());
        Some((
            AbReading {
                now,
                reports,
                at_end,
            },
            at_end,
        ))
    }
}

fn value(r: &Report, name: &str) -> String {
    r.fields()
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_default()
}

/// A side's counters as (name, label, value, is the question's subject).
fn side_rows(r: &Report, subject: &str) -> Vec<(&'static str, String, String, bool)> {
    SIDE_METRICS
        .iter()
        .map(|m| (*m, label_of(m).to_string(), value(r, m), *m == subject))
        .collect()
}

/// The differences in words, the question's counter first.
fn diff_rows(a: &Report, b: &Report, subject: &str) -> Vec<(String, String, bool)> {
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
    let mut d = differences(a, b);
    d.sort_by_key(|x| x.name != subject);
    d.into_iter()
        .map(|x| {
            let ratio = factor(&x);
            let better = match x.better {
                Some('a') => " — A is better",
                Some('b') => " — B is better",
                _ => "",
            };
            let text = format!(
                "{}: A {} vs B {}{ratio}{better}",
                label_of(&x.name),
                num(x.a),
                num(x.b)
            );
            (x.name.clone(), text, x.name == subject)
        })
        .collect()
}

/// The A/B view: the comparison picker and its question, one clock for
/// both sides, the recompute-cost control where it applies, the two sides,
/// and the differences called out. Kept to few reactive bindings: each
/// costs the wasm its own code.
#[component]
pub fn CompareView(
    compare: RwSignal<Option<&'static str>>,
    cost: RwSignal<Option<u32>>,
    seed: RwSignal<u64>,
) -> impl IntoView {
    let name = Memo::new(move |_| {
        compare
            .get()
            .and_then(comparison)
            .map_or(COMPARISONS[0].name, |c| c.name)
    });
    let current = move || comparison(name.get()).unwrap_or(&COMPARISONS[0]);
    // The comparison's own cost until the control (or the link) sets one.
    let cost_ms = Memo::new(move |_| {
        let own = current().a().recompute_ms;
        cost.get()
            .map_or(own, |ms| ms.clamp(COST_MIN_MS, COST_MAX_MS))
    });
    let engine = StoredValue::new_local(AbEngine::default());
    let playing = RwSignal::new(true);
    let speed = RwSignal::new(crate::clock::STEADY_SPEED);
    let reading = RwSignal::new(AbReading::default());
    let refs: [[NodeRef<leptos::html::Canvas>; 3]; 2] = Default::default();

    // A new comparison, cost or seed starts both sides again from t = 0.
    Effect::new(move |_| {
        let c = current();
        let sd = seed.get();
        let rc = Some(cost_ms.get());
        let (a, b) = (side_scenario(c, 'a', rc), side_scenario(c, 'b', rc));
        speed.set(crate::clock::default_speed(&a).min(crate::clock::default_speed(&b)));
        engine.update_value(|e| e.build(&a, &b, sd));
        playing.set(true);
    });
    Effect::new(move |_| {
        for (k, [s, o, c]) in refs.iter().enumerate() {
            if let (Some(s), Some(o), Some(c)) = (s.get(), o.get(), c.get()) {
                if let (Some(s), Some(o), Some(c)) =
                    (Surface::new(s), Surface::new(o), Surface::new(c))
                {
                    engine.update_value(|e| e.attach(k, (s, o), c));
                }
            }
        }
    });
    crate::engine::start_loop(engine, playing, speed, reading);

    let sides = ['a', 'b'].map(|side| {
        let k = usize::from(side == 'b');
        let [stage, overlay, chart] = refs[k];
        let letter = side.to_ascii_uppercase().to_string();
        view! {
            <section class="panel ab-side" data-side=side.to_string()>
                <h2 class="ab-title">
                    <span class="ab-letter">{letter}</span>
                    <span>{move || if k == 0 { current().a_label } else { current().b_label }}</span>
                </h2>
                <div class="stage-canvas">
                    <canvas node_ref=stage role="img" aria-label="This side's fleet: one box per instance, one mark per thread."></canvas>
                    <canvas node_ref=overlay class="overlay" aria-hidden="true"></canvas>
                </div>
                <dl class="ab-metrics">
                    {move || {
                        let subject = current().metric;
                        reading.with(|r| side_rows(&r.reports[k], subject))
                            .into_iter()
                            .map(|(m, label, v, subj)| view! {
                                <div class=if subj { "metric subject" } else { "metric" }>
                                    <dt>{label}</dt>
                                    <dd data-metric=m>{v}</dd>
                                </div>
                            })
                            .collect_view()
                    }}
                </dl>
                <div class="chart-canvas">
                    <canvas node_ref=chart role="img" aria-label="This side's timeline, on the same time axis as the other side's."></canvas>
                </div>
            </section>
        }
    });
    view! {
        <section class="panel ab-head" aria-labelledby="ab-title">
            <div class="ab-pick">
                <h2 id="ab-title">"Compare two designs"</h2>
                <select
                    aria-label="Comparison"
                    data-control="compare-preset"
                    prop:value=move || name.get()
                    on:change=move |ev| {
                        cost.set(None);
                        compare.set(comparison(&event_target_value(&ev)).map(|c| c.name));
                    }
                >
                    {COMPARISONS
                        .iter()
                        .map(|c| view! { <option value=c.name>{c.question}</option> })
                        .collect_view()}
                </select>
            </div>
            <p class="ab-question">{move || current().question}</p>
            <div class="ab-transport">
                <button type="button" data-control="compare-play" aria-pressed=move || playing.get().to_string()
                    on:click=move |_| {
                        if !playing.get_untracked() && reading.with_untracked(|r| r.at_end) {
                            engine.update_value(AbEngine::restart);
                        }
                        playing.update(|p| *p = !*p);
                    }>
                    {move || if playing.get() { "❚❚ Pause" } else { "▶ Play" }}
                </button>
                <button type="button" data-control="compare-restart"
                    on:click=move |_| { engine.update_value(AbEngine::restart); playing.set(true); }>
                    "Restart both"
                </button>
                <button type="button" data-control="compare-end"
                    on:click=move |_| { engine.update_value(AbEngine::skip_to_end); playing.set(true); }>
                    "Skip to the end"
                </button>
                <span class="clock">
                    {move || format!("t = {} ms at {}", crate::clock::now_ms_text(reading.with(|r| r.now)), speed_label(speed.get()))}
                </span>
                <label class="ab-cost" hidden=move || !current().cost_control>
                    <span>{move || format!("Recompute cost: {}", virtual_label(u64::from(cost_ms.get()) * 1000))}</span>
                    <input type="range" data-control="compare-cost" aria-label="Recompute cost"
                        min="0" max=COST_STEPS step="1"
                        prop:value=move || cost_position(cost_ms.get()).to_string()
                        on:change=move |ev| {
                            if let Ok(p) = event_target_value(&ev).parse::<u32>() {
                                cost.set(Some(cost_at(p)));
                            }
                        }
                    />
                </label>
            </div>
        </section>
        <div class="ab-sides">{sides}</div>
        <section class="panel ab-diffs" aria-labelledby="ab-diff-title">
            <h2 id="ab-diff-title">"What differs"</h2>
            <ol class="ab-diff">
                {move || {
                    let subject = current().metric;
                    reading.with(|r| diff_rows(&r.reports[0], &r.reports[1], subject))
                        .into_iter()
                        .map(|(m, text, subj)| view! {
                            <li data-diff=m class=if subj { "subject" } else { "" }>{text}</li>
                        })
                        .collect_view()
                }}
            </ol>
        </section>
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
}
