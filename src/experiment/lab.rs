//! The running experiment behind the page: the fleet being animated, the
//! clock it is heading for, the chart's samples and the side-by-side runs of
//! the arithmetic panel. No web types here, so it is tested on the host; the
//! page hands it a "out of time?" check and it works in slices until then.

use stampede::metrics::Report;
use stampede::scenario::{ClaimMode, Scenario, Workload};
use stampede::sim::{Event, EventKind, Fleet, Sample};

/// Events counted by kind since t = 0 (index: `EventKind as usize`): what
/// the read-path listing shows beside each line.
pub type Tally = [u64; KINDS];
pub const KINDS: usize = 21;

pub fn count(t: &Tally, k: stampede::sim::EventKind) -> u64 {
    t.get(k as usize).copied().unwrap_or(0)
}

/// Virtual microseconds.
pub type Micros = u64;

/// Events per call to `advance_to` before the page checks its frame budget.
pub const CHUNK: usize = 2_000;
/// Up to this many events (estimated) a scout fleet runs the whole scenario
/// ahead of the animated one, in the frames' spare budget, so the chart and
/// the timeline show the entire run within a few frames of the start.
pub const PREVIEW_EVENTS: u64 = 400_000;
/// Up to this many threads the arithmetic panel runs its three comparison
/// fleets beside the animated one.
pub const COMPARE_THREADS: u64 = 50_000;
/// Pulses collected per frame at most; the rest are only counted.
pub const MAX_PULSES: usize = 12_000;
/// What the checkpoints may hold together (estimated by
/// `Fleet::snapshot_bytes`): when full, every other one goes and the spacing
/// doubles, so they stay spread over the run within this.
pub const CHECKPOINT_BYTES: usize = 64 << 20;
/// Work (events and steps, `Fleet::work`) between two checkpoints at first:
/// a seek back replays about this much per fleet, well within a frame.
pub const CHECKPOINT_WORK: u64 = CHUNK as u64;
/// Fleets so big that fewer checkpoints than this fit keep none (a seek
/// back rebuilds them from t = 0, in slices).
pub const MIN_CHECKPOINTS: usize = 4;

/// The animated fleet and what the page counted from its events, at `t`.
struct Checkpoint {
    t: Micros,
    fleet: Fleet,
    tally: Tally,
    places: stampede::read_path::Places,
}

/// One of the arithmetic panel's comparison runs: its fleet, the time it
/// has been advanced to, and its own copies at (some of) the animated
/// fleet's checkpoint times.
struct Compared {
    defence: Defence,
    fleet: Fleet,
    at: Micros,
    checkpoints: Vec<(Micros, Fleet)>,
}

impl Compared {
    fn new(defence: Defence, scenario: &Scenario, seed: u64) -> Compared {
        Compared {
            defence,
            fleet: Fleet::new(&defence.apply(scenario), seed),
            at: 0,
            checkpoints: Vec::new(),
        }
    }

    /// Goes back to the latest copy at or before `t` (else to a new fleet).
    fn rewind(&mut self, t: Micros, scenario: &Scenario, seed: u64) {
        if self.at <= t {
            return;
        }
        let i = self.checkpoints.partition_point(|c| c.0 <= t);
        match i.checked_sub(1).and_then(|i| self.checkpoints.get(i)) {
            Some((at, fleet)) => {
                self.fleet = fleet.clone();
                self.at = *at;
            }
            None => {
                self.fleet = Fleet::new(&self.defence.apply(scenario), seed);
                self.at = 0;
            }
        }
    }
}

/// Where a pulse travels: to Redis, to the origin, or back from the origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// GET or poll of the cache.
    Read = 0,
    /// SET NX of the claim.
    Claim = 1,
    /// SET of the value or release of the claim.
    Write = 2,
    /// A recompute leaving for the origin.
    Recompute = 3,
    /// A recompute's answer coming back.
    Answer = 4,
}

impl Channel {
    pub const COUNT: usize = 5;
    pub const ALL: [Channel; Channel::COUNT] = [
        Channel::Read,
        Channel::Claim,
        Channel::Write,
        Channel::Recompute,
        Channel::Answer,
    ];

    pub fn of(kind: EventKind) -> Option<Channel> {
        Some(match kind {
            EventKind::CacheGet | EventKind::Poll => Channel::Read,
            EventKind::Claim => Channel::Claim,
            EventKind::CacheSet | EventKind::Release => Channel::Write,
            EventKind::RecomputeStart => Channel::Recompute,
            EventKind::RecomputeEnd => Channel::Answer,
            _ => return None,
        })
    }

    /// True for the channels that end at Redis (the others meet the origin).
    pub fn to_redis(self) -> bool {
        matches!(self, Channel::Read | Channel::Claim | Channel::Write)
    }
}

/// The three configurations the arithmetic panel compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defence {
    /// Neither layer: instances x threads.
    None,
    /// Singleflight only: one per instance.
    Singleflight,
    /// Singleflight outside, claim inside: about one.
    Both,
}

impl Defence {
    pub const ALL: [Defence; 3] = [Defence::None, Defence::Singleflight, Defence::Both];

    pub fn apply(self, s: &Scenario) -> Scenario {
        let (singleflight, claim) = match self {
            Defence::None => (false, ClaimMode::Off),
            Defence::Singleflight => (true, ClaimMode::Off),
            Defence::Both => (true, ClaimMode::Inner),
        };
        Scenario {
            singleflight,
            claim,
            ..s.clone()
        }
    }

    /// The defence the scenario uses, if it is one of the three.
    pub fn of(s: &Scenario) -> Option<Defence> {
        Defence::ALL.into_iter().find(|d| d.apply(s) == *s)
    }
}

/// The outcome scoring is the core's (`stampede::metrics::Score`).
pub use stampede::metrics::Score;

/// A rough event count, to decide whether a scout run is cheap.
pub fn estimated_events(s: &Scenario) -> u64 {
    let threads = u64::from(s.instances) * u64::from(s.threads);
    let requests = match s.workload {
        Workload::Steady => {
            threads * (u64::from(s.duration_ms) / u64::from(s.think_ms.max(1))).max(1)
        }
        Workload::Burst | Workload::Cold => threads,
    };
    requests.saturating_mul(if s.claim == ClaimMode::Outer { 9 } else { 6 })
}

/// The spacing of the chart's samples.
pub fn sample_step(s: &Scenario) -> Micros {
    match s.workload {
        // A thousand samples over the run's duration (duration_ms of µs each).
        Workload::Steady => u64::from(s.duration_ms).max(1000),
        Workload::Burst | Workload::Cold => 1000,
    }
}

pub struct Lab {
    scenario: Scenario,
    seed: u64,
    fleet: Fleet,
    /// How far the animated fleet has been advanced (it may sit at its horizon).
    pos: Micros,
    target: Micros,
    /// Runs ahead to the end on its own, when that is cheap enough, to learn
    /// the run's length and record the chart before the animation gets there.
    scout: Option<Fleet>,
    /// The end was found by the animated fleet, not ahead by the scout, and
    /// the timeline's length when it was.
    end_found_late: bool,
    span_at_end: Micros,
    /// The whole run's markers, once the scout has reached the end.
    known_markers: Option<Vec<stampede::sim::Marker>>,
    /// Samples on a fixed grid (from the scout, else from the animated
    /// fleet); valid whatever the scrubbing, since the same virtual time
    /// always shows the same state.
    samples: Vec<Sample>,
    step: Micros,
    /// When the run went quiet, the time of its last visible change.
    end: Option<Micros>,
    compare: Vec<Compared>,
    /// Snapshots of the animated fleet taken while it ran forward, in time
    /// order, so a seek back replays from the latest one at or before its
    /// target instead of from t = 0 (the comparison runs keep their own).
    checkpoints: Vec<Checkpoint>,
    /// Work between two checkpoints; 0: none are kept (a big fleet).
    checkpoint_every: u64,
    /// What they may hold together (`CHECKPOINT_BYTES`; tests set less).
    checkpoint_bytes: usize,
    /// Checkpoints are kept from the first seek back on: a run only played
    /// (the page's start-up, a lesson) pays no copies.
    scrubbed: bool,
    /// A curveball was thrown into the running fleet: it is not a replay of
    /// the scenario from t = 0, so no checkpoint is taken from it until a
    /// seek back has rebuilt it.
    thrown_live: bool,
    /// The time every comparison run has reached, if they all have.
    compare_at: Option<Micros>,
    pulses: Vec<(u32, Channel)>,
    pulses_dropped: u64,
    /// Events by kind since t = 0, for the pseudo-code's line counts.
    tally: Tally,
    /// Every thread's place on the read path, from the events (the core's).
    places: stampede::read_path::Places,
    collect_pulses: bool,
    /// Playback stops here (the walk-through's pause, just before the
    /// followed thread's answering event); a seek is not held.
    hold: Option<Micros>,
    /// The end found (by the scout or the fleet) is where the simulation
    /// stopped the run with work still pending (`Fleet::cut_off`).
    cut_off: bool,
}

impl Lab {
    pub fn new(scenario: &Scenario, seed: u64) -> Lab {
        Lab::build(scenario, seed, true)
    }

    /// One side of the A/B view: the fleet alone, without the arithmetic's
    /// three comparison runs.
    pub fn single(scenario: &Scenario, seed: u64) -> Lab {
        Lab::build(scenario, seed, false)
    }

    #[inline(never)]
    fn build(scenario: &Scenario, seed: u64, with_rows: bool) -> Lab {
        let mut scenario = scenario.clone();
        // The caller shows the notices; here only the clamped values matter.
        let _ = scenario.validate();
        let threads = u64::from(scenario.instances) * u64::from(scenario.threads);
        let scout =
            (estimated_events(&scenario) <= PREVIEW_EVENTS).then(|| Fleet::new(&scenario, seed));
        let compare = if with_rows && threads <= COMPARE_THREADS {
            Defence::ALL
                .iter()
                .map(|d| Compared::new(*d, &scenario, seed))
                .collect()
        } else {
            Vec::new()
        };
        let mut fleet = Fleet::new(&scenario, seed);
        fleet.set_recording(true);
        let first = fleet.sample();
        Lab {
            step: sample_step(&scenario),
            end: None,
            scenario,
            seed,
            fleet,
            pos: 0,
            target: 0,
            scout,
            known_markers: None,
            end_found_late: false,
            span_at_end: 0,
            samples: vec![first],
            compare,
            compare_at: None,
            checkpoints: Vec::new(),
            checkpoint_every: CHECKPOINT_WORK,
            checkpoint_bytes: CHECKPOINT_BYTES,
            scrubbed: false,
            thrown_live: false,
            pulses: Vec::new(),
            pulses_dropped: 0,
            tally: [0; KINDS],
            places: Default::default(),
            collect_pulses: true,
            hold: None,
            cut_off: false,
        }
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// Virtual time on display: how far the fleet has really been advanced,
    /// but never past the end (at high speed the fleet may overshoot before
    /// the end is known; nothing visible changes after it by definition).
    pub fn now(&self) -> Micros {
        self.end.map_or(self.pos, |e| self.pos.min(e))
    }

    pub fn target(&self) -> Micros {
        self.target
    }

    /// The end of the run if it is known (from the scout, or once quiet).
    pub fn end(&self) -> Option<Micros> {
        self.end
    }

    /// The timeline's length: the end when known, else a guess that grows.
    ///
    /// When the animated fleet itself finds the end (no scout ran ahead),
    /// the timeline keeps the length it had: its end must not jump under
    /// the playhead as the run finishes.
    pub fn span(&self) -> Micros {
        // A seek "to the end" (`u64::MAX`, the End key) is not a time seen.
        let seen = if self.target == Micros::MAX {
            self.pos
        } else {
            self.pos.max(self.target)
        };
        let guess = match self.scenario.workload {
            Workload::Steady => u64::from(self.scenario.duration_ms) * 1000,
            _ => u64::from(self.scenario.deadline_ms + self.scenario.spread_ms) * 1000,
        };
        let guess = guess.max(seen.saturating_add(seen / 4)).max(1000);
        match (self.end, self.end_found_late) {
            (Some(end), false) => end,
            (Some(end), true) => end.max(self.span_at_end),
            (None, _) => guess,
        }
    }

    /// The run's end, once known, is where it was stopped with work still
    /// pending, not its last event.
    pub fn cut_off(&self) -> bool {
        self.end.is_some() && self.cut_off
    }

    pub fn at_end(&self) -> bool {
        self.end.is_some_and(|e| self.pos >= e)
    }

    /// True while the comparison runs lag behind the clock (their numbers
    /// would belong to an earlier time).
    pub fn compare_behind(&self) -> bool {
        !self.compare.is_empty() && self.compare_at != Some(self.target)
    }

    fn cap(&self, t: Micros) -> Micros {
        t.min(self.end.unwrap_or(Micros::MAX))
    }

    /// Sets where the clock is heading. Going back restores the fleets from
    /// their latest checkpoints at or before `t` (or rebuilds them) and
    /// replays them from there: exact, because the simulation is
    /// deterministic and a copy of a fleet goes on as the fleet would.
    pub fn seek(&mut self, t: Micros) {
        let t = self.cap(t);
        // A fleet that ran past its end before it knew is, at the end, where
        // it is now: nothing changes after the end, so nothing is rebuilt.
        let at_end = self.end.is_some_and(|e| t >= e);
        if t < self.pos && !at_end {
            self.scrubbed = true;
            let i = self.checkpoints.partition_point(|c| c.t <= t);
            match i.checked_sub(1).and_then(|i| self.checkpoints.get(i)) {
                Some(c) => {
                    self.fleet = c.fleet.clone();
                    self.pos = c.t;
                    self.tally = c.tally;
                    self.places = c.places.clone();
                }
                None => {
                    let mut fleet = Fleet::new(&self.scenario, self.seed);
                    fleet.set_recording(true);
                    self.fleet = fleet;
                    self.pos = 0;
                    self.tally = [0; KINDS];
                    self.places = Default::default();
                    self.thrown_live = false;
                }
            }
            // The comparison runs go back in `advance`, once the animated
            // fleet is there: seeks in a row (a drag) cost one rewind each.
            self.compare_at = None;
            self.pulses.clear();
        }
        // A jump is not something to draw as pulses.
        self.collect_pulses = t.saturating_sub(self.pos) <= 250_000;
        self.target = t;
    }

    /// Throws an interviewer's curveball so that it bites the run on
    /// screen, or says why it cannot (the kit's and the Faults group's
    /// curveballs come here):
    ///
    /// 1. into the running fleet, without a restart, at the current moment
    ///    (the next whole millisecond after the fleet's clock) if it finds
    ///    work to hit from there; else at the next moment it does (the run's
    ///    own markers ahead: for an origin fault, the next recompute's
    ///    start; for the holder's death, the next claim won);
    /// 2. else (the run has ended, or nothing of its kind is still to come)
    ///    the run restarts with the fault at the latest earlier moment at
    ///    which it bites, and the clock goes there;
    /// 3. else it is refused, with the reason.
    ///
    /// "Bites" means the fault's counter ([`Curveball::metric`]) ends the
    /// run higher than without it: each moment is tried on a copy of the
    /// fleet run to its end (a fleet too big for the scout is thrown into
    /// now, unchecked, as before). The scenario then carries the fault, so
    /// its link replays this very run.
    ///
    /// [`Curveball::metric`]: catalogue::interview::Curveball::metric
    pub fn throw(&mut self, ball: &catalogue::interview::Curveball) -> Result<Landed, String> {
        use catalogue::interview;
        let now_ms = u32::try_from(self.fleet.now() / 1000 + 1)
            .map_err(|_| "the run is too long".to_string())?;
        if estimated_events(&self.scenario) > PREVIEW_EVENTS {
            self.throw_at(ball, now_ms)?;
            return Ok(Landed::Live(now_ms));
        }
        let mut quiet = self.fleet.clone();
        quiet.set_recording(false);
        let baseline = metric(&quiet.run(), ball.metric);
        let aims = interview::aims(ball, quiet.markers());
        let bites = |fleet: Fleet, at: u32| -> Result<bool, String> {
            Ok(interview::end_value(fleet, ball, Some(at))? > baseline)
        };
        let mut ahead = vec![now_ms];
        ahead.extend(aims.iter().copied().filter(|at| *at > now_ms).take(8));
        for (i, at) in ahead.into_iter().enumerate() {
            match bites(self.fleet.clone(), at) {
                Ok(true) => {
                    self.throw_at(ball, at)?;
                    return Ok(Landed::Live(at));
                }
                Ok(false) => {}
                // The core's own refusal (no claim to hold, an outage that
                // cannot change kind) holds at every moment.
                Err(why) if i == 0 => return Err(why),
                Err(_) => {}
            }
        }
        // At most eight earlier moments, latest first, spread over the run
        // (a deploy's wave needs traffic one TTL after it).
        let behind: Vec<u32> = aims.iter().copied().filter(|at| *at <= now_ms).collect();
        let stride = behind.len().div_ceil(8).max(1);
        for at in behind.into_iter().rev().step_by(stride) {
            if bites(Fleet::new(&self.scenario, self.seed), at)? {
                let mut fleet = Fleet::new(&self.scenario, self.seed);
                interview::throw(&mut fleet, ball, at)?;
                let with_rows = !self.compare.is_empty();
                let hold = self.hold;
                *self = Lab::build(fleet.scenario(), self.seed, with_rows);
                self.hold = hold;
                self.seek(u64::from(at.saturating_sub(1)) * 1000);
                return Ok(Landed::Restarted(at));
            }
        }
        Err(interview::nothing_to_hit(
            ball,
            &self.scenario,
            ms_of(quiet.now()),
        ))
    }

    /// Throws `ball` into the running fleet at `at_ms` (after its clock):
    /// the animated fleet takes the fault and goes on; what was known ahead
    /// of it (the scout's end, markers and samples past now) is worked out
    /// again, and the comparison runs replay with the fault.
    pub fn throw_at(
        &mut self,
        ball: &catalogue::interview::Curveball,
        at_ms: u32,
    ) -> Result<(), String> {
        catalogue::interview::throw(&mut self.fleet, ball, at_ms)?;
        self.scenario = self.fleet.scenario().clone();
        let pos = self.pos;
        self.samples.retain(|s| s.t <= pos);
        self.scout = (estimated_events(&self.scenario) <= PREVIEW_EVENTS)
            .then(|| Fleet::new(&self.scenario, self.seed));
        self.known_markers = None;
        self.end = None;
        self.cut_off = false;
        self.end_found_late = false;
        for c in &mut self.compare {
            *c = Compared::new(c.defence, &self.scenario, self.seed);
        }
        self.compare_at = None;
        // The checkpoints are of the run without the fault.
        self.checkpoints.clear();
        self.thrown_live = true;
        if self.checkpoint_every > 0 {
            self.checkpoint_every = CHECKPOINT_WORK;
        }
        Ok(())
    }

    /// The fault at `at_ms` on this run, whatever the clock: thrown into the
    /// running fleet if it has not reached `at_ms`, else the run rebuilt
    /// with it and taken back to where it was (the A/B view's sides, which
    /// share one clock while one side may have ended).
    pub fn throw_at_moment(
        &mut self,
        ball: &catalogue::interview::Curveball,
        at_ms: u32,
    ) -> Result<(), String> {
        if self.fleet.now() < u64::from(at_ms) * 1000 {
            return self.throw_at(ball, at_ms);
        }
        let mut fleet = Fleet::new(&self.scenario, self.seed);
        catalogue::interview::throw(&mut fleet, ball, at_ms)?;
        let t = self.now();
        let with_rows = !self.compare.is_empty();
        let hold = self.hold;
        *self = Lab::build(fleet.scenario(), self.seed, with_rows);
        self.hold = hold;
        self.seek(t);
        Ok(())
    }

    /// Moves the target forward by `dt` virtual microseconds (playback).
    pub fn play_for(&mut self, dt: Micros) {
        let t = self.held(self.cap(self.target.saturating_add(dt)));
        self.collect_pulses = true;
        self.target = t;
    }

    /// Where playback may stop short of: the walk-through's pause.
    pub fn set_hold(&mut self, hold: Option<Micros>) {
        self.hold = hold;
    }

    /// `t`, or the pause if that comes first (never behind the clock).
    pub fn held(&self, t: Micros) -> Micros {
        self.hold.map_or(t, |h| t.min(h.max(self.pos)))
    }

    /// The time a step forward goes to: a tenth of the visible window on,
    /// or the next event if a quiet stretch lies in between (so a step never
    /// lands on nothing happening), at least 1 ms on.
    pub fn next_step(&self) -> Micros {
        // From where the clock is heading: steps pressed in a row add up.
        let min = self.heading().saturating_add(self.step_length());
        let next = self.fleet.next_event_at().unwrap_or(min).max(min);
        self.cap(next)
    }

    /// The time of `thread`'s next event after where the clock is heading
    /// (the followed thread's step), found on a copy of the fleet, or None
    /// if it has none left (looked for up to `THREAD_STEP_EVENTS` events).
    pub fn next_event_of(&self, thread: u32) -> Option<Micros> {
        const THREAD_STEP_EVENTS: u32 = 200_000;
        let from = self.heading();
        if self.pos > from {
            return None;
        }
        let mut f = self.fleet.clone();
        f.set_recording(true);
        // A fleet not built yet (at t = 0) knows no next event: built here.
        let _ = f.advance_to(from, usize::MAX);
        let _ = f.drain_events();
        let end = self.end.unwrap_or(Micros::MAX);
        for _ in 0..THREAD_STEP_EVENTS {
            let t = f.next_event_at().filter(|t| *t <= end)?;
            let _ = f.advance_to(t, CHUNK);
            let mine = f
                .drain_events()
                .iter()
                .find(|e| e.thread == thread && e.t > from)
                .map(|e| e.t);
            if mine.is_some() {
                return mine;
            }
        }
        None
    }

    /// Where the clock is heading (steps pressed in a row add up from
    /// here), never past the end: the fleet may have run past it before it
    /// knew it was quiet, and nothing after the end is on screen.
    pub fn heading(&self) -> Micros {
        self.cap(self.pos.max(self.target))
    }

    /// The length of a step: a tenth of the visible window, at least 1 ms.
    pub fn step_length(&self) -> Micros {
        (self.span() / 10).max(1000)
    }

    /// The time a step back goes to: a step before where the clock is
    /// heading.
    pub fn prev_step(&self) -> Micros {
        self.heading().saturating_sub(self.step_length())
    }

    /// Works toward the target until `out_of_time()` says stop. Returns
    /// true when every fleet reached it.
    #[inline(never)]
    pub fn advance(&mut self, out_of_time: &dyn Fn() -> bool) -> bool {
        while self.pos < self.target {
            let next_grid = (self.pos / self.step + 1) * self.step;
            let to = next_grid.min(self.target);
            let reached = self.fleet.advance_to(to, CHUNK);
            self.take_events();
            if reached {
                self.pos = to;
                if self.scout.is_none() && to == next_grid {
                    self.record(to);
                }
                if self.end.is_none() && self.fleet.is_quiet() {
                    self.span_at_end = self.span();
                    self.end_found_late = true;
                    self.end = Some(self.fleet.last_activity().max(1));
                    self.cut_off = self.fleet.cut_off();
                    self.target = self.cap(self.target);
                }
                // A copy costs a clone: only with time left in the frame.
                if !out_of_time() {
                    self.checkpoint();
                }
            }
            if out_of_time() {
                return false;
            }
        }
        let target = self.target;
        // At the animated run's end each comparison run goes on to its
        // own end: stopped at the slide's end, a run still waiting for
        // its recompute read as failed, and "none" (12) was called best
        // above singleflight (3) (issue 40).
        let to_end = self.end.is_some_and(|e| target >= e);
        if self.compare_at != Some(target) {
            for c in &mut self.compare {
                if c.at > target && !to_end {
                    if out_of_time() {
                        return false;
                    }
                    c.rewind(target, &self.scenario, self.seed);
                }
                while c.at < target {
                    // Each stops at the animated fleet's checkpoints on the
                    // way, to keep a copy of its own there.
                    let next = self.checkpoints.partition_point(|k| k.t <= c.at);
                    let stop = self
                        .checkpoints
                        .get(next)
                        .map_or(target, |k| k.t.min(target));
                    if c.fleet.advance_to(stop, CHUNK) {
                        c.at = stop;
                        let at_checkpoint = self.checkpoints.get(next).is_some_and(|k| k.t == stop);
                        if at_checkpoint
                            && c.checkpoints.last().is_none_or(|k| k.0 < stop)
                            && !out_of_time()
                        {
                            c.checkpoints.push((stop, c.fleet.clone()));
                        }
                        if c.at >= target {
                            break;
                        }
                    }
                    if out_of_time() {
                        return false;
                    }
                }
                while to_end && c.at >= target && c.at != Micros::MAX {
                    if c.fleet.advance_to(Micros::MAX, CHUNK) {
                        c.at = Micros::MAX;
                    } else if out_of_time() {
                        return false;
                    }
                }
            }
            self.compare_at = Some(target);
        }
        self.scout_ahead(out_of_time);
        true
    }

    /// At `pos`, after its events were taken: keeps a copy of the animated
    /// fleet if the last checkpoint is far enough behind (in work), within
    /// `CHECKPOINT_BYTES` for the copies of every fleet together.
    fn checkpoint(&mut self) {
        if self.checkpoint_every == 0 || self.thrown_live || !self.scrubbed {
            return;
        }
        let (last_t, last_work) = self
            .checkpoints
            .last()
            .map_or((0, 0), |c| (c.t, c.fleet.work()));
        if self.pos <= last_t || self.fleet.work() < last_work + self.checkpoint_every {
            return;
        }
        let bytes = self.fleet.snapshot_bytes()
            + self
                .compare
                .iter()
                .map(|c| c.fleet.snapshot_bytes())
                .sum::<usize>();
        let fit = self.checkpoint_bytes / bytes.max(1);
        if self.checkpoints.is_empty() {
            // Spread over the whole run from the start, by its estimate,
            // rather than thinned out as it goes (each copy costs a clone).
            let whole = estimated_events(&self.scenario).saturating_mul(2);
            self.checkpoint_every = self.checkpoint_every.max(whole / fit.max(1) as u64);
        }
        if fit < MIN_CHECKPOINTS {
            self.checkpoint_every = 0;
            self.checkpoints.clear();
            for c in &mut self.compare {
                c.checkpoints.clear();
            }
            return;
        }
        if self.checkpoints.len() >= fit {
            // Every other one goes (the first among them: t = 0 is a
            // rebuild anyway), and the spacing doubles.
            let mut odd = false;
            self.checkpoints.retain(|_| {
                odd = !odd;
                !odd
            });
            let kept: Vec<Micros> = self.checkpoints.iter().map(|c| c.t).collect();
            for c in &mut self.compare {
                c.checkpoints.retain(|k| kept.binary_search(&k.0).is_ok());
            }
            self.checkpoint_every *= 2;
        }
        self.checkpoints.push(Checkpoint {
            t: self.pos,
            fleet: self.fleet.clone(),
            tally: self.tally,
            places: self.places.clone(),
        });
    }

    fn record(&mut self, t: Micros) {
        if self.samples.last().is_none_or(|s| s.t < t) {
            self.samples.push(self.fleet.sample());
        }
    }

    /// Spends what is left of the frame running the scout toward the end.
    fn scout_ahead(&mut self, out_of_time: &dyn Fn() -> bool) {
        while let Some(scout) = self.scout.as_mut() {
            if scout.is_quiet() {
                let end = scout.last_activity().max(1);
                // The last sample closes the chart at the end.
                if self.samples.last().is_none_or(|s| s.t < end) {
                    let mut last = scout.sample();
                    last.t = end;
                    self.samples.push(last);
                }
                self.known_markers = Some(scout.markers().to_vec());
                self.cut_off = scout.cut_off();
                self.scout = None;
                self.end = Some(end);
                self.target = self.cap(self.target);
                return;
            }
            let t = self.samples.last().map_or(0, |s| s.t);
            let next_grid = (t / self.step + 1) * self.step;
            if scout.advance_to(next_grid, CHUNK) {
                self.samples.push(scout.sample());
            }
            if out_of_time() {
                return;
            }
        }
    }

    fn take_events(&mut self) {
        let events = self.fleet.drain_events();
        for e in &events {
            self.places.record(e);
            if let Some(n) = self.tally.get_mut(e.kind as usize) {
                *n += 1;
            }
        }
        if !self.collect_pulses {
            return;
        }
        for Event { thread, kind, .. } in events {
            if let Some(c) = Channel::of(kind) {
                if self.pulses.len() < MAX_PULSES {
                    self.pulses.push((thread, c));
                } else {
                    self.pulses_dropped += 1;
                }
            }
        }
    }

    /// The (thread, channel) pulses since the last call, and how many did not fit.
    pub fn take_pulses(&mut self) -> (Vec<(u32, Channel)>, u64) {
        let dropped = std::mem::take(&mut self.pulses_dropped);
        (std::mem::take(&mut self.pulses), dropped)
    }

    /// Events by kind since t = 0 (the same at the same virtual time).
    /// Where each thread is on the read path (the core's `Places`).
    pub fn places(&self) -> &stampede::read_path::Places {
        &self.places
    }

    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    pub fn report(&self) -> Report {
        self.fleet.report()
    }

    /// Recomputes measured so far by the comparison run of `d`, if it runs.
    pub fn compared(&self, d: Defence) -> Option<u64> {
        self.compared_score(d).map(|s| s.recomputes)
    }

    /// What the comparison run of `d` has measured so far, if it runs.
    pub fn compared_score(&self, d: Defence) -> Option<Score> {
        self.compare
            .iter()
            .find(|c| c.defence == d)
            .map(|c| Score::of(&c.fleet.report(), c.fleet.is_quiet()))
    }

    /// A count that grows whenever a thread changes what it is doing (its
    /// own events, not a detached write or an origin call ending after its
    /// caller left, nor a poll that finds nothing new): the ramp's news.
    pub fn news(&self) -> u64 {
        use stampede::sim::EventKind as E;
        [
            E::Arrive,
            E::CacheGet,
            E::Lead,
            E::Follow,
            E::Claim,
            E::ClaimWon,
            E::ClaimLost,
            E::ClaimError,
            E::RecomputeStart,
            E::Respond,
            E::Crash,
            E::DeadlinePassed,
            E::Remembered,
            E::Shed,
            E::Handover,
        ]
        .iter()
        .map(|k| self.tally.get(*k as usize).copied().unwrap_or(0))
        .sum()
    }

    /// Callers are waiting for their answers (the clock's ramp holds its
    /// pace through a wait for a while: the wait is the story).
    pub fn waiting(&self) -> bool {
        self.fleet.report().pinned > 0
    }

    /// The timeline's markers: the whole run's once the scout has been
    /// there, else those the animated fleet has met (or knows are coming).
    pub fn markers(&self) -> &[stampede::sim::Marker] {
        match &self.known_markers {
            Some(m) => m,
            None => self.fleet.markers(),
        }
    }

    /// The next marker after the clock, if the run has one.
    pub fn next_marker(&self) -> Option<Micros> {
        let at = self.pos.max(self.target);
        let end = self.end.unwrap_or(Micros::MAX);
        self.markers()
            .iter()
            .map(|m| m.t)
            .find(|t| *t > at)
            .filter(|t| *t <= end)
    }

    /// What the chart plots: samples on a grid, up to where they are known.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// True while the scout is still looking for the end of the run.
    pub fn scouting(&self) -> bool {
        self.scout.is_some()
    }
}

/// Where a curveball landed (see [`Lab::throw`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landed {
    /// In the running fleet, at this moment (ms): now, or the next moment
    /// it finds work to hit.
    Live(u32),
    /// Nothing was left for it from the moment on screen: the run restarted
    /// with the fault at this earlier moment (ms).
    Restarted(u32),
}

impl Landed {
    pub fn at_ms(self) -> u32 {
        match self {
            Landed::Live(at) | Landed::Restarted(at) => at,
        }
    }
}

fn metric(r: &Report, m: stampede::Metric) -> f64 {
    stampede::metrics::value(r, m).unwrap_or(0.0)
}

fn ms_of(t: Micros) -> u32 {
    u32::try_from(t / 1000).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Scenario {
        Scenario {
            instances: 6,
            threads: 30,
            ..Scenario::default()
        }
    }

    fn run_to_end(lab: &mut Lab) {
        lab.seek(u64::MAX);
        assert!(lab.advance(&|| false));
    }

    #[test]
    fn a_curveball_goes_on_from_now_and_the_link_replays_the_run() {
        let (s, _, n) = Scenario::from_query("preset=jitter&c=inner&i=6&t=30");
        assert!(n.is_empty(), "{n:?}");
        for ball in &catalogue::interview::CURVEBALLS {
            let mut lab = Lab::new(&s, 2);
            lab.seek(5_000_000);
            assert!(lab.advance(&|| false));
            let now = lab.now();
            lab.throw(ball)
                .unwrap_or_else(|e| panic!("{}: {e}", ball.kind));
            assert_eq!(lab.now(), now, "{}: the clock went back", ball.kind);
            assert_eq!(lab.scenario().faults.len(), 1, "{}", ball.kind);
            run_to_end(&mut lab);
            let live = lab.fleet().report();
            assert_eq!(live, Fleet::new(lab.scenario(), 2).run(), "{}", ball.kind);
            assert!(
                lab.samples().windows(2).all(|w| w[0].t < w[1].t),
                "{}",
                ball.kind
            );
            assert_eq!(
                lab.samples().last().unwrap().recomputes,
                live.recomputes,
                "{}",
                ball.kind
            );
        }
    }

    /// The followed thread's step lands on each of its events in turn,
    /// the same times a whole run logs for it, over seeds and threads.
    #[test]
    fn a_thread_step_lands_on_each_of_the_thread_s_events() {
        let (s, _, n) = Scenario::from_query("preset=burst&i=3&t=4");
        assert!(n.is_empty(), "{n:?}");
        for seed in 1..6 {
            let mut whole = Fleet::new(&s, seed);
            whole.set_recording(true);
            let _ = whole.run();
            let events = whole.drain_events();
            for g in [0, 5, 11] {
                let mut want: Vec<u64> = events
                    .iter()
                    .filter(|e| e.thread == g && e.t > 0)
                    .map(|e| e.t)
                    .collect();
                want.dedup();
                let mut lab = Lab::new(&s, seed);
                let mut seen = Vec::new();
                while let Some(t) = lab.next_event_of(g) {
                    assert!(seen.len() <= want.len(), "seed {seed} thread {g}: {seen:?}");
                    lab.seek(t);
                    assert!(lab.advance(&|| false));
                    seen.push(lab.now());
                }
                assert!(!want.is_empty(), "seed {seed} thread {g}");
                assert_eq!(seen, want, "seed {seed} thread {g}");
            }
        }
    }

    #[test]
    fn the_scout_finds_the_end_and_fills_the_chart() {
        let s = small();
        let mut lab = Lab::new(&s, 3);
        assert!(lab.scouting());
        lab.seek(1_000);
        while lab.scouting() {
            lab.advance(&|| true);
        }
        let end = lab.end().expect("the scout found the end");
        assert_eq!(lab.now(), 1_000, "the animated fleet did not run ahead");
        let last = lab.samples().last().unwrap();
        assert!(last.t >= end);
        assert_eq!(last.recomputes, Fleet::new(&s, 3).run().recomputes);
        assert!(lab.samples().windows(2).all(|w| w[0].t < w[1].t));
    }

    /// The End key seeks to `u64::MAX`: the timeline must stay the run's
    /// length, not grow to the seek's (a slider thumb stuck at 0).
    #[test]
    fn a_jump_to_the_end_keeps_the_timeline_the_run_s_length() {
        let s = stampede::scenario::preset("hang").unwrap();
        let mut lab = Lab::single(&s, 1);
        lab.seek(u64::MAX);
        let mid = lab.span();
        assert!(
            mid < 3_600_000_000,
            "the span while running to the end is {mid} µs"
        );
        while !lab.at_end() {
            lab.advance(&|| false);
        }
        let end = lab.end().unwrap();
        assert!(
            lab.span() >= end && lab.span() < 2 * end + 2_000_000,
            "span {} for an end at {end}",
            lab.span()
        );
    }

    #[test]
    fn runs_to_the_same_end_as_the_core() {
        let s = small();
        let mut lab = Lab::new(&s, 3);
        run_to_end(&mut lab);
        let mut fleet = Fleet::new(&s, 3);
        let full = fleet.run();
        assert_eq!(lab.report().recomputes, full.recomputes);
        assert_eq!(lab.report().claim_attempts, full.claim_attempts);
        assert!(lab.at_end());
    }

    #[test]
    fn the_comparison_runs_show_the_lesson() {
        let mut lab = Lab::new(&small(), 1);
        run_to_end(&mut lab);
        assert_eq!(lab.compared(Defence::None), Some(180));
        assert_eq!(lab.compared(Defence::Singleflight), Some(6));
        assert_eq!(lab.compared(Defence::Both), Some(1));
        assert!(!lab.compare_behind());
        lab.seek(10_000);
        assert!(lab.compare_behind(), "rebuilt, not yet advanced");
        assert!(!lab.advance(&|| true) || !lab.compare_behind());
    }

    /// At the slide's end every comparison run has run to its own end:
    /// its score is its full run's, whichever defence ends first (basics/1
    /// once called "none" (12) best above singleflight (3), its runs cut at
    /// the slide's end). Over seeds and scenarios whose defences end at
    /// different times.
    #[test]
    fn at_the_end_each_comparison_run_has_reached_its_own_end() {
        let queries = [
            "preset=naive&i=3&t=4",
            "preset=singleflight&i=3&t=4",
            "preset=burst&i=6&t=30",
            "preset=holder-crash&i=4&t=10",
            "preset=stale&i=4&t=10",
            "preset=jitter&c=inner&i=6&t=30",
        ];
        for q in queries {
            let (s, _, n) = Scenario::from_query(q);
            assert!(n.is_empty(), "{q}: {n:?}");
            for seed in 1..=12 {
                let mut lab = Lab::new(&s, seed);
                run_to_end(&mut lab);
                assert!(!lab.compare_behind(), "{q} seed {seed}");
                for d in Defence::ALL {
                    let full = Fleet::new(&d.apply(&s), seed).run();
                    assert_eq!(
                        lab.compared_score(d),
                        Some(Score::of(&full, true)),
                        "{q} seed {seed}: the {d:?} row at the slide's end"
                    );
                }
            }
        }
    }

    #[test]
    fn a_row_whose_requests_failed_is_never_best() {
        let ok = |recomputes| {
            Some(Score {
                recomputes,
                answered: 100,
                ..Score::default()
            })
        };
        let timed_out = |recomputes| {
            Some(Score {
                recomputes,
                failed: 100,
                ..Score::default()
            })
        };
        assert_eq!(Score::best(&[ok(8000), ok(40), ok(1)]), Some(2));
        assert_eq!(Score::best(&[ok(8000), ok(40), timed_out(1)]), Some(1));
        assert_eq!(
            Score::best(&[timed_out(8000), timed_out(40), timed_out(1)]),
            None
        );
        // The hung origin: every row times out, whatever its recomputes.
        let mut lab = Lab::new(&stampede::scenario::preset("hang").unwrap(), 1);
        lab.seek(u64::MAX / 2);
        assert!(lab.advance(&|| false));
        let scores: Vec<Option<Score>> = Defence::ALL
            .iter()
            .map(|d| lab.compared_score(*d))
            .collect();
        assert!(
            scores.iter().all(|s| s.is_some_and(|s| s.failing())),
            "{scores:?}"
        );
        assert_eq!(Score::best(&scores), None);
    }

    #[test]
    fn seeking_back_gives_the_same_state() {
        let mut lab = Lab::new(&small(), 9);
        lab.seek(40_000);
        assert!(lab.advance(&|| false));
        let there = (lab.report(), lab.fleet().thread_states().to_vec());
        lab.seek(400_000);
        assert!(lab.advance(&|| false));
        lab.seek(40_000);
        assert!(lab.advance(&|| false));
        assert_eq!(lab.now(), 40_000);
        assert_eq!((lab.report(), lab.fleet().thread_states().to_vec()), there);
    }

    /// End, then a step back: the clock goes a step back from the end on
    /// screen, even when the fleet ran past the end before it knew it was
    /// quiet (the step used to be taken from there, so it landed on the end
    /// again after replaying the whole run).
    #[test]
    fn a_step_back_from_the_end_goes_back() {
        let mut cases: Vec<Scenario> = ["singleflight", "burst"]
            .iter()
            .map(|n| stampede::scenario::preset(n).unwrap())
            .collect();
        cases.extend(stampede::scenario::preset_names().iter().map(|n| shrunk(n)));
        for s in cases {
            for single in [true, false] {
                let mut lab = if single {
                    Lab::single(&s, 3)
                } else {
                    Lab::new(&s, 3)
                };
                lab.seek(u64::MAX);
                while !lab.advance(&|| false) {}
                let end = lab.end().expect("a run that reached its end knows it");
                assert_eq!(lab.now(), end);
                assert_eq!(lab.heading(), end);
                // End again: nothing is rebuilt, the clock stays.
                let pos = lab.pos;
                lab.seek(u64::MAX);
                assert_eq!(lab.pos, pos, "{s:?}");
                let back = lab.prev_step();
                assert_eq!(back, end.saturating_sub(lab.step_length()));
                lab.seek(back);
                while !lab.advance(&|| false) {}
                assert_eq!(lab.now(), back, "{s:?}");
                assert!(lab.next_step() > back);
            }
        }
    }

    /// No protection leaves origin calls running when the lab stops the
    /// run (the clock's words say so: `Reading::cut_off`); a defended run
    /// goes quiet on its own.
    #[test]
    fn a_run_stopped_with_work_pending_is_told_from_one_that_went_quiet() {
        for (name, cut) in [("naive", true), ("burst", false), ("singleflight", false)] {
            let mut lab = Lab::single(&stampede::scenario::preset(name).unwrap(), 1);
            lab.seek(u64::MAX);
            while !lab.advance(&|| false) {}
            assert!(lab.at_end(), "{name}");
            assert_eq!(lab.fleet().cut_off(), cut, "{name}");
            assert_eq!(lab.cut_off(), cut, "{name}");
            // Known before the run plays, where a scout runs ahead (the
            // clock's words on the first screen).
            let mut small = stampede::scenario::preset(name).unwrap();
            small.instances = 4;
            small.threads = 20;
            let mut lab = Lab::new(&small, 1);
            while lab.scouting() {
                lab.advance(&|| true);
            }
            assert_eq!(lab.now(), 0, "{name}");
            let mut straight = Fleet::new(&small, 1);
            straight.run();
            assert_eq!(lab.cut_off(), straight.cut_off(), "{name}");
        }
    }

    /// Everything a frame shows of the lab at its clock, as a straight run
    /// from t = 0 must show it too.
    fn state(lab: &Lab) -> String {
        let scores: Vec<Option<Score>> = Defence::ALL
            .iter()
            .map(|d| lab.compared_score(*d))
            .collect();
        format!(
            "now {} next {:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            lab.now(),
            lab.fleet().next_event_at(),
            lab.report(),
            lab.fleet().thread_states(),
            lab.tally(),
            lab.places(),
            lab.fleet().markers(),
            scores,
        )
    }

    /// A preset made small enough for many runs in a test.
    fn shrunk(name: &str) -> Scenario {
        let mut s = stampede::scenario::preset(name).unwrap();
        s.instances = s.instances.min(4);
        s.threads = s.threads.min(30);
        s
    }

    /// A lab whose scout has found the end (so that seeks past it are cut
    /// at the end the same way in any two labs).
    fn scouted(s: &Scenario, seed: u64) -> Lab {
        let mut lab = Lab::new(s, seed);
        while lab.scouting() {
            lab.advance(&|| true);
        }
        lab
    }

    /// Advances in slices cut at a pseudo-random number of checks.
    fn settle(lab: &mut Lab, rng: &mut stampede::rng::Rng) {
        for _ in 0..1_000_000 {
            let n = Cell::new(rng.below(4));
            if lab.advance(&|| {
                let left = n.get();
                n.set(left.saturating_sub(1));
                left == 0
            }) {
                return;
            }
        }
        panic!("never caught up");
    }

    use std::cell::Cell;

    #[test]
    fn seeks_back_and_forth_land_where_a_straight_run_does() {
        let mut restored = 0;
        for name in stampede::scenario::preset_names() {
            let s = shrunk(name);
            for seed in [1, 20261130] {
                let mut rng = stampede::rng::Rng::new(seed ^ 0x5eec);
                let mut lab = scouted(&s, seed);
                // Many checkpoints, so that most seeks land between two.
                lab.checkpoint_every = 1 + rng.below(200);
                let end = Fleet::new(&s, seed).run().elapsed_ms as u64 * 1000 + 1000;
                for _ in 0..8 {
                    let t = match rng.below(5) {
                        0 => 0,
                        1 => lab.now().saturating_sub(1 + rng.below(5_000)),
                        2 => lab.now() + rng.below(5_000),
                        _ => rng.below(end),
                    };
                    let back = t < lab.pos;
                    lab.seek(t);
                    if back && lab.pos > 0 {
                        restored += 1;
                    }
                    settle(&mut lab, &mut rng);
                    let mut straight = scouted(&s, seed);
                    straight.seek(t);
                    assert!(straight.advance(&|| false));
                    assert_eq!(state(&lab), state(&straight), "{name}, seed {seed}, at {t}");
                }
            }
        }
        assert!(restored > 40, "only {restored} seeks restored a checkpoint");
    }

    #[test]
    fn a_seek_back_replays_from_the_latest_checkpoint_at_or_before_it() {
        let s = stampede::scenario::preset("burst").unwrap();
        let mut lab = Lab::new(&s, 1);
        run_to_end(&mut lab);
        assert!(lab.checkpoints.is_empty(), "kept before any seek back");
        // The first seek back replays from t = 0, and keeps them from then.
        lab.seek(0);
        assert_eq!(lab.pos, 0);
        assert!(lab.advance(&|| false));
        run_to_end(&mut lab);
        let times: Vec<Micros> = lab.checkpoints.iter().map(|c| c.t).collect();
        assert!(times.len() >= MIN_CHECKPOINTS / 2, "{times:?}");
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
        // The comparison runs keep theirs at the same times, up to the
        // target (the animated fleet may stop past it, at its grid step).
        for c in &lab.compare {
            let own: Vec<Micros> = c.checkpoints.iter().map(|k| k.0).collect();
            let upto: Vec<Micros> = times.iter().copied().filter(|t| *t <= c.at).collect();
            assert_eq!(own, upto, "{:?}", c.defence);
        }
        let end = lab.now();
        for t in [times[0], times[1] - 1, (times[0] + end) / 2, end - 1] {
            lab.seek(u64::MAX);
            assert!(lab.advance(&|| false));
            lab.seek(t);
            let from = times.iter().rev().find(|c| **c <= t).copied().unwrap_or(0);
            assert_eq!(lab.pos, from, "seek to {t}");
            assert!(lab.advance(&|| false));
            assert_eq!(lab.now(), t);
        }
    }

    #[test]
    fn checkpoints_stay_within_their_budget() {
        let s = Scenario {
            instances: 10,
            threads: 100,
            ..stampede::scenario::preset("naive").unwrap()
        };
        let mut lab = Lab::new(&s, 3);
        lab.checkpoint_every = 1;
        lab.scrubbed = true;
        let one = lab.fleet.snapshot_bytes() * 4;
        lab.checkpoint_bytes = one * 6;
        let mut t = 0;
        let mut most = 0;
        while !lab.at_end() {
            t += 2_000;
            lab.seek(t);
            assert!(lab.advance(&|| false));
            let held: usize = lab
                .checkpoints
                .iter()
                .map(|c| c.fleet.snapshot_bytes())
                .chain(
                    lab.compare
                        .iter()
                        .flat_map(|c| c.checkpoints.iter().map(|k| k.1.snapshot_bytes())),
                )
                .sum();
            assert!(held <= lab.checkpoint_bytes, "{held} bytes held");
            most = most.max(lab.checkpoints.len());
        }
        assert!(most >= 3, "at most {most} checkpoints");
        assert!(lab.checkpoint_every > 1, "never thinned out");
        // A fleet too big for a few copies keeps none.
        let big = Scenario {
            instances: 500,
            threads: 200,
            ..Scenario::default()
        };
        let mut lab = Lab::new(&big, 3);
        lab.scrubbed = true;
        lab.seek(50_000);
        assert!(lab.advance(&|| false));
        assert_eq!(lab.checkpoint_every, 0);
        assert!(lab.checkpoints.is_empty());
    }

    /// The fault's counter at the end of `lab`'s run and of the quiet run.
    fn bit(lab: &mut Lab, quiet: &Report, ball: &catalogue::interview::Curveball) -> (f64, f64) {
        run_to_end(lab);
        let live = lab.fleet().report();
        assert_eq!(
            live,
            Fleet::new(lab.scenario(), lab.seed()).run(),
            "{}: the link replays another run",
            ball.kind
        );
        (metric(quiet, ball.metric), metric(&live, ball.metric))
    }

    #[test]
    fn a_curveball_thrown_after_the_end_bites_or_says_why() {
        // The card's run, smaller: one burst, both layers' claim.
        for (query, refused) in [
            ("preset=burst&i=6&t=30", &["ttl-sync"][..]),
            ("preset=jitter&c=inner&i=6&t=30", &[][..]),
        ] {
            let (s, _, n) = Scenario::from_query(query);
            assert!(n.is_empty(), "{n:?}");
            let quiet = Fleet::new(&s, 2).run();
            for ball in &catalogue::interview::CURVEBALLS {
                let mut lab = Lab::new(&s, 2);
                run_to_end(&mut lab);
                let end = lab.now();
                match lab.throw(ball) {
                    Ok(landed) => {
                        assert!(
                            !refused.contains(&ball.kind),
                            "{query}: {}: {landed:?}",
                            ball.kind
                        );
                        let at = u64::from(landed.at_ms()) * 1000;
                        assert!(
                            matches!(landed, Landed::Restarted(_)),
                            "{query}: {}: {landed:?}",
                            ball.kind
                        );
                        assert!(
                            at <= end + 1000,
                            "{query}: {}: {at} after the end {end}",
                            ball.kind
                        );
                        assert!(
                            lab.now() < at,
                            "{query}: {}: the clock stays at {}",
                            ball.kind,
                            lab.now()
                        );
                        let (before, after) = bit(&mut lab, &quiet, ball);
                        assert!(
                            after > before,
                            "{query}: {}: {} {before} -> {after}",
                            ball.kind,
                            ball.metric
                        );
                    }
                    Err(why) => {
                        assert!(
                            refused.contains(&ball.kind),
                            "{query}: {}: refused: {why}",
                            ball.kind
                        );
                        assert!(why.contains("nothing for it"), "{why}");
                        assert_eq!(lab.scenario(), &s, "a refused curveball changes nothing");
                    }
                }
            }
        }
    }

    #[test]
    fn an_origin_fault_on_the_card_s_run_means_the_next_recompute() {
        // One burst: the recompute starts within the first milliseconds. An
        // origin fault thrown before it waits for it; thrown after it (its
        // call runs on unharmed, and no other follows) the run restarts
        // with the fault at that recompute.
        let (s, _, _) = Scenario::from_query("preset=burst&i=6&t=30");
        let quiet = Fleet::new(&s, 2).run();
        let ball = catalogue::interview::curveball("origin").unwrap();
        let mut lab = Lab::new(&s, 2);
        lab.seek(100_000);
        assert!(lab.advance(&|| false));
        let landed = lab.throw(ball).unwrap();
        assert!(matches!(landed, Landed::Restarted(_)), "{landed:?}");
        let (before, after) = bit(&mut lab, &quiet, ball);
        assert!(after > before, "origin_failures {before} -> {after}");
        // On steady traffic a recompute comes again: no restart.
        let (s, _, _) = Scenario::from_query("preset=jitter&c=inner&i=6&t=30");
        let quiet = Fleet::new(&s, 2).run();
        let mut lab = Lab::new(&s, 2);
        lab.seek(5_000_000);
        assert!(lab.advance(&|| false));
        let landed = lab.throw(ball).unwrap();
        assert!(
            matches!(landed, Landed::Live(at) if at > 5_000),
            "{landed:?}"
        );
        let (before, after) = bit(&mut lab, &quiet, ball);
        assert!(after > before, "origin_failures {before} -> {after}");
    }

    #[test]
    fn a_fault_at_a_moment_lands_there_whether_the_run_passed_it_or_not() {
        let (s, _, _) = Scenario::from_query("preset=jitter&c=inner&i=6&t=30");
        let ball = catalogue::interview::curveball("redis").unwrap();
        for at in [3_000, 9_000] {
            let mut lab = Lab::single(&s, 2);
            lab.seek(6_000_000);
            assert!(lab.advance(&|| false));
            lab.throw_at_moment(ball, at).unwrap();
            assert_eq!(lab.target(), 6_000_000, "the clock stays");
            assert_eq!(lab.scenario().faults.last().map(|f| f.start_ms), Some(at));
            run_to_end(&mut lab);
            assert_eq!(
                lab.fleet().report(),
                Fleet::new(lab.scenario(), 2).run(),
                "at {at}"
            );
        }
    }

    #[test]
    fn after_a_curveball_seeking_back_replays_the_run_with_it() {
        let (s, _, _) = Scenario::from_query("preset=jitter&c=inner&i=6&t=30");
        let ball = &catalogue::interview::CURVEBALLS[0];
        let mut lab = Lab::new(&s, 2);
        lab.checkpoint_every = 50;
        lab.scrubbed = true;
        lab.seek(5_000_000);
        assert!(lab.advance(&|| false));
        assert!(!lab.checkpoints.is_empty());
        lab.throw(ball).unwrap();
        assert!(lab.checkpoints.is_empty(), "the run without the fault");
        run_to_end(&mut lab);
        assert!(lab.checkpoints.is_empty(), "taken from the thrown fleet");
        let thrown = lab.scenario().clone();
        let mut rng = stampede::rng::Rng::new(5);
        for t in [1_000_000, 6_000_000, 3_000_000, 2_000_000, 9_000_000] {
            lab.seek(t);
            settle(&mut lab, &mut rng);
            let mut straight = scouted(&thrown, 2);
            straight.seek(t);
            assert!(straight.advance(&|| false));
            assert_eq!(state(&lab), state(&straight), "at {t}");
        }
        assert!(!lab.checkpoints.is_empty(), "rebuilt, then kept again");
    }

    #[test]
    fn slices_stop_when_out_of_time_and_carry_on() {
        let mut lab = Lab::new(&small(), 2);
        lab.seek(200_000);
        assert!(!lab.advance(&|| true), "one slice, then out of time");
        let mut calls = 0;
        while !lab.advance(&|| true) {
            calls += 1;
            assert!(calls < 10_000);
        }
        assert_eq!(lab.now(), 200_000);
    }

    #[test]
    fn pulses_name_their_channel() {
        let mut lab = Lab::new(&small(), 2);
        lab.seek(20_000);
        lab.advance(&|| false);
        let (pulses, dropped) = lab.take_pulses();
        assert_eq!(dropped, 0);
        assert!(pulses.iter().any(|p| p.1 == Channel::Read));
        assert!(lab.take_pulses().0.is_empty(), "taken once");
    }

    #[test]
    fn defence_round_trips() {
        for d in Defence::ALL {
            assert_eq!(Defence::of(&d.apply(&Scenario::default())), Some(d));
        }
        let outer = Scenario {
            claim: ClaimMode::Outer,
            ..Scenario::default()
        };
        assert_eq!(Defence::of(&outer), None);
    }

    #[test]
    fn big_fleets_go_without_a_scout() {
        let s = Scenario {
            instances: 1000,
            threads: 1000,
            ..Scenario::default()
        };
        assert!(estimated_events(&s) > PREVIEW_EVENTS);
        assert!(estimated_events(&Scenario::default()) <= PREVIEW_EVENTS);
    }

    #[test]
    fn the_timeline_does_not_shrink_when_the_run_ends_under_the_playhead() {
        // Without a scout, the end is found by the animated fleet itself.
        let s = Scenario {
            instances: 500,
            threads: 200,
            ..Scenario::default()
        };
        assert!(estimated_events(&s) > PREVIEW_EVENTS);
        let mut lab = Lab::new(&s, 3);
        assert!(!lab.scouting());
        let mut spans = Vec::new();
        let mut t = 0;
        while !lab.at_end() {
            t += 20_000;
            lab.seek(t);
            lab.advance(&|| false);
            spans.push(lab.span());
        }
        assert!(spans.windows(2).all(|w| w[0] <= w[1]), "{spans:?}");
        assert!(lab.span() >= lab.end().unwrap());
    }
}
