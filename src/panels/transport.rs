//! The top bar: the preset picker and the transport — play/pause, step,
//! restart, replay, the logarithmic speed, the timeline scrubber and the seed.
//! It only sends commands; the animation loop in `app` carries them out.

use leptos::prelude::*;
use stampede::scenario::{Scenario, PRESETS};

use crate::clock::{default_speed, position_of, speed_at, speed_label, virtual_label, SPEED_STEPS};
use crate::knobs::KnobControl;
use crate::reading::Reading;

/// What the buttons ask the animation loop to do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command {
    TogglePlay,
    Step,
    /// A step back (a tenth of the visible window).
    StepBack,
    /// Jump to the next timeline marker and pause.
    NextEvent,
    Restart,
    Replay,
    /// Jump to this virtual time (µs) and pause.
    Seek(u64),
    /// A key the tour takes (the page moves through its steps instead).
    Tour,
    /// A key for the room: presenter mode, full screen, the card's rows, help.
    Room,
}

/// The preset the scenario is, if it is one exactly.
pub fn preset_of(s: &Scenario) -> Option<&'static str> {
    PRESETS.iter().find(|p| p.scenario() == *s).map(|p| p.name)
}

/// A fresh seed from the browser's randomness (not reproducible by design).
pub fn random_seed() -> u64 {
    (js_sys::Math::random() * 1e9).floor() as u64 + 1
}

/// The preset a scenario was made from: the one it equals, else the one it
/// differs from in the fewest knobs (at most four), so a link that turns a
/// knob or two of a lesson still names that lesson.
pub fn closest_preset(s: &Scenario) -> Option<&'static str> {
    if let Some(p) = preset_of(s) {
        return Some(p);
    }
    PRESETS
        .iter()
        .map(|p| {
            let base = p.scenario();
            let differ = stampede::scenario::knob_names()
                .filter(|k| base.get(k) != s.get(k))
                .count();
            (differ, p.name)
        })
        .filter(|(differ, _)| *differ <= 4)
        .min_by_key(|(differ, _)| *differ)
        .map(|(_, name)| name)
}

/// The lesson being explored: the preset last picked (or matched), kept
/// while knobs are turned, so the lesson stays in view.
pub fn lesson_base(scenario: RwSignal<Scenario>) -> Memo<Option<&'static str>> {
    Memo::new(move |prev: Option<&Option<&'static str>>| {
        scenario.with(|s| {
            preset_of(s)
                .or_else(|| prev.copied().flatten())
                .or_else(|| closest_preset(s))
        })
    })
}

#[component]
pub fn PresetPicker(
    scenario: RwSignal<Scenario>,
    speed: RwSignal<f64>,
    base: Memo<Option<&'static str>>,
    notices: RwSignal<Vec<stampede::scenario::Notice>>,
) -> impl IntoView {
    let exact = Memo::new(move |_| scenario.with(preset_of));
    let preset = move || {
        base.get()
            .and_then(|n| PRESETS.iter().find(|p| p.name == n))
    };
    let lesson = move || {
        match (preset(), exact.get().is_some()) {
        (Some(p), true) => p.lesson.to_string(),
        (Some(p), false) => format!(
            "{} (That is the preset's lesson; your changes may move its numbers. Pick the preset again to reset.)",
            p.lesson
        ),
        (None, _) => "Your own scenario: every knob is below.".to_string(),
    }
    };
    let value = move || match (exact.get(), base.get()) {
        (Some(name), _) => name,
        (None, Some(_)) => "changed",
        (None, None) => "custom",
    };
    view! {
        <div class="preset">
            <label class="preset-label" for="preset">"Scenario"</label>
            <select
                id="preset"
                data-control="preset"
                prop:value=value
                on:change=move |ev| {
                    let name = event_target_value(&ev);
                    if let Some(p) = PRESETS.iter().find(|p| p.name == name) {
                        let s = p.scenario();
                        speed.set(default_speed(&s));
                        scenario.set(s);
                    }
                }
            >
                {PRESETS
                    .iter()
                    .map(|p| {
                        let name = p.name;
                        view! {
                            <option value=name selected=move || exact.get() == Some(name)>
                                {p.title}
                            </option>
                        }
                    })
                    .collect_view()}
                <option value="changed" disabled=true selected=move || value() == "changed">
                    {move || preset().map(|p| format!("{} + your changes", p.title)).unwrap_or_default()}
                </option>
                <option value="custom" disabled=true selected=move || value() == "custom">
                    "Custom"
                </option>
            </select>
            <p class="lesson" data-preset=move || base.get().unwrap_or("custom")>{lesson}</p>
            // The knobs this lesson asks you to turn, right under its text.
            {move || {
                preset()
                    .map(|p| {
                        view! {
                            <div class="lesson-knobs" aria-label="Try these">
                                {p.turn
                                    .iter()
                                    .filter_map(|n| crate::knobs::knob_named(n))
                                    .map(|k| view! { <KnobControl knob=k scenario=scenario notices=notices lesson=true /> })
                                    .collect_view()}
                            </div>
                        }
                    })
            }}
        </div>
    }
}

#[component]
pub fn Transport(
    playing: RwSignal<bool>,
    speed: RwSignal<f64>,
    seed: RwSignal<u64>,
    reading: RwSignal<Reading>,
    send: Callback<Command>,
) -> impl IntoView {
    let span_ms = move || reading.with(|r| r.span as f64 / 1000.0);
    let now_ms = move || reading.with(|r| r.now as f64 / 1000.0);
    view! {
        <div class="transport" role="group" aria-label="Playback">
            <div class="buttons">
                <button
                    type="button"
                    class="play"
                    data-control="play"
                    title="Play or pause (space)"
                    aria-pressed=move || playing.get().to_string()
                    on:click=move |_| send.run(Command::TogglePlay)
                >
                    {move || if playing.get() { "❚❚ Pause" } else { "▶ Play" }}
                </button>
                <button type="button" data-control="step" title="Pause and step a tenth of the timeline on, or to the next event after a quiet stretch (right arrow; left arrow steps back)"
                    on:click=move |_| send.run(Command::Step)>"Step"</button>
                <button type="button" data-control="next-event"
                    title="Pause at the next marker on the timeline: an expiry, a claim, a crash, a write (n)"
                    disabled=move || reading.with(|r| r.next_marker.is_none())
                    on:click=move |_| send.run(Command::NextEvent)>"Next event"</button>
                <button type="button" data-control="restart" title="Back to t = 0, paused"
                    on:click=move |_| send.run(Command::Restart)>"Restart"</button>
                <button type="button" data-control="replay" title="Play this seed again from t = 0"
                    on:click=move |_| send.run(Command::Replay)>"Replay"</button>
            </div>
            <label class="speed">
                <span>
                    "Speed "<output>{move || speed_label(speed.get())}</output>
                    <span class="ff" data-note="fast-forward" aria-live="off"
                        title="Nothing is changing: the clock speeds up until something happens">
                        {move || if reading.with(|r| r.fast_forward) { " ⏩ quiet stretch" } else { "" }}
                    </span>
                </span>
                <input
                    type="range"
                    min="0"
                    max=SPEED_STEPS
                    step="1"
                    data-control="speed"
                    aria-label="Playback speed"
                    aria-valuetext=move || format!("{} real time", speed_label(speed.get()))
                    prop:value=move || position_of(speed.get()).to_string()
                    on:input=move |ev| {
                        if let Ok(p) = event_target_value(&ev).parse::<u32>() {
                            speed.set(speed_at(p));
                        }
                    }
                />
            </label>
            <label class="timeline">
                <span class="clock">
                    "t = "<span class="now" data-metric="now_ms">{move || reading.with(|r| crate::clock::now_ms_text(r.now))}</span>" ms"
                    // The timeline keeps its length when the run ends under the
                    // playhead; the words say where it really ended.
                    <span class="of">{move || reading.with(|r| match r.end {
                        Some(end) if end < r.span => format!(" (the run ended at {})", virtual_label(end)),
                        _ => format!(" of {}", virtual_label(r.span)),
                    })}</span>
                    <Show when=move || reading.with(|r| r.catching_up)>
                        <span class="catching-up" role="status">" catching up…"</span>
                    </Show>
                </span>
                <input
                    type="range"
                    min="0"
                    step="any"
                    data-control="timeline"
                    aria-label="Virtual time"
                    max=move || stampede::decimal::format(span_ms())
                    prop:max=span_ms
                    prop:value=now_ms
                    on:input=move |ev| {
                        if let Some(ms) = stampede::decimal::parse(&event_target_value(&ev)) {
                            if ms >= 0.0 {
                                send.run(Command::Seek((ms * 1000.0) as u64));
                            }
                        }
                    }
                />
            </label>
            <div class="seed">
                <label for="seed">"Seed"</label>
                <input
                    id="seed"
                    type="number"
                    min="0"
                    inputmode="numeric"
                    data-control="seed"
                    prop:value=move || seed.get().to_string()
                    on:change=move |ev| {
                        match event_target_value(&ev).trim().parse::<u64>() {
                            Ok(v) => seed.set(v),
                            Err(_) => event_target::<web_sys::HtmlInputElement>(&ev)
                                .set_value(&seed.get_untracked().to_string()),
                        }
                    }
                />
                <button type="button" data-control="new-seed" title="A different random run of the same scenario"
                    on:click=move |_| seed.set(random_seed())>"New seed"</button>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_recognised() {
        for p in PRESETS {
            let name = preset_of(&p.scenario()).unwrap();
            // Two presets may describe the same scenario; the first wins.
            assert_eq!(
                PRESETS.iter().find(|q| q.name == name).unwrap().scenario(),
                p.scenario()
            );
        }
        let custom = Scenario {
            instances: 7,
            ..Scenario::default()
        };
        assert_eq!(preset_of(&custom), None);
    }

    #[test]
    fn a_turned_knob_keeps_its_lesson() {
        let mut s = stampede::scenario::preset("failure").unwrap();
        s.pitfalls.remember_failure = true;
        assert_eq!(closest_preset(&s), Some("failure"));
        let far = Scenario {
            instances: 7,
            threads: 3,
            keys: 9,
            rtt_ms: 40,
            poll_ms: 9,
            workload: stampede::scenario::Workload::Cold,
            ..Scenario::default()
        };
        assert_eq!(
            closest_preset(&far),
            None,
            "too many changes to name a lesson"
        );
    }
}
