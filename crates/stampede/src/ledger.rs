//! The run's ledger: how every request ended, and why.
//!
//! Every request ends exactly once, in one [`End`], and the simulation
//! records the [`Cause`] at the moment it happens (the branch the read path
//! took, the fault window that failed the origin call, what the caller was
//! waiting on when its deadline passed), never inferred afterwards from the
//! counters. [`Ledger::total`] is the run's `requests`, and the outcome
//! counters of [`crate::Report`] are its column sums (a tested invariant).
//!
//! The words for each end and cause are the catalogue's; this module only
//! names them.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// How one request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum End {
    /// A value on its first read (from Redis or the instance's own copy).
    Hit,
    /// A value another request wrote, read after its first read missed (a
    /// loser's poll, or the re-check after winning).
    Written,
    /// A value from its own origin call.
    Computed,
    /// A value from the flight it joined (its leader's origin call).
    Shared,
    /// A stale value.
    Stale,
    /// An explicit fallback (degraded) answer.
    Degraded,
    /// An error.
    Error,
    /// Its own deadline passed first.
    Timeout,
    /// Turned away at the door: every thread busy, the accept queue full.
    TurnedAway,
    /// Not answered when the run stopped.
    Unanswered,
}

impl End {
    pub const ALL: [End; 10] = [
        End::Hit,
        End::Written,
        End::Computed,
        End::Shared,
        End::Stale,
        End::Degraded,
        End::Error,
        End::Timeout,
        End::TurnedAway,
        End::Unanswered,
    ];

    /// The caller got a value (fresh or stale).
    pub fn is_value(self) -> bool {
        matches!(
            self,
            End::Hit | End::Written | End::Computed | End::Shared | End::Stale
        )
    }

    /// A fresh value.
    pub fn is_fresh(self) -> bool {
        self.is_value() && self != End::Stale
    }

    /// The name the CLI's JSON uses.
    pub fn name(self) -> &'static str {
        match self {
            End::Hit => "hit",
            End::Written => "written",
            End::Computed => "computed",
            End::Shared => "shared",
            End::Stale => "stale",
            End::Degraded => "degraded",
            End::Error => "error",
            End::Timeout => "timeout",
            End::TurnedAway => "turned-away",
            End::Unanswered => "unanswered",
        }
    }
}

/// Why a request ended the way it did: what happened to it, recorded when
/// it happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Cause {
    /// Nothing went wrong: the read path did what it is for.
    Served,
    /// The origin answered with an error, by the scenario's own knobs (a
    /// failure rate, or the origin down from the start).
    OriginFailed,
    /// The origin answered with an error inside an origin fault window.
    OriginFault,
    /// The origin call ran past the origin timeout (hung or slow).
    OriginTimedOut,
    /// A Redis command failed or timed out (Redis down or hung, or the
    /// breaker open) and the read path failed closed or fell back.
    RedisFailed,
    /// The thread died (a crashed claim holder).
    Crashed,
    /// The admission queue shed the recompute: no permit came in time.
    Admission,
    /// A failure remembered in the flight map after its flight ended.
    Remembered,
    /// A negative-cache marker of an earlier failure.
    Marker,
    /// Another request held the claim, and the loser policy answered.
    ClaimHeld,
    /// Served stale on purpose while a refresh runs behind it.
    Revalidating,
    /// Every thread busy and the accept queue full.
    PoolFull,
    /// The deadline passed while the origin call it depended on (its own,
    /// or its flight leader's) was still running.
    WaitedOrigin,
    /// The deadline passed while it waited on a Redis reply, or polled a
    /// Redis that kept failing, or after Redis commands that failed or
    /// hung had taken half its deadline or more (its own, or its flight
    /// leader's).
    WaitedRedis,
    /// The deadline passed while it polled for another request's claim.
    WaitedClaim,
    /// The deadline passed while it polled for a claim whose holder had
    /// died (the claim outlives its holder until its TTL).
    WaitedDeadHolder,
    /// The deadline passed in the admission queue.
    WaitedAdmission,
    /// The deadline passed in the accept queue, before a thread took it.
    WaitedAccept,
    /// The deadline passed on a flight whose leader was itself waiting
    /// (for a permit, a claim or Redis) or had no work running.
    WaitedFlight,
    /// Still waiting when the run stopped.
    Pending,
}

impl Cause {
    pub const ALL: [Cause; 20] = [
        Cause::Served,
        Cause::OriginFailed,
        Cause::OriginFault,
        Cause::OriginTimedOut,
        Cause::RedisFailed,
        Cause::Crashed,
        Cause::Admission,
        Cause::Remembered,
        Cause::Marker,
        Cause::ClaimHeld,
        Cause::Revalidating,
        Cause::PoolFull,
        Cause::WaitedOrigin,
        Cause::WaitedRedis,
        Cause::WaitedClaim,
        Cause::WaitedDeadHolder,
        Cause::WaitedAdmission,
        Cause::WaitedAccept,
        Cause::WaitedFlight,
        Cause::Pending,
    ];

    /// The name the CLI's JSON uses.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Served => "served",
            Cause::OriginFailed => "origin-failed",
            Cause::OriginFault => "origin-fault",
            Cause::OriginTimedOut => "origin-timed-out",
            Cause::RedisFailed => "redis-failed",
            Cause::Crashed => "crashed",
            Cause::Admission => "admission",
            Cause::Remembered => "remembered",
            Cause::Marker => "marker",
            Cause::ClaimHeld => "claim-held",
            Cause::Revalidating => "revalidating",
            Cause::PoolFull => "pool-full",
            Cause::WaitedOrigin => "waited-origin",
            Cause::WaitedRedis => "waited-redis",
            Cause::WaitedClaim => "waited-claim",
            Cause::WaitedDeadHolder => "waited-dead-holder",
            Cause::WaitedAdmission => "waited-admission",
            Cause::WaitedAccept => "waited-accept",
            Cause::WaitedFlight => "waited-flight",
            Cause::Pending => "pending",
        }
    }

    /// A deadline ended the request while it waited on this.
    pub fn is_wait(self) -> bool {
        matches!(
            self,
            Cause::WaitedOrigin
                | Cause::WaitedRedis
                | Cause::WaitedClaim
                | Cause::WaitedDeadHolder
                | Cause::WaitedAdmission
                | Cause::WaitedAccept
                | Cause::WaitedFlight
        )
    }

    /// The cause lies with the origin.
    pub fn is_origin(self) -> bool {
        matches!(
            self,
            Cause::OriginFailed | Cause::OriginFault | Cause::OriginTimedOut | Cause::WaitedOrigin
        )
    }

    /// The cause lies with Redis.
    pub fn is_redis(self) -> bool {
        matches!(self, Cause::RedisFailed | Cause::WaitedRedis)
    }
}

const ENDS: usize = End::ALL.len();
const CAUSES: usize = Cause::ALL.len();

/// How many requests ended each way, for each cause.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    n: [[u64; CAUSES]; ENDS],
}

impl Ledger {
    pub fn record(&mut self, end: End, cause: Cause) {
        self.n[end as usize][cause as usize] += 1;
    }

    pub fn add(&mut self, end: End, cause: Cause, n: u64) {
        self.n[end as usize][cause as usize] += n;
    }

    pub fn get(&self, end: End, cause: Cause) -> u64 {
        self.n[end as usize][cause as usize]
    }

    /// Requests that ended this way, whatever the cause.
    pub fn ended(&self, end: End) -> u64 {
        self.n[end as usize].iter().sum()
    }

    /// Requests with this cause, whatever their end.
    pub fn caused(&self, cause: Cause) -> u64 {
        self.n.iter().map(|row| row[cause as usize]).sum()
    }

    /// Requests with this cause among the ends that match `keep`.
    pub fn caused_where(&self, cause: Cause, keep: impl Fn(End) -> bool) -> u64 {
        End::ALL
            .into_iter()
            .filter(|e| keep(*e))
            .map(|e| self.get(e, cause))
            .sum()
    }

    /// Every request of the run.
    pub fn total(&self) -> u64 {
        self.n.iter().flatten().sum()
    }

    /// Requests answered with a value, fresh or stale.
    pub fn values(&self) -> u64 {
        End::ALL
            .into_iter()
            .filter(|e| e.is_value())
            .map(|e| self.ended(e))
            .sum()
    }

    /// Every (end, cause, count) with a count, ends in order, then causes.
    pub fn rows(&self) -> impl Iterator<Item = (End, Cause, u64)> + '_ {
        End::ALL.into_iter().flat_map(move |e| {
            Cause::ALL
                .into_iter()
                .map(move |c| (e, c, self.get(e, c)))
                .filter(|(_, _, n)| *n > 0)
        })
    }

    /// The cause behind most of the requests that ended `end`, with its
    /// count (the first of equals); `None` when none did.
    pub fn main_cause(&self, end: End) -> Option<(Cause, u64)> {
        let mut best: Option<(Cause, u64)> = None;
        for c in Cause::ALL {
            let n = self.get(end, c);
            if n > 0 && best.is_none_or(|(_, b)| n > b) {
                best = Some((c, n));
            }
        }
        best
    }

    /// The end that is not a fresh value with the most requests (stale
    /// served on purpose to revalidate counts as a value), and its count.
    pub fn largest_not_value(&self) -> Option<(End, u64)> {
        let mut best: Option<(End, u64)> = None;
        for e in End::ALL.into_iter().filter(|e| !e.is_value()) {
            let n = self.ended(e);
            if n > 0 && best.is_none_or(|(_, b)| n > b) {
                best = Some((e, n));
            }
        }
        best
    }
}

impl std::fmt::Debug for Ledger {
    /// `{computed/served: 1, shared/served: 39}`: the non-zero cells.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut m = f.debug_map();
        for (e, c, n) in self.rows() {
            m.key(&format_args!("{}/{}", e.name(), c.name())).value(&n);
        }
        m.finish()
    }
}

impl Serialize for Ledger {
    /// `{"computed/served": 1, "shared/served": 39, ...}`: only the
    /// non-zero cells, ends in order, then causes.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (e, c, n) in self.rows() {
            m.serialize_entry(&format!("{}/{}", e.name(), c.name()), &n)?;
        }
        m.end()
    }
}

/// What one fault of the scenario's list did, counted as it happened. A
/// window that opened after the run's last event did nothing: every count
/// is 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FaultActs {
    /// Origin calls that started in the window and failed.
    pub calls_failed: u64,
    /// Origin calls that started in the window and were slowed.
    pub calls_slowed: u64,
    /// Origin calls that started in the window and hung.
    pub calls_hung: u64,
    /// Redis commands that failed or hung in the window.
    pub redis_failed: u64,
    /// Claim holders it killed.
    pub holders_killed: u64,
    /// Keys its deploy re-warmed.
    pub keys_rewarmed: u64,
}

impl FaultActs {
    /// Everything it did, in one number (the report's `fault_bites` is
    /// the sum over the windows).
    pub fn total(&self) -> u64 {
        self.calls_failed
            + self.calls_slowed
            + self.calls_hung
            + self.redis_failed
            + self.holders_killed
            + self.keys_rewarmed
    }

    pub fn did_anything(&self) -> bool {
        self.total() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_end_and_cause_has_its_own_slot() {
        for (i, e) in End::ALL.into_iter().enumerate() {
            assert_eq!(e as usize, i);
        }
        for (i, c) in Cause::ALL.into_iter().enumerate() {
            assert_eq!(c as usize, i);
        }
        let mut l = Ledger::default();
        l.record(End::Shared, Cause::Served);
        l.add(End::Timeout, Cause::WaitedOrigin, 3);
        assert_eq!(l.total(), 4);
        assert_eq!(l.values(), 1);
        assert_eq!(l.largest_not_value(), Some((End::Timeout, 3)));
        assert_eq!(l.main_cause(End::Timeout), Some((Cause::WaitedOrigin, 3)));
        assert_eq!(l.rows().count(), 2);
    }
}
