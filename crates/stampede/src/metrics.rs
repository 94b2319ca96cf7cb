//! Counters and latency histograms shared by the page, the CLI and the tests.
//! The field names of [`Report`] are the public vocabulary: the CLI's JSON
//! keys and the page's `data-metric` attributes are exactly these.

use serde::Serialize;

/// A log-linear latency histogram over microseconds: exact below 64 µs,
/// then 32 sub-buckets per power of two (about 3% relative error).
#[derive(Clone, Debug)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    max: u64,
}

const SUB: u32 = 5; // 2^5 = 32 sub-buckets per octave
const LINEAR: u64 = 64;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: vec![0; 64 + 64 * (1 << SUB)],
            count: 0,
            max: 0,
        }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= 6
    let shift = msb - SUB;
    let sub = ((v >> shift) & ((1 << SUB) - 1)) as usize;
    LINEAR as usize + ((msb - 6) as usize) * (1 << SUB) + sub
}

/// The largest value that falls into bucket `b`.
fn bucket_high(b: usize) -> u64 {
    if b < LINEAR as usize {
        return b as u64;
    }
    let rel = b - LINEAR as usize;
    let msb = (rel >> SUB) as u32 + 6;
    let sub = (rel & ((1 << SUB) - 1)) as u64;
    let shift = msb - SUB;
    let low = (1u64 << msb) | (sub << shift);
    low + (1u64 << shift) - 1
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        self.buckets[bucket_of(v)] += 1;
        self.count += 1;
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value at quantile `q` in [0, 1], rounded up to its bucket's top
    /// (never above the true maximum). Zero when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_high(b).min(self.max);
            }
        }
        self.max
    }
}

/// How one request ended. Every request ends exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// A fresh value from the cache (first read or after a bounded wait).
    Hit,
    /// A stale value, served on purpose.
    Stale,
    /// This request recomputed the value itself.
    Computed,
    /// The value computed by this instance's flight leader.
    Shared,
    /// An explicit degraded answer.
    Degraded,
    /// A failure: origin error, shared failure, negative-cache hit, crash.
    Error,
    /// The request's own deadline passed.
    Timeout,
}

/// Declares `Report` and, from the same list, [`Metric`] (one variant per
/// counter) and `Report::fields`: every counter's name and value as text,
/// in declaration order, without a JSON library (the page calls it every
/// frame, and `serde_json` would cost the wasm tens of kilobytes). Each
/// counter is written once, as `field (Variant): type`.
macro_rules! report {
    (
        $( $(#[$doc:meta])* $name:ident ($variant:ident) : $ty:ty, )*
        ;
        $( $(#[$xdoc:meta])* $xname:ident : $xty:ty, )*
    ) => {
        /// Everything the simulation counts. Field names are the CLI's JSON
        /// keys. The counters come first (what [`Report::fields`] lists);
        /// after them, the ledger of how each request ended and what each
        /// fault did, which are tables rather than counters.
        #[derive(Clone, Debug, Default, PartialEq, Serialize)]
        pub struct Report {
            $( $(#[$doc])* pub $name: $ty, )*
            $( $(#[$xdoc])* pub $xname: $xty, )*
        }

        /// One counter of [`Report`], named by its field. What code looks a
        /// counter up by; its [`Metric::name`] (the field's name) is for
        /// share links, JSON keys and `data-metric`, never a lookup key.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Metric {
            $( $(#[$doc])* $variant, )*
        }

        impl Metric {
            /// Every counter, in [`Report`]'s declaration order.
            pub const ALL: &'static [Metric] = &[ $( Metric::$variant, )* ];

            /// The field's name: `early_refreshes` for
            /// [`Metric::EarlyRefreshes`].
            pub const fn name(self) -> &'static str {
                match self {
                    $( Metric::$variant => stringify!($name), )*
                }
            }

            /// A time in milliseconds (`p99_ms`), where every other counter
            /// is a count.
            pub const fn is_time(self) -> bool {
                let n = self.name().as_bytes();
                let k = n.len();
                k > 3 && n[k - 3] == b'_' && n[k - 2] == b'm' && n[k - 1] == b's'
            }

            /// The counter whose field is called `name`; `None` for any
            /// other text.
            pub fn from_name(name: &str) -> Option<Metric> {
                // A search of `ALL`, not a `match` on the text: one loop
                // in the wasm instead of a comparison per counter.
                Metric::ALL.iter().copied().find(|m| m.name() == name)
            }
        }

        impl Report {
            /// (name, value as text) for every counter, in declaration order;
            /// what the page and the CLI table iterate over. Numbers read as
            /// the CLI's JSON writes them (`8000`, `206.178`, `0.0`).
            pub fn fields(&self) -> Vec<(String, String)> {
                // One loop over the metrics, not a push per counter: the
                // page calls this every frame, and each unrolled push was
                // code of its own in the wasm.
                Metric::ALL
                    .iter()
                    .map(|&m| (m.name().to_string(), self.text(m)))
                    .collect()
            }

            /// Counter `m`'s value as a number (a count, or milliseconds
            /// for the latencies).
            pub fn get(&self, m: Metric) -> f64 {
                match m {
                    $( Metric::$variant => Text::number(&self.$name), )*
                }
            }

            /// Counter `m`'s value as text, the way [`Report::fields`] and
            /// the CLI's JSON write it.
            pub fn text(&self, m: Metric) -> String {
                match m {
                    $( Metric::$variant => Text::text(&self.$name), )*
                }
            }
        }
    };
}

/// A counter is written by its field's name (`claim_attempts`), as the
/// CLI's keys are.
impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A counter is written in JSON by its field's name, as the CLI's keys are.
impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A counter's value as text, the way JSON writes it, and as a number.
trait Text {
    fn text(&self) -> String;
    fn number(&self) -> f64;
}

impl Text for u64 {
    fn text(&self) -> String {
        self.to_string()
    }
    fn number(&self) -> f64 {
        *self as f64
    }
}

impl Text for f64 {
    fn text(&self) -> String {
        crate::decimal::format_json(*self)
    }
    fn number(&self) -> f64 {
        *self
    }
}

/// `v` with one decimal, halves rounded away from zero ("206.3" for
/// 206.25, as JavaScript's `toFixed(1)` writes it). Written by hand so that
/// the page does not link the standard library's exact float formatting
/// (several kilobytes of wasm) for one decimal.
pub fn one_decimal(v: f64) -> String {
    if !v.is_finite() {
        return "0.0".to_string();
    }
    let tenths = (v * 10.0).round();
    let sign = if tenths < 0.0 { "-" } else { "" };
    // Saturates for absurd values; a clock or a percentage never gets there.
    let t = tenths.abs() as u64;
    format!("{sign}{}.{}", t / 10, t % 10)
}

report! {
    requests (Requests): u64,
    hits (Hits): u64,
    stale_served (StaleServed): u64,
    computed (Computed): u64,
    shared (Shared): u64,
    degraded (Degraded): u64,
    errors (Errors): u64,
    timeouts (Timeouts): u64,
    /// Requests that had not ended when the run stopped (threads pinned).
    pinned (Pinned): u64,
    recomputes (Recomputes): u64,
    /// Requests whose first read found no fresh value (missing or expired).
    misses (Misses): u64,
    /// Recomputes started early (XFetch) by a reader of a still fresh value.
    early_refreshes (EarlyRefreshes): u64,
    /// Recomputes that started while another of the same key was running.
    overlapping_recomputes (OverlappingRecomputes): u64,
    origin_failures (OriginFailures): u64,
    /// Origin calls that ran past the origin timeout (the call itself went on).
    origin_timeouts (OriginTimeouts): u64,
    origin_peak_concurrency (OriginPeakConcurrency): u64,
    claim_attempts (ClaimAttempts): u64,
    claim_wins (ClaimWins): u64,
    releases (Releases): u64,
    /// Releases refused because the caller's token no longer held the claim
    /// (the two kinds below together).
    releases_refused (ReleasesRefused): u64,
    /// Refused because the claim had already expired and nobody held it: a
    /// plain DEL would have deleted nothing.
    releases_refused_expired (ReleasesRefusedExpired): u64,
    /// Refused because another caller held the claim by then: a plain DEL
    /// would have freed that caller's claim for a third.
    releases_refused_taken (ReleasesRefusedTaken): u64,
    /// Releases by a plain DEL (the plain-del pitfall) that deleted a
    /// claim another caller held: its key was free for a third.
    claims_deleted_of_others (ClaimsDeletedOfOthers): u64,
    /// Releases sent, unawaited, for claims whose reply timed out (they may
    /// have landed, or land when a paused Redis resumes).
    unclaims (Unclaims): u64,
    /// Claims whose client had given up on them (sent to a Redis that hung)
    /// that landed when Redis resumed: their keys were locked.
    late_claims (LateClaims): u64,
    /// Late claims the release by their own token cleared.
    late_claims_released (LateClaimsReleased): u64,
    /// Late claims still holding their key once Redis had run the commands
    /// it held (no release by token came after them): each holds its key
    /// until the claim TTL, or until a release sent later clears it.
    late_claims_held_at_resume (LateClaimsHeldAtResume): u64,
    /// Commands sent to Redis and answered, each one network round trip.
    /// A command sent while Redis is down is not one: it is a Redis error
    /// (at once, or when the client gives up on a Redis that hangs).
    redis_round_trips (RedisRoundTrips): u64,
    redis_errors (RedisErrors): u64,
    /// Commands an instance did not send: its breaker was open after a
    /// Redis error or timeout, so the error applied at once.
    redis_skipped (RedisSkipped): u64,
    /// The most commands waiting at Redis at once (0 with unlimited
    /// throughput).
    redis_queue_peak (RedisQueuePeak): u64,
    /// Reads answered from the instance's own copy of the value, with no
    /// round trip.
    local_hits (LocalHits): u64,
    /// Values written to the cache.
    values_written (ValuesWritten): u64,
    /// Writes that put an older value over a newer one (a late writer).
    stale_overwrites (StaleOverwrites): u64,
    /// Fenced writes the cache refused because a newer fence had written.
    writes_refused (WritesRefused): u64,
    negative_hits (NegativeHits): u64,
    /// Failures handed out again from the flight map after their flight ended.
    remembered_failures (RememberedFailures): u64,
    corrupted (Corrupted): u64,
    crashed (Crashed): u64,
    /// Times a fault of the scenario's list acted: a Redis command failed
    /// or hung in its window, an origin call started in its window, a
    /// holder it killed, a key its deploy re-warmed.
    fault_bites (FaultBites): u64,
    admission_waits (AdmissionWaits): u64,
    /// Recomputes shed because no admission permit came within the queue budget.
    admission_shed (AdmissionShed): u64,
    /// Attempts a caller made again after a failure or a timeout.
    retries (Retries): u64,
    /// Origin calls made by a retry (a retry that found the value written,
    /// or joined a flight already running, made none).
    retry_recomputes (RetryRecomputes): u64,
    /// Open-loop arrivals turned away: every thread of their instance was
    /// busy and its accept queue full.
    rejected (Rejected): u64,
    /// Leaders that left before their work started, their flight taken over
    /// by the oldest follower.
    handovers (Handovers): u64,
    p50_ms (P50Ms): f64,
    p99_ms (P99Ms): f64,
    /// A Redis command's time to its answer or its error, queue included
    /// (p99): a round trip when Redis is up, the client's timeout on a hang.
    redis_p99_ms (RedisP99Ms): f64,
    max_ms (MaxMs): f64,
    max_wait_ms (MaxWaitMs): f64,
    /// Virtual time of the last event that changed anything.
    elapsed_ms (ElapsedMs): f64,
    events (Events): u64,
    ;
    /// How every request ended, and why ([`crate::ledger`]): its column
    /// sums are the outcome counters above (a tested invariant).
    ledger: crate::ledger::Ledger,
    /// What each fault of the scenario's list did, in the list's order.
    fault_acts: Vec<crate::ledger::FaultActs>,
}

impl Report {
    pub fn ended(&self) -> u64 {
        self.hits
            + self.stale_served
            + self.computed
            + self.shared
            + self.degraded
            + self.errors
            + self.timeouts
    }
}

/// What makes one run better than another, in this order. Written once,
/// here: the arithmetic's best row, the A/B view's verdict and the CLI
/// all follow it, and the page shows these words beside them.
pub const OBJECTIVE: &str = "Better means, in this order: a larger share of callers answered with a value within their deadline, then a smaller share failed (errors, timeouts, callers turned away, threads left hanging), then fewer origin calls per request, then a lower p99, then fewer Redis commands per request.";

/// What one run's requests got, beside its recompute count. Designs are
/// compared on outcomes first, work saved second ([`OBJECTIVE`]): a run
/// whose callers went unanswered is never the best, however few its
/// recomputes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub recomputes: u64,
    /// Answered with a value: a hit, computed, shared or stale.
    pub answered: u64,
    pub degraded: u64,
    /// Errors, timeouts and callers turned away at the door, and once the
    /// run is over, threads still pinned.
    pub failed: u64,
    /// Requests still waiting for their answer (the run goes on).
    pub waiting: u64,
    /// The p99 time to answer, in microseconds (rounded to the report's
    /// millisecond thousandths).
    pub p99_us: u64,
    /// Commands sent to Redis (one that failed is still one command).
    pub redis: u64,
}

/// Where a run stands on [`OBJECTIVE`]: larger is better.
type Rank = (u64, [std::cmp::Reverse<u64>; 4]);

impl Score {
    /// `over`: the run has ended, so a request still unanswered is pinned
    /// for good (a failure), not on its way.
    pub fn of(r: &Report, over: bool) -> Score {
        let (failed, waiting) = if over {
            (r.errors + r.timeouts + r.rejected + r.pinned, 0)
        } else {
            (r.errors + r.timeouts + r.rejected, r.pinned)
        };
        Score {
            recomputes: r.recomputes,
            answered: r.hits + r.computed + r.shared + r.stale_served,
            degraded: r.degraded,
            failed,
            waiting,
            p99_us: (r.p99_ms * 1000.0).round().max(0.0) as u64,
            // Answered or failed, each command sent once (a round trip is
            // one answered, an error one that failed).
            redis: r.redis_round_trips + r.redis_errors,
        }
    }

    /// More than 1% of the requests so far failed.
    pub fn failing(&self) -> bool {
        let all = self.answered + self.degraded + self.failed;
        all > 0 && self.failed * 100 > all
    }

    /// Every request scored: answered, degraded, failed or still waiting
    /// (the report's `requests`).
    pub fn total(&self) -> u64 {
        self.answered + self.degraded + self.failed + self.waiting
    }

    /// `n` of the requests, in parts per million (shares, so that steady
    /// runs that served different numbers of requests compare fairly).
    fn ppm(&self, n: u64) -> u64 {
        n.saturating_mul(1_000_000) / self.total().max(1)
    }

    fn rank(&self) -> Rank {
        use std::cmp::Reverse;
        (
            self.ppm(self.answered),
            [
                Reverse(self.ppm(self.failed)),
                Reverse(self.ppm(self.recomputes)),
                Reverse(self.p99_us),
                Reverse(self.ppm(self.redis)),
            ],
        )
    }

    /// The best of the scored runs by [`OBJECTIVE`] (the first of equals).
    /// `None` when no run answered anyone with a value.
    pub fn best(scores: &[Option<Score>]) -> Option<usize> {
        let mut best: Option<(usize, Rank)> = None;
        for (i, s) in scores.iter().enumerate() {
            let Some(s) = s.filter(|s| s.answered > 0) else {
                continue;
            };
            if best.is_none_or(|(_, b)| s.rank() > b) {
                best = Some((i, s.rank()));
            }
        }
        best.map(|(i, _)| i)
    }

    /// The first part of [`OBJECTIVE`] where this run loses to `best`;
    /// `None` when it is not behind.
    fn lags(&self, best: &Score) -> Option<Part> {
        if self.rank() >= best.rank() {
            None
        } else if self.ppm(self.answered) != best.ppm(best.answered) {
            Some(Part::Answered)
        } else if self.ppm(self.failed) != best.ppm(best.failed) {
            Some(Part::Failed)
        } else if self.ppm(self.recomputes) != best.ppm(best.recomputes) {
            Some(Part::OriginCalls)
        } else if self.p99_us != best.p99_us {
            Some(Part::P99)
        } else {
            Some(Part::Redis)
        }
    }

    /// Why this run is behind `best` on [`OBJECTIVE`], in a few words: the
    /// first part of the objective where it loses, with both runs' numbers
    /// (the A/B verdict's reason). `None` when it is not behind.
    pub fn behind(&self, best: &Score) -> Option<String> {
        Some(match self.lags(best)? {
            Part::Answered => format!(
                "{} of {} answered with a value against {} of {}",
                self.answered,
                self.total(),
                best.answered,
                best.total()
            ),
            Part::Failed => format!(
                "{} of {} failed against {} of {}",
                self.failed,
                self.total(),
                best.failed,
                best.total()
            ),
            Part::OriginCalls => self.pair(
                best,
                (self.recomputes, best.recomputes),
                ("origin call", "origin calls"),
            ),
            Part::P99 => format!("a p99 of {} ms against {} ms", p99(self), p99(best)),
            Part::Redis => self.pair(
                best,
                (self.redis, best.redis),
                ("Redis command", "Redis commands"),
            ),
        })
    }

    /// A count of this run's against `best`'s: bare when both runs served
    /// as many requests, else each with its requests (the objective
    /// compares them per request).
    fn pair(&self, best: &Score, (mine, theirs): (u64, u64), (one, many): (&str, &str)) -> String {
        if self.total() == best.total() {
            format!("{} against {theirs}", counted(mine, one, many))
        } else {
            format!(
                "{} for {} against {theirs} for {}",
                counted(mine, one, many),
                counted(self.total(), "request", "requests"),
                best.total()
            )
        }
    }

    /// The same, said beside this run's own outcome and recompute count
    /// (the arithmetic's row, which already says how many were answered,
    /// degraded and failed, and how many origin calls it made): only what
    /// the row does not say, the best run's number. `None` when it is not
    /// behind.
    pub fn behind_the_best(&self, best: &Score) -> Option<String> {
        Some(match self.lags(best)? {
            Part::Answered => format!(
                "behind the best, which answered {} of {} with a value",
                best.answered,
                best.total()
            ),
            Part::Failed => format!(
                "behind the best, where {} of {} failed",
                best.failed,
                best.total()
            ),
            Part::OriginCalls => format!(
                "behind the best, which made {}{}",
                counted(best.recomputes, "origin call", "origin calls"),
                self.its_requests(best)
            ),
            Part::P99 => format!(
                "a p99 of {} ms, behind the best's {} ms",
                p99(self),
                p99(best)
            ),
            Part::Redis => format!(
                "{}, behind the best's {}{}",
                counted(self.redis, "Redis command", "Redis commands"),
                best.redis,
                self.its_requests(best)
            ),
        })
    }

    /// ", for its N requests" when `best` served a different number of
    /// requests than this run (the count is compared per request).
    fn its_requests(&self, best: &Score) -> String {
        if self.total() == best.total() {
            String::new()
        } else {
            format!(" for its {}", counted(best.total(), "request", "requests"))
        }
    }
}

/// The parts of [`OBJECTIVE`], in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Answered,
    Failed,
    OriginCalls,
    P99,
    Redis,
}

fn p99(s: &Score) -> String {
    crate::decimal::format_json(s.p99_us as f64 / 1000.0)
}

fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Which of two runs is better by [`OBJECTIVE`], and the sentence that
/// says so: every number in it is a counter of one of the runs. `ended`:
/// both runs are over; before that the verdict is "so far".
pub fn verdict(a: &Report, b: &Report, ended: bool) -> (Option<char>, String) {
    let (sa, sb) = (Score::of(a, ended), Score::of(b, ended));
    let so_far = if ended { "" } else { " so far" };
    let side = match sa.rank().cmp(&sb.rank()) {
        std::cmp::Ordering::Greater => Some('a'),
        std::cmp::Ordering::Less => Some('b'),
        std::cmp::Ordering::Equal => None,
    };
    let Some(side) = side else {
        return (
            None,
            format!(
                "Neither side is better{so_far}: the same share answered with a value and failed, with {}, the same p99 and {}.",
                counted(sa.recomputes, "origin call", "origin calls"),
                counted(sa.redis, "Redis command", "Redis commands")
            ),
        );
    };
    let (win, lose) = if side == 'a' { (sa, sb) } else { (sb, sa) };
    let why = lose.behind(&win).unwrap_or_default();
    let upper = side.to_ascii_uppercase();
    let other = if side == 'a' { 'B' } else { 'A' };
    (
        Some(side),
        format!("{upper} is better{so_far}: {other} had {why}."),
    )
}

/// [`verdict`] for a comparison that asks about one counter (`subject`):
/// where that counter favours the side the objective does not pick (or a
/// side where the objective calls it even), the sentence goes on to say so,
/// with both runs' values, and that the objective ranks outcomes before it.
/// So a reader who watches the question's counter is never told the
/// opposite without the reason.
pub fn verdict_on(a: &Report, b: &Report, ended: bool, subject: Metric) -> (Option<char>, String) {
    let (side, mut sentence) = verdict(a, b, ended);
    let (Some(way), Some(va), Some(vb)) = (subject.better(), value(a, subject), value(b, subject))
    else {
        return (side, sentence);
    };
    let favours = match (way, va.partial_cmp(&vb)) {
        (_, None | Some(std::cmp::Ordering::Equal)) => None,
        (Better::Lower, Some(std::cmp::Ordering::Less))
        | (Better::Higher, Some(std::cmp::Ordering::Greater)) => Some('a'),
        _ => Some('b'),
    };
    let Some(f) = favours.filter(|f| Some(*f) != side) else {
        return (side, sentence);
    };
    let so_far = if ended { "" } else { " so far" };
    // As the counters show them, a time with its unit.
    let unit = if subject.name().ends_with("_ms") {
        " ms"
    } else {
        ""
    };
    let shown = |r: &Report| format!("{}{unit}", r.text(subject));
    let (win, lose) = if f == 'a' { (a, b) } else { (b, a) };
    sentence.push_str(&format!(
        " On {}, the counter this comparison asks about, {} is better{so_far} ({} against {}), but the objective ranks answered callers, failures and origin calls before it.",
        label(subject),
        f.to_ascii_uppercase(),
        shown(win),
        shown(lose),
    ));
    (side, sentence)
}

/// Which way a counter is better, for side-by-side comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

impl Metric {
    /// Which way this counter is better, if either: fewer recomputes,
    /// errors and round trips, faster answers, more local-copy hits. Counts
    /// that only describe the run (requests, events, stale answers, shared
    /// results) have no better side. Every counter is named here, so a new
    /// one does not compile until it is given a side or none.
    ///
    /// Not `hits`: a claim's losers polling until the value appears are
    /// hits too, so more of them is not better (`claim-order`: 7999 against
    /// 39). Nor the trade-offs, where fewer can be worse: requests shed by
    /// admission or answered degraded (fewer may mean a swamped origin or
    /// callers timed out instead), admission waits, arrivals turned away (a
    /// deeper queue turns fewer away and times more out), and retries (none
    /// made may mean failures handed straight to callers). The objective
    /// judges those runs as a whole.
    pub const fn better(self) -> Option<Better> {
        use Metric::*;
        match self {
            LocalHits => Some(Better::Higher),
            Recomputes
            | StaleOverwrites
            | Misses
            | OverlappingRecomputes
            | OriginFailures
            | OriginTimeouts
            | OriginPeakConcurrency
            | ClaimAttempts
            | ReleasesRefused
            | ReleasesRefusedExpired
            | ReleasesRefusedTaken
            | ClaimsDeletedOfOthers
            | RedisRoundTrips
            | RedisErrors
            | RedisQueuePeak
            | RedisP99Ms
            | RememberedFailures
            | Corrupted
            | Crashed
            | Handovers
            | RetryRecomputes
            | Errors
            | Timeouts
            | Pinned
            | P50Ms
            | P99Ms
            | MaxMs
            | MaxWaitMs => Some(Better::Lower),
            Requests
            | Hits
            | StaleServed
            | Computed
            | Shared
            | Degraded
            | EarlyRefreshes
            | ClaimWins
            | Releases
            | Unclaims
            | LateClaims
            | LateClaimsReleased
            | LateClaimsHeldAtResume
            | RedisSkipped
            | ValuesWritten
            | WritesRefused
            | NegativeHits
            | FaultBites
            | AdmissionWaits
            | AdmissionShed
            | Retries
            | Rejected
            | ElapsedMs
            | Events => None,
        }
    }
}

/// One counter that differs between two runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    pub metric: Metric,
    pub a: f64,
    pub b: f64,
    /// `b / a` (`None` when `a` is zero).
    pub ratio: Option<f64>,
    /// The better side, `'a'` or `'b'`, where the counter has a better way.
    pub better: Option<char>,
}

/// The counters on which `b` differs from `a`, in `Report` order.
pub fn differences(a: &Report, b: &Report) -> Vec<Difference> {
    Metric::ALL
        .iter()
        .filter(|m| !matches!(m, Metric::Events | Metric::ElapsedMs))
        .filter_map(|&m| {
            // Read back from the text, as the JSON has it (six places).
            let va = crate::decimal::parse(&a.text(m))?;
            let vb = crate::decimal::parse(&b.text(m))?;
            if va == vb {
                return None;
            }
            let better = m.better().map(|w| match (w, vb < va) {
                (Better::Lower, true) | (Better::Higher, false) => 'b',
                _ => 'a',
            });
            Some(Difference {
                ratio: (va != 0.0).then(|| vb / va),
                metric: m,
                a: va,
                b: vb,
                better,
            })
        })
        .collect()
}

/// A counter's name in a sentence: `claim attempts`, `p99`.
pub fn label(m: Metric) -> String {
    let name = m.name();
    name.strip_suffix("_ms").unwrap_or(name).replace('_', " ")
}

/// Counter `m` of `r`, read back from its text as the JSON has it (six
/// places); `None` only for a value that is no number.
pub fn value(r: &Report, m: Metric) -> Option<f64> {
    crate::decimal::parse(&r.text(m))
}

pub(crate) fn ms(us: u64) -> f64 {
    // Rounded to 0.001 ms so JSON stays short and identical across targets.
    (us as f64) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The hand-rolled field list says exactly what the JSON says, in the
    /// struct's own order.
    #[test]
    fn fields_match_the_json() {
        let r = Report {
            requests: 1000,
            misses: 940,
            p50_ms: 0.125,
            p99_ms: 206.178,
            max_ms: 1000.0,
            ..Report::default()
        };
        let json = serde_json::to_value(&r).unwrap();
        let fields = r.fields();
        // The JSON's keys are the counters, then the two tables.
        assert_eq!(fields.len() + 2, json.as_object().unwrap().len());
        assert!(json["ledger"].is_object() && json["fault_acts"].is_array());
        for (name, text) in &fields {
            assert_eq!(json[name].to_string(), *text, "{name}");
        }
        assert_eq!(fields[0].0, "requests");
        assert_eq!(fields.last().unwrap().0, "events");
        assert_eq!(Text::text(&1000.0f64), "1000.0");
        assert_eq!(one_decimal(206.25), "206.3");
        assert_eq!(one_decimal(0.04), "0.0");
        assert_eq!(one_decimal(-1.25), "-1.3");
        assert_eq!(one_decimal(12.0), "12.0");
        assert_eq!(one_decimal(f64::NAN), "0.0");
        assert_eq!(Text::text(&206.178f64), "206.178");
    }

    /// `Metric::ALL` is every counter of the JSON (its keys but the two
    /// tables), once each, in `fields`' order; every name round-trips, each
    /// variant is its field's name in CamelCase, and other text is no
    /// metric.
    #[test]
    fn metrics_are_the_counters() {
        let json = serde_json::to_value(Report::default()).unwrap();
        let keys: Vec<&String> = json
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "ledger" && *k != "fault_acts")
            .collect();
        assert_eq!(Metric::ALL.len(), keys.len());
        let mut names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
        for k in &keys {
            assert!(names.contains(&k.as_str()), "{k} has no Metric");
        }
        for (m, (name, _)) in Metric::ALL.iter().zip(Report::default().fields()) {
            assert_eq!(m.name(), name);
            assert_eq!(Metric::from_name(&name), Some(*m));
            let camel: String = name
                .split('_')
                .map(|w| w[..1].to_uppercase() + &w[1..])
                .collect();
            assert_eq!(format!("{m:?}"), camel);
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Metric::ALL.len());
        for other in ["", "ledger", "fault_acts", "Requests", "requests ", "p99"] {
            assert_eq!(Metric::from_name(other), None, "{other:?}");
        }
    }

    /// The table is the two lists it replaced (28 lower, 1 higher, the
    /// rest neither).
    #[test]
    fn a_counter_is_better_the_way_the_lists_said() {
        let lower = [
            Metric::Recomputes,
            Metric::StaleOverwrites,
            Metric::Misses,
            Metric::OverlappingRecomputes,
            Metric::OriginFailures,
            Metric::OriginTimeouts,
            Metric::OriginPeakConcurrency,
            Metric::ClaimAttempts,
            Metric::ReleasesRefused,
            Metric::ReleasesRefusedExpired,
            Metric::ReleasesRefusedTaken,
            Metric::ClaimsDeletedOfOthers,
            Metric::RedisRoundTrips,
            Metric::RedisErrors,
            Metric::RedisQueuePeak,
            Metric::RedisP99Ms,
            Metric::RememberedFailures,
            Metric::Corrupted,
            Metric::Crashed,
            Metric::Handovers,
            Metric::RetryRecomputes,
            Metric::Errors,
            Metric::Timeouts,
            Metric::Pinned,
            Metric::P50Ms,
            Metric::P99Ms,
            Metric::MaxMs,
            Metric::MaxWaitMs,
        ];
        for m in Metric::ALL {
            let want = if *m == Metric::LocalHits {
                Some(Better::Higher)
            } else if lower.contains(m) {
                Some(Better::Lower)
            } else {
                None
            };
            assert_eq!(m.better(), want, "{m:?}");
        }
    }

    proptest! {
        #[test]
        fn buckets_contain_their_values(v in 0u64..u64::MAX / 4) {
            let b = bucket_of(v);
            prop_assert!(bucket_high(b) >= v);
            if b > 0 { prop_assert!(bucket_high(b - 1) < v); }
            // relative error bound
            prop_assert!((bucket_high(b) - v) as f64 <= (v as f64) / 32.0 + 1.0);
        }

        #[test]
        fn quantiles_are_ordered(vals in proptest::collection::vec(0u64..10_000_000, 1..200)) {
            let mut h = Histogram::default();
            for v in &vals { h.record(*v); }
            let max = *vals.iter().max().unwrap();
            prop_assert_eq!(h.max(), max);
            prop_assert!(h.quantile(0.5) <= h.quantile(0.99));
            prop_assert!(h.quantile(0.99) <= max);
            prop_assert_eq!(h.quantile(1.0), max);
        }
    }
}
