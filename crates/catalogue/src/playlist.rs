//! A trainer's playlist: an ordered list of the page's views (a tour step,
//! a scenario, a drill, the A/B view), each with the moment it opens at,
//! carried by ONE page link parameter (`list=`) that a clicker steps
//! through.
//!
//! The form is compact and URL-safe: each item is its own short text
//! (`t@1200p:basics/2`: kind, an optional moment in ms and `p` for playing
//! on, then the view), written in base64url, and the items are joined by
//! `.`; no character of it needs escaping in a query. Each item is decoded
//! on its own, so a damaged item is named in a [`Notice`] and dropped while
//! the good ones stay. Nothing here panics on any input.

use crate::drill::{self, Drill};
use crate::presets::{comparison, PRESETS};
use crate::tour::{self, Place};
use stampede::scenario::{self, clip, Notice, Scenario};

/// Keys of a page link that are the page's own, not the scenario's: the
/// playback speed, presenter mode, a moment (`at`, `play`), embed mode and
/// the interviewer's kit, a trainer's playlist and the item of it showing
/// (`list`, `item`), and the room's relay (`relay`, with a candidate's
/// `join` or a phone's `vote`). Whoever reads a link for its scenario (the page, a
/// playlist's item, `stampede-sim --url`) passes over them; the core's
/// [`Scenario::from_query`] knows only the scenario's own keys.
pub const PAGE_KEYS: [&str; 12] = [
    "speed", "present", "at", "play", "embed", "kit", "list", "item", "relay", "join", "vote",
    "assemble",
];

/// Whether a link's `key=value` part (or a bare key) is one of [`PAGE_KEYS`].
pub fn is_page_key(part: &str) -> bool {
    PAGE_KEYS.contains(&part.split_once('=').map_or(part, |(k, _)| k))
}

/// The page link's key for the list.
pub const KEY: &str = "list";
/// The page link's key for the item showing (from 1).
pub const ITEM_KEY: &str = "item";
/// At most this many items in one list.
pub const MAX_ITEMS: usize = 30;
/// The list's link value is at most this long (a link stays shareable: chat
/// apps and QR codes cut longer ones).
pub const MAX_LINK_LEN: usize = 2000;

/// A scenario's title: its preset's, a preset's "changed", or its own.
fn scenario_title(s: &Scenario) -> String {
    let title = |name: &str| {
        PRESETS
            .iter()
            .find(|p| p.name == name)
            .map_or("", |p| p.title)
    };
    match (scenario::preset_of(s), scenario::closest_preset(s)) {
        (Some(p), _) => title(p).to_string(),
        (None, Some(p)) => format!("{}, changed", title(p)),
        (None, None) => "A scenario of its own".to_string(),
    }
}

/// One view of the page.
#[derive(Clone, Debug, PartialEq)]
pub enum View {
    /// A step of the guided tour.
    Tour(Place),
    /// The sandbox on a scenario and seed (a share link's query).
    Scenario { scenario: Box<Scenario>, seed: u64 },
    /// A drill, with the learner's knobs (the drill's own situation when
    /// none was turned).
    Drill {
        name: &'static str,
        knobs: Box<Scenario>,
    },
    /// The A/B view on one of the comparisons, its recompute cost where the
    /// comparison has that control, and the seed.
    Compare {
        name: &'static str,
        cost: Option<u32>,
        seed: u64,
    },
}

/// A view and the moment it opens at.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub view: View,
    /// Virtual ms to open at; `None` opens the view as it opens by itself
    /// (t = 0, or a tour step's own pause).
    pub at: Option<u32>,
    /// Plays on from `at` (else waits there paused). Only with a moment.
    pub play: bool,
}

/// The list, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Playlist {
    pub items: Vec<Item>,
}

impl Item {
    /// An item at a moment (`play` is kept only with a moment).
    pub fn new(view: View, at: Option<u32>, play: bool) -> Item {
        let at = at.filter(|ms| *ms > 0);
        Item {
            view,
            play: play && at.is_some(),
            at,
        }
    }

    /// What kind of view it is, in a word or two.
    pub fn kind(&self) -> &'static str {
        match self.view {
            View::Tour(_) => "Tour step",
            View::Scenario { .. } => "Scenario",
            View::Drill { .. } => "Drill",
            View::Compare { .. } => "A/B view",
        }
    }

    /// Its title for the strip, from the core's own names: the step's
    /// title, the preset's (or the preset it was changed from), the
    /// drill's, the comparison's two sides.
    pub fn title(&self) -> String {
        match &self.view {
            View::Tour(p) => tour::step(p.0, p.1).map_or_else(String::new, |s| s.title.into()),
            View::Scenario { scenario, .. } => {
                // A fault thrown into a run (an interviewer's curveball) is
                // named: the rest is the run it was thrown into.
                if scenario::preset_of(scenario).is_none() && !scenario.faults.is_empty() {
                    // A Redis curveball sets how Redis fails too.
                    let bare = [None, Some(scenario::RedisOutage::Error)]
                        .into_iter()
                        .map(|outage| Scenario {
                            faults: Vec::new(),
                            redis_outage: outage.unwrap_or(scenario.redis_outage),
                            ..(**scenario).clone()
                        })
                        .find(|b| scenario::preset_of(b).is_some())
                        .unwrap_or_else(|| Scenario {
                            faults: Vec::new(),
                            ..(**scenario).clone()
                        });
                    let thrown: Vec<String> = scenario
                        .faults
                        .iter()
                        .map(|f| crate::lesson::fault_words(scenario, f))
                        .collect();
                    return format!("{}; then {}", scenario_title(&bare), thrown.join(", then "));
                }
                scenario_title(scenario)
            }
            View::Drill { name, .. } => drill::drill(name).map_or("", |d| d.title).to_string(),
            View::Compare { name, .. } => comparison(name)
                .map(|c| format!("{} vs {}", c.a_label, c.b_label))
                .unwrap_or_default(),
        }
    }

    /// The page link that opens it, without the list: the query (no `?`)
    /// and the hash (a tour step's `#tour/basics/2`, else empty).
    pub fn link(&self) -> (String, String) {
        let (mut q, hash) = match &self.view {
            View::Tour(p) => (
                tour::step(p.0, p.1).map_or("", |s| s.row.link).to_string(),
                format!("#tour/{}", tour::place_name(*p)),
            ),
            View::Scenario { scenario, seed } => (scenario.to_query(*seed), String::new()),
            View::Drill { name, knobs } => (
                drill::drill(name).map_or_else(String::new, |d| d.link(knobs)),
                String::new(),
            ),
            View::Compare { name, cost, seed } => {
                let cost = cost.map(|c| format!("&cost={c}")).unwrap_or_default();
                (format!("cmp={name}{cost}&seed={seed}"), String::new())
            }
        };
        if let Some(ms) = self.at {
            q.push_str(&format!("&at={ms}"));
            if self.play {
                q.push_str("&play=1");
            }
        }
        (q, hash)
    }

    /// The view a page link shows (its query, with or without `?`, and its
    /// hash), at the link's moment: what "Add this view" adds. The page's
    /// own keys (presenter mode, speed, the list) are not the view's.
    pub fn from_link(query: &str, hash: &str) -> Result<Item, String> {
        let q = query.strip_prefix('?').unwrap_or(query);
        if q.len() > scenario::MAX_QUERY_LEN {
            return Err(format!(
                "the link is longer than {} characters",
                scenario::MAX_QUERY_LEN
            ));
        }
        let (mut at, mut play) = (None, false);
        let mut rest = Vec::new();
        let value = |key: &str| {
            q.split('&').find_map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (k == key).then(|| scenario::percent_decode(v))
            })
        };
        let drill_name = value("drill");
        let cmp = value("cmp");
        let cost = value("cost");
        for part in q.split('&').filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                Some(("at", v)) => at = scenario::parse_u32(&scenario::percent_decode(v)).ok(),
                Some(("play", v)) => {
                    play = scenario::parse_bool(&scenario::percent_decode(v)).unwrap_or(false)
                }
                Some(("drill" | "cmp" | "cost", _)) => {}
                _ if is_page_key(part) => {}
                _ => rest.push(part),
            }
        }
        let rest = rest.join("&");
        let view = if let Some(place) = tour::parse_hash(hash) {
            View::Tour(place)
        } else if let Some(name) = drill_name {
            let d = drill::drill(&name)
                .ok_or_else(|| format!("there is no drill named '{}'", clip(&name)))?;
            View::Drill {
                name: d.name,
                knobs: Box::new(drill::apply(d, &rest).0),
            }
        } else if let Some(name) = cmp {
            let c = comparison(&name)
                .ok_or_else(|| format!("'{}' is not a comparison", clip(&name)))?;
            let (_, seed, _) = Scenario::from_query(&rest);
            View::Compare {
                name: c.name,
                cost: cost.and_then(|v| scenario::parse_u32(&v).ok()),
                seed,
            }
        } else {
            let (s, seed, _) = Scenario::from_query(&rest);
            View::Scenario {
                scenario: Box::new(s),
                seed,
            }
        };
        Ok(Item::new(view, at, play))
    }

    /// Its text before base64url: `<kind>[@<ms>[p]]:<view>`.
    fn text(&self) -> String {
        let (kind, body) = match &self.view {
            View::Tour(p) => ('t', tour::place_name(*p)),
            View::Scenario { scenario, seed } => ('s', scenario.to_query(*seed)),
            View::Drill { name, knobs } => (
                'd',
                drill::drill(name).map_or_else(String::new, |d| d.link(knobs)),
            ),
            View::Compare { .. } => ('c', self.link_without_moment()),
        };
        let moment = match self.at {
            Some(ms) => format!("@{ms}{}", if self.play { "p" } else { "" }),
            None => String::new(),
        };
        format!("{kind}{moment}:{body}")
    }

    fn link_without_moment(&self) -> String {
        Item {
            at: None,
            play: false,
            ..self.clone()
        }
        .link()
        .0
    }

    /// Reads one item's text; the notices are what its view's own link
    /// reading said (a clamped knob), the error why it is no item at all.
    fn parse(text: &str) -> Result<(Item, Vec<Notice>), String> {
        let (head, body) = text
            .split_once(':')
            .ok_or_else(|| "it is not an item of a list".to_string())?;
        let mut chars = head.chars();
        let kind = chars.next().ok_or("it has no kind")?;
        let moment = chars.as_str();
        let (at, play) = match moment.strip_prefix('@') {
            None if moment.is_empty() => (None, false),
            None => return Err(format!("'{}' is not a moment", clip(moment))),
            Some(m) => {
                let (ms, play) = match m.strip_suffix('p') {
                    Some(ms) => (ms, true),
                    None => (m, false),
                };
                let ms = scenario::parse_u32(ms).map_err(|e| format!("its moment: {e}"))?;
                (Some(ms), play)
            }
        };
        let mut notices = Vec::new();
        let view = match kind {
            't' => {
                let place = tour::parse_hash(&format!("#tour/{body}"))
                    .filter(|p| tour::place_name(*p) == body)
                    .ok_or_else(|| format!("there is no tour step '{}'", clip(body)))?;
                View::Tour(place)
            }
            's' => {
                let (s, seed, n) = Scenario::from_query(body);
                notices = n;
                View::Scenario {
                    scenario: Box::new(s),
                    seed,
                }
            }
            'd' => {
                let name = body
                    .split('&')
                    .find_map(|p| p.strip_prefix("drill="))
                    .unwrap_or_default();
                let d: &Drill = drill::drill(name)
                    .ok_or_else(|| format!("there is no drill named '{}'", clip(name)))?;
                let (s, n) = drill::apply(d, body);
                notices = n;
                View::Drill {
                    name: d.name,
                    knobs: Box::new(s),
                }
            }
            'c' => {
                let item = Item::from_link(body, "")?;
                match item.view {
                    v @ View::Compare { .. } => v,
                    _ => return Err("it names no comparison".to_string()),
                }
            }
            other => {
                return Err(format!(
                    "'{}' is not a kind of item (t, s, d or c)",
                    clip(&other.to_string())
                ))
            }
        };
        Ok((Item::new(view, at, play), notices))
    }
}

impl Playlist {
    /// Adds an item at the end, unless the list is full or its link would
    /// grow past [`MAX_LINK_LEN`]; the error says which.
    pub fn push(&mut self, item: Item) -> Result<(), String> {
        if self.items.len() >= MAX_ITEMS {
            return Err(format!(
                "a list holds at most {MAX_ITEMS} items; this one is full"
            ));
        }
        self.items.push(item);
        if let Err(e) = self.encode() {
            self.items.pop();
            return Err(e);
        }
        Ok(())
    }

    /// The list's link value: each item's text in base64url, joined by `.`.
    /// Refused past [`MAX_ITEMS`] items or [`MAX_LINK_LEN`] characters.
    pub fn encode(&self) -> Result<String, String> {
        if self.items.len() > MAX_ITEMS {
            return Err(format!(
                "{} items are more than a list holds ({MAX_ITEMS})",
                self.items.len()
            ));
        }
        let out = self
            .items
            .iter()
            .map(|i| base64url(i.text().as_bytes()))
            .collect::<Vec<_>>()
            .join(".");
        if out.len() > MAX_LINK_LEN {
            return Err(format!(
                "the list's link would be {} characters long, more than {MAX_LINK_LEN}: \
                 remove an item or two",
                out.len()
            ));
        }
        Ok(out)
    }

    /// Reads a list's link value (as the page's query holds it). A damaged
    /// item is named in a notice (by its place, from 1) and left out; the
    /// good ones are kept in order. Too long a value is refused whole, and
    /// items past [`MAX_ITEMS`] are dropped, each said.
    pub fn decode(raw: &str) -> (Playlist, Vec<Notice>) {
        let value = scenario::percent_decode(raw);
        let mut notices = Vec::new();
        let mut list = Playlist::default();
        if value.len() > MAX_LINK_LEN {
            notices.push(Notice::new(
                KEY,
                format!(
                    "the list is {} characters long, more than {MAX_LINK_LEN}; ignored it",
                    value.len()
                ),
            ));
            return (list, notices);
        }
        if value.is_empty() {
            return (list, notices);
        }
        let parts: Vec<&str> = value.split('.').collect();
        if parts.len() > MAX_ITEMS {
            notices.push(Notice::new(
                KEY,
                format!(
                    "the list has {} items, more than {MAX_ITEMS}; kept the first {MAX_ITEMS}",
                    parts.len()
                ),
            ));
        }
        for (k, part) in parts.iter().take(MAX_ITEMS).enumerate() {
            let read = unbase64url(part)
                .and_then(|b| String::from_utf8(b).map_err(|_| "it is not text".to_string()))
                .and_then(|t| Item::parse(&t));
            match read {
                Ok((item, said)) => {
                    for n in said {
                        notices.push(Notice::new(
                            KEY,
                            format!("item {} ({}): {n}", k + 1, item.title()),
                        ));
                    }
                    list.items.push(item);
                }
                Err(e) => notices.push(Notice::new(
                    KEY,
                    format!("item {} could not be read ({e}); left it out", k + 1),
                )),
            }
        }
        (list, notices)
    }

    /// The page link of item `k` (from 0) within the list: the item's own
    /// query with `list=` and `item=` (from 1) after it, and its hash.
    /// `None` past the end or when the list cannot be encoded.
    pub fn link_of(&self, k: usize) -> Option<(String, String)> {
        let item = self.items.get(k)?;
        let list = self.encode().ok()?;
        let (q, hash) = item.link();
        let sep = if q.is_empty() { "" } else { "&" };
        Some((format!("{q}{sep}{KEY}={list}&{ITEM_KEY}={}", k + 1), hash))
    }
}

/// Reads the `item=` value (from 1) against a list of `len` items: the
/// index from 0, clamped into the list, and a notice when it was not one.
pub fn parse_item(raw: &str, len: usize) -> (usize, Option<Notice>) {
    let n = raw.parse::<usize>().ok();
    match n {
        Some(n) if (1..=len).contains(&n) => (n - 1, None),
        _ => {
            let k = if n.is_some_and(|n| n > len) {
                len.saturating_sub(1)
            } else {
                0
            };
            let said = format!(
                "'{}' is not an item of this list (1 to {len}); showing item {}",
                clip(raw),
                k + 1
            );
            (k, Some(Notice::new(ITEM_KEY, said)))
        }
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64url without padding.
fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

fn unbase64url(text: &str) -> Result<Vec<u8>, String> {
    if text.is_empty() {
        return Err("it is empty".to_string());
    }
    if text.len() % 4 == 1 {
        return Err("it is cut short".to_string());
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c).ok_or_else(|| {
            format!(
                "'{}' is not a character of a list",
                clip(&char::from(c).to_string())
            )
        })?;
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips_every_length() {
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37).wrapping_add(n)).collect();
            let text = base64url(&bytes);
            assert!(text.bytes().all(|c| ALPHABET.contains(&c)));
            if n > 0 {
                assert_eq!(unbase64url(&text).unwrap(), bytes);
            }
        }
    }

    #[test]
    fn one_item_of_each_kind() {
        let items = [
            Item::new(View::Tour((tour::Level::Solid, 2)), Some(40), false),
            Item::new(
                View::Scenario {
                    scenario: Box::new(scenario::preset("claim-outer").unwrap()),
                    seed: 7,
                },
                Some(120),
                true,
            ),
            Item::new(
                View::Drill {
                    name: drill::DRILLS[0].name,
                    knobs: Box::new(drill::DRILLS[0].solved()),
                },
                None,
                true,
            ),
            Item::new(
                View::Compare {
                    name: crate::presets::COMPARISONS[0].name,
                    cost: Some(900),
                    seed: 2,
                },
                None,
                false,
            ),
        ];
        assert!(!items[2].play, "playing needs a moment");
        let list = Playlist {
            items: items.to_vec(),
        };
        let enc = list.encode().unwrap();
        assert!(enc
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c)));
        let (back, notices) = Playlist::decode(&enc);
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(back, list);
        // Every item opens the page on its view, and reads back from it.
        for item in &items {
            let (q, h) = item.link();
            assert_eq!(Item::from_link(&q, &h).unwrap(), *item, "{q}{h}");
            assert!(!item.title().is_empty(), "{item:?}");
        }
        assert_eq!(
            items[0].title(),
            tour::step(tour::Level::Solid, 2).unwrap().title
        );
        assert_eq!(items[2].title(), drill::DRILLS[0].title);
        let (q, _) = list.link_of(1).unwrap();
        assert!(q.ends_with(&format!("&list={enc}&item=2")), "{q}");
        assert!(q.contains("at=120&play=1"), "{q}");
    }

    #[test]
    fn a_thrown_curveball_is_named_in_the_item() {
        for ball in &crate::interview::CURVEBALLS {
            for preset in ["burst", "singleflight"] {
                let mut s = scenario::preset(preset).unwrap();
                let base = Item::new(
                    View::Scenario {
                        scenario: Box::new(s.clone()),
                        seed: 1,
                    },
                    None,
                    false,
                )
                .title();
                s.faults.push(crate::interview::fault(ball, 120));
                if let Some(o) = ball.outage {
                    s.redis_outage = o;
                }
                let item = Item::new(
                    View::Scenario {
                        scenario: Box::new(s),
                        seed: 1,
                    },
                    Some(130),
                    false,
                );
                let title = item.title();
                assert!(title.starts_with(&format!("{base}; then ")), "{title}");
                // The fault as the lesson says it, with its moment.
                let (_, fault) = title.split_once("; then ").unwrap();
                let want = match (ball.fault, ball.outage) {
                    (scenario::FaultKind::Redis, Some(scenario::RedisOutage::Hang)) => {
                        "Redis hanging"
                    }
                    (scenario::FaultKind::Redis, _) => "Redis down",
                    (scenario::FaultKind::Origin, _) => "every origin call failing",
                    (scenario::FaultKind::OriginHang, _) => "the origin hanging",
                    (scenario::FaultKind::Holder, _) => "the claim holder dies at 120 ms",
                    (scenario::FaultKind::TtlSync, _) => "a deploy re-warms every key at 120 ms",
                    (k, _) => panic!("no curveball of {k:?} here"),
                };
                assert!(fault.starts_with(want), "{title}");
                assert_eq!(
                    fault.contains("from 120 ms for "),
                    ball.duration_ms.is_some(),
                    "{title}"
                );
                // The item's link carries the fault: it reads back the same.
                let (q, h) = item.link();
                assert_eq!(Item::from_link(&q, &h).unwrap().title(), title);
            }
        }
    }

    #[test]
    fn a_damaged_item_is_named_and_the_rest_kept() {
        let a = Item::new(View::Tour((tour::Level::Basics, 0)), None, false);
        let b = Item::new(View::Tour((tour::Level::Basics, 1)), Some(5), false);
        let enc = Playlist {
            items: vec![a.clone(), b.clone()],
        }
        .encode()
        .unwrap();
        let (first, second) = enc.split_once('.').unwrap();
        for bad in [
            "!!!".to_string(),
            base64url(b"x:what"),
            base64url(b"t:basics/99"),
            base64url(b"d:drill=nope"),
            base64url(b"s@soon:preset=burst"),
            base64url(&[0xff, 0xfe, 0x00]),
        ] {
            let (list, notices) = Playlist::decode(&format!("{first}.{bad}.{second}"));
            assert_eq!(list.items, [a.clone(), b.clone()], "{bad}");
            assert_eq!(notices.len(), 1, "{notices:?}");
            assert!(notices[0].message.starts_with("item 2 "), "{notices:?}");
        }
        // A scenario item with a clamped knob is kept, and the clamp said.
        let odd = base64url(b"s:i=999999");
        let (list, notices) = Playlist::decode(&odd);
        assert_eq!(list.items.len(), 1);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].message.starts_with("item 1 ("), "{notices:?}");
    }

    #[test]
    fn the_item_index_is_clamped_and_said() {
        assert_eq!(parse_item("2", 3), (1, None));
        assert_eq!(parse_item("9", 3).0, 2);
        assert_eq!(parse_item("0", 3).0, 0);
        assert!(parse_item("x", 3)
            .1
            .unwrap()
            .message
            .contains("showing item 1"));
        assert!(parse_item("9", 3)
            .1
            .unwrap()
            .message
            .contains("showing item 3"));
        assert_eq!(parse_item("1", 0).0, 0);
    }
}
