//! The simulated world's side of each step: the cache's answers, the
//! origin (latency, capacity, failures, hangs, outages, its timeout), the
//! admission permits, a holder that crashes, and how a request's answer is
//! recorded.

use super::*;

impl Fleet {
    pub(super) fn jittered(&mut self, ttl: Micros) -> Micros {
        let j = self.scenario.jitter;
        if j <= 0.0 {
            return ttl.max(1);
        }
        let f = 1.0 - j + 2.0 * j * self.rng.unit();
        ((ttl as f64 * f) as Micros).max(1)
    }

    /// XFetch's delta for a value nobody measured (written before the run):
    /// the mean recompute plus the claim, re-check and write round trips,
    /// as the read path measures it.
    pub(super) fn nominal_delta(&self) -> Micros {
        (self.scenario.recompute_ms as Micros + 3 * self.scenario.rtt_ms as Micros) * US
    }

    pub(super) fn cache_get(&mut self, key: u32) -> CacheReply {
        let now = self.now;
        let Some(e) = self.cache.get(&key).copied() else {
            return CacheReply::Miss;
        };
        if let Some(v) = e.value.filter(|_| now < e.fresh_until) {
            if self.strategy.xfetch_beta > 0.0 {
                // Early refresh needs the expiry, the delta and a draw; the
                // draw is taken only when XFetch is on, so runs without it
                // keep their random stream (and their event logs) as before.
                return CacheReply::FreshUntil {
                    value: v,
                    expires_at: e.fresh_until,
                    delta: e.delta,
                    draw: self.rng.next_u64() as u32,
                };
            }
            return CacheReply::Fresh(v);
        }
        if now < e.negative_until {
            self.r.negative_hits += 1;
            return CacheReply::Negative(e.value.filter(|_| now < e.stale_until));
        }
        match e.value {
            Some(v) if now < e.fresh_until => CacheReply::Fresh(v),
            Some(v) if now < e.stale_until => CacheReply::Stale(v),
            _ => {
                self.cache.remove(&key);
                CacheReply::Miss
            }
        }
    }

    pub(super) fn start_recompute(&mut self, thread: u32, key: u32, timeout: Option<Micros>) {
        let sc = self.scenario.clone();
        let now = self.now;
        self.r.recomputes += 1;
        self.slots[thread as usize].called = true;
        if self.slots[thread as usize].attempt > 0 {
            self.r.retry_recomputes += 1;
        }
        // Each origin window open now acts on this call: fails, hangs or
        // slows it.
        let windows = [
            FaultKind::Origin,
            FaultKind::OriginHang,
            FaultKind::OriginSlow,
        ]
        .map(|k| self.fault_index(k));
        let fault_fails = windows[0].is_some();
        if let Some(i) = windows[0] {
            self.bite(i, |a| a.calls_failed += 1);
        }
        if let Some(i) = windows[1] {
            self.bite(i, |a| a.calls_hung += 1);
        }
        if let Some(i) = windows[2] {
            self.bite(i, |a| a.calls_slowed += 1);
        }
        if self.slots[thread as usize].path.is_early_refresh() {
            self.r.early_refreshes += 1;
        }
        let running = self.running_per_key.entry(key).or_insert(0);
        if *running > 0 {
            self.r.overlapping_recomputes += 1;
        }
        *running += 1;
        self.origin_running += 1;
        self.r.origin_peak_concurrency = self.r.origin_peak_concurrency.max(self.origin_running);
        self.log(thread, EventKind::RecomputeStart, key, 0);
        let wseq = self.slots[thread as usize].wseq;
        // The permit moves from the request to the call: a caller that gives
        // up does not make room at the origin, only a finished call does.
        let permit = std::mem::replace(&mut self.slots[thread as usize].permit, false);
        self.park(thread, Park::Origin);
        let hangs = sc.hang || self.fault_now(FaultKind::OriginHang);
        if hangs {
            // Never answers (nor frees its permit); the origin timeout ends
            // the work's wait, and a deadline ends a caller's.
            if let Some(to) = timeout {
                self.push(
                    now.saturating_add(to),
                    thread,
                    wseq,
                    EvKind::Deliver(Input::Origin(Err(Failure::Timeout))),
                );
            }
            return;
        }
        // Latency: base x [0.75, 1.25), with a 2% tail at 2-4x; beyond the
        // origin's capacity every call slows in proportion to the overload.
        let base = sc.recompute_ms as Micros * US;
        let mut lat = base * (750 + self.rng.below(500)) / 1000;
        if self.rng.below(100) < 2 {
            lat *= 2 + self.rng.below(3);
        }
        let cap = sc.origin_capacity.max(1) as Micros;
        if self.origin_running > cap {
            lat = lat * self.origin_running / cap;
        }
        if self.fault_now(FaultKind::OriginSlow) {
            lat *= 10;
        }
        let outage = now < sc.origin_outage_ms as Micros * US || self.fault_now(FaultKind::Origin);
        let fails = outage || (sc.fail_rate > 0.0 && self.rng.unit() < sc.fail_rate);
        // The knobs' own outage (from t = 0) and failure rate are the
        // scenario's; only a window's failure is the fault's.
        let knob_fails = now < sc.origin_outage_ms as Micros * US;
        self.slots[thread as usize].origin_fault = fault_fails && !knob_fails;
        let result = if fails {
            self.r.origin_failures += 1;
            Err(Failure::Origin)
        } else {
            let v = self.versions.entry(key).or_insert(0);
            *v += 1;
            Ok(Value::fresh(key, *v))
        };
        let lat = lat.max(1);
        let notify = match timeout {
            Some(to) if to < lat => {
                self.push(
                    now + to,
                    thread,
                    wseq,
                    EvKind::Deliver(Input::Origin(Err(Failure::Timeout))),
                );
                false
            }
            _ => true,
        };
        self.push(
            now + lat,
            thread,
            wseq,
            EvKind::OriginDone {
                key,
                result,
                permit,
                notify,
            },
        );
    }

    pub(super) fn release_permit(&mut self, inst: usize) {
        while let Some((t, wseq)) = self.admission[inst].queue.pop_front() {
            let s = &self.slots[t as usize];
            if s.active && s.wseq == wseq && s.park == Park::Queued {
                // Hand the permit straight over.
                let s = &mut self.slots[t as usize];
                s.permit = true;
                s.park = Park::None;
                s.wseq = s.wseq.wrapping_add(1);
                s.waited += self.now - s.wait_from;
                self.drive(t, Input::Admitted);
                return;
            }
        }
        self.admission[inst].free += 1;
    }

    /// The first claim winner dies as it wins: its claim stays
    /// until the TTL runs out, and its flight's followers must not be
    /// stranded.
    pub(super) fn crash(&mut self, thread: u32) {
        // Whatever it waited on forgets it (a fault can strike a follower).
        self.unpark(thread);
        let inst = self.instance_of(thread);
        let key = self.slots[thread as usize].path.key();
        self.r.crashed += 1;
        if let Some(t) = self.slots[thread as usize].won {
            self.dead_tokens.push((t, self.thread_of[thread as usize]));
        }
        self.log(thread, EventKind::Crash, key, 0);
        if let Some(ticket) = self.slots[thread as usize].path.leader_ticket() {
            let fk = self.slots[thread as usize].path.flight_key(&self.strategy);
            self.abandon(inst, fk, ticket);
        }
        if !self.slots[thread as usize].path.has_responded() {
            self.slots[thread as usize].inherited = Some(Cause::Crashed);
            self.record_ending(thread, key, Ending::Error, false);
        }
        self.finish(thread);
    }

    /// A leader leaves its flight: the oldest follower takes it over.
    pub(super) fn abandon(
        &mut self,
        inst: usize,
        fk: FlightKey,
        ticket: crate::flight::LeaderTicket,
    ) {
        if let Ok(Abandoned::Promoted { leader, ticket }) = self.flights[inst].abandon(&fk, ticket)
        {
            self.r.handovers += 1;
            let s = &mut self.slots[leader as usize];
            s.park = Park::None;
            s.wseq = s.wseq.wrapping_add(1);
            s.waited += self.now - s.wait_from;
            self.drive(leader, Input::Flight(FlightReply::Promoted(ticket)));
        }
    }

    pub(super) fn record_ending(&mut self, thread: u32, key: u32, ending: Ending, corrupted: bool) {
        let now = self.now;
        // A failed attempt with retries left is not the caller's answer:
        // the caller tries again once the thread is free (`finish`).
        if matches!(ending, Ending::Error | Ending::Timeout)
            && self.slots[thread as usize].attempt < self.scenario.retries
        {
            let s = &mut self.slots[thread as usize];
            s.retry = true;
            if let Park::Follow(..) | Park::Queued | Park::Sleep = s.park {
                s.waited += now - s.wait_from;
            }
            self.r.retries += 1;
            self.log(thread, EventKind::Retry, key, ending as u8);
            return;
        }
        let s = &mut self.slots[thread as usize];
        // A caller answered at its deadline while its work is still queued
        // has waited until now, though the work's wait goes on.
        let waiting = match s.park {
            Park::Follow(..) | Park::Queued | Park::Sleep => now - s.wait_from,
            _ => 0,
        };
        // No guard against a second ending on purpose: conservation
        // (requests = endings + pinned) is a tested invariant, and a guard
        // here would hide the bug it exists to catch.
        s.ending = Some(ending);
        let entry = ledger_entry(s, ending);
        self.r.ledger.record(entry.0, entry.1);
        self.unanswered -= 1;
        let lat = self.now - s.started;
        let waited = s.waited + waiting;
        self.latency.record(lat);
        self.max_wait = self.max_wait.max(waited);
        match ending {
            Ending::Hit => self.r.hits += 1,
            Ending::Stale => self.r.stale_served += 1,
            Ending::Computed => self.r.computed += 1,
            Ending::Shared => self.r.shared += 1,
            Ending::Degraded => self.r.degraded += 1,
            Ending::Error => self.r.errors += 1,
            Ending::Timeout => self.r.timeouts += 1,
        }
        self.slots[thread as usize].corrupted = corrupted;
        let shown = if corrupted {
            self.r.corrupted += 1;
            Activity::Corrupted
        } else {
            Activity::of_ending(ending)
        };
        self.set_state(thread, shown);
        self.log(thread, EventKind::Respond, key, ending as u8);
    }

    pub(super) fn finish(&mut self, thread: u32) {
        let s = &mut self.slots[thread as usize];
        s.active = false;
        s.park = Park::None;
        s.wseq = s.wseq.wrapping_add(1);
        if s.permit {
            s.permit = false;
            let inst = self.instance_of(thread);
            self.release_permit(inst);
        }
        let s = &self.slots[thread as usize];
        if let Some(e) = s.ending {
            let shown = if s.corrupted {
                Activity::Corrupted
            } else {
                Activity::of_ending(e)
            };
            self.set_state(thread, shown);
        }
        if self.slots[thread as usize].retry {
            // Full jitter: a uniform pause up to the backoff, doubled per
            // attempt, so a fleet's retries do not land together.
            let attempt = self.slots[thread as usize].attempt.min(20);
            let cap = (self.scenario.retry_backoff_ms as Micros * US) << attempt;
            let pause = self.rng.below(cap + 1);
            self.push(self.now + pause.max(1), thread, 0, EvKind::Retry);
            return;
        }
        if !self.idle.is_empty() {
            // Open-loop: the next request comes from the accept queue.
            self.free_thread(thread);
            return;
        }
        if self.scenario.workload == Workload::Steady {
            let end = self.scenario.duration_ms as Micros * US;
            let think = self.scenario.think_ms as Micros * US;
            let pause = think / 2 + self.rng.below(think + 1);
            let at = self.now + pause.max(1);
            if at < end {
                self.push(at, thread, 0, EvKind::Arrive);
            }
        }
    }
}

/// The ledger's entry for the answer `s` got (`ending`): the read path's
/// own, refined by what only the driver saw. An answer from the flight
/// carries the leader's cause (or a remembered failure's, or the crash
/// that ended it), a timeout what the caller was waiting on at its
/// deadline, and an origin error the fault window that caused it.
fn ledger_entry(s: &Slot, ending: Ending) -> (End, Cause) {
    let (mut end, mut cause) = s.path.ledger_entry();
    // A fresh value from the flight is the read path doing its job,
    // whatever else the leader's work met (an early refresh shed after
    // its fresh value was handed on).
    let inherits = (s.path.answered_by_flight() && !end.is_fresh()) || c_is_crash(s);
    if let Some(c) = s.inherited.filter(|_| inherits) {
        cause = c;
    }
    if end == End::Timeout {
        cause = s.waited_on.unwrap_or(Cause::WaitedFlight);
    }
    if cause == Cause::OriginFailed && s.origin_fault {
        cause = Cause::OriginFault;
    }
    // The read path's end always agrees with the ending it sent (a value
    // another wrote is a hit to the counters); a crash ends a request the
    // read path had not answered.
    let sent = match ending {
        Ending::Hit => End::Hit,
        Ending::Stale => End::Stale,
        Ending::Computed => End::Computed,
        Ending::Shared => End::Shared,
        Ending::Degraded => End::Degraded,
        Ending::Error => End::Error,
        Ending::Timeout => End::Timeout,
    };
    if end != sent && !(sent == End::Hit && end == End::Written) {
        debug_assert!(
            c_is_crash(s),
            "ledger end {end:?} for ending {ending:?} ({cause:?})"
        );
        end = sent;
    }
    (end, cause)
}

fn c_is_crash(s: &Slot) -> bool {
    s.inherited == Some(Cause::Crashed) && !s.path.answered_by_flight()
}
