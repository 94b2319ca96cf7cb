//! Sizing the knobs: four rules of thumb, each worked out for one
//! scenario from its own knobs, so the page can say "for your recompute of
//! 400 ms: TTL ≥ 3.0 s" and check the knob the learner set against it.
//!
//! - the caller's **deadline** from the service's latency objective (SLO):
//!   the wait plus the round trips around it must fit inside it;
//! - the **claim TTL** above the longest the work can hold the claim: the
//!   origin timeout (which bounds the recompute) plus the write;
//! - the **poll interval** against the recompute: a waiting loser learns of
//!   the value up to one interval late, and polls recompute / interval times;
//! - the per-instance **admission limit** from the origin's capacity shared
//!   by every instance.

use stampede::metrics::Report;
use stampede::scenario::Scenario;

/// One rule worked out for a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// Stable name (`deadline`, `claim_ttl`, `poll`, `admission`), the
    /// page's `data-sizing` hook.
    pub name: &'static str,
    /// The knob the rule sizes (its link key's long name).
    pub knob: &'static str,
    /// The knob as set, in its own unit (ms, or permits).
    pub yours: u64,
    /// The bound the rule gives, in the same unit.
    pub bound: u64,
    /// `yours` is within the bound.
    pub holds: bool,
    /// The rule and its worked example, every number a knob or computed
    /// from knobs.
    pub text: String,
}

fn ms(v: u64) -> String {
    if v >= 1000 && v.is_multiple_of(100) {
        format!("{} s", stampede::decimal::format(v as f64 / 1000.0))
    } else {
        format!("{v} ms")
    }
}

/// The longest a caller may wait and still be answered within `slo_ms`:
/// the SLO less the read before the wait and the answer's round trip after.
pub fn deadline_for(slo_ms: u64, rtt_ms: u64) -> u64 {
    slo_ms.saturating_sub(2 * rtt_ms)
}

/// The shortest safe claim TTL: the origin timeout bounds the recompute,
/// then the value is written (one round trip).
pub fn claim_ttl_min(s: &Scenario) -> u64 {
    u64::from(s.origin_timeout_ms) + u64::from(s.rtt_ms)
}

/// A poll interval that keeps a waiting loser's extra wait to a tenth of
/// the recompute, and at least a round trip (a poll is one GET).
pub fn poll_for(s: &Scenario) -> u64 {
    (u64::from(s.recompute_ms) / 10)
        .max(u64::from(s.rtt_ms))
        .max(1)
}

/// Polls a waiting loser sends while one recompute runs.
pub fn polls_per_wait(s: &Scenario) -> u64 {
    u64::from(s.recompute_ms).div_ceil(u64::from(s.poll_ms).max(1))
}

/// Recompute permits per instance so that every instance at its limit
/// stays within the origin's capacity (at least one, or nobody refreshes).
pub fn admission_for(s: &Scenario) -> u64 {
    (u64::from(s.origin_capacity) / u64::from(s.instances).max(1)).max(1)
}

/// The four rules for `s`, with a latency objective of `slo_ms` at p99.
pub fn rules(s: &Scenario, slo_ms: u64) -> Vec<Rule> {
    let rtt = u64::from(s.rtt_ms);
    let deadline = deadline_for(slo_ms, rtt);
    let ttl_min = claim_ttl_min(s);
    let poll = poll_for(s);
    let admit = admission_for(s);
    let yours_admission = u64::from(s.admission);
    vec![
        Rule {
            name: "deadline",
            knob: "deadline_ms",
            yours: u64::from(s.deadline_ms),
            bound: deadline,
            holds: u64::from(s.deadline_ms) <= deadline,
            text: format!(
                "Deadline ≤ SLO − 2 round trips (the read before the wait, the answer after): for an SLO of {} at p99 and a {} round trip, deadline ≤ {}. Yours is {}.",
                ms(slo_ms),
                ms(rtt),
                ms(deadline),
                ms(u64::from(s.deadline_ms))
            ),
        },
        Rule {
            name: "claim_ttl",
            knob: "claim_ttl_ms",
            yours: u64::from(s.claim_ttl_ms),
            bound: ttl_min,
            holds: u64::from(s.claim_ttl_ms) >= ttl_min,
            text: format!(
                "Claim TTL ≥ origin timeout + the write: for your recompute of {} (bounded by a {} origin timeout) and a {} write, TTL ≥ {}. Yours is {}.",
                ms(u64::from(s.recompute_ms)),
                ms(u64::from(s.origin_timeout_ms)),
                ms(rtt),
                ms(ttl_min),
                ms(u64::from(s.claim_ttl_ms))
            ),
        },
        Rule {
            name: "poll",
            knob: "poll_ms",
            yours: u64::from(s.poll_ms),
            bound: poll,
            holds: u64::from(s.poll_ms) <= poll,
            text: format!(
                "Poll ≈ recompute ÷ 10 (at least a round trip): a waiting loser sees the value up to one poll late and sends recompute ÷ poll GETs. For a {} recompute, poll ≤ {}. Yours, {}, costs {} polls per waiter and up to {} late.",
                ms(u64::from(s.recompute_ms)),
                ms(poll),
                ms(u64::from(s.poll_ms)),
                polls_per_wait(s),
                ms(u64::from(s.poll_ms))
            ),
        },
        Rule {
            name: "admission",
            knob: "admission",
            yours: yours_admission,
            bound: admit,
            holds: yours_admission > 0 && yours_admission <= admit,
            text: format!(
                "Admission per instance ≤ origin capacity ÷ instances: {} concurrent recomputes over {} instances gives {} per instance. Yours is {}.",
                s.origin_capacity,
                s.instances,
                admit,
                if yours_admission == 0 {
                    "unlimited".to_string()
                } else {
                    yours_admission.to_string()
                }
            ),
        },
    ]
}

/// What a run shows about a rule's knob, in a few words: the counters the
/// rule is about (the sizing panel prints it beside the rule).
pub fn evidence(rule: &str, r: &Report, s: &Scenario) -> String {
    use stampede::decimal::format as dec;
    match rule {
        "deadline" => format!(
            "This run: p99 {} ms, {} timeouts.",
            dec(r.p99_ms),
            r.timeouts
        ),
        "claim_ttl" => format!(
            "This run: {} overlapping recomputes, {} releases refused.",
            r.overlapping_recomputes, r.releases_refused
        ),
        "poll" => format!(
            "This run: {} Redis round trips, longest wait {} ms.",
            r.redis_round_trips,
            dec(r.max_wait_ms)
        ),
        _ => format!(
            "This run: origin peak {} of capacity {}, {} shed.",
            r.origin_peak_concurrency, s.origin_capacity, r.admission_shed
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede::scenario::preset;

    #[test]
    fn every_number_in_the_evidence_is_the_run_s() {
        for name in ["short-ttl", "cold", "burst", "redis-hang"] {
            let s = preset(name).unwrap();
            let r = stampede::sim::Fleet::new(&s, 1).run();
            let mut known: Vec<String> = r.fields().into_iter().map(|(_, v)| v).collect();
            known.extend([
                stampede::decimal::format(r.p99_ms),
                stampede::decimal::format(r.max_wait_ms),
                s.origin_capacity.to_string(),
            ]);
            for rule in rules(&s, 1000) {
                let text = evidence(rule.name, &r, &s);
                for n in crate::lesson::numbers_in(&text) {
                    assert!(
                        known.contains(&n),
                        "{name}/{}: {n} in {text:?} is not the run's",
                        rule.name
                    );
                }
            }
        }
    }

    fn rule<'a>(rules: &'a [Rule], name: &str) -> &'a Rule {
        rules.iter().find(|r| r.name == name).unwrap()
    }

    #[test]
    fn the_defaults_follow_the_ttl_rule() {
        let s = Scenario::default();
        let r = rules(&s, 1000);
        let ttl = rule(&r, "claim_ttl");
        assert_eq!(ttl.bound, 3001, "3 s origin timeout + a 1 ms write");
        assert!(ttl.holds, "a 5 s TTL is above it");
        assert!(
            ttl.text.contains("TTL ≥ 3001 ms. Yours is 5 s."),
            "{}",
            ttl.text
        );
        assert_eq!(rule(&r, "deadline").bound, 998);
        assert!(
            !rule(&r, "deadline").holds,
            "1000 ms leaves no room for the round trips"
        );
        assert_eq!(rule(&r, "admission").bound, 1, "64 over 40 instances");
        assert!(!rule(&r, "admission").holds, "unlimited by default");
        assert!(rule(&r, "admission").text.ends_with("Yours is unlimited."));
    }

    #[test]
    fn a_short_ttl_breaks_its_rule_and_the_run_shows_why() {
        let s = preset("short-ttl").unwrap();
        let r = rules(&s, 1000);
        let ttl = rule(&r, "claim_ttl");
        assert!(!ttl.holds);
        assert!(
            ttl.text.starts_with(
                "Claim TTL ≥ origin timeout + the write: for your recompute of 400 ms"
            ),
            "{}",
            ttl.text
        );
        // The rule's bound is safe where the short TTL was not.
        let report = stampede::Fleet::new(&s, 1).run();
        assert!(report.overlapping_recomputes > 0);
        let sized = Scenario {
            claim_ttl_ms: ttl.bound as u32,
            ..s
        };
        let report = stampede::Fleet::new(&sized, 1).run();
        assert_eq!(report.overlapping_recomputes, 0, "{report:?}");
        assert_eq!(report.releases_refused, 0);
    }

    #[test]
    fn poll_and_admission_follow_the_knobs() {
        let s = Scenario {
            recompute_ms: 400,
            poll_ms: 100,
            rtt_ms: 2,
            instances: 8,
            origin_capacity: 64,
            admission: 4,
            ..Scenario::default()
        };
        let r = rules(&s, 500);
        let poll = rule(&r, "poll");
        assert_eq!((poll.bound, poll.holds), (40, false));
        assert_eq!(polls_per_wait(&s), 4);
        assert!(
            poll.text.contains("costs 4 polls per waiter"),
            "{}",
            poll.text
        );
        assert_eq!(rule(&r, "admission").bound, 8);
        assert!(rule(&r, "admission").holds);
        assert_eq!(rule(&r, "deadline").bound, 496);
        // Degenerate knobs give a bound, never a panic.
        let odd = Scenario {
            instances: 0,
            poll_ms: 0,
            recompute_ms: 0,
            ..Scenario::default()
        };
        let r = rules(&odd, 0);
        assert_eq!(rule(&r, "deadline").bound, 0);
        assert_eq!(poll_for(&odd), 1);
        assert!(admission_for(&odd) >= 1);
    }

    #[test]
    fn a_smaller_poll_costs_more_gets_and_less_wait() {
        // The poll's effect on the run: a waiter's extra wait and its GETs.
        let base = preset("burst").unwrap();
        let slow = stampede::Fleet::new(
            &Scenario {
                poll_ms: 100,
                ..base.clone()
            },
            1,
        )
        .run();
        let fast = stampede::Fleet::new(&Scenario { poll_ms: 5, ..base }, 1).run();
        assert!(fast.redis_round_trips > slow.redis_round_trips);
        assert!(
            fast.max_ms < slow.max_ms,
            "{} vs {}",
            fast.max_ms,
            slow.max_ms
        );
    }
}
