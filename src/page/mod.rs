//! The page: what the views share and none of them owns. The commands the
//! transport sends the animation loop, whom the code panel follows, the
//! counters' names and labels, the contrast runs, `Page` (the page's state,
//! changed by `Action`s), and each knob's control
//! (`knob`: the knobs panel, the lesson's knobs and a drill's build theirs
//! with it). No view of its own: every view imports from here, this
//! imports no view.

pub mod action;
pub mod address;
pub mod assembly;
pub mod contrasts;
pub mod kept;
pub mod keys;
pub mod knob;
pub mod knob_control;
pub mod qr_code;
pub mod start;

use catalogue::tour::{self, Place};
use leptos::prelude::*;

use crate::reading::Reading;
use stampede::metrics::Metric;

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
    /// Jump to this thread's next event (a global index: the followed
    /// thread's step) and pause.
    ThreadStep(u32),
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
    /// Whichever thread next holds the claim: `None` until it is known,
    /// then that thread. It stays the holder (the picker keeps saying
    /// "the claim holder") while the thread it names is followed.
    ClaimHolder(Option<u32>),
}

impl Follow {
    /// The thread followed now, if one is known.
    pub fn thread(self) -> Option<u32> {
        match self {
            Follow::Nobody | Follow::ClaimHolder(None) => None,
            Follow::Thread(g) | Follow::ClaimHolder(Some(g)) => Some(g),
        }
    }
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

/// A counter the page shows: `metric` is the `Report` field (its
/// [`Metric::name`] is the `data-metric`), `label` its words on the page.
#[derive(Clone, Copy, Debug)]
pub struct Counter {
    pub metric: Metric,
    pub label: &'static str,
}

const fn counter(metric: Metric) -> Counter {
    Counter {
        metric,
        label: label(metric),
    }
}

/// The counters the lessons point at.
pub const HEADLINE: [Counter; 6] = [
    counter(Metric::Recomputes),
    counter(Metric::ClaimAttempts),
    counter(Metric::RedisRoundTrips),
    counter(Metric::OriginPeakConcurrency),
    counter(Metric::Errors),
    counter(Metric::Timeouts),
];

/// A counter's words on the page: every `Report` field has its own, so a
/// new counter does not compile without one.
pub const fn label(m: Metric) -> &'static str {
    use Metric::*;
    match m {
        Recomputes => "recomputes",
        ClaimAttempts => "claim attempts",
        RedisRoundTrips => "Redis round trips",
        OriginPeakConcurrency => "origin peak",
        Errors => "errors",
        Timeouts => "timeouts",
        Requests => "requests",
        Hits => "cache hits",
        StaleServed => "stale served",
        Computed => "computed",
        Shared => "shared results",
        Degraded => "degraded",
        Pinned => "pinned threads",
        Misses => "misses",
        EarlyRefreshes => "early refreshes",
        OverlappingRecomputes => "overlapping recomputes",
        OriginFailures => "origin failures",
        OriginTimeouts => "origin timeouts",
        ClaimWins => "claims won",
        Releases => "releases",
        ReleasesRefused => "releases refused",
        ReleasesRefusedExpired => "refused: claim expired",
        ReleasesRefusedTaken => "refused: claim taken",
        ClaimsDeletedOfOthers => "claims of others deleted (plain DEL)",
        Unclaims => "unclaims",
        RedisErrors => "Redis errors",
        RedisSkipped => "Redis commands skipped (breaker)",
        RedisQueuePeak => "Redis queue peak",
        RedisP99Ms => "Redis command p99 ms",
        LocalHits => "local copy hits",
        Retries => "retries",
        Rejected => "turned away (open loop)",
        ValuesWritten => "values written",
        StaleOverwrites => "older value written last",
        WritesRefused => "fenced writes refused",
        NegativeHits => "negative hits",
        RememberedFailures => "remembered failures",
        Corrupted => "corrupted",
        Crashed => "crashed",
        AdmissionWaits => "admission waits",
        AdmissionShed => "shed by admission",
        Handovers => "flights handed over",
        P50Ms => "p50 ms",
        P99Ms => "p99 ms",
        MaxMs => "max ms",
        MaxWaitMs => "longest wait ms",
        ElapsedMs => "elapsed ms",
        Events => "events",
        LateClaims => "late claims (landed as Redis resumed)",
        LateClaimsReleased => "late claims released by their token",
        LateClaimsHeldAtResume => "late claims still held at resume",
        FaultBites => "times a fault acted",
        RetryRecomputes => "origin calls by retries",
    }
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
    let name = label(c.metric);
    let name = name.strip_suffix(" ms").unwrap_or(name);
    let limit = if c.metric.is_time() {
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
    /// The counter; `None` for "the proof".
    pub metric: Option<Metric>,
    pub side: Option<char>,
}

/// An answer given on the static first screen: the tour step it was asked
/// on, and the option's index. Provided by the mount as context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstPick {
    pub place: Place,
    pub option: usize,
}

/// Where a tour step's prediction is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bet {
    /// No prediction: the step plays as it always did (skipped, or none).
    Off,
    /// The question is open, the run waits at t = 0.
    Asking,
    /// The run plays; the number shows once known. `Some(i)`: option `i`
    /// was picked, `None`: "just show me".
    Watching(Option<usize>),
    /// The number is known and shown.
    Revealed(Option<usize>),
}

/// What the page starts from: the link's state (or the step's, or the
/// drill's), and what was kept from before the reload.
#[derive(Clone, Debug, Default)]
pub struct Start {
    pub tour: Option<Place>,
    pub state: crate::url_state::PageState,
    pub presenting: bool,
    pub language: Option<&'static str>,
    pub skipping: bool,
    /// The step the page's link opens at a moment (`at=`).
    pub opens_at: Option<Place>,
    /// The option picked on the static first screen.
    pub first_pick: Option<FirstPick>,
}

/// What the page asks of the parts above it (the stage's engine, the A/B
/// view), wired by the app: `Page::act` calls them, never a view.
#[derive(Clone, Copy)]
pub struct Wires {
    /// The transport: a command and whether the run plays now; the
    /// engine's answer, whether it plays after (None: no run built yet).
    pub send: Callback<(Command, bool), Option<bool>>,
    /// Throws a curveball into the running lab now: the scenario with the
    /// fault and its start (ms), or why not.
    pub throw: Callback<
        &'static catalogue::interview::Curveball,
        Result<(stampede::Scenario, u32), String>,
    >,
    /// Throws into the open A/B view at its one clock's moment, on both
    /// sides: the moment (ms), or why not; None when no A/B view has started.
    pub ab_throw: Callback<&'static catalogue::interview::Curveball, Option<Result<u32, String>>>,
    /// The open A/B view's one clock (µs) and whether it plays, None when
    /// no A/B view is open: where a playlist adds it from.
    pub ab_clock: Callback<(), Option<(u64, bool)>>,
}

/// The page's state: what a tour step, a link, a playlist item, a key or
/// the kit sets. Its signals are private: a view reads them through the
/// getters below and changes them only through [`Page::act`]
/// ([`action::Action`]), so the compiler lists every write. Signals and
/// callbacks only, no web types: provided once to the views through
/// Leptos's context ([`Page::provide`], [`use_page`]), host-tested.
#[derive(Clone, Copy)]
pub struct Page {
    tour: RwSignal<Option<Place>>,
    scenario: RwSignal<stampede::Scenario>,
    seed: RwSignal<u64>,
    speed: RwSignal<f64>,
    compare: RwSignal<Option<&'static str>>,
    /// The A/B view's recompute cost (ms), where its link sets one.
    cost: RwSignal<Option<u32>>,
    /// Curveballs thrown into the A/B view (kind, ms), replayed from its
    /// link.
    ab_throws: RwSignal<Vec<(&'static str, u32)>>,
    reading: RwSignal<Reading>,
    /// The counter a reference question's link asked to be shown.
    mark: RwSignal<Option<Mark>>,
    /// The runs a step's words compare against (`then.` in its text).
    contrasts: RwSignal<Vec<Contrast>>,
    /// The run is playing (a jump past the pause, End, does not pause it).
    playing: RwSignal<bool>,
    /// A prediction is open: the step's run waits at t = 0. Any command of
    /// the transport (Space, End, the scrubber) clears it: "just show me".
    asking: RwSignal<bool>,
    /// Where the step's prediction is.
    bet: RwSignal<Bet>,
    /// "Skip predictions": steps just play.
    skipping: RwSignal<bool>,
    /// Presenter mode is on.
    presenting: RwSignal<bool>,
    /// The read path's panel shows the card's pseudo-code (None) or the
    /// same path in a language: the name of one of `catalogue::examples`.
    language: RwSignal<Option<&'static str>>,
    /// On a phone, the code (true) is shown in the fleet's place.
    showing_code: RwSignal<bool>,
    /// What the last change of a knob or a preset clamped or refused.
    notices: RwSignal<Vec<stampede::scenario::Notice>>,
    /// "Write it yourself", while it is open (`?assemble=1`).
    assembling: RwSignal<Option<assembly::Assembling>>,
    /// The preset the lesson is about (kept while knobs are turned).
    base: Memo<Option<&'static str>>,
    /// The lesson of the run on screen, worded by the core from its
    /// counters.
    lesson: Memo<catalogue::lesson::Lesson>,
    /// The counter that proves what is running: shown first, and left out
    /// of the counters' own lists while it is shown. In the tour, the
    /// step's.
    proof: Memo<catalogue::lesson::Proof>,
    /// The counter the tour step on screen is about.
    highlight: Memo<Option<Metric>>,
    /// The step the page's link opens at a moment (`at=`): its prediction
    /// is behind it. Taken by that step, forgotten by any other.
    opens_at: StoredValue<Option<Place>>,
    /// The option picked on the static first screen (`index.html`) before
    /// the wasm arrived, and the step it was asked on: the step's
    /// prediction takes it as if clicked, once.
    first_pick: StoredValue<Option<FirstPick>>,
    wires: Wires,
}

/// A signal of the page's state, read-only: what a view gets of it. It
/// reads as the signal itself does (the same code in the wasm as the
/// page's own reads); a change goes through [`Page::act`].
pub struct Read<T: 'static>(RwSignal<T>);

impl<T: 'static> Clone for Read<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: 'static> Copy for Read<T> {}

impl<T: Send + Sync + 'static> Read<T> {
    /// Its value, tracked (an effect reading it runs again when it changes).
    #[inline]
    pub fn get(&self) -> T
    where
        T: Clone,
    {
        self.0.get()
    }
    #[inline]
    pub fn get_untracked(&self) -> T
    where
        T: Clone,
    {
        self.0.get_untracked()
    }
    #[inline]
    pub fn with<U>(&self, f: impl FnOnce(&T) -> U) -> U {
        self.0.with(f)
    }
    #[inline]
    pub fn with_untracked<U>(&self, f: impl FnOnce(&T) -> U) -> U {
        self.0.with_untracked(f)
    }
    #[inline]
    pub fn track(&self) {
        self.0.track();
    }
    /// `f` of its value, or None once the page is gone.
    #[inline]
    pub fn try_with_untracked<U>(&self, f: impl FnOnce(&T) -> U) -> Option<U> {
        self.0.try_with_untracked(f)
    }
    /// Its value, or None once the page is gone.
    #[inline]
    pub fn try_get_untracked(&self) -> Option<T>
    where
        T: Clone,
    {
        self.0.try_get_untracked()
    }
}

/// The page provided by the app ([`Page::provide`]).
pub fn use_page() -> Page {
    expect_context::<Page>()
}

/// The lesson being explored: the preset last picked (or matched), kept
/// while knobs are turned, so the lesson stays in view.
pub fn lesson_base(scenario: Signal<stampede::Scenario>) -> Memo<Option<&'static str>> {
    use stampede::scenario::{closest_preset, preset_of};
    Memo::new(move |prev: Option<&Option<&'static str>>| {
        scenario.with(|s| {
            preset_of(s)
                .or_else(|| prev.copied().flatten())
                .or_else(|| closest_preset(s))
        })
    })
}

impl Page {
    /// The page's state from `start`, asking `wires` of the parts above.
    pub fn new(start: Start, wires: Wires) -> Page {
        let st = start.state;
        let scenario = RwSignal::new(st.scenario.clone());
        let tour = RwSignal::new(start.tour);
        let seed = RwSignal::new(st.seed);
        let contrasts = RwSignal::new(Vec::<Contrast>::new());
        let reading = RwSignal::new(Reading {
            instances: st.scenario.instances,
            threads: st.scenario.threads,
            burst: true,
            ..Reading::default()
        });
        let base = lesson_base(scenario.into());
        let lesson = Memo::new(move |_| {
            let b = base.get();
            let sd = seed.get();
            scenario.with(|s| {
                let want = catalogue::lesson::contrast(s, b);
                contrasts.with(|have| {
                    reading.with(|r| {
                        let then = want.as_ref().and_then(|w| contrast_of(have, w, sd));
                        catalogue::lesson::lesson(s, b, &r.report, r.at_end, then)
                    })
                })
            })
        });
        let proof = Memo::new(move |_| {
            let step = tour
                .get()
                .and_then(|(l, k)| tour::step(l, k))
                .map(|s| s.metric);
            lesson.with(|l| {
                let metric = step.unwrap_or(l.metric);
                catalogue::lesson::Proof {
                    metric,
                    note: "",
                    damage: catalogue::lesson::is_damage(metric),
                }
            })
        });
        Page {
            tour,
            reading,
            scenario,
            seed,
            speed: RwSignal::new(st.speed),
            // The sandbox waits while the A/B view runs its own clock.
            playing: RwSignal::new(st.compare.is_none()),
            compare: RwSignal::new(st.compare),
            cost: RwSignal::new(st.cost),
            ab_throws: RwSignal::new(st.throws),
            mark: RwSignal::new(None),
            contrasts,
            asking: RwSignal::new(false),
            bet: RwSignal::new(Bet::Off),
            skipping: RwSignal::new(start.skipping),
            presenting: RwSignal::new(start.presenting),
            language: RwSignal::new(start.language),
            showing_code: RwSignal::new(false),
            notices: RwSignal::new(Vec::new()),
            assembling: RwSignal::new(None),
            base,
            lesson,
            proof,
            highlight: Memo::new(move |_| {
                tour.get()
                    .and_then(|(l, k)| tour::step(l, k))
                    .map(|s| s.metric)
            }),
            opens_at: StoredValue::new(start.opens_at),
            first_pick: StoredValue::new(start.first_pick),
            wires,
        }
    }

    /// Provides the page to every view under the current owner.
    pub fn provide(self) {
        provide_context(self);
    }

    /// The animation loop's handles: whether the run plays (it stops at
    /// the run's end), its speed, and what each frame measured. Measured,
    /// not a change anyone makes: the app hands them to the stage's engine
    /// and to nothing else (`scripts/import-graph.py` checks it).
    pub fn animation(&self) -> (RwSignal<bool>, RwSignal<f64>, RwSignal<Reading>) {
        (self.playing, self.speed, self.reading)
    }

    pub fn tour(&self) -> Read<Option<Place>> {
        Read(self.tour)
    }
    pub fn scenario(&self) -> Read<stampede::Scenario> {
        Read(self.scenario)
    }
    pub fn seed(&self) -> Read<u64> {
        Read(self.seed)
    }
    pub fn speed(&self) -> Read<f64> {
        Read(self.speed)
    }
    pub fn compare(&self) -> Read<Option<&'static str>> {
        Read(self.compare)
    }
    pub fn cost(&self) -> Read<Option<u32>> {
        Read(self.cost)
    }
    pub fn ab_throws(&self) -> Read<Vec<(&'static str, u32)>> {
        Read(self.ab_throws)
    }
    pub fn reading(&self) -> Read<Reading> {
        Read(self.reading)
    }
    pub fn mark(&self) -> Read<Option<Mark>> {
        Read(self.mark)
    }
    pub fn contrasts(&self) -> Read<Vec<Contrast>> {
        Read(self.contrasts)
    }
    pub fn playing(&self) -> Read<bool> {
        Read(self.playing)
    }
    pub fn asking(&self) -> Read<bool> {
        Read(self.asking)
    }
    pub fn bet(&self) -> Read<Bet> {
        Read(self.bet)
    }
    pub fn skipping(&self) -> Read<bool> {
        Read(self.skipping)
    }
    pub fn presenting(&self) -> Read<bool> {
        Read(self.presenting)
    }
    pub fn language(&self) -> Read<Option<&'static str>> {
        Read(self.language)
    }
    pub fn showing_code(&self) -> Read<bool> {
        Read(self.showing_code)
    }
    pub fn notices(&self) -> Read<Vec<stampede::scenario::Notice>> {
        Read(self.notices)
    }
    pub fn assembling(&self) -> Read<Option<assembly::Assembling>> {
        Read(self.assembling)
    }
    pub fn base(&self) -> Memo<Option<&'static str>> {
        self.base
    }
    pub fn lesson(&self) -> Memo<catalogue::lesson::Lesson> {
        self.lesson
    }
    pub fn proof(&self) -> Memo<catalogue::lesson::Proof> {
        self.proof
    }
    /// The counter a tour step is about: its owners (the proof, the
    /// arithmetic, the counters) outline it wherever it shows.
    pub fn highlight(&self) -> Memo<Option<Metric>> {
        self.highlight
    }
    /// The open A/B view's one clock (µs) and whether it plays.
    pub fn ab_clock(&self) -> Option<(u64, bool)> {
        self.wires.ab_clock.run(())
    }
    /// The tour step the current step's words are about, if touring.
    pub fn step(&self) -> Option<&'static tour::Step> {
        self.tour.get().and_then(|(l, k)| tour::step(l, k))
    }
}
