//! The simulation's log lines: what happened, to whom, when. Below both the
//! read path (which reads a thread's place from them) and the simulation
//! (which writes them), so neither imports the other for them.

use serde::Serialize;

use crate::claim::Micros;

/// What happened, for the page's pulses and counts and for the log hash.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    Arrive = 0,
    CacheGet = 1,
    Lead = 2,
    Follow = 3,
    Claim = 4,
    ClaimWon = 5,
    ClaimLost = 6,
    RecomputeStart = 7,
    RecomputeEnd = 8,
    CacheSet = 9,
    Release = 10,
    Settle = 11,
    Respond = 12,
    Crash = 13,
    DeadlinePassed = 14,
    Remembered = 15,
    ClaimError = 16,
    Poll = 17,
    /// The origin call ran past its timeout; the work counts it as failed.
    OriginTimeout = 18,
    /// No admission permit came within the queue budget.
    Shed = 19,
    /// A leader left before its work started; a follower took the flight.
    Handover = 20,
    /// A caller whose attempt failed or timed out will try again.
    Retry = 21,
}

/// One log line: at `t` (µs), `thread` (global index) did `kind` on `key`.
/// `detail` carries the ending for `Respond` and 1 for a failed recompute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Event {
    pub t: Micros,
    pub thread: u32,
    pub kind: EventKind,
    pub key: u32,
    pub detail: u8,
}
