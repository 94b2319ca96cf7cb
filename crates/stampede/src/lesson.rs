//! What proves the running scenario's lesson: the counter to watch and the
//! words about it.

use crate::scenario::{Scenario, PRESETS};

/// What proves the running scenario's lesson: a counter and a line on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub metric: &'static str,
    pub note: &'static str,
    /// The lesson is damage: the counter must be above zero to prove it.
    pub damage: bool,
}

const DAMAGE: [&str; 8] = [
    "corrupted",
    "pinned",
    "remembered_failures",
    "redis_errors",
    "overlapping_recomputes",
    "releases_refused",
    "timeouts",
    "errors",
];

pub(crate) fn proof(metric: &'static str, note: &'static str) -> Proof {
    Proof {
        metric,
        note,
        damage: DAMAGE.contains(&metric),
    }
}

/// The counter that proves what `s` is showing. A pitfall switched on is
/// the lesson of the moment; otherwise the lesson of the preset it was made
/// from (`base`), then a fault, then the recompute count.
pub fn proof_for(s: &Scenario, base: Option<&str>) -> Proof {
    let p = &s.pitfalls;
    if p.mutable_result {
        return proof("corrupted", "Answers another caller changed in place: the first follower alters the one shared value, and every follower after it gets the altered one.");
    }
    if p.remember_failure {
        return proof(
            "remembered_failures",
            "Failures handed out again after their flight ended: one blip became a sticky outage.",
        );
    }
    if p.no_deadline {
        return proof(
            "pinned",
            "Threads still waiting when the run stopped: without deadlines nothing frees them.",
        );
    }
    if p.key_mismatch {
        return proof(
            "recomputes",
            "The flight key never matches the cache key, so every thread leads its own flight.",
        );
    }
    if let Some(pr) = base.and_then(|b| PRESETS.iter().find(|x| x.name == b)) {
        return proof(pr.proof, pr.proof_note);
    }
    if s.redis_down {
        return proof(
            "redis_errors",
            "Every Redis command fails; what happens next is the fail-open or fail-closed choice.",
        );
    }
    if s.holder_crash {
        return proof(
            "timeouts",
            "Callers that gave up while a dead holder's claim blocked the refresh.",
        );
    }
    if s.hang {
        return proof(
            "timeouts",
            "Callers freed by their deadline while the origin never answers.",
        );
    }
    proof(
        "recomputes",
        "How many times the origin was asked for a value.",
    )
}
