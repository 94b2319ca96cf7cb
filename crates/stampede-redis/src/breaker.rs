//! The Redis breaker of one instance ([`CacheBuilder::redis_breaker`]):
//! after a command fails or times out it sends nothing to Redis for its
//! open period; then, half open, it lets one command through, the probe,
//! and holds the others back until the probe's answer: an answer closes it,
//! a failure opens it again for another period. A probe whose caller left
//! before its answer came (its future dropped) tells nothing: the next
//! command is the probe.
//!
//! The test harness's breaker is the simulation's instead (`half_open`
//! off): closed again the moment its period ends, every command let
//! through, as the core's simulated client does, so the conformance table
//! compares like with like.
//!
//! One atomic word holds the state, so a closed breaker costs the hit path
//! one load: 0 is closed; otherwise the word is `until << 1 | probing`,
//! `until` the end of the open period (µs on the driver's clock, at least
//! 1) and `probing` set while a probe is out.
//!
//! [`CacheBuilder::redis_breaker`]: crate::CacheBuilder::redis_breaker

use std::sync::atomic::{AtomicU64, Ordering};

use stampede::claim::Micros;

/// Where a cache's Redis breaker stands ([`Cache::breaker`]).
///
/// [`Cache::breaker`]: crate::Cache::breaker
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BreakerState {
    /// Commands go to Redis (also: a cache without a breaker).
    Closed,
    /// A command failed: nothing goes to Redis until the open period ends.
    Open,
    /// The open period has ended: the next command is the probe, or the
    /// probe is out; the others fail at once until it is answered.
    HalfOpen,
}

/// Whether a command may go out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Closed: send it.
    Send,
    /// The simulation's breaker, its period just ended: closed now by
    /// this command ([`Turned::Closed`] for the gauge); send it.
    SendClosed,
    /// Half open, and this command is the probe: send it, and report its
    /// answer ([`Breaker::probed`]) or that it was dropped unanswered
    /// ([`Breaker::probe_dropped`]), with this word.
    Probe(u64),
    /// Open, or a probe is out: do not send it.
    Skip,
}

/// What a report changed, for the breaker's gauge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turned {
    /// Nothing.
    Same,
    /// Closed (or half open) before, open now.
    Opened,
    /// Half open before, closed now: the probe was answered.
    Closed,
}

pub(crate) struct Breaker {
    /// How long it stays open after a failure (0: no breaker).
    open_for: Micros,
    /// After the open period, one probe first (the service's), or every
    /// command at once (the simulation's).
    half_open: bool,
    word: AtomicU64,
}

const PROBING: u64 = 1;

impl Breaker {
    pub(crate) fn new(open_for: Micros, half_open: bool) -> Breaker {
        Breaker {
            open_for,
            half_open,
            word: AtomicU64::new(0),
        }
    }

    /// Whether a command may go out at `now`. Closed, one load and no
    /// clock read: `now` is only called once the breaker has opened.
    pub(crate) fn admit(&self, now: impl Fn() -> Micros) -> Admit {
        let mut word = self.word.load(Ordering::SeqCst);
        loop {
            if word == 0 {
                return Admit::Send;
            }
            if word & PROBING != 0 || now() < word >> 1 {
                return Admit::Skip;
            }
            // The simulation's closes the moment its period ends; the
            // service's sends a probe first.
            let (next, admit) = if self.half_open {
                (word | PROBING, Admit::Probe(word | PROBING))
            } else {
                (0, Admit::SendClosed)
            };
            match self
                .word
                .compare_exchange(word, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return admit,
                // Another command took the probe, or a failure moved the
                // end: look again.
                Err(seen) => word = seen,
            }
        }
    }

    /// A command sent failed or timed out, seen at `now`: open (again)
    /// until `now` + the open period, or later if it already was.
    pub(crate) fn failed(&self, now: Micros) -> Turned {
        if self.open_for == 0 {
            return Turned::Same;
        }
        let until = now.saturating_add(self.open_for).max(1);
        let before = self.word.fetch_max(until << 1, Ordering::SeqCst);
        if before == 0 {
            Turned::Opened
        } else {
            Turned::Same
        }
    }

    /// The probe `word` was answered: closed, unless a failure seen
    /// meanwhile (a command sent before it opened) opened it again.
    pub(crate) fn probed(&self, word: u64) -> Turned {
        match self
            .word
            .compare_exchange(word, 0, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => Turned::Closed,
            Err(_) => Turned::Same,
        }
    }

    /// The probe `word` was dropped before its answer: it told nothing,
    /// and the next command is the probe.
    pub(crate) fn probe_dropped(&self, word: u64) {
        let _ =
            self.word
                .compare_exchange(word, word & !PROBING, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Where it stands at `now`.
    pub(crate) fn state(&self, now: impl Fn() -> Micros) -> BreakerState {
        let word = self.word.load(Ordering::SeqCst);
        if word == 0 {
            BreakerState::Closed
        } else if word & PROBING == 0 && now() < word >> 1 {
            BreakerState::Open
        } else if self.half_open {
            BreakerState::HalfOpen
        } else {
            // The simulation's is closed once its period ends.
            BreakerState::Closed
        }
    }

    /// Closed right now.
    #[cfg(test)]
    fn is_closed(&self) -> bool {
        self.word.load(Ordering::SeqCst) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPEN: Micros = 1_000_000;

    fn at(t: Micros) -> impl Fn() -> Micros {
        move || t
    }

    #[test]
    fn closed_sends_without_reading_the_clock() {
        let b = Breaker::new(OPEN, true);
        assert_eq!(b.admit(|| panic!("the clock was read")), Admit::Send);
    }

    #[test]
    fn a_failure_opens_it_for_its_period() {
        let b = Breaker::new(OPEN, true);
        assert_eq!(b.state(at(0)), BreakerState::Closed);
        assert_eq!(b.failed(5), Turned::Opened);
        assert_eq!(b.state(at(5)), BreakerState::Open);
        assert_eq!(b.admit(at(5)), Admit::Skip);
        assert_eq!(b.admit(at(5 + OPEN - 1)), Admit::Skip);
        // A second failure while open moves the end, and turns nothing.
        assert_eq!(b.failed(10), Turned::Same);
        assert_eq!(b.admit(at(5 + OPEN)), Admit::Skip);
    }

    #[test]
    fn after_its_period_one_probe_goes_out_and_the_rest_wait_for_it() {
        let b = Breaker::new(OPEN, true);
        b.failed(0);
        let Admit::Probe(word) = b.admit(at(OPEN)) else {
            panic!("no probe once the period ended")
        };
        for later in [OPEN, OPEN + 1, 100 * OPEN] {
            assert_eq!(b.admit(at(later)), Admit::Skip, "a second probe");
        }
        assert_eq!(b.state(at(OPEN)), BreakerState::HalfOpen);
        assert_eq!(b.probed(word), Turned::Closed);
        assert!(b.is_closed());
        assert_eq!(b.state(at(OPEN)), BreakerState::Closed);
        assert_eq!(b.admit(at(OPEN + 2)), Admit::Send);
    }

    #[test]
    fn a_failed_probe_opens_it_for_another_period() {
        let b = Breaker::new(OPEN, true);
        b.failed(0);
        let Admit::Probe(_) = b.admit(at(OPEN)) else {
            panic!("no probe")
        };
        let seen = OPEN + 100;
        // Opened again from half open: the gauge already says open.
        assert_eq!(b.failed(seen), Turned::Same);
        assert_eq!(b.admit(at(seen + OPEN - 1)), Admit::Skip);
        assert!(matches!(b.admit(at(seen + OPEN)), Admit::Probe(_)));
    }

    #[test]
    fn a_dropped_probe_hands_the_probe_to_the_next_command() {
        let b = Breaker::new(OPEN, true);
        b.failed(0);
        let Admit::Probe(word) = b.admit(at(OPEN)) else {
            panic!("no probe")
        };
        b.probe_dropped(word);
        let Admit::Probe(next) = b.admit(at(OPEN + 1)) else {
            panic!("the probe was lost with its caller")
        };
        assert_eq!(b.probed(next), Turned::Closed);
        // A stale report of the first probe changes nothing now.
        assert_eq!(b.probed(word), Turned::Same);
        b.probe_dropped(word);
        assert!(b.is_closed());
    }

    #[test]
    fn a_failure_seen_while_probing_wins_over_the_probes_answer() {
        let b = Breaker::new(OPEN, true);
        b.failed(0);
        let Admit::Probe(word) = b.admit(at(OPEN)) else {
            panic!("no probe")
        };
        // A command sent before the breaker opened fails only now.
        b.failed(OPEN + 5);
        assert_eq!(b.probed(word), Turned::Same);
        assert_eq!(b.admit(at(OPEN + 6)), Admit::Skip);
    }

    #[test]
    fn the_simulations_breaker_lets_everything_through_once_its_period_ends() {
        let b = Breaker::new(OPEN, false);
        b.failed(0);
        assert_eq!(b.admit(at(OPEN - 1)), Admit::Skip);
        assert_eq!(b.admit(at(OPEN)), Admit::SendClosed);
        assert!(b.is_closed());
        for _ in 0..3 {
            assert_eq!(b.admit(at(OPEN)), Admit::Send);
        }
        assert_eq!(b.failed(OPEN), Turned::Opened);
    }

    #[test]
    fn no_breaker_never_opens() {
        let b = Breaker::new(0, true);
        assert_eq!(b.failed(7), Turned::Same);
        assert_eq!(b.admit(at(7)), Admit::Send);
    }

    /// Many threads at the end of the period: exactly one probe.
    #[test]
    fn one_probe_among_racing_commands() {
        for _ in 0..200 {
            let b = std::sync::Arc::new(Breaker::new(OPEN, true));
            b.failed(0);
            let probes: usize = std::thread::scope(|s| {
                let hs: Vec<_> = (0..4)
                    .map(|_| {
                        let b = b.clone();
                        s.spawn(move || {
                            (0..50)
                                .filter(|_| matches!(b.admit(at(OPEN)), Admit::Probe(_)))
                                .count()
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).sum()
            });
            assert_eq!(probes, 1);
        }
    }
}
