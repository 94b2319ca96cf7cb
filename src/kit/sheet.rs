//! The interviewer's scoresheet: what the kit keeps across a reload, prints
//! and exports. No web types: host-tested.
//!
//! A tick is named by its question's number and its place in it:
//! `0/basics/1` (the card's question, the second point of its basics),
//! `4/flag/0`, `12/follow/2`. A question is on the sheet once it was asked
//! (opened in the kit) or has a tick; the card's always is.

use catalogue::interview::{self, Question};

/// The overall ratings, 1 to 4.
pub const RATINGS: [&str; 4] = ["1 · weak", "2 · mixed", "3 · solid", "4 · strong"];
/// The recommendations (the empty one: not decided).
pub const RECOMMENDATIONS: [&str; 4] = ["Strong hire", "Hire", "No hire", "Strong no hire"];

/// The interviewer's scoresheet: what is kept across a reload.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sheet {
    pub candidate: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The question on the kit's screen (0: the card's).
    pub current: u32,
    /// The reference questions asked so far, in the order they were (the
    /// card's is always on the sheet, first).
    pub asked: Vec<u32>,
    /// Ticked points, red flags and follow-ups: `0/basics/0`, `3/flag/1`.
    pub ticks: Ticks,
    pub notes: String,
    /// 1 to 4; 0 while not rated.
    pub rating: u8,
    /// One of [`RECOMMENDATIONS`], or empty.
    pub recommendation: String,
    /// The timer's seconds, whether it runs, and when it was saved (wall
    /// ms), so that a reload of a running timer loses no time.
    pub seconds: u32,
    pub running: bool,
    pub saved_at: f64,
}

/// The ticked items, each once, in order: a sorted list (a few dozen names;
/// a set type would bring its own code into the wasm, about 8 KB raw).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ticks(Vec<String>);

impl Ticks {
    pub fn insert(&mut self, id: String) {
        if let Err(i) = self.find(&id) {
            self.0.insert(i, id);
        }
    }

    pub fn remove(&mut self, id: &str) {
        if let Ok(i) = self.find(id) {
            self.0.remove(i);
        }
    }

    pub fn contains(&self, id: &str) -> bool {
        self.find(id).is_ok()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, String> {
        self.0.iter()
    }

    fn find(&self, id: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|t| t.as_str().cmp(id))
    }
}

/// A tick's name: question `q`, then its part (`basics/1`, `flag/0`).
pub fn tick_id(q: u32, part: &str) -> String {
    format!("{q}/{part}")
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

pub fn mm_ss(s: u32) -> String {
    format!("{}:{:02}", s / 60, s % 60)
}

/// A level's name ("basics") with its first letter in capitals; the names
/// are ASCII (and the wasm then carries no Unicode case tables).
fn capitalised(s: &str) -> String {
    let mut s = s.to_string();
    if let Some(first) = s.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    s
}

/// A rating in words: `3 of 4 (3 · solid)`, or a dash.
pub fn rating_words(r: u8) -> String {
    match r {
        1..=4 => format!("{r} of 4 ({})", RATINGS[usize::from(r) - 1]),
        _ => "—".to_string(),
    }
}

impl Sheet {
    /// One `key<TAB>value` line each (values escaped), a tick per line.
    pub fn to_store(&self) -> String {
        let mut out = format!(
            "candidate\t{}\ndate\t{}\ncurrent\t{}\nrating\t{}\nrecommendation\t{}\nseconds\t{}\nrunning\t{}\nsaved_at\t{}\nnotes\t{}\n",
            escape(&self.candidate),
            escape(&self.date),
            self.current,
            self.rating,
            escape(&self.recommendation),
            self.seconds,
            u8::from(self.running),
            // Whole milliseconds (Date.now() gives no more), written and
            // read as an integer: no float text in the wasm.
            self.saved_at as u64,
            escape(&self.notes),
        );
        for q in &self.asked {
            out.push_str(&format!("asked\t{q}\n"));
        }
        for t in self.ticks.iter() {
            out.push_str(&format!("tick\t{}\n", escape(t)));
        }
        out
    }

    /// Reads [`Sheet::to_store`]'s text; what it cannot read stays empty.
    /// A question the kit no longer has is dropped. A tick kept before the
    /// kit had more than the card's question (`basics/1`) is the card's.
    pub fn from_store(text: &str) -> Sheet {
        let mut s = Sheet::default();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('\t') else {
                continue;
            };
            let v = unescape(v);
            let question = |v: &str| v.parse().ok().filter(|&n| interview::question(n).is_some());
            match k {
                "candidate" => s.candidate = v,
                "date" => s.date = v,
                "current" => s.current = question(&v).unwrap_or(0),
                "asked" => {
                    if let Some(n) = question(&v) {
                        s.ask(n);
                    }
                }
                "rating" => s.rating = v.parse().unwrap_or(0).min(4),
                "recommendation" => s.recommendation = v,
                "seconds" => s.seconds = v.parse().unwrap_or(0),
                "running" => s.running = v == "1",
                "saved_at" => {
                    let whole = v.split('.').next().unwrap_or_default();
                    s.saved_at = whole.parse::<u64>().map_or(0.0, |ms| ms as f64);
                }
                "notes" => s.notes = v,
                "tick" => {
                    let v = if v.starts_with(|c: char| c.is_ascii_digit()) {
                        v
                    } else {
                        tick_id(0, &v)
                    };
                    s.ticks.insert(v);
                }
                _ => {}
            }
        }
        s
    }

    /// Puts question `n` on screen, and on the sheet.
    pub fn open(&mut self, n: u32) {
        if interview::question(n).is_some() {
            self.current = n;
            self.ask(n);
        }
    }

    fn ask(&mut self, n: u32) {
        if n != 0 && !self.asked.contains(&n) {
            self.asked.push(n);
        }
    }

    /// The questions on the sheet, in the order asked: the card's first.
    pub fn on_sheet(&self) -> Vec<&'static Question> {
        std::iter::once(0)
            .chain(self.asked.iter().copied())
            .filter_map(interview::question)
            .collect()
    }

    /// The timer as it reads at wall time `now` (ms): a running timer went
    /// on while the kit was away.
    pub fn resumed(mut self, now: f64) -> Sheet {
        if self.running && now > self.saved_at && self.saved_at > 0.0 {
            self.seconds += ((now - self.saved_at) / 1000.0) as u32;
        }
        self
    }

    pub fn ticked(&self, id: &str) -> bool {
        self.ticks.contains(id)
    }

    /// How many of question `q`'s boxes are ticked.
    pub fn ticks_of(&self, q: u32) -> usize {
        let prefix = format!("{q}/");
        self.ticks.iter().filter(|t| t.starts_with(&prefix)).count()
    }

    /// The scoresheet as Markdown: the same words as on paper.
    pub fn markdown(&self) -> String {
        let tick = |id: String| if self.ticked(&id) { "[x]" } else { "[ ]" };
        let or_dash = |s: &str| {
            if s.trim().is_empty() {
                "—".to_string()
            } else {
                s.trim().to_string()
            }
        };
        let mut md = format!(
            "# Interview scoresheet\n\n- Candidate: {}\n- Date: {}\n- Time taken: {}\n- Overall rating: {}\n- Recommendation: {}\n",
            or_dash(&self.candidate),
            or_dash(&self.date),
            mm_ss(self.seconds),
            rating_words(self.rating),
            or_dash(&self.recommendation),
        );
        for q in self.on_sheet() {
            let n = q.number;
            md.push_str(&format!("\n## {}\n\n{}\n", heading(q), q.asks));
            for l in &q.levels {
                md.push_str(&format!("\n### {}: {}\n\n", capitalised(l.name), l.gist));
                for (i, p) in l.names.iter().enumerate() {
                    let id = tick_id(n, &format!("{}/{i}", l.name));
                    md.push_str(&format!("- {} {}\n", tick(id), p.text()));
                }
            }
            md.push_str("\n### Red flags said\n\n");
            for (i, f) in q.red_flags.iter().enumerate() {
                let id = tick_id(n, &format!("flag/{i}"));
                md.push_str(&format!("- {} “{}”\n", tick(id), f.says));
            }
            md.push_str("\n### Follow-ups answered\n\n");
            for (i, f) in q.follow_ups.iter().enumerate() {
                let id = tick_id(n, &format!("follow/{i}"));
                let asks = interview::question(f.question).map_or("", |q| q.asks);
                md.push_str(&format!(
                    "- {} Question {}: {asks} Listen for: {}\n",
                    tick(id),
                    f.question,
                    f.row.words
                ));
            }
        }
        md.push_str(&format!("\n## Notes\n\n{}\n", or_dash(&self.notes)));
        md
    }

    /// A file name for the export: the candidate and the date.
    pub fn file_name(&self) -> String {
        let who = crate::page::slug(&self.candidate);
        let who = if who.is_empty() { "candidate" } else { &who };
        let date = if self.date.is_empty() {
            "undated"
        } else {
            &self.date
        };
        format!("scoresheet-{who}-{date}.md")
    }
}

/// A question's heading: "The card's question" or "Question 4".
pub fn heading(q: &Question) -> String {
    match q.number {
        0 => "The card's question".to_string(),
        n => format!("Question {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalogue::interview::LEVELS;

    #[test]
    fn ticks_keep_each_name_once_in_order_as_a_set_does() {
        // Random inserts and removals over many seeds, against BTreeSet.
        for seed in 1..200u64 {
            let (mut x, mut ticks, mut set) =
                (seed, Ticks::default(), std::collections::BTreeSet::new());
            for _ in 0..60 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let id = tick_id((x >> 33) as u32 % 4, &format!("flag/{}", (x >> 40) % 5));
                if (x >> 20) % 3 == 0 {
                    ticks.remove(&id);
                    set.remove(&id);
                } else {
                    ticks.insert(id.clone());
                    set.insert(id.clone());
                }
                assert_eq!(ticks.contains(&id), set.contains(&id), "seed {seed}");
                assert!(
                    ticks.iter().eq(set.iter()),
                    "seed {seed}: {ticks:?} against {set:?}"
                );
            }
        }
    }

    #[test]
    fn the_scoresheet_survives_storage_and_reads_as_markdown() {
        let mut s = Sheet {
            candidate: "Ada\tLovelace".into(),
            date: "2026-12-02".into(),
            notes: "Line one\nLine\ttwo \\ end".into(),
            rating: 3,
            recommendation: "Hire".into(),
            seconds: 754,
            running: true,
            saved_at: 1_000_000.0,
            ..Sheet::default()
        };
        s.ticks.insert("0/basics/1".into());
        s.ticks.insert("0/flag/0".into());
        s.ticks.insert("0/follow/2".into());
        let back = Sheet::from_store(&s.to_store());
        assert_eq!(back, s);
        // A running timer went on while the kit was reloading.
        assert_eq!(back.clone().resumed(1_065_500.0).seconds, 754 + 65);
        // A sheet saved with the moment in fractional milliseconds (as
        // before it was written whole) keeps its whole milliseconds.
        let older = s
            .to_store()
            .replace("saved_at\t1000000\n", "saved_at\t1000000.75\n");
        assert_ne!(older, s.to_store());
        assert_eq!(Sheet::from_store(&older).saved_at, 1_000_000.0);
        let stopped = Sheet {
            running: false,
            ..back
        };
        assert_eq!(stopped.clone().resumed(2_000_000.0).seconds, 754);
        let md = s.markdown();
        for want in [
            "- Candidate: Ada\tLovelace",
            "- Date: 2026-12-02",
            "- Time taken: 12:34",
            "- Overall rating: 3 of 4",
            "- Recommendation: Hire",
            "Line one\nLine\ttwo",
            "## The card's question",
            "\n### Basics: ",
            "\n### Deeper: ",
        ] {
            assert!(md.contains(want), "{want:?} in\n{md}");
        }
        let ticked = md.lines().filter(|l| l.starts_with("- [x]")).count();
        assert_eq!(ticked, 3, "{md}");
        assert!(
            md.contains(&format!("- [x] {}", LEVELS[0].names[1].text())),
            "{md}"
        );
        assert!(
            md.contains(&format!("- [ ] {}", LEVELS[0].names[0].text())),
            "{md}"
        );
        assert_eq!(s.file_name(), "scoresheet-ada-lovelace-2026-12-02.md");
        let accented = Sheet {
            candidate: " José  Ñúñez ".into(),
            ..Sheet::default()
        };
        assert_eq!(accented.file_name(), "scoresheet-josé-Ñúñez-undated.md");
        assert_eq!(
            Sheet::default().file_name(),
            "scoresheet-candidate-undated.md"
        );
    }

    #[test]
    fn a_sheet_kept_before_the_kit_had_questions_is_the_cards() {
        let old = "candidate\tGrace\ntick\tbasics/1\ntick\tflag/0\n";
        let s = Sheet::from_store(old);
        assert_eq!(s.current, 0);
        let ticks: Vec<_> = s.ticks.iter().cloned().collect();
        assert_eq!(ticks, ["0/basics/1", "0/flag/0"]);
        assert_eq!(s.on_sheet().len(), 1);
    }

    #[test]
    fn an_asked_question_joins_the_sheet_once_in_order_and_survives_a_reload() {
        let mut s = Sheet::default();
        assert_eq!(s.on_sheet()[0].number, 0, "the card's is always on it");
        let reference: Vec<u32> = interview::questions()
            .map(|q| q.number)
            .filter(|&n| n != 0)
            .collect();
        // Asked in an order of the interviewer's, one twice.
        let order: Vec<u32> = reference.iter().rev().take(3).copied().collect();
        for &n in order.iter().chain(order.first()) {
            s.open(n);
        }
        assert_eq!(s.current, *order.first().unwrap_or(&0));
        let numbers: Vec<u32> = s.on_sheet().iter().map(|q| q.number).collect();
        assert_eq!(numbers[0], 0);
        assert_eq!(&numbers[1..], &order[..]);
        // A number the kit has no question for is not opened.
        s.open(999);
        assert_ne!(s.current, 999);
        let back = Sheet::from_store(&s.to_store());
        assert_eq!(back, s);
        // Nor read back from a hand-edited store.
        let edited = s.to_store() + "asked\t999\ncurrent\t999\n";
        assert_eq!(Sheet::from_store(&edited).current, 0);
        assert_eq!(Sheet::from_store(&edited).asked, s.asked);
        // Each question on the sheet is in the Markdown, with its ticks.
        for &n in &order {
            s.ticks.insert(tick_id(n, "basics/0"));
        }
        let md = s.markdown();
        for q in s.on_sheet() {
            assert!(md.contains(q.asks), "{}: {md}", q.number);
            assert!(md.contains(&format!("## {}\n", heading(q))), "{md}");
        }
        assert_eq!(md.matches("- [x]").count(), order.len(), "{md}");
        assert_eq!(s.ticks_of(order[0]), 1);
    }

    #[test]
    fn the_timer_reads_minutes_and_seconds() {
        assert_eq!(mm_ss(0), "0:00");
        assert_eq!(mm_ss(65), "1:05");
        assert_eq!(mm_ss(45 * 60), "45:00");
    }
}
