//! Building a fleet in slices: drawing and ordering the arrivals (a
//! counting sort over the burst window), warming a steady cache, the
//! per-thread slots. The order of random draws does not depend on the
//! slicing, so a sliced build and a whole one give the same fleet.

use super::*;

/// Construction in slices. Burst and cold arrivals are ordered by (time,
/// thread) with a bucket sort: buckets of `bucket_width` microseconds (one
/// microsecond for a burst, so it is a counting sort), each then sorted.
#[derive(Clone)]
pub(super) enum Build {
    Times(Vec<Micros>),
    Count(Vec<Micros>, Vec<u32>, usize),
    Place(Vec<Micros>, Vec<u32>, Vec<(Micros, u32)>, usize),
    SortBuckets(Vec<u32>, Vec<(Micros, u32)>, usize),
    Number(Vec<(Micros, u32)>, usize),
    SteadyArrivals(usize),
    SteadyKeys(u32),
    Slots,
    Done,
}

/// About four buckets per thread at most, and never narrower than 1 µs.
pub(super) fn bucket_width(window: Micros, n: usize) -> Micros {
    let buckets = 4 * n as Micros + 1024;
    (window + 1).div_ceil(buckets).max(1)
}

impl Fleet {
    /// Slots are filled in slices by the first calls to `advance_to`, so
    /// that building a million-thread fleet never blocks a frame.
    pub(super) fn fill_slots(&mut self, max: usize) -> usize {
        let n = self.thread_of.len();
        let todo = (n - self.slots.len()).min(max);
        if todo > 0 {
            let template = Slot {
                path: ReadPath::new(&self.strategy, 0, 0, 0),
                active: false,
                wseq: 0,
                req: 0,
                park: Park::None,
                started: 0,
                wait_from: 0,
                waited: 0,
                permit: false,
                ending: None,
                corrupted: false,
                won: None,
                attempt: 0,
                retry: false,
                called: false,
                inherited: None,
                origin_fault: false,
                waited_on: None,
                redis_lost: 0,
                redis_lost_until: 0,
            };
            self.slots.reserve_exact(n - self.slots.len());
            self.slots.extend(std::iter::repeat_n(template, todo));
        }
        todo
    }

    /// Construction is finished: every slot exists and arrivals are ordered.
    pub(super) fn ready(&self) -> bool {
        matches!(self.build, Build::Done)
    }

    /// Cheap set-up only; everything proportional to the fleet's size is
    /// done by [`Fleet::build_some`] in slices (see `advance_to`).
    pub(super) fn prepare(&mut self) {
        let ms = |v: u32| v as Micros * US;
        let outage = ms(self.scenario.origin_outage_ms);
        if outage > 0 {
            self.mark(outage, Milestone::OutageEnds);
        }
        if self.scenario.workload != Workload::Steady {
            self.mark(0, Milestone::KeyExpires);
        }
        for (i, f) in self.scenario.faults.clone().into_iter().enumerate() {
            self.schedule_fault(f, i);
        }
        let sc = &self.scenario;
        match sc.workload {
            Workload::Burst | Workload::Cold => {
                let spread = ms(sc.spread_ms);
                self.horizon = spread + tail(sc);
                if sc.workload == Workload::Burst && sc.stale_ms > 0 {
                    let stale_until = ms(sc.stale_ms);
                    self.cache.insert(
                        0,
                        CacheEntry {
                            value: Some(Value::fresh(0, 0)),
                            negative_until: 0,
                            fresh_until: 0,
                            stale_until,
                            delta: (sc.recompute_ms + 3 * sc.rtt_ms) as Micros * US,
                            fence: 0,
                        },
                    );
                }
                self.build = Build::Times(Vec::with_capacity(self.thread_of.len()));
            }
            Workload::Steady => {
                self.horizon = ms(sc.duration_ms) + tail(sc);
                self.build = Build::SteadyArrivals(0);
            }
        }
    }

    /// Does up to `budget` units of the fleet's construction and returns how
    /// many it did. The order of random draws is the same however the work
    /// is sliced, so a sliced build and a whole one give the same fleet.
    pub(super) fn build_some(&mut self, budget: u64) -> u64 {
        let n = self.thread_of.len();
        let ms = |v: u32| v as Micros * US;
        let mut done = 0u64;
        while done < budget {
            let left = (budget - done) as usize;
            match std::mem::replace(&mut self.build, Build::Done) {
                Build::Done => break,
                Build::Times(mut times) => {
                    let spread = ms(self.scenario.spread_ms);
                    let k = (n - times.len()).min(left);
                    for _ in 0..k {
                        times.push(self.rng.below(spread + 1));
                    }
                    done += k as u64;
                    self.build = if times.len() == n {
                        let width = bucket_width(spread, n);
                        let buckets = (spread / width) as usize + 1;
                        Build::Count(times, vec![0; buckets + 1], 0)
                    } else {
                        Build::Times(times)
                    };
                }
                Build::Count(times, mut start, i) => {
                    let width = bucket_width(ms(self.scenario.spread_ms), n);
                    let k = (n - i).min(left);
                    for t in &times[i..i + k] {
                        start[(*t / width) as usize + 1] += 1;
                    }
                    done += k as u64;
                    self.build = if i + k == n {
                        for b in 1..start.len() {
                            start[b] += start[b - 1];
                        }
                        done += start.len() as u64;
                        Build::Place(times, start, vec![(0, 0); n], 0)
                    } else {
                        Build::Count(times, start, i + k)
                    };
                }
                Build::Place(times, mut start, mut out, i) => {
                    let width = bucket_width(ms(self.scenario.spread_ms), n);
                    let k = (n - i).min(left);
                    for (j, t) in times[i..i + k].iter().enumerate() {
                        let at = &mut start[(*t / width) as usize];
                        out[*at as usize] = (*t, (i + j) as u32);
                        *at += 1;
                    }
                    done += k as u64;
                    self.build = if i + k == n {
                        Build::SortBuckets(start, out, 0)
                    } else {
                        Build::Place(times, start, out, i + k)
                    };
                }
                Build::SortBuckets(start, mut out, b) => {
                    // After placing, start[b] is where bucket b ends. Within a
                    // bucket entries are in thread order; order them by time.
                    let buckets = start.len() - 1;
                    let k = (buckets - b).min(left);
                    for bucket in b..b + k {
                        let from = if bucket == 0 { 0 } else { start[bucket - 1] } as usize;
                        let to = start[bucket] as usize;
                        if to - from > 1 {
                            out[from..to].sort_unstable();
                        }
                        done += (to - from) as u64;
                    }
                    done += k as u64;
                    self.build = if b + k == buckets {
                        Build::Number(out, 0)
                    } else {
                        Build::SortBuckets(start, out, b + k)
                    };
                }
                Build::Number(mut out, i) => {
                    let k = (n - i).min(left);
                    for (slot, a) in out[i..i + k].iter_mut().enumerate() {
                        self.thread_of[i + slot] = a.1;
                        a.1 = (i + slot) as u32;
                    }
                    done += k as u64;
                    if i + k == n {
                        self.arrivals = out;
                        self.build = Build::Slots;
                    } else {
                        self.build = Build::Number(out, i + k);
                    }
                }
                Build::SteadyArrivals(_) if self.scenario.arrivals == Arrivals::Open => {
                    // One chain of arrivals for the fleet, not one per thread.
                    let at = self.open_gap();
                    self.push(at, 0, 0, EvKind::OpenArrive);
                    done += 1;
                    self.build = Build::SteadyKeys(0);
                }
                Build::SteadyArrivals(i) => {
                    let think = ms(self.scenario.think_ms);
                    let k = (n - i).min(left);
                    for t in i..i + k {
                        let at = self.rng.below(think + 1);
                        self.push(at, t as u32, 0, EvKind::Arrive);
                    }
                    done += k as u64;
                    self.build = if i + k == n {
                        Build::SteadyKeys(0)
                    } else {
                        Build::SteadyArrivals(i + k)
                    };
                }
                Build::SteadyKeys(k0) => {
                    let keys = self.scenario.keys;
                    let (vt, st) = (ms(self.scenario.value_ttl_ms), ms(self.scenario.stale_ms));
                    let k = (keys - k0).min(left as u32);
                    for key in k0..k0 + k {
                        let ttl = self.jittered(vt);
                        if key == 0 {
                            self.mark_expiry(ttl);
                        }
                        self.cache.insert(
                            key,
                            CacheEntry {
                                value: Some(Value::fresh(key, 0)),
                                negative_until: 0,
                                fresh_until: ttl,
                                stale_until: ttl + st,
                                delta: self.nominal_delta(),
                                fence: 0,
                            },
                        );
                    }
                    done += k as u64;
                    self.build = if k0 + k == keys {
                        Build::Slots
                    } else {
                        Build::SteadyKeys(k0 + k)
                    };
                }
                Build::Slots => {
                    done += self.fill_slots(left) as u64;
                    self.build = if self.slots.len() == n {
                        Build::Done
                    } else {
                        Build::Slots
                    };
                }
            }
        }
        done
    }
}
