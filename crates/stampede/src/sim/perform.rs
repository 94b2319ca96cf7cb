//! The simulation as the read path's driver: it runs a thread's machine
//! until it blocks, and performs each step the machine emits against the
//! simulated world (flight tables, the claim table, the cache behind a
//! round trip, the admission limit, the origin). A native driver mirrors
//! this `perform` against tokio and a real Redis.

use super::*;
use crate::claim::{Token, NO_EXPIRY};

impl Fleet {
    /// Sends a command to Redis: its reply arrives a round trip later (plus
    /// the queue at a Redis of finite throughput; after the client's timeout
    /// at one that hangs). `Some` when the instance's breaker is open: the
    /// command is not sent and its error applies at once, whether or not
    /// Redis has come back meanwhile.
    pub(super) fn reply_later(&mut self, thread: u32, input: Input) -> Option<Input> {
        let now = self.now;
        let down = self.redis_down_now();
        let inst = self.instance_of(thread);
        // An open breaker skips Redis for its whole length, up or down: a
        // client cannot see that Redis is back until it asks again.
        if self.breaker_open(inst) {
            self.r.redis_skipped += 1;
            return Some(input);
        }
        if down && !self.scenario.redis_down {
            if let Some(i) = self.fault_index(FaultKind::Redis) {
                match self.scenario.redis_outage {
                    RedisOutage::Error => self.bite(i, |a| a.redis_failed += 1),
                    // A hung command fails when the client gives up on it:
                    // the window's act from then (`report`), as the
                    // report's Redis errors count it.
                    RedisOutage::Hang => {
                        let at = now + self.scenario.redis_timeout_ms as Micros * US;
                        if self.hung_by_window.len() <= i {
                            self.hung_by_window.resize_with(i + 1, Vec::new);
                        }
                        self.hung_by_window[i].push(at);
                    }
                }
            }
        }
        let sc = &self.scenario;
        let t = if down {
            let wait = match sc.redis_outage {
                RedisOutage::Error => self.rtt(),
                RedisOutage::Hang => sc.redis_timeout_ms as Micros * US,
            };
            let at = now + wait;
            if sc.redis_breaker_ms > 0 {
                // The breaker opens when the failure is seen, not when sent.
                let len = sc.redis_breaker_ms as Micros * US;
                let b = &mut self.breakers[inst];
                *b = if at <= b.1 {
                    (b.0.min(at), b.1.max(at + len))
                } else {
                    (at, at + len)
                };
            }
            let s = &mut self.slots[thread as usize];
            s.redis_lost += wait;
            s.redis_lost_until = at;
            at
        } else if sc.redis_ops_per_ms > 0 {
            // One command at a time, first come first served (at most one
            // a microsecond: faster rates read as 1000 a millisecond).
            let service = (US / sc.redis_ops_per_ms as Micros).max(1);
            let start = self.redis_busy_until.max(now);
            self.redis_busy_until = start + service;
            let queued = (self.redis_busy_until - now) / service;
            self.r.redis_queue_peak = self.r.redis_queue_peak.max(queued);
            self.redis_busy_until + self.rtt()
        } else {
            now + self.rtt()
        };
        self.redis_latency.record(t - now);
        let wseq = self.slots[thread as usize].wseq;
        self.park(thread, Park::Reply);
        if self.replies.back().is_none_or(|b| b.t <= t) {
            self.seq += 1;
            self.replies.push_back(Ev {
                t,
                seq: self.seq,
                thread,
                wseq,
                kind: EvKind::Deliver(input),
            });
        } else {
            // Out of order (a timeout beside quick replies): the heap, which
            // merges with the replies by time, then by send order.
            self.push(t, thread, wseq, EvKind::Deliver(input));
        }
        // A round trip is a command sent and answered: one sent to a Redis
        // that is down is a Redis error (at once, or at the client's
        // timeout), not a round trip.
        if !down {
            self.r.redis_round_trips += 1;
        }
        match (down, self.scenario.redis_outage) {
            (false, _) => {}
            (true, RedisOutage::Error) => self.r.redis_errors += 1,
            // A hung command fails only when the client gives up on it:
            // counted from then (`report`), not when it was sent.
            (true, RedisOutage::Hang) => self.hung.push(t),
        }
        None
    }

    /// The instance's breaker is open now: its commands are not sent.
    pub(super) fn breaker_open(&self, inst: usize) -> bool {
        let (from, until) = self.breakers[inst];
        from <= self.now && self.now < until
    }

    /// A command sent now reaches a Redis that hangs: it runs when Redis
    /// resumes ([`Fleet::hold`]), and its reply comes too late for the
    /// client, which gives up at its timeout.
    pub(super) fn sent_to_hung(&self, inst: usize) -> bool {
        self.redis_down_now()
            && self.scenario.redis_outage == RedisOutage::Hang
            && !self.breaker_open(inst)
    }

    /// Runs the thread's machine until it blocks on something.
    pub(super) fn drive(&mut self, thread: u32, first: Input) {
        let mut input = first;
        let s_strategy = self.strategy;
        loop {
            self.work += 1;
            let now = self.now;
            let slot = &mut self.slots[thread as usize];
            let step = slot.path.resume(&s_strategy, input, now);
            let act = slot.path.activity(&step);
            let key = slot.path.key();
            if let Some(act) = act {
                self.set_state(thread, act);
            }
            let next = self.perform(thread, key, step);
            match next {
                Some(i) => input = i,
                None => return,
            }
        }
    }

    /// Performs one step. `Some(input)` when the answer is immediate.
    pub(super) fn perform(&mut self, thread: u32, key: u32, step: Step) -> Option<Input> {
        let down = self.redis_down_now();
        if !down && !self.held.is_empty() {
            // Redis has resumed at this very instant: what it held runs
            // before anything sent now.
            self.resume_redis();
        }
        let inst = self.instance_of(thread);
        let hung = self.sent_to_hung(inst);
        let l1 = self.scenario.local_cache_ms as Micros * US;
        match step {
            Step::CacheGet { key } => {
                if let Some(&(v, until)) = self.local[inst].get(&key).filter(|_| l1 > 0) {
                    if self.now < until {
                        self.r.local_hits += 1;
                        self.log(thread, EventKind::CacheGet, key, 2);
                        return Some(Input::Cache(CacheReply::Fresh(v)));
                    }
                }
                self.log(thread, EventKind::CacheGet, key, 0);
                let reply = if down {
                    CacheReply::Error
                } else {
                    self.cache_get(key)
                };
                if l1 > 0 {
                    if let CacheReply::Fresh(v) | CacheReply::FreshUntil { value: v, .. } = reply {
                        self.local[inst].insert(key, (v, self.now + l1));
                    }
                }
                if reply.is_miss() && self.slots[thread as usize].path.is_first_read() {
                    self.r.misses += 1;
                }
                self.reply_later(thread, Input::Cache(reply))
            }
            Step::Poll { key } => {
                self.log(thread, EventKind::Poll, key, 0);
                let (cache, claim_free) = if down {
                    (CacheReply::Error, false)
                } else {
                    let c = self.cache_get(key);
                    (c, self.claims.holder(&key, self.now).is_none())
                };
                self.reply_later(thread, Input::Polled { cache, claim_free })
            }
            Step::AbandonFlight { key: fk, ticket } => {
                self.log(thread, EventKind::Handover, key, 0);
                self.abandon(inst, fk, ticket);
                Some(Input::Ack)
            }
            Step::Wait => None,
            Step::JoinFlight { key: fk } => match self.flights[inst].join(fk, thread) {
                Join::Lead(t) => {
                    self.log(thread, EventKind::Lead, key, 0);
                    Some(Input::Flight(FlightReply::Lead(t)))
                }
                Join::Follow(t) => {
                    self.log(thread, EventKind::Follow, key, 0);
                    self.park(thread, Park::Follow(fk, t));
                    None
                }
                Join::Remembered(o) => {
                    self.r.remembered_failures += 1;
                    self.slots[thread as usize].inherited = Some(Cause::Remembered);
                    self.log(thread, EventKind::Remembered, key, 0);
                    Some(Input::Flight(FlightReply::Shared(o)))
                }
            },
            Step::TryLead { key: fk } => {
                if self.flights[inst].leader(&fk).is_some() {
                    Some(Input::Flight(FlightReply::Busy))
                } else {
                    match self.flights[inst].join(fk, thread) {
                        Join::Lead(t) => {
                            self.log(thread, EventKind::Lead, key, 0);
                            Some(Input::Flight(FlightReply::Lead(t)))
                        }
                        // Remembered failure: nothing to refresh with.
                        _ => Some(Input::Flight(FlightReply::Busy)),
                    }
                }
            }
            Step::SettleFlight {
                key: fk,
                ticket,
                outcome,
            } => {
                self.log(thread, EventKind::Settle, key, 0);
                if let Ok(settled) = self.flights[inst].settle(&fk, ticket, outcome) {
                    // What the followers inherit: why the work ended so.
                    let leader = &self.slots[thread as usize];
                    let mut cause = leader.path.work_cause();
                    if cause == Cause::OriginFailed && leader.origin_fault {
                        cause = Cause::OriginFault;
                    }
                    for (w, o) in settled.deliveries {
                        let ws = &mut self.slots[w as usize];
                        ws.inherited = Some(cause);
                        // Detached waiters are not in the list; a delivered
                        // waiter stops waiting now.
                        ws.park = Park::None;
                        ws.wseq = ws.wseq.wrapping_add(1);
                        ws.waited += self.now - ws.wait_from;
                        self.drive(w, Input::Flight(FlightReply::Shared(o)));
                    }
                }
                Some(Input::Ack)
            }
            Step::Claim { key, token, ttl } => {
                // The no-expiry pitfall: `SET NX` with no `PX`.
                let ttl = if self.scenario.pitfalls.no_expiry {
                    NO_EXPIRY
                } else {
                    ttl
                };
                self.r.claim_attempts += 1;
                self.log(thread, EventKind::Claim, key, 0);
                let reply = if hung {
                    self.hold(inst, Held::Claim { key, token, ttl });
                    ClaimReply::TimedOut
                } else if down {
                    ClaimReply::Error
                } else {
                    match self.claims.set_nx_px(key, token, ttl, self.now) {
                        Ok(SetReply::Ok { .. }) => ClaimReply::Won {
                            fence: self.claims.next_fence(key),
                        },
                        Ok(SetReply::Held) => ClaimReply::Held,
                        Err(_) => ClaimReply::Error,
                    }
                };
                let kind = match reply {
                    ClaimReply::Won { .. } => {
                        self.r.claim_wins += 1;
                        self.slots[thread as usize].won = Some(token);
                        EventKind::ClaimWon
                    }
                    ClaimReply::Held => EventKind::ClaimLost,
                    ClaimReply::Error | ClaimReply::TimedOut => EventKind::ClaimError,
                };
                self.log(thread, kind, key, 0);
                let dies = (self.scenario.holder_crash && !self.holder_crashed)
                    || self.crash_armed.is_some();
                if matches!(reply, ClaimReply::Won { .. }) && dies {
                    if self.scenario.holder_crash && !self.holder_crashed {
                        self.holder_crashed = true;
                    } else if let Some(i) = self.crash_armed.take() {
                        self.bite(i, |a| a.holders_killed += 1);
                    }
                    self.crash(thread);
                    return None;
                }
                self.reply_later(thread, Input::Claim(reply))
            }
            Step::Release { key, token } => {
                self.r.releases += 1;
                self.log(thread, EventKind::Release, key, 0);
                let won = self.slots[thread as usize].won == Some(token);
                self.send(inst, hung, down, Held::Release { key, token, won });
                self.reply_later(thread, Input::Ack)
            }
            Step::Unclaim { key, token } => {
                // Sent on the request's connection, after its claim, and
                // not waited for (as the real driver's `release_ambiguous`).
                self.r.unclaims += 1;
                self.log(thread, EventKind::Release, key, 0);
                let skipped = down || self.breaker_open(inst);
                let cmd = Held::Release {
                    key,
                    token,
                    won: false,
                };
                self.send(inst, hung, skipped, cmd);
                Some(Input::Ack)
            }
            Step::Admit { max_wait } => {
                let a = &mut self.admission[inst];
                if a.free > 0 {
                    a.free -= 1;
                    self.slots[thread as usize].permit = true;
                    Some(Input::Admitted)
                } else {
                    self.r.admission_waits += 1;
                    let wseq = self.slots[thread as usize].wseq;
                    a.queue.push_back((thread, wseq));
                    self.park(thread, Park::Queued);
                    // The shed timer shares the queue entry's wseq: whichever
                    // comes first (a permit or the timer) voids the other.
                    let at = self.now.saturating_add(max_wait);
                    self.push(at, thread, wseq, EvKind::Deliver(Input::Shed));
                    None
                }
            }
            Step::Recompute { key, timeout } => {
                self.start_recompute(thread, key, timeout);
                None
            }
            Step::CacheSet {
                key,
                value,
                delta,
                fence,
            } => {
                self.log(thread, EventKind::CacheSet, key, 0);
                let cmd = Held::Set {
                    key,
                    value,
                    delta,
                    fence,
                };
                self.send(inst, hung, down, cmd);
                self.reply_later(thread, Input::Ack)
            }
            Step::CacheSetNegative { key, ttl } => {
                self.log(thread, EventKind::CacheSet, key, 1);
                self.send(inst, hung, down, Held::Negative { key, ttl });
                self.reply_later(thread, Input::Ack)
            }
            Step::Sleep { until } => {
                let wseq = self.slots[thread as usize].wseq;
                self.park(thread, Park::Sleep);
                self.push(
                    until.max(self.now),
                    thread,
                    wseq,
                    EvKind::Deliver(Input::Woke),
                );
                None
            }
            Step::Respond { ending, corrupted } => {
                self.record_ending(thread, key, ending, corrupted);
                Some(Input::Ack)
            }
            Step::Finish => {
                self.finish(thread);
                None
            }
        }
    }
}

/// A command a hung Redis received and runs when it resumes (a read has
/// nothing to run: its reply is all it is, and the client gave up on it).
#[derive(Clone, Copy, Debug)]
pub(super) enum Held {
    Claim {
        key: u32,
        token: Token,
        ttl: Micros,
    },
    /// `won`: the sender's own winning claim (a refusal is counted).
    Release {
        key: u32,
        token: Token,
        won: bool,
    },
    Set {
        key: u32,
        value: Value,
        delta: Micros,
        fence: Option<u64>,
    },
    Negative {
        key: u32,
        ttl: Micros,
    },
}

impl Fleet {
    /// Redis runs a compare-and-delete release now. `won`: the token is
    /// its sender's winning claim, so a refusal means it lost it.
    pub(super) fn release(&mut self, key: u32, token: Token, won: bool) {
        if self.scenario.pitfalls.plain_del {
            // The plain-del pitfall: `DEL lock:key`, whoever holds it.
            match self.claims.del(&key, self.now) {
                Some(c) if c.token != token => {
                    self.r.claims_deleted_of_others += 1;
                    if let Some(i) = self.late.iter().position(|l| *l == (key, c.token)) {
                        self.late.swap_remove(i);
                    }
                }
                Some(_) => {
                    if let Some(i) = self.late.iter().position(|l| *l == (key, token)) {
                        self.late.swap_remove(i);
                        self.r.late_claims_released += 1;
                    }
                }
                None => {}
            }
            return;
        }
        match self.claims.release(&key, token, self.now) {
            ReleaseReply::Released => {
                if let Some(i) = self.late.iter().position(|l| *l == (key, token)) {
                    self.late.swap_remove(i);
                    self.r.late_claims_released += 1;
                }
            }
            refused @ (ReleaseReply::NotHolder | ReleaseReply::Absent) => {
                if won {
                    self.r.releases_refused += 1;
                    if refused == ReleaseReply::Absent {
                        self.r.releases_refused_expired += 1;
                    } else {
                        self.r.releases_refused_taken += 1;
                    }
                }
            }
        }
    }

    /// Redis runs `SET key value` now (refused when fenced and older).
    pub(super) fn write_value(
        &mut self,
        key: u32,
        value: Value,
        delta: Micros,
        fence: Option<u64>,
    ) {
        let stored = self.cache.get(&key).copied();
        // A fenced write older than the stored value's is refused, as the
        // fenced-write script does in Redis.
        if let (Some(f), Some(e)) = (fence, stored) {
            if f < e.fence {
                self.r.writes_refused += 1;
                return;
            }
        }
        if stored
            .and_then(|e| e.value)
            .is_some_and(|old| old.version > value.version)
        {
            // An older value lands on a newer one: a late writer.
            self.r.stale_overwrites += 1;
        }
        self.r.values_written += 1;
        let sc = &self.scenario;
        let (vt, st) = (sc.value_ttl_ms as Micros * US, sc.stale_ms as Micros * US);
        let ttl = self.jittered(vt);
        let now = self.now;
        if key == 0 && self.scenario.workload == Workload::Steady {
            self.mark_expiry(now + ttl);
        }
        self.cache.insert(
            key,
            CacheEntry {
                value: Some(value),
                negative_until: 0,
                fresh_until: now + ttl,
                stale_until: now + ttl + st,
                delta,
                // Unfenced writes (no claim won) leave the fence.
                fence: fence.unwrap_or(stored.map_or(0, |e| e.fence)),
            },
        );
    }

    /// Redis stores a failure marker now, for `ttl` from now.
    pub(super) fn write_negative(&mut self, key: u32, ttl: Micros) {
        let now = self.now;
        // The marker shadows the key for its TTL; a stale value underneath
        // stays servable to the stale paths after it.
        let e = self.cache.entry(key).or_insert(CacheEntry {
            value: None,
            negative_until: 0,
            fresh_until: 0,
            stale_until: 0,
            delta: 0,
            fence: 0,
        });
        e.negative_until = now + ttl;
    }

    /// When Redis is back from the outage it is in at `from`, if it ever is
    /// (a fault without an end, or Redis down for the whole run: never).
    fn redis_back_at(&self, from: Micros) -> Option<Micros> {
        if self.scenario.redis_down {
            return None;
        }
        let mut t = from;
        loop {
            let mut end: Option<Micros> = None;
            for f in &self.scenario.faults {
                if f.kind == FaultKind::Redis && f.active_at(ms(t)) {
                    let e = (f.start_ms as Micros + f.duration_ms? as Micros) * US;
                    end = Some(end.map_or(e, |x| x.max(e)));
                }
            }
            match end {
                Some(e) => t = e,
                None => return Some(t),
            }
        }
    }

    /// Runs `cmd` on a Redis that answers; true for a claim that landed.
    fn apply(&mut self, cmd: Held) -> bool {
        match cmd {
            Held::Claim { key, token, ttl } => {
                let won = matches!(
                    self.claims.set_nx_px(key, token, ttl, self.now),
                    Ok(SetReply::Ok { .. })
                );
                if won {
                    self.claims.next_fence(key);
                }
                return won;
            }
            Held::Release { key, token, won } => self.release(key, token, won),
            Held::Set {
                key,
                value,
                delta,
                fence,
            } => self.write_value(key, value, delta, fence),
            Held::Negative { key, ttl } => self.write_negative(key, ttl),
        }
        false
    }

    /// A write whose reply its sender does not wait on: a hung Redis holds
    /// it until it resumes, one that is down (or skipped) never gets it,
    /// otherwise it runs now.
    fn send(&mut self, inst: usize, hung: bool, down: bool, cmd: Held) {
        if hung {
            self.hold(inst, cmd);
        } else if !down {
            self.apply(cmd);
        }
    }

    /// A hung Redis received `cmd` from instance `inst`: it runs when Redis
    /// resumes, with that instance's other commands in the order sent. A Redis that never resumes never runs it.
    pub(super) fn hold(&mut self, inst: usize, cmd: Held) {
        if self.held.is_empty() {
            let Some(at) = self.redis_back_at(self.now) else {
                return;
            };
            self.push(at, 0, 0, EvKind::Resume);
        }
        self.held.push_back((inst, cmd));
    }

    /// Redis resumes: it runs the commands it held, connection by
    /// connection, each in the order sent. A claim among them lands though its client gave up on it; the
    /// release its client sent after it (by its token) clears it.
    pub(super) fn resume_redis(&mut self) {
        if self.held.is_empty() {
            return;
        }
        if self.redis_down_now() {
            // A fault added since runs the outage on: resume at its end.
            if let Some(at) = self.redis_back_at(self.now) {
                self.push(at, 0, 0, EvKind::Resume);
            } else {
                self.held.clear();
            }
            return;
        }
        let now = self.now;
        let claims = &self.claims;
        // Late claims that expired are nobody's to release any more.
        self.late
            .retain(|(k, t)| claims.holder(k, now).is_some_and(|c| c.token == *t));
        let mut landed = Vec::new();
        // A resumed Redis reads each connection's waiting commands in turn
        // (one connection per instance), in the order that connection sent
        // them: an instance's claim and the release by token it sent after
        // it run together, before the next instance's (a real redis-server
        // stopped and resumed does so: each instance's late claim lands and
        // is released).
        let held: Vec<(usize, Held)> = std::mem::take(&mut self.held).into();
        let mut order: Vec<usize> = Vec::new();
        for (i, _) in &held {
            if !order.contains(i) {
                order.push(*i);
            }
        }
        let by_connection = order
            .into_iter()
            .flat_map(|i| held.iter().filter(move |(j, _)| *j == i).map(|(_, c)| *c));
        for cmd in by_connection.collect::<Vec<_>>() {
            if let (Held::Claim { key, token, .. }, true) = (cmd, self.apply(cmd)) {
                self.r.late_claims += 1;
                self.late.push((key, token));
                landed.push((key, token));
            }
        }
        let held = landed
            .iter()
            .filter(|(k, t)| self.claims.holder(k, now).is_some_and(|c| c.token == *t))
            .count();
        self.r.late_claims_held_at_resume += held as u64;
    }
}
