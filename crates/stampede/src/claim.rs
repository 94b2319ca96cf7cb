//! The recompute claim: exactly the semantics of `SET lock:<key> <token> NX PX
//! <ttl>` and of the compare-and-delete release script, as an in-memory table
//! on an explicit clock. Every claim expires; only the token that holds a
//! claim can release it, so a holder whose claim expired and was retaken by
//! someone else cannot delete the new one.
//!
//! The native driver runs the same operations against a real Redis server:
//!
//! ```text
//! SET lock:k <token> NX PX <ttl>          -> OK | nil
//! if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end
//! ```

use std::collections::HashMap;
use std::hash::Hash;

use crate::rng::FxBuild;

/// Virtual time in microseconds.
pub type Micros = u64;

/// The TTL of a claim set with no `PX` (the no-expiry pitfall): it never
/// expires (its `expires_at` saturates at the end of time).
pub const NO_EXPIRY: Micros = Micros::MAX;

/// A claim token: unique per attempt, so a late release can be told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub u64);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetReply {
    /// `OK`: the claim is ours until `expires_at`.
    Ok { expires_at: Micros },
    /// `nil`: someone holds it.
    Held,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseReply {
    /// The script returned 1: our claim was deleted.
    Released,
    /// The script returned 0: the key holds another token.
    NotHolder,
    /// The script returned 0: the key is gone (expired or never set).
    Absent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimError {
    /// Redis rejects `PX 0` ("invalid expire time"); so do we.
    InvalidTtl,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claim {
    pub token: Token,
    pub expires_at: Micros,
}

#[derive(Clone, Default)]
pub struct ClaimTable<K> {
    claims: HashMap<K, Claim, FxBuild>,
    /// `INCR fence:<key>`: a counter per key that never goes back.
    fences: HashMap<K, u64, FxBuild>,
}

impl<K: Hash + Eq + Clone> ClaimTable<K> {
    pub fn new() -> Self {
        ClaimTable {
            claims: HashMap::default(),
            fences: HashMap::default(),
        }
    }

    /// `INCR fence:key`: the next fencing number for `key` (1, 2, ...). A
    /// claim winner takes one in the same script as its `SET NX`.
    pub fn next_fence(&mut self, key: K) -> u64 {
        let f = self.fences.entry(key).or_insert(0);
        *f += 1;
        *f
    }

    /// `SET key token NX PX ttl` at time `now`.
    pub fn set_nx_px(
        &mut self,
        key: K,
        token: Token,
        ttl: Micros,
        now: Micros,
    ) -> Result<SetReply, ClaimError> {
        if ttl == 0 {
            return Err(ClaimError::InvalidTtl);
        }
        if self.holder(&key, now).is_some() {
            return Ok(SetReply::Held);
        }
        let expires_at = now.saturating_add(ttl);
        self.claims.insert(key, Claim { token, expires_at });
        Ok(SetReply::Ok { expires_at })
    }

    /// The compare-and-delete release at time `now`.
    pub fn release(&mut self, key: &K, token: Token, now: Micros) -> ReleaseReply {
        match self.holder(key, now) {
            None => {
                self.claims.remove(key);
                ReleaseReply::Absent
            }
            Some(c) if c.token == token => {
                self.claims.remove(key);
                ReleaseReply::Released
            }
            Some(_) => ReleaseReply::NotHolder,
        }
    }

    /// A plain `DEL key` at time `now`, the token unchecked: the live
    /// claim it deleted, whoever held it.
    pub fn del(&mut self, key: &K, now: Micros) -> Option<Claim> {
        let live = self.holder(key, now);
        self.claims.remove(key);
        live
    }

    /// The live claim on `key` at `now`, if any. A claim is live while
    /// `now < expires_at` (Redis deletes a key once its PX has elapsed).
    pub fn holder(&self, key: &K, now: Micros) -> Option<Claim> {
        self.claims.get(key).copied().filter(|c| now < c.expires_at)
    }

    /// The live claims at `now`, by key.
    pub fn live_claims(&self, now: Micros) -> impl Iterator<Item = (&K, Claim)> + '_ {
        self.claims
            .iter()
            .filter(move |(_, c)| now < c.expires_at)
            .map(|(k, c)| (k, *c))
    }

    /// `PTTL`, in microseconds; `None` when no live claim exists.
    pub fn pttl(&self, key: &K, now: Micros) -> Option<Micros> {
        self.holder(key, now).map(|c| c.expires_at - now)
    }

    /// Drops expired entries (Redis does this lazily and by sampling; the
    /// observable behaviour is the same because every read checks expiry).
    pub fn purge(&mut self, now: Micros) {
        self.claims.retain(|_, c| now < c.expires_at);
    }

    /// Live claims at `now`.
    pub fn live(&self, now: Micros) -> usize {
        self.claims.values().filter(|c| now < c.expires_at).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn nx_means_one_winner_until_expiry() {
        let mut t = ClaimTable::new();
        assert_eq!(
            t.set_nx_px("k", Token(1), 100, 0),
            Ok(SetReply::Ok { expires_at: 100 })
        );
        assert_eq!(t.set_nx_px("k", Token(2), 100, 99), Ok(SetReply::Held));
        assert_eq!(
            t.set_nx_px("k", Token(2), 100, 100),
            Ok(SetReply::Ok { expires_at: 200 })
        );
    }

    #[test]
    fn zero_ttl_is_rejected_like_redis() {
        let mut t = ClaimTable::new();
        assert_eq!(
            t.set_nx_px("k", Token(1), 0, 0),
            Err(ClaimError::InvalidTtl)
        );
    }

    #[test]
    fn an_expired_holder_cannot_release_the_new_claim() {
        let mut t = ClaimTable::new();
        t.set_nx_px("k", Token(1), 100, 0).unwrap();
        t.set_nx_px("k", Token(2), 100, 150).unwrap();
        assert_eq!(t.release(&"k", Token(1), 160), ReleaseReply::NotHolder);
        assert_eq!(t.holder(&"k", 160).map(|c| c.token), Some(Token(2)));
        assert_eq!(t.release(&"k", Token(2), 160), ReleaseReply::Released);
        assert_eq!(t.holder(&"k", 160), None);
        assert_eq!(t.release(&"k", Token(2), 160), ReleaseReply::Absent);
    }

    #[test]
    fn a_plain_del_deletes_whoever_holds_the_claim() {
        let mut t = ClaimTable::new();
        t.set_nx_px("k", Token(1), 100, 0).unwrap();
        t.set_nx_px("k", Token(2), 100, 150).unwrap();
        // Holder 1, late, deletes holder 2's claim: a third can take it.
        assert_eq!(t.del(&"k", 160).map(|c| c.token), Some(Token(2)));
        assert_eq!(t.holder(&"k", 160), None);
        assert!(matches!(
            t.set_nx_px("k", Token(3), 100, 161),
            Ok(SetReply::Ok { .. })
        ));
        assert_eq!(t.del(&"k", 300), None, "expired: nothing live to delete");
        // With no PX the claim outlives any clock.
        t.set_nx_px("n", Token(4), NO_EXPIRY, 5).unwrap();
        assert!(t.holder(&"n", Micros::MAX - 1).is_some());
    }

    #[derive(Debug, Clone)]
    enum Op {
        Set(u8, u64, u64),
        Release(u8, u64),
        Tick(u64),
    }

    proptest! {
        /// Against a model: a claim exists only within [set, set + ttl), only
        /// its own token deletes it, and a set succeeds iff nobody holds it.
        #[test]
        fn model_check(ops in proptest::collection::vec(prop_oneof![
            (0u8..3, 1u64..20, 1u64..500).prop_map(|(k, tok, ttl)| Op::Set(k, tok, ttl)),
            (0u8..3, 1u64..20).prop_map(|(k, tok)| Op::Release(k, tok)),
            (0u64..300).prop_map(Op::Tick),
        ], 1..300)) {
            let mut t = ClaimTable::new();
            let mut model: HashMap<u8, (u64, u64)> = HashMap::new(); // key -> (token, expires)
            let mut now = 0u64;
            for op in ops {
                match op {
                    Op::Tick(d) => now += d,
                    Op::Set(k, tok, ttl) => {
                        let held = model.get(&k).is_some_and(|(_, e)| now < *e);
                        let r = t.set_nx_px(k, Token(tok), ttl, now).unwrap();
                        if held {
                            prop_assert_eq!(r, SetReply::Held);
                        } else {
                            prop_assert_eq!(r, SetReply::Ok { expires_at: now + ttl });
                            model.insert(k, (tok, now + ttl));
                        }
                    }
                    Op::Release(k, tok) => {
                        let r = t.release(&k, Token(tok), now);
                        match model.get(&k).copied() {
                            Some((held, e)) if now < e => {
                                if held == tok {
                                    prop_assert_eq!(r, ReleaseReply::Released);
                                    model.remove(&k);
                                } else {
                                    prop_assert_eq!(r, ReleaseReply::NotHolder);
                                }
                            }
                            _ => prop_assert_eq!(r, ReleaseReply::Absent),
                        }
                    }
                }
                for k in 0u8..3 {
                    let want = model.get(&k).filter(|(_, e)| now < *e).map(|(tok, _)| Token(*tok));
                    prop_assert_eq!(t.holder(&k, now).map(|c| c.token), want);
                    if let Some(left) = t.pttl(&k, now) {
                        prop_assert!(left > 0);
                    }
                }
            }
        }
    }
}
