//! The claim as the page draws it (`Fleet::claim_clock`): at every event of
//! random runs (faults, pitfalls and crashes included) it is there exactly
//! while a claim is live at Redis, its TTL runs down from its PX, a live
//! holder is the office the claim names and started its work after winning
//! it, and a dead holder is a thread that crashed while the claim was live.

mod strategies;

use proptest::prelude::*;
use stampede::sim::{EventKind, Fleet};
use strategies::{cfg, scenario};

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn the_claim_clock_is_the_live_claim(s in scenario(), seed in any::<u64>()) {
        let mut f = Fleet::new(&s, seed);
        f.set_recording(true);
        // Thread -> when it crashed.
        let mut crashed: Vec<(u32, u64)> = Vec::new();
        let mut steps = 0;
        while let Some(t) = f.next_event_at() {
            steps += 1;
            if steps > 20_000 {
                break;
            }
            if !f.advance_to(t, usize::MAX) {
                continue;
            }
            for e in f.drain_events() {
                if e.kind == EventKind::Crash {
                    crashed.push((e.thread, e.t));
                }
            }
            let c = f.claim_clock();
            prop_assert_eq!(c.is_some(), f.live_claims() > 0);
            let Some(c) = c else { continue };
            prop_assert_eq!(c.now, f.now());
            prop_assert!(c.set_at <= c.now && c.now < c.expires_at, "{:?}", c);
            prop_assert_eq!(c.expires_at - c.set_at, c.ttl);
            prop_assert!(c.left() > 0 && c.left() <= c.ttl, "{:?}", c);
            let t = u64::from(s.threads.max(1));
            match (c.holder, c.dead) {
                (Some(g), false) => {
                    if f.live_claims() == 1 {
                        prop_assert_eq!(f.live_claim_office(), Some((u64::from(g) / t) as u32));
                    }
                    if let Some(w) = c.working_since {
                        prop_assert!(w >= c.set_at && w <= c.now, "{:?}", c);
                    }
                }
                (Some(g), true) => {
                    prop_assert!(c.working_since.is_none());
                    // A thread can crash more than once in a run (a later
                    // request of the same thread may hold a later claim).
                    prop_assert!(
                        crashed
                            .iter()
                            .any(|&(h, at)| h == g && c.set_at <= at && at < c.expires_at),
                        "thread {} is drawn dead with its claim {:?}, crashes {:?}", g, c, crashed
                    );
                }
                (None, dead) => prop_assert!(!dead),
            }
        }
    }
}
