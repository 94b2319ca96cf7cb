//! The Stampede Lab page. It owns no stampede logic: every number it shows is
//! measured by running `stampede::sim::Fleet` in the browser on the current
//! knobs, so the page and the command-line tool cannot disagree.

use leptos::prelude::*;
use stampede::metrics::Report;
use stampede::scenario::{parse_claim, parse_u32, ClaimMode, Notice, Scenario, U32_BOUNDS};
use stampede::sim::Fleet;

/// Seed of every run the page makes: the same knobs always give the same numbers.
pub const SEED: u64 = 7;

/// One simulated hot-key miss as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// The scenario after validation (what actually ran).
    pub scenario: Scenario,
    /// What validation had to change, in words for the visitor.
    pub notices: Vec<Notice>,
    pub report: Report,
}

impl Run {
    /// A report field as text, exactly as the CLI's JSON prints it.
    pub fn metric(&self, name: &str) -> Option<String> {
        self.report
            .fields()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// instances x threads: how many recomputes nothing-at-all would cost.
    pub fn naive(&self) -> u64 {
        naive(self.scenario.instances, self.scenario.threads)
    }
}

/// Validates the scenario (keeping the notices) and runs it to completion.
pub fn simulate(scenario: &Scenario, seed: u64) -> Run {
    let mut scenario = scenario.clone();
    let notices = scenario.validate();
    let mut fleet = Fleet::new(&scenario, seed);
    let report = fleet.run();
    Run {
        scenario,
        notices,
        report,
    }
}

pub fn naive(instances: u32, threads: u32) -> u64 {
    u64::from(instances) * u64::from(threads)
}

/// The value a `data-control="claim"` select carries for each mode.
pub fn claim_value(mode: ClaimMode) -> &'static str {
    match mode {
        ClaimMode::Off => "off",
        ClaimMode::Inner => "inner",
        ClaimMode::Outer => "outer",
    }
}

/// A counter the page shows: `name` is the `Report` field and the `data-metric`.
#[derive(Clone, Copy, Debug)]
pub struct Counter {
    pub name: &'static str,
    pub label: &'static str,
    pub hint: &'static str,
}

const fn counter(name: &'static str, label: &'static str, hint: &'static str) -> Counter {
    Counter { name, label, hint }
}

/// The three numbers the lesson is about.
pub const HEADLINE: [Counter; 3] = [
    counter("recomputes", "recomputes", "calls that reached the origin"),
    counter(
        "claim_attempts",
        "claim attempts",
        "SET lock NX PX sent to Redis",
    ),
    counter(
        "redis_round_trips",
        "Redis round trips",
        "every GET, SET and claim",
    ),
];

/// Everything else worth a glance.
pub const DETAIL: [Counter; 12] = [
    counter("requests", "requests", "requests the fleet answered"),
    counter("claim_wins", "claims won", "instances allowed to recompute"),
    counter(
        "shared",
        "shared results",
        "answered by their flight's leader",
    ),
    counter("hits", "cache hits", "answered from the cache"),
    counter(
        "origin_peak_concurrency",
        "origin peak",
        "most recomputes running at once",
    ),
    counter("stale_served", "stale served", "answered with an old value"),
    counter("degraded", "degraded", "answered with a fallback"),
    counter("errors", "errors", "requests that failed"),
    counter("timeouts", "timeouts", "requests past their deadline"),
    counter("p50_ms", "p50 ms", "median request latency"),
    counter("p99_ms", "p99 ms", "99th percentile latency"),
    counter(
        "max_wait_ms",
        "longest wait ms",
        "longest time spent waiting",
    ),
];

/// One or two sentences on what the measured run shows, in the page's words.
pub fn story(run: &Run) -> String {
    let s = &run.scenario;
    let r = &run.report;
    let (i, t) = (s.instances, s.threads);
    let recomputes = plural(r.recomputes, "recompute", "recomputes");
    let attempts = plural(r.claim_attempts, "claim attempt", "claim attempts");
    match (s.singleflight, s.claim) {
        (false, ClaimMode::Off) => format!(
            "Nothing coordinates the miss: each of the {t} threads on each of the {i} \
             instances goes to the origin itself, so the origin sees {recomputes}."
        ),
        (true, ClaimMode::Off) => format!(
            "Singleflight lets one thread per instance recompute while the instance's \
             other threads attach to its flight. Instances cannot see each other's \
             flights, so the origin still sees {recomputes}{}.",
            if r.recomputes == u64::from(i) {
                ", one per instance"
            } else {
                ""
            }
        ),
        (true, ClaimMode::Inner) => format!(
            "Singleflight first, claim second: only each instance's flight leader asks \
             Redis for the claim ({attempts} from {i} instances), and the origin sees \
             {recomputes}."
        ),
        (true, ClaimMode::Outer) => format!(
            "The claim sits outside singleflight, so every thread asks Redis before it can \
             coalesce: {attempts} to end at {recomputes}. Put the claim inside and only \
             each instance's flight leader would ask."
        ),
        (false, _) => format!(
            "Without singleflight every thread asks Redis for the claim itself: {attempts} \
             for {recomputes}, and every thread that loses needs a policy of its own."
        ),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Bar width (percent) of `value` against `max`, on a log scale so that
/// 1 and 8,000 are both visible.
pub fn log_width(value: u64, max: u64) -> f64 {
    if max == 0 {
        return 0.0;
    }
    let w = ((value as f64) + 1.0).ln() / ((max as f64) + 1.0).ln() * 100.0;
    w.clamp(0.0, 100.0)
}

/// `n` with thin spaces between thousands, for prose (metrics stay plain digits).
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    let lead = digits.len() % 3;
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && k % 3 == lead {
            out.push('\u{202f}');
        }
        out.push(ch);
    }
    out
}

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let scenario = RwSignal::new(Scenario::default());
    let run = Memo::new(move |_| scenario.with(|s| simulate(s, SEED)));

    view! {
        <header class="masthead">
            <p class="eyebrow">"Stampede Lab"</p>
            <h1>"One hot key expires. How many times does the origin recompute it?"</h1>
            <p class="lede">
                "A fleet of instances, each with a pool of request threads, all miss the same key at \
                 once. Switch the two defences on and off and watch the count: singleflight works \
                 inside one process, the Redis claim works across them."
            </p>
        </header>
        <main class="lab">
            <Controls scenario=scenario />
            <section class="panel results" aria-labelledby="results-title">
                <h2 id="results-title">"The arithmetic"</h2>
                <Arithmetic run=run />
                <p class="story">{move || run.with(story)}</p>
                <Notices run=run />
                <dl class="headline">
                    {HEADLINE.iter().map(|c| view! { <Metric counter=*c run=run /> }).collect_view()}
                </dl>
                <details class="more">
                    <summary>"All counters"</summary>
                    <dl class="detail">
                        {DETAIL.iter().map(|c| view! { <Metric counter=*c run=run /> }).collect_view()}
                    </dl>
                </details>
            </section>
        </main>
        <footer class="colophon">
            <p>
                {move || run.with(|r| format!(
                    "The counters are measured, not drawn: the page runs the project's simulation \
                     core compiled to WebAssembly (seed {SEED}). The key is missing at t = 0 and \
                     every thread asks for it within {} ms; recomputing takes about {} ms.",
                    r.scenario.spread_ms, r.scenario.recompute_ms,
                ))}
            </p>
        </footer>
    }
}

/// The range validation clamps a numeric knob into, as the core defines it.
pub fn knob_bounds(name: &str) -> (u32, u32) {
    U32_BOUNDS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map_or((0, u32::MAX), |&(_, lo, hi)| (lo, hi))
}

/// How long typing may pause before the page re-runs the simulation; a
/// `change` (Enter, blur, spinner) applies at once.
const TYPING_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// A whole-number knob. Keystrokes are debounced so that typing 1000 runs
/// one simulation, not four; values out of range are clamped by validation,
/// which says so in the notices.
#[component]
fn CountInput(
    scenario: RwSignal<Scenario>,
    control: &'static str,
    label: &'static str,
    get: fn(&Scenario) -> u32,
    set: fn(&mut Scenario, u32),
) -> impl IntoView {
    let (min, max) = knob_bounds(control);
    let pending = StoredValue::new(None::<TimeoutHandle>);
    let cancel = move || {
        if let Some(h) = pending.get_value() {
            h.clear();
        }
        pending.set_value(None);
    };
    let apply = move |v: u32| {
        cancel();
        if scenario.with_untracked(|s| get(s) != v) {
            scenario.update(|s| set(s, v));
        }
    };
    let on_input = move |ev: leptos::ev::Event| {
        if let Ok(v) = parse_u32(&event_target_value(&ev)) {
            cancel();
            pending.set_value(set_timeout_with_handle(move || apply(v), TYPING_PAUSE).ok());
        }
    };
    let on_change = move |ev: leptos::ev::Event| match parse_u32(&event_target_value(&ev)) {
        Ok(v) => apply(v),
        // Not a number: show the value that is in force again.
        Err(_) => {
            cancel();
            let input = event_target::<web_sys::HtmlInputElement>(&ev);
            input.set_value(&scenario.with_untracked(|s| get(s).to_string()));
        }
    };
    view! {
        <label class="field">
            <span class="label">{label}</span>
            <input
                type="number"
                inputmode="numeric"
                min=min
                max=max
                data-control=control
                prop:value=move || scenario.with(|s| get(s).to_string())
                on:input=on_input
                on:change=on_change
            />
        </label>
    }
}

#[component]
fn Controls(scenario: RwSignal<Scenario>) -> impl IntoView {
    let claim_is = move |mode: ClaimMode| move || scenario.with(|s| s.claim == mode);

    view! {
        <form class="panel controls" aria-labelledby="controls-title" on:submit=|ev| ev.prevent_default()>
            <h2 id="controls-title">"The fleet"</h2>
            <div class="pair">
                <CountInput
                    scenario=scenario
                    control="instances"
                    label="Instances"
                    get=|s| s.instances
                    set=|s, v| s.instances = v
                />
                <CountInput
                    scenario=scenario
                    control="threads"
                    label="Threads each"
                    get=|s| s.threads
                    set=|s, v| s.threads = v
                />
            </div>

            <h2>"The defences"</h2>
            <label class="toggle">
                <input
                    type="checkbox"
                    role="switch"
                    data-control="singleflight"
                    prop:checked=move || scenario.with(|s| s.singleflight)
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        scenario.update(|s| s.singleflight = on);
                    }
                />
                <span class="toggle-text">
                    <span class="label">"Singleflight"</span>
                    <span class="hint">"Threads of one instance that miss the same key share one recompute."</span>
                </span>
            </label>
            <label class="field">
                <span class="label">"Redis claim"</span>
                <select
                    data-control="claim"
                    on:change=move |ev| {
                        if let Ok(mode) = parse_claim(&event_target_value(&ev)) {
                            scenario.update(|s| s.claim = mode);
                        }
                    }
                >
                    <option value="off" prop:selected=claim_is(ClaimMode::Off)>"off"</option>
                    <option value="inner" prop:selected=claim_is(ClaimMode::Inner)>"inside singleflight"</option>
                    <option value="outer" prop:selected=claim_is(ClaimMode::Outer)>"outside singleflight"</option>
                </select>
                <span class="hint">"SET lock:key token NX PX ttl: one instance wins the right to recompute."</span>
            </label>
            <button type="button" class="reset" on:click=move |_| scenario.set(Scenario::default())>
                "Back to 40 × 200, both on"
            </button>
        </form>
    }
}

#[component]
fn Arithmetic(run: Memo<Run>) -> impl IntoView {
    let naive = move || run.with(Run::naive);
    let recomputes = move || run.with(|r| r.report.recomputes);
    view! {
        <p class="formula" aria-label="instances times threads">
            <span class="term">
                <span class="num">{move || run.with(|r| r.scenario.instances)}</span>
                <span class="unit">"instances"</span>
            </span>
            <span class="op" aria-hidden="true">"×"</span>
            <span class="term">
                <span class="num">{move || run.with(|r| r.scenario.threads)}</span>
                <span class="unit">"threads"</span>
            </span>
            <span class="op" aria-hidden="true">"="</span>
            <span class="term naive">
                <span class="num" data-metric="naive">{naive}</span>
                <span class="unit">"recomputes, no defence"</span>
            </span>
        </p>
        <div class="bars" aria-hidden="true">
            <div class="bar-row">
                <span class="bar-label">"no defence"</span>
                <span class="bar naive-bar" style="width: 100%"></span>
                <span class="bar-value">{move || grouped(naive())}</span>
            </div>
            <div class="bar-row">
                <span class="bar-label">"measured"</span>
                <span
                    class="bar measured-bar"
                    style:width=move || format!("{:.1}%", log_width(recomputes(), naive()).max(0.6))
                ></span>
                <span class="bar-value">{move || grouped(recomputes())}</span>
            </div>
            <p class="bar-note">"log scale"</p>
        </div>
    }
}

#[component]
fn Notices(run: Memo<Run>) -> impl IntoView {
    view! {
        <Show when=move || run.with(|r| !r.notices.is_empty())>
            <ul class="notices" role="status">
                {move || {
                    run.with(|r| {
                        r.notices
                            .iter()
                            .map(|n| view! { <li>{n.to_string()}</li> })
                            .collect_view()
                    })
                }}
            </ul>
        </Show>
    }
}

#[component]
fn Metric(counter: Counter, run: Memo<Run>) -> impl IntoView {
    let value = move || run.with(|r| r.metric(counter.name).unwrap_or_default());
    view! {
        <div class="metric">
            <dt>{counter.label}</dt>
            <dd data-metric=counter.name>{value}</dd>
            <dd class="hint">{counter.hint}</dd>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_is_a_report_field() {
        let fields = Report::default().fields();
        for c in HEADLINE.iter().chain(DETAIL.iter()) {
            assert!(
                fields.iter().any(|(k, _)| k == c.name),
                "{} is not a Report field",
                c.name
            );
        }
    }

    #[test]
    fn count_inputs_have_core_bounds() {
        assert_eq!(knob_bounds("instances"), (1, 1000));
        assert_eq!(knob_bounds("threads"), (1, 10_000));
    }

    #[test]
    fn claim_values_round_trip() {
        for mode in [ClaimMode::Off, ClaimMode::Inner, ClaimMode::Outer] {
            assert_eq!(parse_claim(claim_value(mode)), Ok(mode));
        }
    }

    #[test]
    fn grouping_and_bars() {
        assert_eq!(grouped(8000), "8\u{202f}000");
        assert_eq!(grouped(40), "40");
        assert_eq!(log_width(8000, 8000), 100.0);
        assert_eq!(log_width(0, 8000), 0.0);
        assert!(log_width(40, 8000) > log_width(1, 8000));
    }
}
