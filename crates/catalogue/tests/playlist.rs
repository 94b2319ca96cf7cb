//! A trainer's playlist as one link parameter: random lists round-trip,
//! garbage never panics and keeps what it can, and the limits are refused
//! with a message.

use catalogue::drill::DRILLS;
use catalogue::playlist::{Item, Playlist, View, MAX_ITEMS, MAX_LINK_LEN};
use catalogue::presets::{COMPARISONS, PRESETS};
use catalogue::tour::{self, Level};
use proptest::prelude::*;

fn cfg() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(192),
        ..ProptestConfig::default()
    }
}

/// A view of any kind: a real tour step, a preset with a knob or two
/// turned, a drill with its situation or its solution, a comparison.
fn view() -> impl Strategy<Value = View> {
    prop_oneof![
        (0..3usize, 0..40usize).prop_map(|(l, k)| {
            let level = Level::ALL[l];
            View::Tour((level, k % tour::count(level)))
        }),
        (0..PRESETS.len(), 1..1000u64, 0..3u32, 1..60u32).prop_map(|(p, seed, turn, n)| {
            let mut s = PRESETS[p].scenario();
            match turn {
                1 => s.instances = n,
                2 => s.threads = n * 10,
                _ => {}
            }
            let (s, _, _) = stampede::Scenario::from_query(&s.to_query(seed));
            View::Scenario {
                scenario: Box::new(s),
                seed,
            }
        }),
        (0..DRILLS.len(), any::<bool>()).prop_map(|(d, solved)| View::Drill {
            name: DRILLS[d].name,
            knobs: Box::new(if solved {
                DRILLS[d].solved()
            } else {
                DRILLS[d].situation()
            }),
        }),
        (
            0..COMPARISONS.len(),
            proptest::option::of(1..5000u32),
            1..1000u64
        )
            .prop_map(|(c, cost, seed)| View::Compare {
                name: COMPARISONS[c].name,
                cost,
                seed,
            }),
    ]
}

fn item() -> impl Strategy<Value = Item> {
    (view(), proptest::option::of(0..200_000u32), any::<bool>())
        .prop_map(|(v, at, play)| Item::new(v, at, play))
}

fn list(max: usize) -> impl Strategy<Value = Playlist> {
    proptest::collection::vec(item(), 0..=max).prop_map(|items| Playlist { items })
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn encode_then_decode_is_the_identity(l in list(12)) {
        match l.encode() {
            Ok(enc) => {
                prop_assert!(enc.len() <= MAX_LINK_LEN);
                prop_assert!(enc.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c)));
                let (back, notices) = Playlist::decode(&enc);
                prop_assert!(notices.is_empty(), "{:?}", notices);
                prop_assert_eq!(&back, &l);
                // And each item's page link opens its view, at its moment.
                for (k, item) in l.items.iter().enumerate() {
                    let (q, h) = l.link_of(k).unwrap();
                    prop_assert_eq!(&Item::from_link(&q, &h).unwrap(), item);
                }
            }
            // Too long is the only refusal of a list this short.
            Err(e) => prop_assert!(e.contains("characters long"), "{}", e),
        }
    }

    #[test]
    fn garbage_never_panics(raw in ".{0,300}") {
        let (l, notices) = Playlist::decode(&raw);
        prop_assert!(l.items.len() <= MAX_ITEMS);
        prop_assert!(notices.iter().all(|n| n.message.chars().count() < 300));
    }

    #[test]
    fn a_damaged_item_costs_only_itself(l in list(8), at in 0..8usize, junk in "[A-Za-z0-9_!~*-]{1,12}") {
        prop_assume!(!l.items.is_empty());
        let enc = l.encode().unwrap();
        let mut parts: Vec<String> = enc.split('.').map(str::to_string).collect();
        let k = at % parts.len();
        parts[k] = junk.clone();
        let (back, notices) = Playlist::decode(&parts.join("."));
        // The item either still reads (the junk happened to be one) or is
        // named in a notice; every other item is kept, in order.
        let mut want = l.items.clone();
        if back.items.len() < want.len() {
            want.remove(k);
            let name = format!("item {} ", k + 1);
            prop_assert!(notices.iter().any(|n| n.message.starts_with(&name)), "{:?}", notices);
            prop_assert_eq!(back.items, want);
        } else {
            prop_assert_eq!(back.items.len(), want.len());
        }
    }

}

proptest! {
    // Each case fills a list to its limit, item by item: fewer cases.
    #![proptest_config(ProptestConfig { cases: cfg().cases / 8, ..cfg() })]

    #[test]
    fn limits_are_refused_with_a_message(extra in 1..20usize, it in item()) {
        let mut l = Playlist::default();
        let mut refused = None;
        for _ in 0..MAX_ITEMS + extra {
            if let Err(e) = l.push(it.clone()) {
                refused = Some(e);
                break;
            }
        }
        let e = refused.expect("a list past its limits is refused");
        prop_assert!(e.contains("at most 30") || e.contains("characters long"), "{}", e);
        prop_assert!(l.items.len() <= MAX_ITEMS);
        prop_assert!(l.encode().is_ok(), "what push kept still encodes");
        // A list made longer by hand is refused by encode, and a link with
        // more items than that keeps the first MAX_ITEMS and says so.
        let over = Playlist { items: vec![it.clone(); MAX_ITEMS + extra] };
        prop_assert!(over.encode().is_err());
        let short = Playlist { items: vec![Item::new(View::Tour((Level::Basics, 0)), None, false)] };
        let one = short.encode().unwrap();
        let many = vec![one.as_str(); MAX_ITEMS + extra].join(".");
        let (back, notices) = Playlist::decode(&many);
        prop_assert_eq!(back.items.len(), MAX_ITEMS);
        prop_assert!(notices.iter().any(|n| n.message.contains("kept the first 30")));
    }
}

#[test]
fn too_long_a_link_is_refused_whole() {
    let (l, notices) = Playlist::decode(&"A".repeat(MAX_LINK_LEN + 1));
    assert!(l.items.is_empty());
    assert_eq!(notices.len(), 1);
    assert!(
        notices[0].message.contains("characters long"),
        "{notices:?}"
    );
}
