//! The holder faults: a request that holds a claim dies there, without
//! releasing it (the `holder_crash` switch: the fleet's first claim winner;
//! `faults=holder@START`: the next request found holding a claim, or
//! winning one, after START). The decision is the harness's: [`Faulty`]
//! wraps an origin and answers the driver's `Origin::holder_dies`, which
//! exists only under `stampede-redis`'s `harness` feature.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use stampede::scenario::Scenario;
use stampede_redis::driver::{Decoded, Driver, FillFuture, Origin, OriginFuture};
use stampede_redis::Target;

/// An origin with the fleet's holder faults.
pub struct Faulty<O> {
    origin: O,
    /// `holder_crash`: the fleet's first claim winner dies.
    crash_first: bool,
    /// Shared by the fleet: a first winner has died.
    crashed: Arc<AtomicBool>,
    /// Shared by the fleet: holder faults at a moment not yet carried out.
    pending: Arc<AtomicU64>,
}

/// A fleet instance: the driver with the harness's holder faults.
pub type Instance<O> = Driver<Faulty<O>>;

impl<O> Faulty<O> {
    /// `origin` with `scenario`'s `holder_crash` switch, `crashed` and
    /// `pending` shared by every instance of a fleet.
    pub fn new(
        origin: O,
        scenario: &Scenario,
        crashed: Arc<AtomicBool>,
        pending: Arc<AtomicU64>,
    ) -> Faulty<O> {
        Faulty {
            origin,
            crash_first: scenario.holder_crash,
            crashed,
            pending,
        }
    }
}

impl<O: Origin> Origin for Faulty<O> {
    fn compute(&self, key: u32) -> OriginFuture {
        self.origin.compute(key)
    }

    /// The wrapped origin's own fill (its TTL per entry, if it has one):
    /// the driver calls `fill`, not `compute`.
    fn fill(&self, key: u32) -> FillFuture {
        self.origin.fill(key)
    }

    fn decode(&self, payload: &[u8]) -> Result<Decoded, String> {
        self.origin.decode(payload)
    }

    fn holder_dies(&self, won: bool) -> bool {
        let first = won && self.crash_first && !self.crashed.swap(true, Ordering::SeqCst);
        first
            || self
                .pending
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
    }
}

/// One instance of a fleet for `scenario`: `crashed` is shared by every
/// instance, so the `holder_crash` fault makes only the fleet's first
/// claim winner crash.
pub async fn connect_in<O: Origin>(
    target: impl Into<Target>,
    scenario: &Scenario,
    origin: O,
    crashed: Arc<AtomicBool>,
) -> redis::RedisResult<Instance<O>> {
    connect_in_fleet(target, scenario, origin, crashed, Arc::default()).await
}

/// As [`connect_in`], with the fleet's pending holder faults
/// (`faults=holder@START`): the fleet adds one at START, and the next
/// request of any instance found holding a claim (at its next step) or
/// winning one dies holding it.
pub async fn connect_in_fleet<O: Origin>(
    target: impl Into<Target>,
    scenario: &Scenario,
    origin: O,
    crashed: Arc<AtomicBool>,
    pending: Arc<AtomicU64>,
) -> redis::RedisResult<Instance<O>> {
    let origin = Faulty::new(origin, scenario, crashed, pending);
    Driver::connect(target, scenario, origin).await
}
