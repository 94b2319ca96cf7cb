//! In-process coalescing ("singleflight") as a plain state machine over
//! waiter handles. The first caller for a key leads; later callers attach;
//! settling removes the entry and hands the one outcome to every waiter
//! attached at that moment. Nothing is remembered after settle: the table
//! deduplicates concurrent work, it does not memoize results.
//!
//! Two deliberate mistakes can be switched on ([`FlightPolicy`]) so that the
//! page can show what they cost: remembering failures and sharing a mutable
//! result.

use std::collections::HashMap;
use std::hash::Hash;

use crate::rng::FxBuild;

/// A value as the origin produced it. `mark` is zero for an untouched value;
/// a caller that mutates a shared value in place sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    pub key: u32,
    pub version: u32,
    pub mark: u32,
}

impl Value {
    pub fn fresh(key: u32, version: u32) -> Value {
        Value {
            key,
            version,
            mark: 0,
        }
    }
    pub fn is_intact(&self) -> bool {
        self.mark == 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Failure {
    /// The origin answered with an error (or a negative-cache entry said so).
    Origin,
    /// The origin call ran past its timeout (the call itself may go on).
    Timeout,
    /// The request's thread died.
    Crashed,
}

/// What a flight settles with. Followers receive exactly this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Fresh(Value),
    Stale(Value),
    Degraded,
    Failed(Failure),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlightPolicy {
    /// Pitfall: a failed outcome stays in the table and is handed to every
    /// later caller of that key, so one blip becomes a sticky outage.
    pub remember_failure: bool,
    /// Pitfall: followers share one mutable value by reference and the first
    /// of them changes it in place; everyone after it reads the change.
    pub mutable_result: bool,
}

/// Proof of leadership for one flight generation. Only its holder can settle
/// or abandon, and only the flight it was issued for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaderTicket {
    gen: u32,
    /// Bumped on every promotion so a vanished leader's ticket goes dead.
    epoch: u32,
}

/// A follower's place in one flight, used to detach at its own deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaiterTicket {
    gen: u32,
    slot: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Join {
    /// No flight for this key: the caller leads and must settle or abandon.
    Lead(LeaderTicket),
    /// A flight is running: the caller waits for its outcome.
    Follow(WaiterTicket),
    /// Pitfall `remember_failure`: an old failure, handed out again.
    Remembered(Outcome),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlightError {
    /// No flight for this key, or it is a different generation.
    NotLeader,
}

/// What settling hands out: each current waiter with the outcome it sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settled<W> {
    pub deliveries: Vec<(W, Outcome)>,
}

/// What happens to followers when their leader vanishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Abandoned<W> {
    /// The oldest waiter takes over as leader and does the work itself; the
    /// other followers stay attached to the same flight.
    Promoted { leader: W, ticket: LeaderTicket },
    /// Nobody was waiting; the entry is gone.
    Empty,
}

#[derive(Clone)]
struct Entry<W> {
    gen: u32,
    epoch: u32,
    leader: W,
    /// Waiters in attach order; `None` marks one that detached.
    waiters: Vec<Option<W>>,
    attached: usize,
}

#[derive(Clone)]
pub struct FlightTable<K, W> {
    entries: HashMap<K, Entry<W>, FxBuild>,
    remembered: HashMap<K, Outcome, FxBuild>,
    /// Generations tell a flight from the next one for the same key; they
    /// wrap after four billion flights per table, long after any ticket of
    /// the old generation can still be around.
    next_gen: u32,
    policy: FlightPolicy,
    /// Waiter lists of settled flights, emptied and kept for the next
    /// flights (at most [`SPARE_LISTS`], each of [`SPARE_CAPACITY`] at
    /// most): a hot key's flight of dozens of followers grows its list
    /// again from what the last flight grew, not from nothing.
    spare: Vec<Vec<Option<W>>>,
}

/// Waiter lists a table keeps for reuse, and the largest it keeps.
const SPARE_LISTS: usize = 64;
const SPARE_CAPACITY: usize = 4096;

impl<K: Hash + Eq + Clone, W: Copy + Eq> FlightTable<K, W> {
    pub fn new(policy: FlightPolicy) -> Self {
        FlightTable {
            entries: HashMap::default(),
            remembered: HashMap::default(),
            next_gen: 1,
            policy,
            spare: Vec::new(),
        }
    }

    /// An emptied waiter list kept for the next flight, within the bounds.
    fn recycle(&mut self, mut waiters: Vec<Option<W>>) {
        if self.spare.len() < SPARE_LISTS
            && waiters.capacity() > 0
            && waiters.capacity() <= SPARE_CAPACITY
        {
            waiters.clear();
            self.spare.push(waiters);
        }
    }

    /// Leads a new flight for `key`, or attaches `who` to the running one.
    pub fn join(&mut self, key: K, who: W) -> Join {
        if let Some(out) = self.remembered.get(&key) {
            return Join::Remembered(*out);
        }
        if let Some(e) = self.entries.get_mut(&key) {
            let slot = e.waiters.len() as u32;
            e.waiters.push(Some(who));
            e.attached += 1;
            return Join::Follow(WaiterTicket { gen: e.gen, slot });
        }
        let gen = self.next_gen;
        self.next_gen = self.next_gen.wrapping_add(1);
        self.entries.insert(
            key,
            Entry {
                gen,
                epoch: 0,
                leader: who,
                waiters: self.spare.pop().unwrap_or_default(),
                attached: 0,
            },
        );
        Join::Lead(LeaderTicket { gen, epoch: 0 })
    }

    /// A follower gives up at its own deadline. The leader and the other
    /// followers are untouched. Returns false if it was no longer attached
    /// (the flight settled first, or the ticket is from an older flight).
    pub fn detach(&mut self, key: &K, t: WaiterTicket) -> bool {
        match self.entries.get_mut(key) {
            Some(e) if e.gen == t.gen => match e.waiters.get_mut(t.slot as usize) {
                Some(w @ Some(_)) => {
                    *w = None;
                    e.attached -= 1;
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The leader finishes: the entry is removed and every waiter attached
    /// right now receives `outcome`. Later callers start a fresh flight
    /// (unless the `remember_failure` pitfall keeps a failure around).
    pub fn settle(
        &mut self,
        key: &K,
        t: LeaderTicket,
        outcome: Outcome,
    ) -> Result<Settled<W>, FlightError> {
        let e = self.close(key, t, outcome)?;
        let mut deliveries = Vec::with_capacity(e.attached);
        let mut shared = outcome;
        for w in e.waiters.into_iter().flatten() {
            deliveries.push((w, shared));
            if self.policy.mutable_result {
                // The first reader "adjusts" the shared object in place (say,
                // converts the price to its own currency); it was handed the
                // same reference as everyone after it.
                if let Outcome::Fresh(v) | Outcome::Stale(v) = &mut shared {
                    if v.mark == 0 {
                        v.mark = 1;
                    }
                }
            }
        }
        Ok(Settled { deliveries })
    }

    /// [`FlightTable::settle`] for a caller that hands the outcome to its
    /// waiters itself (one shared result they all read): the number of
    /// waiters attached right now, without a delivery list built for them.
    pub fn settle_attached(
        &mut self,
        key: &K,
        t: LeaderTicket,
        outcome: Outcome,
    ) -> Result<usize, FlightError> {
        let e = self.close(key, t, outcome)?;
        let attached = e.attached;
        self.recycle(e.waiters);
        Ok(attached)
    }

    /// Removes the flight `t` leads (remembering a failure under the
    /// pitfall): what both settles share.
    fn close(
        &mut self,
        key: &K,
        t: LeaderTicket,
        outcome: Outcome,
    ) -> Result<Entry<W>, FlightError> {
        if !self.leads(key, t) {
            return Err(FlightError::NotLeader);
        }
        let e = self.entries.remove(key).ok_or(FlightError::NotLeader)?;
        if self.policy.remember_failure && matches!(outcome, Outcome::Failed(_)) {
            self.remembered.insert(key.clone(), outcome);
        }
        Ok(e)
    }

    /// The leader vanished (its task was dropped, its thread died). Its
    /// followers are not stranded: the oldest still attached takes over.
    pub fn abandon(&mut self, key: &K, t: LeaderTicket) -> Result<Abandoned<W>, FlightError> {
        let e = match self.entries.get_mut(key) {
            Some(e) if e.gen == t.gen && e.epoch == t.epoch => e,
            _ => return Err(FlightError::NotLeader),
        };
        let next = e.waiters.iter_mut().find_map(|w| w.take());
        match next {
            Some(leader) => {
                e.attached -= 1;
                e.leader = leader;
                e.epoch += 1;
                Ok(Abandoned::Promoted {
                    leader,
                    ticket: LeaderTicket {
                        gen: e.gen,
                        epoch: e.epoch,
                    },
                })
            }
            None => {
                if let Some(e) = self.entries.remove(key) {
                    self.recycle(e.waiters);
                }
                Ok(Abandoned::Empty)
            }
        }
    }

    /// Whether `t` leads the running flight of `key`: a settle or an
    /// abandon with it would take effect.
    pub fn leads(&self, key: &K, t: LeaderTicket) -> bool {
        matches!(self.entries.get(key), Some(e) if e.gen == t.gen && e.epoch == t.epoch)
    }

    /// Flights currently running.
    pub fn in_flight(&self) -> usize {
        self.entries.len()
    }

    /// Failures kept by the `remember_failure` pitfall.
    pub fn remembered(&self) -> usize {
        self.remembered.len()
    }

    /// Waiters attached to the flight for `key` (0 if none).
    pub fn waiting(&self, key: &K) -> usize {
        self.entries.get(key).map_or(0, |e| e.attached)
    }

    pub fn leader(&self, key: &K) -> Option<W> {
        self.entries.get(key).map(|e| e.leader)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table() -> FlightTable<u32, u32> {
        FlightTable::new(FlightPolicy::default())
    }

    #[test]
    fn first_leads_others_follow_and_all_get_the_outcome() {
        let mut t = table();
        let Join::Lead(lt) = t.join(7, 1) else {
            panic!("first caller must lead")
        };
        assert!(matches!(t.join(7, 2), Join::Follow(_)));
        assert!(matches!(t.join(7, 3), Join::Follow(_)));
        let v = Outcome::Fresh(Value::fresh(7, 1));
        let s = t.settle(&7, lt, v).unwrap();
        assert_eq!(s.deliveries, vec![(2, v), (3, v)]);
        assert_eq!(t.in_flight(), 0);
        // Nothing is remembered: the next caller leads a new flight.
        assert!(matches!(t.join(7, 4), Join::Lead(_)));
    }

    /// A settled flight's waiter list is kept for the next flight, emptied:
    /// the next flight's followers are numbered from the start, and one
    /// that leaves leaves that flight only.
    #[test]
    fn a_reused_waiter_list_starts_empty() {
        let mut t = table();
        let Join::Lead(lt) = t.join(1, 10) else {
            panic!()
        };
        for w in 11..14 {
            t.join(1, w);
        }
        assert_eq!(
            t.settle_attached(&1, lt, Outcome::Failed(Failure::Origin)),
            Ok(3)
        );
        assert_eq!(t.spare.len(), 1, "kept for the next flight");
        let Join::Lead(lt) = t.join(2, 20) else {
            panic!()
        };
        assert!(t.spare.is_empty(), "taken by it");
        let Join::Follow(a) = t.join(2, 21) else {
            panic!()
        };
        assert_eq!(a.slot, 0, "numbered from the start");
        let Join::Follow(b) = t.join(2, 22) else {
            panic!()
        };
        assert!(t.detach(&2, a));
        assert_eq!(t.waiting(&2), 1);
        let v = Outcome::Fresh(Value::fresh(2, 1));
        let s = t.settle(&2, lt, v).unwrap();
        assert_eq!(s.deliveries, vec![(22, v)]);
        assert!(!t.detach(&2, b), "its flight is over");
    }

    #[test]
    fn failure_reaches_current_waiters_but_is_not_remembered() {
        let mut t = table();
        let Join::Lead(lt) = t.join(1, 10) else {
            panic!()
        };
        t.join(1, 11);
        let f = Outcome::Failed(Failure::Origin);
        assert_eq!(t.settle(&1, lt, f).unwrap().deliveries, vec![(11, f)]);
        assert!(matches!(t.join(1, 12), Join::Lead(_)));
    }

    #[test]
    fn remember_failure_pitfall_makes_it_sticky() {
        let mut t: FlightTable<u32, u32> = FlightTable::new(FlightPolicy {
            remember_failure: true,
            ..Default::default()
        });
        let Join::Lead(lt) = t.join(1, 10) else {
            panic!()
        };
        let f = Outcome::Failed(Failure::Origin);
        t.settle(&1, lt, f).unwrap();
        assert_eq!(t.join(1, 12), Join::Remembered(f));
    }

    #[test]
    fn detach_leaves_leader_and_others_alone() {
        let mut t = table();
        let Join::Lead(lt) = t.join(1, 10) else {
            panic!()
        };
        let Join::Follow(a) = t.join(1, 11) else {
            panic!()
        };
        t.join(1, 12);
        assert!(t.detach(&1, a));
        assert!(!t.detach(&1, a), "detaching twice is a no-op");
        let v = Outcome::Fresh(Value::fresh(1, 1));
        assert_eq!(t.settle(&1, lt, v).unwrap().deliveries, vec![(12, v)]);
    }

    #[test]
    fn stale_tickets_cannot_touch_a_new_flight() {
        let mut t = table();
        let Join::Lead(old) = t.join(1, 10) else {
            panic!()
        };
        let Join::Follow(w) = t.join(1, 11) else {
            panic!()
        };
        t.settle(&1, old, Outcome::Degraded).unwrap();
        let Join::Lead(_new) = t.join(1, 12) else {
            panic!()
        };
        t.join(1, 13);
        assert_eq!(
            t.settle(&1, old, Outcome::Degraded),
            Err(FlightError::NotLeader)
        );
        assert!(!t.detach(&1, w));
        assert_eq!(t.waiting(&1), 1);
    }

    #[test]
    fn abandoned_flight_promotes_the_oldest_waiter() {
        let mut t = table();
        let Join::Lead(lt) = t.join(1, 10) else {
            panic!()
        };
        let Join::Follow(a) = t.join(1, 11) else {
            panic!()
        };
        t.join(1, 12);
        t.detach(&1, a);
        let Ok(Abandoned::Promoted { leader, ticket }) = t.abandon(&1, lt) else {
            panic!()
        };
        assert_eq!(leader, 12);
        assert_eq!(t.leader(&1), Some(12));
        assert_eq!(t.abandon(&1, lt), Err(FlightError::NotLeader));
        assert_eq!(
            t.settle(&1, lt, Outcome::Degraded),
            Err(FlightError::NotLeader)
        );
        assert_eq!(t.abandon(&1, ticket), Ok(Abandoned::Empty));
        assert_eq!(t.in_flight(), 0);
    }

    #[test]
    fn mutable_result_corrupts_everyone_after_the_first_reader() {
        let mut t: FlightTable<u32, u32> = FlightTable::new(FlightPolicy {
            mutable_result: true,
            ..Default::default()
        });
        let Join::Lead(lt) = t.join(1, 10) else {
            panic!()
        };
        for w in 11..15 {
            t.join(1, w);
        }
        let d = t
            .settle(&1, lt, Outcome::Fresh(Value::fresh(1, 1)))
            .unwrap()
            .deliveries;
        let intact: Vec<bool> = d
            .iter()
            .map(|(_, o)| matches!(o, Outcome::Fresh(v) if v.is_intact()))
            .collect();
        assert_eq!(intact, vec![true, false, false, false]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Join(u8),
        Detach(u8, usize),
        Settle(u8, bool),
        Abandon(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..3).prop_map(Op::Join),
            (0u8..3, 0usize..20).prop_map(|(k, i)| Op::Detach(k, i)),
            (0u8..3, any::<bool>()).prop_map(|(k, ok)| Op::Settle(k, ok)),
            (0u8..3).prop_map(Op::Abandon),
        ]
    }

    proptest! {
        /// Against a simple model: a settle delivers to exactly the callers
        /// that joined this generation and neither detached nor were promoted;
        /// after settle no entry remains.
        #[test]
        fn settle_delivers_exactly_to_attached_waiters(ops in proptest::collection::vec(op(), 1..200)) {
            let mut t: FlightTable<u8, u32> = table_u8();
            // model: key -> (leader ticket, attached waiters in order, tickets)
            let mut model: HashMap<u8, (LeaderTicket, Vec<(u32, WaiterTicket)>)> = HashMap::new();
            let mut next_id = 0u32;
            for op in ops {
                match op {
                    Op::Join(k) => {
                        next_id += 1;
                        match t.join(k, next_id) {
                            Join::Lead(lt) => {
                                prop_assert!(!model.contains_key(&k));
                                model.insert(k, (lt, vec![]));
                            }
                            Join::Follow(wt) => {
                                let m = model.get_mut(&k);
                                prop_assert!(m.is_some());
                                m.unwrap().1.push((next_id, wt));
                            }
                            Join::Remembered(_) => prop_assert!(false, "nothing is remembered"),
                        }
                    }
                    Op::Detach(k, i) => {
                        if let Some((_, ws)) = model.get_mut(&k) {
                            if !ws.is_empty() {
                                let (_, wt) = ws.remove(i % ws.len());
                                prop_assert!(t.detach(&k, wt));
                            }
                        }
                    }
                    Op::Settle(k, ok) => {
                        if let Some((lt, ws)) = model.remove(&k) {
                            let out = if ok { Outcome::Fresh(Value::fresh(k as u32, 1)) } else { Outcome::Failed(Failure::Origin) };
                            // The counting settle agrees with the listing one.
                            prop_assert!(t.leads(&k, lt));
                            prop_assert_eq!(t.clone().settle_attached(&k, lt, out), Ok(ws.len()));
                            let got = t.settle(&k, lt, out).unwrap();
                            let want: Vec<(u32, Outcome)> = ws.iter().map(|(w, _)| (*w, out)).collect();
                            prop_assert_eq!(got.deliveries, want);
                            prop_assert_eq!(t.waiting(&k), 0);
                        }
                    }
                    Op::Abandon(k) => {
                        if let Some((lt, mut ws)) = model.remove(&k) {
                            match t.abandon(&k, lt).unwrap() {
                                Abandoned::Promoted { leader, ticket } => {
                                    prop_assert!(!ws.is_empty());
                                    let (first, _) = ws.remove(0);
                                    prop_assert_eq!(leader, first);
                                    model.insert(k, (ticket, ws));
                                }
                                Abandoned::Empty => prop_assert!(ws.is_empty()),
                            }
                        }
                    }
                }
                prop_assert_eq!(t.in_flight(), model.len());
                for (k, (_, ws)) in &model {
                    prop_assert_eq!(t.waiting(k), ws.len());
                }
            }
        }
    }

    fn table_u8() -> FlightTable<u8, u32> {
        FlightTable::new(FlightPolicy::default())
    }
}
