//! The interview mode's walk-through: one thread followed through the read
//! path, and at the decisions the card teaches the learner is asked what the
//! thread does next.
//!
//! Nothing here is written per preset. The thread's own event log (a run of
//! the same scenario and seed as the page's) is read one event at a time by
//! [`Tracker::step`], which says whether that event answers a decision and
//! which option is right; the feedback sentences are worded from the run
//! (its knobs, its times, who held the claim). The page pauses just before
//! the event; `stampede-sim --walk` prints the same list.

use serde::Serialize;

use stampede::claim::Micros;
use stampede::metrics::{one_decimal, Ending};
use stampede::read_path::Place;
use stampede::scenario::{ClaimMode, LoserPolicy, RedisErrorPolicy, Scenario};
use stampede::sim::{Event, EventKind, Fleet};

/// How much the walk-through asks. Not the course's [`crate::level::Level`]
/// (the tour's depth and the drills' difficulty, one ladder): this is how
/// much of the same card the learner says for themselves (the worked
/// example fading out), at any rung, so it stays a type of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Every step is explained; nothing is asked.
    #[default]
    Narrated,
    /// The card's decisions are asked.
    Faded,
    /// Every step of the thread is asked.
    OnYourOwn,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Narrated, Level::Faded, Level::OnYourOwn];

    /// The name in links, storage and the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Level::Narrated => "narrated",
            Level::Faded => "faded",
            Level::OnYourOwn => "own",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Level::Narrated => "narrated",
            Level::Faded => "faded: you decide at the card's decisions",
            Level::OnYourOwn => "on your own: you say every step",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == s || (s == "on-your-own" && *l == Level::OnYourOwn))
    }
}

/// What a question asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Lead or follow the flight?
    LeadOrFollow,
    /// Claim won?
    Claim,
    /// As a loser: stale, wait, degrade (or recompute anyway)?
    Loser,
    /// Deadline reached?
    Deadline,
    /// Which line next? (on your own only)
    Line,
}

impl Kind {
    /// The card's decisions (what the faded level asks).
    pub const CARD: [Kind; 4] = [Kind::LeadOrFollow, Kind::Claim, Kind::Loser, Kind::Deadline];

    pub fn name(self) -> &'static str {
        match self {
            Kind::LeadOrFollow => "lead-or-follow",
            Kind::Claim => "claim",
            Kind::Loser => "loser",
            Kind::Deadline => "deadline",
            Kind::Line => "line",
        }
    }

    pub fn question(self) -> &'static str {
        match self {
            Kind::LeadOrFollow => {
                "Does it lead its office's flight for the key, or follow one already running?"
            }
            Kind::Claim => "Its SET NX is on its way. Does it win the claim?",
            Kind::Loser => "It did not get the claim. As a loser: serve stale, wait or degrade?",
            Kind::Deadline => "It is waiting. Is its deadline reached before the wait ends?",
            Kind::Line => "Which line next?",
        }
    }

    /// The options' keys and labels, in the order shown (not for `Line`,
    /// whose options are places).
    pub fn options(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Kind::LeadOrFollow => &[
                ("lead", "It leads the flight"),
                ("follow", "It follows: attaches to a flight already running"),
            ],
            Kind::Claim => &[
                ("won", "It wins the claim"),
                ("lost", "It loses: someone else holds it"),
                ("error", "Redis answers with an error"),
            ],
            Kind::Loser => &[
                ("stale", "Serve the stale value"),
                ("wait", "Wait: poll the cache"),
                ("degrade", "Answer degraded at once"),
                ("compute", "Recompute anyway"),
            ],
            Kind::Deadline => &[
                ("yes", "Yes: its deadline passes first"),
                ("no", "No: the wait ends first"),
            ],
            Kind::Line => &[],
        }
    }
}

/// A place's key (an option of "which line next?").
pub fn place_key(p: Place) -> &'static str {
    match p {
        Place::None => "none",
        Place::Arrived => "arrived",
        Place::Reading => "reading",
        Place::Served => "served",
        Place::Leading => "leading",
        Place::Following => "following",
        Place::Claiming => "claiming",
        Place::Won => "won",
        Place::Rechecking => "rechecking",
        Place::Recomputing => "recomputing",
        Place::Writing => "writing",
        Place::Settling => "settling",
        Place::Releasing => "releasing",
        Place::Losing => "losing",
        Place::Crashed => "crashed",
    }
}

/// A place in the words of the read path's listing.
pub fn place_label(p: Place) -> &'static str {
    match p {
        Place::None => "not started",
        Place::Arrived => "handle(key)",
        Place::Reading => "v = GET key",
        Place::Served => "if v is fresh: return v",
        Place::Leading => "flight = singleflight(key)",
        Place::Following => "if a follower: wait for the result",
        Place::Claiming => "SET lock:key token NX PX ttl",
        Place::Won => "if won:",
        Place::Rechecking => "v = GET key (once more)",
        Place::Recomputing => "v = origin.recompute(key)",
        Place::Writing => "SET key v EX ttl",
        Place::Settling => "answer every waiter with the same v",
        Place::Releasing => "release lock:key if it still holds token",
        Place::Losing => "else: poll, serve stale or degrade",
        Place::Crashed => "it crashed",
    }
}

/// The places of the listing after `handle(key):`, in its order (the page's
/// listing has a line for each): the options of "which line next?".
pub const LINES: [Place; 12] = [
    Place::Reading,
    Place::Served,
    Place::Leading,
    Place::Following,
    Place::Claiming,
    Place::Won,
    Place::Rechecking,
    Place::Recomputing,
    Place::Writing,
    Place::Releasing,
    Place::Losing,
    Place::Settling,
];

/// Whom the walk-through follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// The first thread that wins a claim.
    Holder,
    /// A thread by global index (instance × threads + thread).
    Thread(u32),
}

/// The interview mode's picker values ("holder", "office1", "office3"), for
/// a fleet of `threads` threads per instance; a number is a global index.
pub fn who(value: &str, threads: u32) -> Option<Who> {
    match value {
        "holder" => Some(Who::Holder),
        "office1" => Some(Who::Thread(0)),
        "office3" => Some(Who::Thread(2 * threads + threads.min(2).saturating_sub(1))),
        v => v.parse().ok().map(Who::Thread),
    }
}

/// One option of a question, with its feedback.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Choice {
    pub key: &'static str,
    pub label: &'static str,
    /// Why this is or is not what happens here, from the run.
    pub feedback: String,
    pub correct: bool,
    /// What the feedback states of the followed request, each proved from
    /// its own log by [`check`].
    #[serde(skip)]
    pub facts: Vec<Fact>,
}

/// One thing a feedback sentence states of the followed request: the
/// walk-through's claim, proved from the request's own log (its events,
/// through every retry, and the claim wins of the run), never from the
/// words' own reasoning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fact {
    /// It logged `kind` at `t` ("at 8.3 ms it attaches", "won at").
    Logged(EventKind, Micros),
    /// Thread `holder` won the claim on its key at `t` and had not
    /// released it when the request's event at `at` came ("held it").
    Held { holder: u32, t: Micros, at: Micros },
    /// The attempt waiting at `from` is answered at `t` with `ending`, and
    /// no retry comes between: its caller gets that answer ("the caller
    /// gets a timeout").
    Answered { from: Micros, t: Micros, ending: u8 },
    /// The attempt waiting at `from` fails at `t` and the request tries
    /// again: retry `n` of the run's retries, starting at `again`.
    Retried {
        from: Micros,
        t: Micros,
        n: u32,
        again: Micros,
    },
    /// The request's final answer, after every retry: `ending` at `t`.
    Ended { t: Micros, ending: u8 },
    /// The request had no answer when its log ends.
    NeverAnswered,
    /// Its flight settled at `t` with a value (`true`) or without one.
    Settled { t: Micros, value: bool },
}

impl Fact {
    /// The fact holds in the followed request's log.
    pub fn holds(&self, log: &ThreadLog) -> bool {
        let ev = &log.events;
        match *self {
            Fact::Logged(kind, t) => ev.iter().any(|e| e.kind == kind && e.t == t),
            Fact::Held { holder, t, at } => {
                let key = ev.iter().find(|e| e.t == at).map(|e| e.key);
                let won = log.claims.iter().any(|c| {
                    c.kind == EventKind::ClaimWon
                        && c.thread == holder
                        && c.t == t
                        && Some(c.key) == key
                });
                let released = log.claims.iter().any(|c| {
                    c.kind == EventKind::Release
                        && c.thread == holder
                        && Some(c.key) == key
                        && c.t >= t
                        && c.t <= at
                });
                won && !released
            }
            Fact::Answered { from, t, ending } => attempt_end(ev, from).is_some_and(|j| {
                let e = &ev[j];
                e.kind == EventKind::Respond && e.t == t && e.detail == ending
            }),
            Fact::Retried { from, t, n, again } => attempt_end(ev, from).is_some_and(|j| {
                let retries = ev[..=j]
                    .iter()
                    .filter(|x| x.kind == EventKind::Retry)
                    .count();
                ev[j].kind == EventKind::Retry
                    && ev[j].t == t
                    && retries == n as usize
                    && ev[j..]
                        .iter()
                        .find(|x| x.kind == EventKind::Arrive)
                        .is_some_and(|x| x.t == again && x.detail == 1)
            }),
            Fact::Ended { t, ending } => {
                final_answer(ev).is_some_and(|e| e.t == t && e.detail == ending)
            }
            Fact::NeverAnswered => final_answer(ev).is_none(),
            Fact::Settled { t, value } => ev
                .iter()
                .position(|e| e.kind == EventKind::Settle && e.t == t)
                .is_some_and(|i| settled_value(ev, i) == Some(value)),
        }
    }
}

/// Which facts back an event word.
type Backs = fn(&Fact) -> bool;

/// Words of the feedback that state an event of the request, and the fact
/// that must back each: said without it, [`check`] fails.
const EVENT_WORDS: [(&str, Backs); 5] = [
    (
        "the caller gets a timeout",
        |f| matches!(f, Fact::Answered { ending, .. } if *ending == Ending::Timeout as u8),
    ),
    ("with the same v", |f| {
        matches!(f, Fact::Settled { value: true, .. })
    }),
    ("tries again at", |f| matches!(f, Fact::Retried { .. })),
    ("finally ends", |f| matches!(f, Fact::Ended { .. })),
    ("still held it", |f| matches!(f, Fact::Held { .. })),
];

/// Every fact of every option of `walk` holds in `log`, and every event
/// word of [`EVENT_WORDS`] in a feedback comes with its fact; otherwise
/// the first that does not, with its words.
pub fn check(log: &ThreadLog, walk: &Walk) -> Result<(), String> {
    for a in &walk.asked {
        for o in &a.options {
            for f in &o.facts {
                if !f.holds(log) {
                    return Err(format!(
                        "\"{}\" states {f:?}, which does not hold",
                        o.feedback
                    ));
                }
            }
            let stated = stated(&o.feedback);
            for (word, backs) in EVENT_WORDS {
                if stated.contains(word) && !o.facts.iter().any(backs) {
                    return Err(format!(
                        "\"{}\" says \"{word}\" with no fact of the run to prove it",
                        o.feedback
                    ));
                }
            }
            if let Some(word) = crate::claims::causal_word(&o.feedback) {
                if o.facts.is_empty() {
                    return Err(format!("\"{}\" says \"{word}\" with no fact", o.feedback));
                }
            }
        }
    }
    Ok(())
}

/// The words a feedback states: without a listing line it names only to
/// deny it ("not «answer every waiter with the same v»").
fn stated(feedback: &str) -> String {
    let mut out = String::new();
    let mut rest = feedback;
    while let Some(at) = rest.find("not «") {
        out.push_str(&rest[..at]);
        rest = rest[at..].split_once('»').map_or("", |(_, r)| r);
    }
    out.push_str(rest);
    out
}

/// Where the attempt under way at `from` ends (its answer, or the failure
/// it retries after), if the log has it: an index into `ev`.
fn attempt_end(ev: &[Event], from: Micros) -> Option<usize> {
    let i = ev.iter().position(|e| e.t >= from)?;
    ev[i..]
        .iter()
        .take_while(|e| e.kind != EventKind::Arrive)
        .position(|e| matches!(e.kind, EventKind::Respond | EventKind::Retry))
        .map(|j| i + j)
}

/// The request's final answer: its last `Respond`, when no retry follows it.
fn final_answer(ev: &[Event]) -> Option<&Event> {
    let last = ev
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EventKind::Respond | EventKind::Retry))?;
    (last.kind == EventKind::Respond).then_some(last)
}

/// Whether the flight settled at `ev[i]` had a value: what the work of its
/// attempt last did before the settle (a value written or computed, or a
/// failure, a negative marker, an origin timeout, a shed), else the
/// leader's own answer after it. `None` when the log does not show it.
fn settled_value(ev: &[Event], i: usize) -> Option<bool> {
    use EventKind as E;
    let start = ev[..=i]
        .iter()
        .rposition(|e| e.kind == E::Arrive)
        .unwrap_or(0);
    for e in ev[start..i].iter().rev() {
        match e.kind {
            E::CacheSet | E::RecomputeEnd => return Some(e.detail == 0),
            E::OriginTimeout | E::Shed => return Some(false),
            _ => {}
        }
    }
    let answer = ev[i..]
        .iter()
        .take_while(|e| e.kind != E::Arrive)
        .find(|e| matches!(e.kind, E::Respond | E::Retry))?;
    Some(answer.kind == E::Respond && is_value(answer.detail))
}

fn is_value(ending: u8) -> bool {
    [Ending::Hit, Ending::Stale, Ending::Computed, Ending::Shared]
        .iter()
        .any(|e| *e as u8 == ending)
}

/// How a caller was answered, in words.
fn ending_words(ending: u8) -> &'static str {
    match ending {
        d if d == Ending::Hit as u8 => "with a value from the cache",
        d if d == Ending::Stale as u8 => "with a stale value",
        d if d == Ending::Computed as u8 => "with the value of its own origin call",
        d if d == Ending::Shared as u8 => "with its flight's value",
        d if d == Ending::Degraded as u8 => "with a degraded answer",
        d if d == Ending::Error as u8 => "with an error",
        _ => "in a timeout",
    }
}

impl Choice {
    /// The feedback when the answer is shown rather than picked ("Show me",
    /// or playing on): "The answer: …", never "Right: …", for the learner
    /// did not answer.
    pub fn shown(&self) -> String {
        match self.feedback.strip_prefix("Right: ") {
            Some(why) => format!("The answer: {why}"),
            None => self.feedback.clone(),
        }
    }
}

/// One question of the walk-through, answered by the thread's event at `t`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Asked {
    /// The answering event's virtual time (µs): the run pauses just before.
    pub t: Micros,
    pub kind: Kind,
    pub question: &'static str,
    pub options: Vec<Choice>,
    /// The right option's key.
    pub right: &'static str,
    /// Where the thread is when asked.
    #[serde(skip)]
    pub place: Place,
    /// The event that answers it.
    #[serde(skip)]
    pub event: EventKind,
}

/// The walk-through of one thread's request.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Walk {
    /// The followed thread, once known (a holder only if someone wins).
    pub thread: Option<u32>,
    pub level: Level,
    pub asked: Vec<Asked>,
    /// Why the walk is empty or cut short, if it is.
    pub note: Option<String>,
}

/// How many events a look-ahead run may take before it gives up (a page
/// computes the walk in one go).
pub const MAX_EVENTS: usize = 1_000_000;

/// The arrival of a new request (not the next attempt of one that
/// retries: that arrives with detail 1, after its `Retry`).
fn new_request(e: &Event) -> bool {
    e.kind == EventKind::Arrive && e.detail != 1
}

/// What the followed thread logged during its first request (from its
/// arrival to its next one, through every retry of it, so that its
/// final answer is in the log), with the claim wins and releases of
/// everyone (for "who holds it"), from a run of `s` with `seed`.
pub struct ThreadLog {
    pub thread: Option<u32>,
    pub events: Vec<Event>,
    /// Every `ClaimWon` and `Release` of the run up to the end of the log.
    pub claims: Vec<Event>,
    pub cut: bool,
}

/// Runs the scenario and keeps what the followed thread did.
pub fn thread_log(s: &Scenario, seed: u64, who: Who) -> ThreadLog {
    let mut fleet = Fleet::new(s, seed);
    fleet.set_recording(true);
    let mut thread = match who {
        Who::Thread(g) => Some(g),
        Who::Holder => None,
    };
    let total = u64::from(s.instances) * u64::from(s.threads);
    if thread.is_some_and(|g| u64::from(g) >= total) {
        thread = None;
    }
    // Before the holder is known, everything is kept to pick its events from.
    let mut buffer: Vec<Event> = Vec::new();
    let mut events: Vec<Event> = Vec::new();
    let mut claims = Vec::new();
    let mut seen = 0usize;
    let mut done = false;
    let mut cut = false;
    let mut at = 0;
    loop {
        fleet.advance_to(at, usize::MAX);
        for e in fleet.drain_events() {
            seen += 1;
            if done {
                continue;
            }
            if matches!(e.kind, EventKind::ClaimWon | EventKind::Release) {
                claims.push(e);
            }
            if thread.is_none() && who == Who::Holder {
                buffer.push(e);
                if e.kind == EventKind::ClaimWon {
                    thread = Some(e.thread);
                    // Its request: from its last arrival on.
                    let mine: Vec<Event> = buffer
                        .iter()
                        .filter(|b| b.thread == e.thread)
                        .copied()
                        .collect();
                    let from = mine.iter().rposition(new_request).unwrap_or(0);
                    events.extend_from_slice(&mine[from..]);
                    buffer = Vec::new();
                }
                continue;
            }
            if Some(e.thread) != thread {
                continue;
            }
            let arrival = new_request(&e);
            if arrival && !events.is_empty() {
                done = true;
                continue;
            }
            if events.is_empty() && !arrival {
                continue;
            }
            events.push(e);
        }
        if done || fleet.is_quiet() {
            break;
        }
        if seen > MAX_EVENTS {
            cut = true;
            break;
        }
        match fleet.next_event_at() {
            Some(n) => at = n.max(at),
            None if fleet.is_quiet() => break,
            None => at += 1000,
        }
    }
    ThreadLog {
        thread,
        events,
        claims,
        cut,
    }
}

/// Where the followed thread is and what it is in the middle of: fed its
/// events one at a time, it says which decision each answers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tracker {
    pub place: Place,
    /// It lost the claim and has not yet shown what it does about it.
    loser: bool,
    /// It waits for something its deadline bounds (a flight's result, a
    /// poll's value, the origin) and its caller has no answer yet.
    waiting: bool,
    /// Its caller has been answered.
    answered: bool,
    fail_closed: bool,
}

impl Tracker {
    pub fn new(s: &Scenario) -> Tracker {
        Tracker {
            fail_closed: s.redis_error == RedisErrorPolicy::Closed,
            ..Tracker::default()
        }
    }

    /// Takes the thread's next event (`rest` are the ones after it, for a
    /// loser whose flight is settled before its answer shows) and returns
    /// the decision it answers and the right option's key, if any.
    pub fn step(&mut self, e: &Event, rest: &[Event]) -> Option<(Kind, &'static str)> {
        use EventKind as E;
        let before = self.place;
        let got = if self.loser {
            loser_choice(e, rest).map(|k| (Kind::Loser, k))
        } else {
            match e.kind {
                E::Lead => Some((Kind::LeadOrFollow, "lead")),
                E::Follow | E::Remembered => Some((Kind::LeadOrFollow, "follow")),
                E::ClaimWon => Some((Kind::Claim, "won")),
                E::ClaimLost => Some((Kind::Claim, "lost")),
                E::ClaimError => Some((Kind::Claim, "error")),
                E::DeadlinePassed if self.waiting => Some((Kind::Deadline, "yes")),
                // A poller that slept out its budget answers at its
                // deadline without a separate deadline event.
                E::Respond | E::Retry if self.waiting && e.detail == Ending::Timeout as u8 => {
                    Some((Kind::Deadline, "yes"))
                }
                _ if self.waiting && ends_wait(before, e) => Some((Kind::Deadline, "no")),
                _ => None,
            }
        };
        self.place = before.after(e.kind, e.detail);
        match e.kind {
            E::Arrive | E::Retry => {
                *self = Tracker {
                    place: self.place,
                    fail_closed: self.fail_closed,
                    ..Tracker::default()
                }
            }
            E::Respond | E::Crash => {
                self.answered = true;
                self.waiting = false;
                self.loser = false;
            }
            _ => {}
        }
        match got {
            Some((Kind::Loser, k)) => {
                self.loser = false;
                self.waiting = k == "wait" && e.kind == E::Poll && !self.answered;
            }
            Some((Kind::Claim, k)) => {
                self.loser = k == "lost" || (k == "error" && self.fail_closed);
            }
            Some((Kind::Deadline, _)) => self.waiting = false,
            Some((Kind::LeadOrFollow, "follow")) => {
                self.waiting = e.kind == E::Follow && !self.answered
            }
            _ => {}
        }
        if e.kind == E::RecomputeStart && !self.answered {
            self.waiting = true;
        }
        got
    }
}

/// What a loser does, from its next event (and the answer that follows a
/// settle).
fn loser_choice(e: &Event, rest: &[Event]) -> Option<&'static str> {
    use EventKind as E;
    match e.kind {
        E::Poll | E::DeadlinePassed | E::Handover => Some("wait"),
        E::Respond | E::Retry if e.detail == Ending::Timeout as u8 => Some("wait"),
        E::Settle | E::Respond => {
            let answer = std::iter::once(e)
                .chain(rest)
                .find(|r| r.kind == E::Respond)?;
            match answer.detail {
                d if d == Ending::Stale as u8 => Some("stale"),
                d if d == Ending::Degraded as u8 => Some("degrade"),
                _ => None,
            }
        }
        E::Lead | E::Follow | E::CacheGet | E::RecomputeStart | E::Shed => Some("compute"),
        _ => None,
    }
}

/// An event that ends a wait without the deadline: an answer, the origin's
/// reply, or a move to another line (a follower handed the flight, which
/// then polls, still waits).
fn ends_wait(before: Place, e: &Event) -> bool {
    use EventKind as E;
    matches!(e.kind, E::Respond | E::RecomputeEnd | E::OriginTimeout)
        || (before.after(e.kind, e.detail) != before && !matches!(e.kind, E::Handover | E::Poll))
}

/// What the run's numbers say, for the feedback.
struct Words<'a> {
    s: &'a Scenario,
    log: &'a ThreadLog,
    thread: u32,
}

fn ms(us: Micros) -> String {
    one_decimal(us as f64 / 1000.0)
}

impl Words<'_> {
    fn office(&self) -> u32 {
        self.thread / self.s.threads.max(1) + 1
    }

    fn name(&self, g: u32) -> String {
        let t = self.s.threads.max(1);
        format!("thread {} of office {}", g % t + 1, g / t + 1)
    }

    fn arrived(&self) -> Micros {
        self.log.events.first().map_or(0, |e| e.t)
    }

    fn deadline(&self) -> Option<Micros> {
        (!self.s.pitfalls.no_deadline).then(|| u64::from(self.s.deadline_ms) * 1000)
    }

    /// The claim's holder when `e` came back: the last win on the key not
    /// yet released, by someone else.
    fn holder_at(&self, e: &Event) -> Option<(u32, Micros)> {
        let mut held = None;
        for c in self
            .log
            .claims
            .iter()
            .filter(|c| c.key == e.key && c.t <= e.t)
        {
            match c.kind {
                EventKind::ClaimWon => held = Some((c.thread, c.t)),
                EventKind::Release if held.is_some_and(|(h, _)| h == c.thread) => held = None,
                _ => {}
            }
        }
        held.filter(|(h, _)| *h != self.thread)
    }

    fn policy(&self) -> &'static str {
        match self.s.loser {
            LoserPolicy::Stale => "serve stale",
            LoserPolicy::Wait => "wait",
            LoserPolicy::Degrade => "degrade",
            LoserPolicy::Compute => "recompute anyway",
        }
    }

    /// One sentence per option: why it is, or is not, what happens; and
    /// the facts of the request it states.
    fn feedback(
        &self,
        kind: Kind,
        key: &str,
        right: &str,
        i: usize,
        place: Place,
    ) -> (String, Vec<Fact>) {
        let e = &self.log.events[i];
        let mut facts = vec![Fact::Logged(e.kind, e.t)];
        if kind == Kind::Claim && right == "lost" {
            if let Some((holder, t)) = self.holder_at(e) {
                facts.push(Fact::Held { holder, t, at: e.t });
            }
        }
        if kind == Kind::Deadline {
            let (words, more) = self.deadline_words(key == right, right == "yes", i, place);
            facts.extend(more);
            return (words, facts);
        }
        (self.words(kind, key, right, e), facts)
    }

    fn words(&self, kind: Kind, key: &str, right: &str, e: &Event) -> String {
        let at = ms(e.t);
        let yes = key == right;
        match kind {
            Kind::LeadOrFollow if e.kind == EventKind::Remembered => format!(
                "{}: its office's flight map still held the last failure (the remember-failure pitfall), so at {at} ms it gets that failure without anyone calling the origin.",
                if key == "follow" { "Right" } else { "No" }
            ),
            Kind::LeadOrFollow => self.lead_words(key, yes, &at),
            Kind::Claim => self.claim_words(key, right, e, &at),
            Kind::Loser => self.loser_words(key, right, e, &at),
            Kind::Deadline | Kind::Line => String::new(),
        }
    }

    fn lead_words(&self, key: &str, yes: bool, at: &str) -> String {
        let o = self.office();
        let alone = if !self.s.singleflight {
            Some("singleflight is off in this run, so every thread leads a flight of its own")
        } else if self.s.pitfalls.key_mismatch {
            Some("its flight key is salted per request (the key-mismatch pitfall), so nobody shares its flight")
        } else {
            None
        };
        match (key, yes) {
            ("lead", true) => match alone {
                Some(why) => format!("Right: {why}; it leads at {at} ms."),
                None => format!(
                    "Right: no flight for this key was running in office {o}, so at {at} ms it leads one; office {o}'s later misses of this key attach to it."
                ),
            },
            ("lead", false) => format!(
                "No: a flight for this key was already running in office {o}, so at {at} ms it attaches to it and waits for that leader's result."
            ),
            (_, true) => format!(
                "Right: a flight for this key was already running in office {o}, so at {at} ms it attaches and waits for that leader's result."
            ),
            (_, false) => match alone {
                Some(why) => format!("No: {why}; it leads at {at} ms."),
                None => format!(
                    "No: to follow, a flight must already be running in office {o}; none was, so at {at} ms it leads."
                ),
            },
        }
    }

    fn claim_words(&self, key: &str, right: &str, e: &Event, at: &str) -> String {
        let ttl = self.s.claim_ttl_ms;
        let what = match right {
            "won" => format!(
                "lock:key was free when its SET NX arrived, so it won at {at} ms: it alone may recompute until it releases or the {ttl} ms TTL runs out"
            ),
            "lost" => match self.holder_at(e) {
                Some((h, t)) => format!(
                    "{} won lock:key at {} ms and still held it, so its SET NX failed at {at} ms",
                    self.name(h),
                    ms(t)
                ),
                None => format!("lock:key was held by another request, so its SET NX failed at {at} ms"),
            },
            _ => {
                let then = if self.s.redis_error == RedisErrorPolicy::Closed {
                    "failing closed, it counts as lost"
                } else {
                    "failing open, it goes on as if it had won"
                };
                format!("Redis answered its SET NX with an error at {at} ms; {then}")
            }
        };
        let not = match key {
            "won" => "it did not win",
            "lost" => "it was not refused",
            _ => "Redis answered normally",
        };
        why(key == right, not, &what)
    }

    fn loser_words(&self, key: &str, right: &str, e: &Event, at: &str) -> String {
        let policy = self.policy();
        let what = match right {
            "stale" => format!(
                "this run's loser policy is {policy} and its read found a stale value, so at {at} ms it answers with that"
            ),
            "degrade" if self.s.loser == LoserPolicy::Degrade => format!(
                "this run's loser policy is degrade, so at {at} ms it answers degraded without waiting"
            ),
            "degrade" => format!(
                "this run's loser policy is {policy} but it has nothing to serve, so at {at} ms it answers degraded"
            ),
            "wait" if e.kind != EventKind::Poll => format!(
                "this run's loser policy is wait, but no read could come back before its deadline, so it waits out its budget to {at} ms"
            ),
            "wait" => format!(
                "this run's loser policy is wait: it re-reads the cache every {} ms, first at {at} ms, until the value appears, the claim comes free or its deadline passes",
                self.s.poll_ms
            ),
            _ if self.s.loser == LoserPolicy::Stale => format!(
                "this run's loser policy is serve stale, but its read found nothing to serve, so at {at} ms it goes on to recompute rather than queue behind the claim"
            ),
            _ => format!(
                "this run's loser policy is {policy}: at {at} ms it goes on to recompute, duplicate work but nobody waits"
            ),
        };
        let not = match key {
            "stale" if self.s.loser == LoserPolicy::Stale => "it has no stale value to serve",
            "stale" => "serving stale is the serve-stale policy's branch",
            "wait" => "polling is the wait policy's branch",
            "degrade" => "a degraded answer is the degrade policy's branch",
            _ => "recomputing anyway is the recompute-anyway policy's branch",
        };
        why(key == right, not, &what)
    }

    /// Whether its deadline passed first, and what then became of the
    /// request: "the caller gets a timeout" only where no retry follows;
    /// otherwise it tries again, and how the request finally ended.
    fn deadline_words(
        &self,
        yes: bool,
        passed: bool,
        i: usize,
        place: Place,
    ) -> (String, Vec<Fact>) {
        let e = &self.log.events[i];
        let at = &ms(e.t);
        // Each attempt has a deadline of its own, from its own start.
        let started = self.log.events[..=i]
            .iter()
            .rev()
            .find(|x| x.kind == EventKind::Arrive)
            .map_or(0, |x| x.t);
        let waited = ms(e.t.saturating_sub(started));
        let mut facts = Vec::new();
        let on = match place {
            _ if e.kind == EventKind::OriginTimeout => "the origin call's own timeout",
            Place::Following => "the flight's result",
            Place::Losing => "the value or a free claim",
            Place::Recomputing => "the origin's answer",
            _ => "its answer",
        };
        let what = if passed {
            let (then, more) = self.after_deadline(e.t);
            facts = more;
            let work = if place == Place::Recomputing {
                " (the recompute runs on)"
            } else {
                ""
            };
            let arrived = if started == self.arrived() {
                "it arrived"
            } else {
                "this attempt began"
            };
            format!(
                "its {} ms deadline passed at {at} ms, {waited} ms after {arrived}, before {on} came{work}; {then}",
                self.s.deadline_ms
            )
        } else {
            match self.deadline() {
                Some(_) => format!(
                    "{on} came at {at} ms, {waited} ms after it arrived, inside its {} ms deadline",
                    self.s.deadline_ms
                ),
                None => format!(
                    "this run sets no deadline (the no-deadline pitfall), so it waits as long as it takes: {on} came at {at} ms, {waited} ms after it arrived"
                ),
            }
        };
        (verdict(yes, &what), facts)
    }

    /// What became of the request after the deadline of the attempt
    /// waiting at `from` passed, as the log shows it.
    fn after_deadline(&self, from: Micros) -> (String, Vec<Fact>) {
        let ev = &self.log.events;
        let Some(j) = attempt_end(ev, from) else {
            return (
                "the walk-through's look at the run ends before its caller is answered".into(),
                vec![Fact::NeverAnswered],
            );
        };
        let end = ev[j];
        if end.kind == EventKind::Respond {
            let said = if end.detail == Ending::Timeout as u8 {
                "the caller gets a timeout".to_string()
            } else {
                format!("the caller is answered {}", ending_words(end.detail))
            };
            return (
                format!("{said} at {} ms", ms(end.t)),
                vec![Fact::Answered {
                    from,
                    t: end.t,
                    ending: end.detail,
                }],
            );
        }
        let n = ev[..=j]
            .iter()
            .filter(|x| x.kind == EventKind::Retry)
            .count() as u32;
        let Some(again) = ev[j..].iter().find(|x| x.kind == EventKind::Arrive) else {
            return (
                format!(
                    "the attempt fails, and retry {n} of {} is still to come when the walk-through's look at the run ends",
                    self.s.retries
                ),
                vec![Fact::NeverAnswered],
            );
        };
        let mut facts = vec![Fact::Retried {
            from,
            t: end.t,
            n,
            again: again.t,
        }];
        let retried = format!(
            "the attempt fails and it tries again at {} ms (retry {n} of {})",
            ms(again.t),
            self.s.retries
        );
        match final_answer(ev) {
            Some(last) => {
                facts.push(Fact::Ended {
                    t: last.t,
                    ending: last.detail,
                });
                (
                    format!(
                        "{retried}; the request finally ends {} at {} ms",
                        ending_words(last.detail),
                        ms(last.t)
                    ),
                    facts,
                )
            }
            None => {
                facts.push(Fact::NeverAnswered);
                (
                    format!("{retried}; it has no answer yet when the walk-through's look at the run ends"),
                    facts,
                )
            }
        }
    }
}

/// The feedback's sentence: the verdict, then why.
fn verdict(right: bool, why: &str) -> String {
    format!("{}: {why}.", if right { "Right" } else { "No" })
}

/// A wrong option's feedback says first why not, then what happens.
fn why(right: bool, not: &str, what: &str) -> String {
    if right {
        verdict(true, what)
    } else {
        verdict(false, &format!("{not}; {what}"))
    }
}

/// A sentence for an event, for "which line next?".
fn did(kind: EventKind) -> &'static str {
    use EventKind as E;
    match kind {
        E::Arrive => "arrives",
        E::Retry => "tries again",
        E::CacheGet => "reads the cache",
        E::Lead => "leads its flight",
        E::Follow => "attaches to the flight",
        E::Remembered => "gets the flight's remembered failure",
        E::Claim => "sends SET NX for the claim",
        E::ClaimWon => "wins the claim",
        E::ClaimLost => "loses the claim",
        E::ClaimError => "gets an error for its claim",
        E::RecomputeStart => "calls the origin",
        E::RecomputeEnd => "gets the origin's answer",
        E::OriginTimeout => "gives up on the origin at its timeout",
        E::CacheSet => "writes the value",
        E::Release => "releases the claim",
        E::Settle => "hands the outcome to its flight's waiters",
        E::Respond => "answers its caller",
        E::Crash => "crashes",
        E::DeadlinePassed => "reaches its deadline",
        E::Poll => "polls the cache and the claim",
        E::Shed => "is shed by admission control",
        E::Handover => "hands the flight over",
    }
}

/// The options of "which line next?": the right place and the three
/// listing lines nearest it (not where the thread is now), in listing order.
/// A leader hands its value to its flight's waiters before it releases the
/// claim, but the listing writes the release first, as code often does:
/// either order is sound, so the release is not offered as wrong there.
fn line_options(right: Place, now: Place) -> Vec<Place> {
    let offered = |p: Place| p != now && !(right == Place::Settling && p == Place::Releasing);
    // Nearest first, outward from the right line (no sort: its code is
    // kilobytes of the page's wasm).
    let r = LINES.iter().position(|l| *l == right).unwrap_or(0);
    let mut chosen = [false; LINES.len()];
    chosen[r] = true;
    let mut others = 0;
    for d in 1..LINES.len() {
        for i in [r.checked_sub(d), Some(r + d)].into_iter().flatten() {
            if others < 3 && LINES.get(i).is_some_and(|p| offered(*p)) {
                chosen[i] = true;
                others += 1;
            }
        }
    }
    LINES
        .iter()
        .zip(chosen)
        .filter_map(|(p, c)| c.then_some(*p))
        .collect()
}

/// The walk-through of the thread `who` names in the run of `s` with
/// `seed`, at `level`.
pub fn walk(s: &Scenario, seed: u64, who: Who, level: Level) -> Walk {
    let mut s = s.clone();
    let _ = s.validate();
    if level == Level::Narrated {
        return Walk {
            level,
            ..Walk::default()
        };
    }
    let log = thread_log(&s, seed, who);
    walk_of(&s, &log, level)
}

/// The questions a thread's log answers, at `level`.
pub fn walk_of(s: &Scenario, log: &ThreadLog, level: Level) -> Walk {
    let Some(thread) = log.thread else {
        let note = if s.claim == ClaimMode::Off {
            "Nobody holds a claim in this run: the claim is off. Follow another thread."
        } else {
            "Nobody wins a claim in this run. Follow another thread."
        };
        return Walk {
            level,
            note: Some(note.to_string()),
            ..Walk::default()
        };
    };
    let words = Words { s, log, thread };
    let mut asked = Vec::new();
    let mut tracker = Tracker::new(s);
    for (i, e) in log.events.iter().enumerate() {
        let place = tracker.place;
        let got = tracker.step(e, &log.events[i + 1..]);
        // Nothing pauses before the run's first instant.
        if level == Level::Narrated || e.t == 0 {
            continue;
        }
        if let Some((kind, right)) = got {
            let options = kind
                .options()
                .iter()
                .map(|(key, label)| {
                    let (feedback, facts) = words.feedback(kind, key, right, i, place);
                    Choice {
                        key,
                        label,
                        feedback,
                        correct: *key == right,
                        facts,
                    }
                })
                .collect();
            asked.push(Asked {
                t: e.t,
                kind,
                question: kind.question(),
                options,
                right,
                place,
                event: e.kind,
            });
        } else if level == Level::OnYourOwn
            && tracker.place != place
            && LINES.contains(&tracker.place)
        {
            let right = tracker.place;
            let mut facts = vec![Fact::Logged(e.kind, e.t)];
            // A flight settled with no value hands its waiters the failure:
            // "answer every waiter with the same v" only where there is a v.
            let (doing, line) = match (right, settled_value(&log.events, i)) {
                (Place::Settling, Some(true)) => {
                    facts.push(Fact::Settled {
                        t: e.t,
                        value: true,
                    });
                    (did(e.kind), format!("«{}»", place_label(right)))
                }
                (Place::Settling, value) => {
                    if let Some(v) = value {
                        facts.push(Fact::Settled { t: e.t, value: v });
                    }
                    let doing = if value == Some(false) {
                        "settles its flight with no value: every waiter gets the same failure"
                    } else {
                        "settles its flight: every waiter gets the same outcome"
                    };
                    (doing, "the flight's settling line".to_string())
                }
                _ => (did(e.kind), format!("«{}»", place_label(right))),
            };
            let options = line_options(right, place)
                .into_iter()
                .map(|p| Choice {
                    key: place_key(p),
                    label: place_label(p),
                    feedback: if p == right {
                        if line.starts_with('«') {
                            format!("Right: at {} ms it {doing}: {line}.", ms(e.t))
                        } else {
                            format!("Right: at {} ms it {doing}.", ms(e.t))
                        }
                    } else {
                        format!(
                            "No: at {} ms it {doing}, which puts it on {line}, not «{}».",
                            ms(e.t),
                            place_label(p)
                        )
                    },
                    correct: p == right,
                    facts: facts.clone(),
                })
                .collect();
            asked.push(Asked {
                t: e.t,
                kind: Kind::Line,
                question: Kind::Line.question(),
                options,
                right: place_key(right),
                place,
                event: e.kind,
            });
        }
    }
    let note = log.cut.then(|| {
        "The run is too long to look ahead through: the walk-through stops early.".to_string()
    });
    Walk {
        thread: Some(thread),
        level,
        asked,
        note,
    }
}

impl Asked {
    /// What is said of a question the clock jumped past (the next event
    /// stepped to, the timeline dragged beyond it): the question and its
    /// answer as shown, never as the learner's.
    pub fn jumped(&self) -> String {
        let answer = self
            .options
            .iter()
            .find(|o| o.correct)
            .map(Choice::shown)
            .unwrap_or_default();
        format!("Jumped past “{}” {answer}", self.question)
    }
}

impl Walk {
    /// One line per question: time, question, right option.
    pub fn text(&self, s: &Scenario) -> String {
        let mut out = String::new();
        match self.thread {
            Some(g) => {
                let t = s.threads.max(1);
                out.push_str(&format!(
                    "walk-through ({}) of thread {} of office {} (thread {g})\n",
                    self.level.name(),
                    g % t + 1,
                    g / t + 1
                ));
            }
            None => out.push_str(&format!("walk-through ({})\n", self.level.name())),
        }
        for a in &self.asked {
            let label = a.options.iter().find(|o| o.correct).map_or("", |o| o.label);
            out.push_str(&format!(
                "{:>10} ms  {:<15} {}  ->  {} ({})\n",
                ms(a.t),
                a.kind.name(),
                a.question,
                a.right,
                label
            ));
        }
        if let Some(n) = &self.note {
            out.push_str(n);
            out.push('\n');
        }
        out.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_answer_is_not_said_to_be_the_learner_s() {
        let walk = walk(
            &stampede::scenario::preset("burst").unwrap(),
            1,
            Who::Holder,
            Level::Faded,
        );
        assert!(!walk.asked.is_empty());
        for a in &walk.asked {
            let right = a.options.iter().find(|o| o.correct).unwrap();
            let why = right
                .feedback
                .strip_prefix("Right: ")
                .expect(&right.feedback);
            assert_eq!(right.shown(), format!("The answer: {why}"));
            let jumped = a.jumped();
            assert_eq!(
                jumped,
                format!("Jumped past “{}” The answer: {why}", a.question)
            );
            assert!(!jumped.contains("Right:"), "{jumped}");
        }
    }

    #[test]
    fn which_line_next_offers_four_lines_the_right_one_among_them_never_where_it_is() {
        for &right in LINES.iter() {
            for &now in LINES.iter().filter(|p| **p != right) {
                let o = line_options(right, now);
                assert_eq!(o.len(), 4, "{right:?} from {now:?}: {o:?}");
                assert!(o.contains(&right) && !o.contains(&now), "{o:?}");
                // The release after a write is sound code too: never "wrong"
                // where the model settles first.
                if right == Place::Settling {
                    assert!(!o.contains(&Place::Releasing), "{o:?}");
                }
            }
        }
    }
}
