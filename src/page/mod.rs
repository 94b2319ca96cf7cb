//! The page: what the views share and none of them owns. The commands the
//! transport sends the animation loop, whom the code panel follows, the
//! counters' names and labels, the contrast runs, `Page` (the page's state,
//! changed by `Action`s), and each knob's control
//! (`knob`: the knobs panel, the lesson's knobs and a drill's build theirs
//! with it). No view of its own: every view imports from here, this
//! imports no view.

pub mod action;
pub mod knob;

use catalogue::tour::{self, Place};
use leptos::prelude::*;

use crate::reading::Reading;

/// A name for a file: letters and digits, ASCII ones in lower case, each
/// run of anything else one `-` (a clip's scenario and moment, a
/// scoresheet's candidate). Letters past ASCII keep their case: lowering
/// them would bring Unicode's case tables into the wasm (about 8 KB
/// gzipped) for a file name.
pub fn slug(text: &str) -> String {
    let s: String = text
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    s.split('-')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

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

/// Whose path through the listing the panel follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Follow {
    #[default]
    Nobody,
    /// A thread by global index (instance × threads + thread).
    Thread(u32),
    /// Whichever thread next holds the claim (then that thread).
    ClaimHolder,
}

/// A contrast run: its scenario, its seed, its counters at the end.
pub type Contrast = (stampede::Scenario, u64, stampede::Report);

/// The contrast run of `s` on seed `sd`, if it has been run.
pub fn contrast_of<'a>(
    have: &'a [Contrast],
    s: &stampede::Scenario,
    sd: u64,
) -> Option<&'a stampede::Report> {
    have.iter()
        .find(|(c, d, _)| c == s && *d == sd)
        .map(|(_, _, r)| r)
}

/// A counter the page shows: `name` is the `Report` field and the `data-metric`.
#[derive(Clone, Copy, Debug)]
pub struct Counter {
    pub name: &'static str,
    pub label: &'static str,
}

const fn counter(name: &'static str, label: &'static str) -> Counter {
    Counter { name, label }
}

/// The counters the lessons point at.
pub const HEADLINE: [Counter; 6] = [
    counter("recomputes", "recomputes"),
    counter("claim_attempts", "claim attempts"),
    counter("redis_round_trips", "Redis round trips"),
    counter("origin_peak_concurrency", "origin peak"),
    counter("errors", "errors"),
    counter("timeouts", "timeouts"),
];

/// Human labels for the other `Report` fields (the field name otherwise).
const LABELS: [(&str, &str); 40] = [
    ("requests", "requests"),
    ("hits", "cache hits"),
    ("stale_served", "stale served"),
    ("computed", "computed"),
    ("shared", "shared results"),
    ("degraded", "degraded"),
    ("pinned", "pinned threads"),
    ("misses", "misses"),
    ("early_refreshes", "early refreshes"),
    ("overlapping_recomputes", "overlapping recomputes"),
    ("origin_failures", "origin failures"),
    ("origin_timeouts", "origin timeouts"),
    ("claim_wins", "claims won"),
    ("releases", "releases"),
    ("releases_refused", "releases refused"),
    ("releases_refused_expired", "refused: claim expired"),
    ("releases_refused_taken", "refused: claim taken"),
    ("redis_errors", "Redis errors"),
    ("redis_skipped", "Redis commands skipped (breaker)"),
    ("redis_queue_peak", "Redis queue peak"),
    ("redis_p99_ms", "Redis round trip p99 ms"),
    ("local_hits", "local copy hits"),
    ("retries", "retries"),
    ("rejected", "turned away (open loop)"),
    ("values_written", "values written"),
    ("stale_overwrites", "older value written last"),
    ("writes_refused", "fenced writes refused"),
    ("negative_hits", "negative hits"),
    ("remembered_failures", "remembered failures"),
    ("corrupted", "corrupted"),
    ("crashed", "crashed"),
    ("admission_waits", "admission waits"),
    ("admission_shed", "shed by admission"),
    ("handovers", "flights handed over"),
    ("p50_ms", "p50 ms"),
    ("p99_ms", "p99 ms"),
    ("max_ms", "max ms"),
    ("max_wait_ms", "longest wait ms"),
    ("elapsed_ms", "elapsed ms"),
    ("events", "events"),
];

pub fn label_of(name: &str) -> &str {
    LABELS
        .iter()
        .chain(
            HEADLINE
                .iter()
                .map(|c| (c.name, c.label))
                .collect::<Vec<_>>()
                .iter(),
        )
        .find(|(k, _)| *k == name)
        .map_or(name, |(_, v)| v)
}

/// A bound as the page words it: the counter's name on the page, and the
/// limit (`origin peak ≤ 60`, `p99 ≤ 300 ms`), where the CLI says
/// `origin_peak_concurrency <= 60` (a drill's goal, a kit point's Show).
pub fn bound_words(c: &catalogue::claims::Bound) -> String {
    let cmp = match c.cmp {
        catalogue::claims::Cmp::AtMost => "≤",
        catalogue::claims::Cmp::AtLeast => "≥",
        catalogue::claims::Cmp::Exactly => "=",
    };
    // "p99 ≤ 300 ms", not "p99 ms ≤ 300 ms".
    let name = label_of(c.metric);
    let name = name.strip_suffix(" ms").unwrap_or(name);
    let limit = if c.metric.ends_with("_ms") {
        format!("{} ms", stampede::decimal::format(c.limit))
    } else {
        catalogue::lesson::shown(c.metric, c.limit)
    };
    format!("{name} {cmp} {limit}")
}

/// The counter a reference question's link names, to bring into view and
/// mark once its view shows it (`seq` tells two follows of the same link
/// apart). Its owner marks it: the proof (no side, its own counter), the
/// counters (no side, another), or the A/B view (a side, `'a'` or `'b'`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub seq: u32,
    /// A `Report` field; empty for "the proof".
    pub metric: String,
    pub side: Option<char>,
}

/// An answer given on the static first screen: the tour step it was asked
/// on, and the option's index. Provided by the mount as context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstPick {
    pub place: Place,
    pub option: usize,
}

/// The page's state: what a tour step, a link, a playlist item, a key or
/// the kit sets, through [`Page::act`] ([`action::Action`]). Signals and callbacks
/// only, no web types: provided to the views, host-tested.
#[derive(Clone, Copy)]
pub struct Page {
    pub tour: RwSignal<Option<Place>>,
    pub scenario: RwSignal<stampede::Scenario>,
    pub seed: RwSignal<u64>,
    pub speed: RwSignal<f64>,
    pub compare: RwSignal<Option<&'static str>>,
    /// The A/B view's recompute cost (ms), where its link sets one.
    pub cost: RwSignal<Option<u32>>,
    /// Curveballs thrown into the A/B view (kind, ms), replayed from its
    /// link.
    pub ab_throws: RwSignal<Vec<(&'static str, u32)>>,
    pub reading: RwSignal<Reading>,
    /// The counter a reference question's link asked to be shown.
    pub mark: RwSignal<Option<Mark>>,
    /// The counter that proves the running lesson (announced outside the tour).
    pub proof: Memo<catalogue::lesson::Proof>,
    /// The runs a step's words compare against (`then.` in its text).
    pub contrasts: RwSignal<Vec<Contrast>>,
    /// The transport: a step that pauses mid-run seeks there.
    pub send: Callback<Command>,
    /// Throws a curveball into the running lab now: its start (ms), or why
    /// not (the engine is the stage's; the app wires it).
    pub throw: Callback<&'static catalogue::interview::Curveball, Result<u32, String>>,
    /// Throws into the open A/B view at its one clock's moment, on both
    /// sides: the moment (ms), or why not; None when no A/B view has started.
    pub ab_throw: Callback<&'static catalogue::interview::Curveball, Option<Result<u32, String>>>,
    /// The run is playing (a jump past the pause, End, does not pause it).
    pub playing: RwSignal<bool>,
    /// A prediction is open: the step's run waits at t = 0. Any command of
    /// the transport (Space, End, the scrubber) clears it: "just show me".
    pub asking: RwSignal<bool>,
    /// Presenter mode is on.
    pub presenting: RwSignal<bool>,
    /// The read path's panel shows the card's pseudo-code (None) or the
    /// same path in a language: the name of one of `catalogue::examples`.
    pub language: RwSignal<Option<&'static str>>,
    /// The step the page's link opens at a moment (`at=`): read at start,
    /// before the address is written again.
    pub opens_at: Option<Place>,
    /// The option picked on the static first screen (`index.html`) before
    /// the wasm arrived, and the step it was asked on: the step's
    /// prediction takes it as if clicked, once.
    pub first_pick: Option<FirstPick>,
    /// The open A/B view's one clock (µs) and whether it plays, None when
    /// no A/B view is open: where a playlist adds it from (the app wires
    /// the A/B view's own, so that no view imports another).
    pub ab_clock: Callback<(), Option<(u64, bool)>>,
}

impl Page {
    /// Sets a tour step's scenario; the page then runs it from t = 0.
    pub(crate) fn apply(&self, step: &tour::Step) {
        self.set_query(step.row.link);
    }
}
