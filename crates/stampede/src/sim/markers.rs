//! Timeline markers: the moments a presenter points at (an expiry, the
//! claim won, the recompute, the write, a crash, a dead claim's end...),
//! kept in time order and thinned to one per kind and half second.

use super::*;

/// A moment worth a marker on the timeline: what a presenter would point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Milestone {
    KeyExpires,
    ClaimWon,
    RecomputeStarts,
    ValueWritten,
    HolderCrashes,
    DeadClaimExpires,
    OriginTimeout,
    Shed,
    OutageEnds,
    /// A fault of the scenario's list starts (`faults`).
    FaultStarts,
    FaultEnds,
}

impl Milestone {
    pub const COUNT: usize = 11;

    pub fn label(self) -> &'static str {
        match self {
            Milestone::KeyExpires => "key expires",
            Milestone::ClaimWon => "claim won",
            Milestone::RecomputeStarts => "recompute starts",
            Milestone::ValueWritten => "value written",
            Milestone::HolderCrashes => "holder crashes",
            Milestone::DeadClaimExpires => "dead claim expires",
            Milestone::OriginTimeout => "origin timeout",
            Milestone::Shed => "admission sheds",
            Milestone::OutageEnds => "outage ends",
            Milestone::FaultStarts => "fault starts",
            Milestone::FaultEnds => "fault ends",
        }
    }
}

/// A milestone at a virtual time (µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Marker {
    pub t: Micros,
    pub what: Milestone,
}

/// Markers of one kind closer together than this are one marker (a wave of
/// 40 claims is one "claim won"); a run keeps at most `MAX_MARKERS`.
pub(super) const MARK_GAP: Micros = 500_000;
pub(super) const MAX_MARKERS: usize = 256;

impl Fleet {
    /// The hottest key's value expires at `t` (if traffic still runs then).
    pub(super) fn mark_expiry(&mut self, t: Micros) {
        if t < self.scenario.duration_ms as Micros * US {
            self.mark(t, Milestone::KeyExpires);
        }
    }

    /// Records a milestone at `t`, unless one of its kind is within
    /// `MARK_GAP` before it; kept in time order.
    pub(super) fn mark(&mut self, t: Micros, what: Milestone) {
        let k = what as usize;
        if self.last_mark[k].is_some_and(|last| t < last + MARK_GAP && t >= last)
            || self.markers.len() >= MAX_MARKERS
        {
            return;
        }
        self.last_mark[k] = Some(t);
        let at = self.markers.partition_point(|m| m.t <= t);
        self.markers.insert(at, Marker { t, what });
    }

    /// The timeline's markers so far, in time order (an expiry or a dead
    /// claim's end is known, and listed, before it happens).
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }
}
