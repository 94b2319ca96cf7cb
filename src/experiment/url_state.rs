//! Everything the page knows lives in the URL: the scenario's compact query
//! (the core's `to_query`), the seed, and the page's own `speed`. Reading a
//! link never fails: what cannot be used is dropped or clamped, and the
//! visitor is told which, in plain text (nothing from a URL becomes HTML).

use crate::clock::{clamp_speed, default_speed, round_speed};
use stampede::scenario::{clip, parse_fraction, percent_decode, Notice, Scenario, MAX_QUERY_LEN};

#[derive(Clone, Debug, PartialEq)]
pub struct PageState {
    pub scenario: Scenario,
    pub seed: u64,
    pub speed: f64,
    /// The A/B view's comparison (`cmp=<name>`), when it is open.
    pub compare: Option<&'static str>,
    /// The A/B view's recompute cost in ms (`cost=<ms>`), where the
    /// comparison has that control; `None` is the comparison's own.
    pub cost: Option<u32>,
    /// Curveballs thrown into the A/B view (`throw=origin@1200,holder@900`:
    /// a curveball's name and the moment it lands in both runs), replayed
    /// when the link opens; only with `cmp`.
    pub throws: Vec<(&'static str, u32)>,
    /// Presenter mode (`present=1`).
    pub present: bool,
    /// The moment the link opens at, in virtual ms (`at=MS`), and whether
    /// it plays on from there (`play=1`) or waits paused (the default).
    pub at: Option<u64>,
    pub play: bool,
}

impl Default for PageState {
    fn default() -> Self {
        let scenario = Scenario::default();
        PageState {
            speed: default_speed(&scenario),
            scenario,
            seed: 1,
            compare: None,
            cost: None,
            throws: Vec::new(),
            present: false,
            at: None,
            play: false,
        }
    }
}

/// `origin@1200,holder@900`: the A/B view's thrown curveballs, by name and
/// moment; an unknown name or a bad moment is refused with the reason.
pub fn parse_throws(v: &str) -> Result<Vec<(&'static str, u32)>, String> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("'{}' is not a curveball such as origin@1200", clip(part));
        let (kind, at) = part.split_once('@').ok_or_else(bad)?;
        let ball = catalogue::interview::curveball(kind.trim()).ok_or_else(bad)?;
        let at = stampede::scenario::parse_u32(at.trim())?;
        out.push((ball.kind, at));
    }
    Ok(out)
}

/// The A/B view's thrown curveballs as its link writes them.
pub fn throws_text(throws: &[(&str, u32)]) -> String {
    throws
        .iter()
        .map(|(kind, at)| format!("{kind}@{at}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The drill a link opens (`?drill=NAME`; an empty name for the list), if
/// it names one at all. The rest of such a link is the drill's to read
/// (`catalogue::drill::apply`).
pub fn drill_of(query: &str) -> Option<String> {
    let q = query.strip_prefix('?').unwrap_or(query);
    q.split('&').find_map(|part| {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        (k == "drill").then(|| percent_decode(v))
    })
}

/// Parses `location.search` (with or without `?`).
pub fn parse(query: &str) -> (PageState, Vec<Notice>) {
    let q = query.strip_prefix('?').unwrap_or(query);
    let mut speed = None;
    let mut compare = None;
    let mut cost = None;
    let mut throws = Vec::new();
    let (mut present, mut at, mut play) = (false, None, false);
    let mut notices = Vec::new();
    // Too long to trust: the core ignores the whole thing and says so.
    let core_query = if q.len() > MAX_QUERY_LEN {
        q.to_string()
    } else {
        let mut rest = Vec::new();
        for part in q.split('&') {
            match part.split_once('=') {
                Some(("speed", v)) => speed = parse_speed(v, &mut notices),
                Some(("cmp", v)) => {
                    let name = percent_decode(v);
                    match catalogue::presets::comparison(&name) {
                        Some(c) => compare = Some(c.name),
                        None => notices.push(Notice::new(
                            "cmp",
                            format!("'{}' is not a comparison; showing the sandbox", clip(&name)),
                        )),
                    }
                }
                Some(("cost", v)) => match stampede::scenario::parse_u32(&percent_decode(v)) {
                    Ok(ms) => cost = Some(ms),
                    Err(e) => notices.push(Notice::new(
                        "cost",
                        format!("{e}; using the comparison's own cost"),
                    )),
                },
                Some(("throw", v)) => match parse_throws(&percent_decode(v)) {
                    Ok(t) => throws = t,
                    Err(e) => notices.push(Notice::new(
                        "throw",
                        format!("{e}; the A/B view opens without it"),
                    )),
                },
                Some(("present", v)) => present = switch("present", v, &mut notices),
                Some(("play", v)) => play = switch("play", v, &mut notices),
                Some(("at", v)) => match stampede::scenario::parse_u32(&percent_decode(v)) {
                    Ok(ms) => at = Some(u64::from(ms)),
                    Err(e) => notices.push(Notice::new("at", format!("{e}; opening at t = 0"))),
                },
                _ if part == "speed" => notices.push(Notice::new(
                    "speed",
                    "no value given; using the scenario's own".to_string(),
                )),
                // Embed mode and the kit are read where the page mounts.
                _ if catalogue::playlist::is_page_key(part) => {}
                _ => rest.push(part),
            }
        }
        rest.join("&")
    };
    let (scenario, seed, core) = Scenario::from_query(&core_query);
    notices.extend(core);
    let speed = speed.unwrap_or_else(|| default_speed(&scenario));
    (
        PageState {
            scenario,
            seed,
            speed,
            compare,
            cost: cost.filter(|_| compare.is_some()),
            throws: if compare.is_some() {
                throws
            } else {
                Vec::new()
            },
            present,
            at,
            play: play && at.is_some(),
        },
        notices,
    )
}

/// An on/off key of the page's own: a bad value is said and read as off.
fn switch(key: &str, raw: &str, notices: &mut Vec<Notice>) -> bool {
    match stampede::scenario::parse_bool(&percent_decode(raw)) {
        Ok(on) => on,
        Err(e) => {
            notices.push(Notice::new(key, format!("{e}; left off")));
            false
        }
    }
}

fn parse_speed(raw: &str, notices: &mut Vec<Notice>) -> Option<f64> {
    let v = percent_decode(raw);
    match parse_fraction(&v) {
        Ok(x) => {
            let s = round_speed(x);
            if clamp_speed(x) != x {
                notices.push(Notice::new(
                    "speed",
                    format!(
                        "{} is {} than allowed (0.01 to 100); clamped to {}",
                        clip(&v),
                        if x > 1.0 { "more" } else { "less" },
                        stampede::decimal::format(s)
                    ),
                ));
            }
            Some(s)
        }
        Err(e) => {
            notices.push(Notice::new(
                "speed",
                format!("{e}; using the scenario's own"),
            ));
            None
        }
    }
}

/// The query string for a state (without `?`): knobs that differ from the
/// defaults, the seed, and the speed when it is not the default.
pub fn to_query(state: &PageState) -> String {
    let mut q = state.scenario.to_query(state.seed);
    if let Some(c) = state.compare {
        q = match state.cost {
            Some(ms) => format!("cmp={c}&cost={ms}&{q}"),
            None => format!("cmp={c}&{q}"),
        };
        if !state.throws.is_empty() {
            q.push_str(&format!("&throw={}", throws_text(&state.throws)));
        }
    }
    let speed = round_speed(state.speed);
    if (speed - default_speed(&state.scenario)).abs() > 1e-9 {
        q.push_str(&format!("&speed={}", stampede::decimal::format(speed)));
    }
    if let Some(ms) = state.at.filter(|ms| *ms > 0) {
        q.push_str(&format!("&at={ms}"));
        if state.play {
            q.push_str("&play=1");
        }
    }
    if state.present {
        q.push_str("&present=1");
    }
    q
}

/// The link the room opens from the code: the page's own, without
/// `present=1` (a phone that scans it shows the scenario, not the
/// presenter's projector layout).
pub fn room_link(href: &str) -> String {
    let (head, hash) = href.split_once('#').map_or((href, ""), |(h, f)| (h, f));
    let Some((base, query)) = head.split_once('?') else {
        return href.to_string();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && p.split('=').next() != Some("present"))
        .collect();
    let mut out = base.to_string();
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    if !hash.is_empty() {
        out.push('#');
        out.push_str(hash);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalogue::presets::PRESETS;
    use stampede::scenario::{preset, ClaimMode};

    #[test]
    fn the_page_s_own_keys_are_no_scenario_s() {
        let (state, notices) = parse("preset=claim-outer&embed=1&kit&present=1&at=20");
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(state.scenario, preset("claim-outer").unwrap());
        let (_, notices) = parse("preset=burst&embedded=1");
        assert_eq!(
            notices.len(),
            1,
            "an unknown key is still reported: {notices:?}"
        );
    }

    #[test]
    fn a_shared_link_restores_scenario_seed_and_speed() {
        let state = PageState {
            scenario: Scenario {
                instances: 12,
                claim: ClaimMode::Outer,
                ..Scenario::default()
            },
            seed: 99,
            speed: 4.0,
            compare: None,
            cost: None,
            throws: Vec::new(),
            present: false,
            at: None,
            play: false,
        };
        let q = to_query(&state);
        let (back, notices) = parse(&format!("?{q}"));
        assert_eq!(back, state, "{q}");
        assert!(notices.is_empty(), "{notices:?}");
        // The A/B view and its cost travel in the link too.
        let ab = PageState {
            compare: Some("cost"),
            cost: Some(900),
            ..state.clone()
        };
        let q = to_query(&ab);
        assert!(q.starts_with("cmp=cost&cost=900&"), "{q}");
        assert_eq!(parse(&q).0, ab);
        let (back, notices) = parse("cmp=nope&seed=3");
        assert_eq!(back.compare, None);
        assert_eq!(notices.len(), 1, "{notices:?}");
        // And the curveballs thrown into it, in the order thrown.
        let thrown = PageState {
            throws: vec![("origin", 1200), ("holder", 900)],
            ..ab.clone()
        };
        let q = to_query(&thrown);
        assert!(q.contains("&throw=origin@1200,holder@900"), "{q}");
        assert_eq!(parse(&q).0, thrown);
        let (back, notices) = parse("cmp=layered&throw=meteor@5");
        assert!(back.throws.is_empty());
        assert_eq!(notices.len(), 1, "{notices:?}");
        // Without the A/B view there is nothing to throw them into.
        assert!(parse("throw=origin@5").0.throws.is_empty());
    }

    #[test]
    fn every_preset_round_trips() {
        for p in PRESETS {
            let (s, n) = parse(&format!("preset={}&speed=0.5", p.name));
            assert!(n.is_empty(), "{}: {n:?}", p.name);
            assert_eq!(s.scenario, p.scenario());
            assert_eq!(s.speed, 0.5);
            let (again, _) = parse(&to_query(&s));
            assert_eq!(again, s);
        }
        assert_eq!(parse("preset=naive").0.scenario, preset("naive").unwrap());
        let (steady, _) = parse("preset=failure");
        assert_eq!(
            steady.speed,
            crate::clock::STEADY_SPEED,
            "steady traffic plays faster"
        );
        assert_eq!(to_query(&steady).matches("speed").count(), 0);
        let slow = PageState {
            speed: crate::clock::DEFAULT_SPEED,
            ..steady
        };
        assert_eq!(parse(&to_query(&slow)).0, slow);
    }

    #[test]
    fn broken_links_fall_back_and_say_why() {
        let (s, n) = parse("?speed=fast&i=abc&wat=1");
        assert_eq!(s, PageState::default());
        let knobs: Vec<_> = n.iter().map(|x| x.knob.as_str()).collect();
        assert_eq!(knobs, ["speed", "instances", "url"]);

        let (s, n) = parse("speed=1000000000&i=999999");
        assert_eq!(s.speed, 100.0);
        assert_eq!(s.scenario.instances, 1000);
        assert_eq!(n.len(), 2, "{n:?}");
        // A link's numbers are plain decimals: an exponent is refused, said,
        // and the scenario's own speed used.
        let (s, n) = parse("speed=1e9");
        assert_eq!(s.speed, PageState::default().speed);
        assert_eq!(n.len(), 1, "{n:?}");

        let huge = format!("speed=2&i={}", "9".repeat(MAX_QUERY_LEN * 4));
        let (s, n) = parse(&huge);
        assert_eq!(s, PageState::default());
        assert_eq!(n.len(), 1);

        let (s, n) = parse("<img src=x onerror=alert(1)>&speed&&=");
        assert_eq!(s.scenario, Scenario::default());
        assert!(n.iter().any(|x| x.knob == "speed"));
        assert!(n.iter().all(|x| x.message.chars().count() < 200));
    }

    #[test]
    fn presenter_mode_and_a_moment_travel_in_the_link() {
        let (s, n) = parse("preset=burst&at=120&present=1");
        assert!(n.is_empty(), "{n:?}");
        assert!(s.present);
        assert_eq!((s.at, s.play), (Some(120), false));
        assert_eq!(parse(&to_query(&s)).0, s);
        let (s, _) = parse("preset=burst&at=120&play=1");
        assert!(s.play);
        assert!(to_query(&s).ends_with("at=120&play=1"), "{}", to_query(&s));
        // Bad values are said and fall back: off, and t = 0.
        let (s, n) = parse("present=maybe&at=soon&play=1");
        assert!(!s.present && s.at.is_none() && !s.play);
        let knobs: Vec<_> = n.iter().map(|x| x.knob.as_str()).collect();
        assert_eq!(knobs, ["present", "at"]);
    }

    #[test]
    fn default_state_has_a_short_link() {
        assert_eq!(to_query(&PageState::default()), "seed=1");
    }

    #[test]
    fn the_room_s_link_drops_presenter_mode_and_keeps_the_rest() {
        let cases = [
            (
                "https://l.example/?preset=burst&present=1&seed=3",
                "https://l.example/?preset=burst&seed=3",
            ),
            ("https://l.example/?present=1", "https://l.example/"),
            (
                "https://l.example/?present=1#tour/basics/2",
                "https://l.example/#tour/basics/2",
            ),
            (
                "https://l.example/?seed=3&presenter=x",
                "https://l.example/?seed=3&presenter=x",
            ),
            ("https://l.example/", "https://l.example/"),
        ];
        for (href, want) in cases {
            assert_eq!(room_link(href), want, "{href}");
        }
    }
}
