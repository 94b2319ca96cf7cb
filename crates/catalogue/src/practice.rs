//! Practice that remembers: what a learner has seen, predicted, passed and
//! reviewed, as one small record the page keeps in the browser's
//! localStorage (nothing is sent anywhere), and the spaced schedule that
//! brings a missed item back sooner than a known one.
//!
//! An item is a drill (`drill:NAME`), a tour step's prediction
//! (`predict:basics/1`) or an interview question (`question:N`). The
//! schedule is a Leitner box: a miss puts the item in box 0, due again in
//! [`INTERVALS_MIN`]`[0]` minutes; a right answer moves it up one box,
//! due after that box's interval; "partly" keeps its box. Time is whole
//! minutes, given by the caller (the page reads the browser's clock, the
//! tests pass numbers): nothing here reads a clock.
//!
//! The record is text ([`Progress::to_text`]); [`Progress::parse`] reads
//! what it can of damaged or foreign text and says what it dropped, so a
//! corrupt store never stops the page.

/// The minutes until an item in box `b` is due again.
pub const INTERVALS_MIN: [u64; 5] = [10, 24 * 60, 3 * 24 * 60, 7 * 24 * 60, 30 * 24 * 60];

/// The record's first line: its format and version.
pub const HEADER: &str = "stampede-progress 1";

/// The most items and seen steps a record keeps (the oldest go first).
pub const MAX_ENTRIES: usize = 400;
/// The longest key kept.
pub const MAX_KEY: usize = 64;

/// How an attempt went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Wrong, failed, or given up (a drill's solution shown before a pass).
    Missed,
    /// Half right: a self-grade of "partly".
    Partly,
    Right,
}

impl Outcome {
    fn code(self) -> char {
        match self {
            Outcome::Missed => 'm',
            Outcome::Partly => 'p',
            Outcome::Right => 'r',
        }
    }

    fn from_code(c: &str) -> Option<Outcome> {
        match c {
            "m" => Some(Outcome::Missed),
            "p" => Some(Outcome::Partly),
            "r" => Some(Outcome::Right),
            _ => None,
        }
    }
}

/// One item's history and its place in the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub key: String,
    /// The Leitner box, 0 to `INTERVALS_MIN.len() - 1`.
    pub level: u8,
    /// When it is due again (minutes).
    pub due: u64,
    pub tries: u32,
    pub rights: u32,
    /// Right at least once (a drill passed without its solution shown).
    pub ever_right: bool,
    pub last: Outcome,
}

/// Everything the page remembers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Tour places seen (`basics/1`), in the order first seen.
    pub seen: Vec<String>,
    /// Items in the order first tried.
    pub items: Vec<Item>,
}

/// A drill's item key.
pub fn drill_key(name: &str) -> String {
    format!("drill:{name}")
}

/// A tour step's prediction's item key (`place` as `tour::place_name`).
pub fn predict_key(place: &str) -> String {
    format!("predict:{place}")
}

/// An interview question's item key.
pub fn question_key(n: u32) -> String {
    format!("question:{n}")
}

fn key_ok(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= MAX_KEY
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_:/.".contains(&b))
}

/// Where a drill stands, for the drills list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrillState {
    Untried,
    /// Graded, never passed on its own.
    Attempted,
    Solved,
}

impl Progress {
    pub fn item(&self, key: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.key == key)
    }

    /// Marks a tour place seen; false if it was already, or is no key.
    pub fn see(&mut self, place: &str) -> bool {
        if !key_ok(place) || self.seen.iter().any(|s| s == place) {
            return false;
        }
        self.seen.push(place.to_string());
        self.trim();
        true
    }

    pub fn has_seen(&self, place: &str) -> bool {
        self.seen.iter().any(|s| s == place)
    }

    /// Records an attempt at `now` and schedules the item's next review.
    /// A key that could not be stored is ignored.
    pub fn record(&mut self, key: &str, outcome: Outcome, now: u64) {
        if !key_ok(key) {
            return;
        }
        let at = match self.items.iter().position(|i| i.key == key) {
            Some(at) => at,
            None => {
                self.items.push(Item {
                    key: key.to_string(),
                    level: 0,
                    due: now,
                    tries: 0,
                    rights: 0,
                    ever_right: false,
                    last: Outcome::Missed,
                });
                self.items.len() - 1
            }
        };
        let top = (INTERVALS_MIN.len() - 1) as u8;
        let item = &mut self.items[at];
        item.tries = item.tries.saturating_add(1);
        item.last = outcome;
        item.level = match outcome {
            Outcome::Missed => 0,
            Outcome::Partly => item.level,
            Outcome::Right => {
                item.rights = item.rights.saturating_add(1);
                item.ever_right = true;
                // A first right answer is known for a day, not ten minutes.
                (item.level + 1).min(top)
            }
        };
        item.due = now.saturating_add(INTERVALS_MIN[usize::from(item.level)]);
        self.trim();
    }

    /// The items due at `now`, the longest overdue first; `prefix` keeps
    /// one kind (`"question:"`), `""` all.
    pub fn due(&self, now: u64, prefix: &str) -> Vec<&Item> {
        let mut due: Vec<&Item> = self
            .items
            .iter()
            .filter(|i| i.due <= now && i.key.starts_with(prefix))
            .collect();
        // Longest overdue first, ties in record order: a stable insertion
        // sort (at most MAX_ENTRIES items), not `sort_by_key`, whose stable
        // sort is ~4.5 KB of the page's wasm for this one list.
        for k in 1..due.len() {
            let mut j = k;
            while j > 0 && due[j - 1].due > due[j].due {
                due.swap(j - 1, j);
                j -= 1;
            }
        }
        due
    }

    /// When the next item of `prefix` falls due after `now`, if any.
    pub fn next_due(&self, now: u64, prefix: &str) -> Option<u64> {
        self.items
            .iter()
            .filter(|i| i.due > now && i.key.starts_with(prefix))
            .map(|i| i.due)
            .min()
    }

    /// The next of `keys` to practise at `now`: the one longest overdue,
    /// else the first never tried; None while every one is scheduled later.
    pub fn next_of<'a>(&self, keys: &'a [String], now: u64) -> Option<&'a str> {
        let overdue = keys
            .iter()
            .filter_map(|k| self.item(k).filter(|i| i.due <= now).map(|i| (i.due, k)))
            .min_by_key(|(due, _)| *due)
            .map(|(_, k)| k);
        overdue
            .or_else(|| keys.iter().find(|k| self.item(k).is_none()))
            .map(String::as_str)
    }

    pub fn drill_state(&self, name: &str) -> DrillState {
        match self.item(&drill_key(name)) {
            None => DrillState::Untried,
            Some(i) if i.ever_right => DrillState::Solved,
            Some(_) => DrillState::Attempted,
        }
    }

    /// The record as text, one entry a line after [`HEADER`].
    pub fn to_text(&self) -> String {
        let mut out = String::from(HEADER);
        for s in &self.seen {
            out.push_str("\ns ");
            out.push_str(s);
        }
        for i in &self.items {
            out.push_str(&format!(
                "\ni {} {} {} {} {} {} {}",
                i.key,
                i.level,
                i.due,
                i.tries,
                i.rights,
                u8::from(i.ever_right),
                i.last.code()
            ));
        }
        out
    }

    /// Reads a record. Never fails: what cannot be read is dropped, and
    /// the second value says so in a sentence for the page (None when the
    /// text was whole). Empty text is a fresh record, quietly.
    pub fn parse(text: &str) -> (Progress, Option<String>) {
        let mut p = Progress::default();
        if text.trim().is_empty() {
            return (p, None);
        }
        let mut lines = text.lines();
        if lines.next().map(str::trim) != Some(HEADER) {
            return (
                p,
                Some("The progress saved in this browser is not in a form this page reads; started afresh.".into()),
            );
        }
        let mut bad = 0usize;
        for line in lines {
            if line.trim().is_empty() {
                continue;
            }
            let ok = match line.split_once(' ') {
                Some(("s", place)) => {
                    key_ok(place) && {
                        p.see(place);
                        true
                    }
                }
                Some(("i", rest)) => match parse_item(rest) {
                    Some(item) if p.item(&item.key).is_none() => {
                        p.items.push(item);
                        true
                    }
                    _ => false,
                },
                _ => false,
            };
            bad += usize::from(!ok);
        }
        p.trim();
        let said = (bad > 0).then(|| {
            format!(
                "{bad} damaged {} in the progress saved in this browser {} dropped; the rest is kept.",
                if bad == 1 { "entry" } else { "entries" },
                if bad == 1 { "was" } else { "were" }
            )
        });
        (p, said)
    }

    /// Drops the oldest entries past [`MAX_ENTRIES`].
    fn trim(&mut self) {
        if self.seen.len() > MAX_ENTRIES {
            let n = self.seen.len() - MAX_ENTRIES;
            self.seen.drain(..n);
        }
        if self.items.len() > MAX_ENTRIES {
            let n = self.items.len() - MAX_ENTRIES;
            self.items.drain(..n);
        }
    }
}

fn parse_item(rest: &str) -> Option<Item> {
    let f: Vec<&str> = rest.split(' ').collect();
    let [key, level, due, tries, rights, ever, last] = f.as_slice() else {
        return None;
    };
    let level: u8 = level.parse().ok()?;
    let tries: u32 = tries.parse().ok()?;
    let rights: u32 = rights.parse().ok()?;
    (key_ok(key) && usize::from(level) < INTERVALS_MIN.len() && rights <= tries).then_some(())?;
    Some(Item {
        key: key.to_string(),
        level,
        due: due.parse().ok()?,
        tries,
        rights,
        ever_right: match *ever {
            "0" => false,
            "1" => true,
            _ => return None,
        },
        last: Outcome::from_code(last)?,
    })
}

/// "in 10 minutes", "in 3 hours", "in 2 days": how far off `minutes` is.
pub fn wait_words(minutes: u64) -> String {
    let (n, unit) = if minutes < 60 {
        (minutes.max(1), "minute")
    } else if minutes < 48 * 60 {
        (minutes.div_ceil(60), "hour")
    } else {
        (minutes.div_ceil(24 * 60), "day")
    };
    format!("in {n} {unit}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `due` is the items due, in the standard library's stable sort
        /// by due time: ties keep the record's order.
        #[test]
        fn due_is_the_stable_sort_by_due(
            attempts in proptest::collection::vec((0u8..40, 0u8..3, 0u64..60), 0..120),
            now in 0u64..12_000,
        ) {
            let mut p = Progress::default();
            for (k, o, at) in attempts {
                let outcome = [Outcome::Missed, Outcome::Partly, Outcome::Right][usize::from(o)];
                p.record(&format!("question:{k}"), outcome, at);
            }
            let mut want: Vec<&Item> = p.items.iter().filter(|i| i.due <= now).collect();
            want.sort_by_key(|i| i.due);
            let got = p.due(now, "");
            prop_assert_eq!(
                got.iter().map(|i| (&i.key, i.due)).collect::<Vec<_>>(),
                want.iter().map(|i| (&i.key, i.due)).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn a_miss_comes_back_sooner_than_a_right_answer() {
        let mut p = Progress::default();
        p.record("drill:jitter", Outcome::Missed, 1000);
        p.record("drill:xfetch", Outcome::Right, 1000);
        p.record("question:3", Outcome::Partly, 1000);
        let due_at = |p: &Progress, k: &str| p.item(k).unwrap().due;
        assert_eq!(due_at(&p, "drill:jitter"), 1000 + INTERVALS_MIN[0]);
        assert_eq!(due_at(&p, "drill:xfetch"), 1000 + INTERVALS_MIN[1]);
        // Partly keeps the first box: as soon as a miss.
        assert_eq!(due_at(&p, "question:3"), 1000 + INTERVALS_MIN[0]);
        assert!(p.due(1009, "").is_empty());
        let due: Vec<&str> = p.due(1010, "").iter().map(|i| i.key.as_str()).collect();
        assert_eq!(due, ["drill:jitter", "question:3"]);
        assert_eq!(
            p.due(1010, "question:")
                .iter()
                .map(|i| &i.key)
                .collect::<Vec<_>>(),
            ["question:3"]
        );
        assert_eq!(p.next_due(1010, "drill:"), Some(1000 + INTERVALS_MIN[1]));
        // Each right answer spaces it further, up to the last box.
        let mut t = 1000;
        for want in INTERVALS_MIN
            .iter()
            .skip(1)
            .chain([INTERVALS_MIN[4]; 2].iter())
        {
            p.record("drill:jitter", Outcome::Right, t);
            assert_eq!(due_at(&p, "drill:jitter"), t + want);
            t += want;
        }
        // One miss and it is back to ten minutes.
        p.record("drill:jitter", Outcome::Missed, t);
        assert_eq!(due_at(&p, "drill:jitter"), t + INTERVALS_MIN[0]);
        let i = p.item("drill:jitter").unwrap();
        assert_eq!((i.tries, i.rights, i.level), (8, 6, 0));
        assert_eq!(p.drill_state("jitter"), DrillState::Solved);
    }

    #[test]
    fn review_takes_the_overdue_first_then_the_new() {
        let keys: Vec<String> = (1..=4).map(question_key).collect();
        let mut p = Progress::default();
        assert_eq!(p.next_of(&keys, 0), Some("question:1"));
        p.record("question:1", Outcome::Right, 0);
        p.record("question:2", Outcome::Missed, 0);
        p.record("question:3", Outcome::Missed, 5);
        // Nothing due yet: the first new one.
        assert_eq!(p.next_of(&keys, 9), Some("question:4"));
        p.record("question:4", Outcome::Right, 9);
        assert_eq!(p.next_of(&keys, 9), None);
        // The longest overdue first: missed at 0 before missed at 5.
        assert_eq!(p.next_of(&keys, 15), Some("question:2"));
        p.record("question:2", Outcome::Right, 15);
        assert_eq!(p.next_of(&keys, 15), Some("question:3"));
        p.record("question:3", Outcome::Partly, 15);
        assert_eq!(p.next_of(&keys, 24), None);
        assert_eq!(p.next_of(&keys, 25), Some("question:3"));
        // The one known since 0 comes back after a day.
        assert_eq!(p.next_of(&keys, INTERVALS_MIN[1] - 1), Some("question:3"));
        p.record("question:3", Outcome::Right, 30);
        assert_eq!(p.next_of(&keys, INTERVALS_MIN[1]), Some("question:1"));
    }

    #[test]
    fn drills_are_untried_attempted_or_solved() {
        let mut p = Progress::default();
        assert_eq!(p.drill_state("swr"), DrillState::Untried);
        p.record(&drill_key("swr"), Outcome::Missed, 5);
        assert_eq!(p.drill_state("swr"), DrillState::Attempted);
        p.record(&drill_key("swr"), Outcome::Right, 6);
        assert_eq!(p.drill_state("swr"), DrillState::Solved);
        // Solved stays solved after a later miss; the review still brings it back.
        p.record(&drill_key("swr"), Outcome::Missed, 7);
        assert_eq!(p.drill_state("swr"), DrillState::Solved);
        assert_eq!(p.due(17, "drill:").len(), 1);
    }

    #[test]
    fn the_record_reads_back_as_written() {
        let mut p = Progress::default();
        assert!(p.see("basics/1"));
        assert!(!p.see("basics/1"));
        p.see("deeper/12");
        p.record(&predict_key("basics/2"), Outcome::Right, 29_000_000);
        p.record(&question_key(15), Outcome::Partly, 29_000_001);
        p.record(&drill_key("cold-start"), Outcome::Missed, 29_000_002);
        let text = p.to_text();
        assert!(text.starts_with(HEADER));
        assert_eq!(Progress::parse(&text), (p.clone(), None));
        assert_eq!(Progress::parse(""), (Progress::default(), None));
        // Windows line ends and blank lines are no damage.
        assert_eq!(Progress::parse(&text.replace('\n', "\r\n\n")), (p, None));
    }

    #[test]
    fn damaged_records_keep_what_they_can_and_say_so() {
        let mut p = Progress::default();
        p.see("solid/2");
        p.record("drill:swr", Outcome::Right, 50);
        let good = p.to_text();
        let damaged = format!("{good}\ni drill:x 9 1 1 1 1 r\ni drill:y 0 1 1 2 0 m\ngarbage\ns \ni drill:swr 0 1 1 0 0 m");
        let (q, said) = Progress::parse(&damaged);
        assert_eq!(q, p, "the whole entries are kept, duplicates dropped");
        let said = said.unwrap();
        assert!(said.starts_with("5 damaged entries"), "{said}");
        for foreign in [
            "{\"seen\":[]}",
            "null",
            "\u{0}\u{1}",
            "stampede-progress 2\ns basics/1",
        ] {
            let (q, said) = Progress::parse(foreign);
            assert_eq!(q, Progress::default());
            assert!(said.unwrap().contains("started afresh"), "{foreign}");
        }
        // Keys that are not keys are never stored.
        let mut p = Progress::default();
        p.record("a b", Outcome::Right, 1);
        p.record(&"x".repeat(MAX_KEY + 1), Outcome::Right, 1);
        p.record("", Outcome::Right, 1);
        assert!(!p.see("a\nb"));
        assert_eq!(p, Progress::default());
        // Junk never panics.
        for junk in [
            "stampede-progress 1\ni",
            "stampede-progress 1\ni a 0 x 0 0 0 m",
            "stampede-progress 1\ni a 0 18446744073709551616 0 0 0 m",
        ] {
            let (_, said) = Progress::parse(junk);
            assert!(said.is_some(), "{junk}");
        }
    }

    #[test]
    fn the_record_stays_small() {
        let mut p = Progress::default();
        for n in 0..(MAX_ENTRIES as u32 + 50) {
            p.record(&question_key(n), Outcome::Right, u64::from(n));
            p.see(&format!("x/{n}"));
        }
        assert_eq!(p.items.len(), MAX_ENTRIES);
        assert_eq!(p.seen.len(), MAX_ENTRIES);
        assert!(p.item("question:0").is_none(), "the oldest go first");
        assert!(p.item(&question_key(MAX_ENTRIES as u32 + 49)).is_some());
        // Far in the future never overflows.
        p.record("question:9", Outcome::Right, u64::MAX - 1);
        assert_eq!(p.item("question:9").unwrap().due, u64::MAX);
    }

    #[test]
    fn waits_read_as_words() {
        assert_eq!(wait_words(0), "in 1 minute");
        assert_eq!(wait_words(10), "in 10 minutes");
        assert_eq!(wait_words(61), "in 2 hours");
        assert_eq!(wait_words(24 * 60), "in 24 hours");
        assert_eq!(wait_words(3 * 24 * 60), "in 3 days");
    }
}
