//! "Checked against real Redis": what `make conformance` measured when the
//! real fleet (`stampede-fleet`, tokio tasks against a real `redis-server`)
//! ran the presets, shown beside what the simulation makes of the same run
//! now. The file (`data/conformance.tsv`) is compiled in; if the core has
//! changed since it was written, the panel says so instead of pretending.

use stampede::scenario::Scenario;
use stampede::{Fleet, Metric};

/// The file `make conformance` writes.
pub const DATA: &str = include_str!("../../data/conformance.tsv");

#[derive(Clone, Debug, PartialEq)]
pub struct Row<'a> {
    pub preset: &'a str,
    pub metric: Metric,
    /// The simulation's number when the file was written.
    pub sim: u64,
    pub real: u64,
    pub tolerance: &'a str,
}

#[derive(Debug, Default)]
pub struct Table<'a> {
    pub date: &'a str,
    pub redis: &'a str,
    pub tolerance: &'a str,
    /// Each run, as a share link's query, by its label: a preset's name,
    /// or `PRESET:VARIANT` for a run made from the preset with something
    /// more (a fault at a moment), which the panel does not show as the
    /// preset's.
    pub scenarios: Vec<(&'a str, &'a str)>,
    pub rows: Vec<Row<'a>>,
}

/// Reads the file; lines it does not understand are skipped.
pub fn parse(text: &str) -> Table<'_> {
    let mut t = Table::default();
    for line in text.lines() {
        if let Some(meta) = line.strip_prefix("# ") {
            match meta.split_once(": ") {
                Some(("date", v)) => t.date = v,
                Some(("redis", v)) => t.redis = v,
                Some(("tolerance", v)) => t.tolerance = v,
                Some(("scenario", v)) => {
                    if let Some((p, q)) = v.split_once(' ') {
                        t.scenarios.push((p, q));
                    }
                }
                _ => {}
            }
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if let [preset, metric, sim, real, tolerance] = cols[..] {
            // The file names a counter as the CLI's JSON does: read once
            // here, and looked up by its `Metric` after.
            let metric = Metric::from_name(metric);
            if let (Some(metric), Ok(sim), Ok(real)) = (metric, sim.parse(), real.parse()) {
                t.rows.push(Row {
                    preset,
                    metric,
                    sim,
                    real,
                    tolerance,
                });
            }
        }
    }
    t
}

impl<'a> Table<'a> {
    pub fn rows_for(&self, preset: &str) -> impl Iterator<Item = &Row<'a>> + '_ {
        let preset = preset.to_string();
        self.rows.iter().filter(move |r| r.preset == preset)
    }

    /// The presets the file covers, in its order (a variant's run is not
    /// its preset's).
    pub fn presets(&self) -> Vec<&'a str> {
        self.runs()
            .into_iter()
            .filter(|p| !p.contains(':'))
            .collect()
    }

    /// Every run the file covers, presets and variants, in its order.
    pub fn runs(&self) -> Vec<&'a str> {
        self.scenarios.iter().map(|(p, _)| *p).collect()
    }

    /// What the simulation makes of a preset's conformance run now: each of
    /// the file's counters with (the file's number, the core's number).
    pub fn now(&self, preset: &str) -> Vec<(Metric, u64, u64)> {
        let Some((_, query)) = self.scenarios.iter().find(|(p, _)| *p == preset) else {
            return Vec::new();
        };
        let (s, seed, _) = Scenario::from_query(query);
        // `advance_to`, the page's own way of running a fleet (`run` would
        // link a second copy of the event loop into the wasm).
        let mut fleet = Fleet::new(&s, seed);
        while !fleet.advance_to(u64::MAX, usize::MAX) {}
        let report = fleet.report();
        self.rows_for(preset)
            .map(|r| {
                let now = report.text(r.metric).parse().unwrap_or(u64::MAX);
                (r.metric, r.sim, now)
            })
            .collect()
    }
}

/// Builds the panel at the end of the side column and keeps it on the
/// running lesson's preset.
pub fn mount(base: leptos::prelude::Memo<Option<&'static str>>, side: &web_sys::Element) {
    use crate::dom::{el, put, set, set_text, text_el};
    use crate::web::document;
    use leptos::prelude::*;
    let doc = document();
    if doc
        .query_selector("section.conformance")
        .ok()
        .flatten()
        .is_some()
    {
        return;
    }
    let table = parse(DATA);
    let section = el("section", "panel conformance");
    set(&section, "aria-labelledby", "conf-title");
    let h = text_el("h2", "", "Checked against real Redis");
    set(&h, "id", "conf-title");
    put(&section, &h);
    put(
        &section,
        &text_el(
            "p",
            "conf-meta",
            &format!(
                "The same core, driven by real tasks against redis-server {} on {} (make conformance). Tolerance: {}",
                table.redis, table.date, table.tolerance
            ),
        ),
    );
    let body = el("div", "");
    put(&section, &body);
    put(side, &section);

    let body = StoredValue::new_local(body);
    crate::dom::effect(move || {
        let preset = base.get();
        let table = parse(DATA);
        body.with_value(|body| {
            body.set_text_content(None);
            let covered = preset.filter(|p| table.presets().contains(p));
            let Some(p) = covered else {
                put(
                    body,
                    &text_el(
                        "p",
                        "conf-note",
                        &format!(
                            "This scenario has not been run for real. These presets were: {}.",
                            table.presets().join(", ")
                        ),
                    ),
                );
                return;
            };
            let now = table.now(p);
            let t = el("table", "conf");
            let head = el("tr", "");
            for c in ["counter", "simulation", "real Redis", "within"] {
                let th = text_el("th", "", c);
                set(&th, "scope", "col");
                put(&head, &th);
            }
            put(&t, &head);
            let mut stale = Vec::new();
            for (r, (metric, then, now)) in table.rows_for(p).zip(&now) {
                let tr = el("tr", "");
                set(&tr, "data-conformance", metric.name());
                put(&tr, &text_el("th", "", crate::page::label(*metric)));
                put(&tr, &text_el("td", "num", &now.to_string()));
                put(&tr, &text_el("td", "num", &r.real.to_string()));
                put(&tr, &text_el("td", "", r.tolerance));
                put(&t, &tr);
                if then != now {
                    stale.push(format!("{metric} {then} where the core now makes {now}"));
                }
            }
            put(body, &t);
            let note = el("p", "conf-note");
            if stale.is_empty() {
                set_text(&note, &format!("The run for {p}, at the size the file names; the simulation column is the core's, computed in this page now."));
            } else {
                note.set_class_name("conf-note conf-stale");
                set(&note, "data-stale", "");
                set_text(
                    &note,
                    &format!(
                        "This file is older than the simulation core that runs this page: it says {}. Run make conformance to measure again.",
                        stale.join("; ")
                    ),
                );
            }
            put(body, &note);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_reads_and_names_real_presets() {
        let t = parse(DATA);
        assert!(!t.date.is_empty() && !t.redis.is_empty() && !t.tolerance.is_empty());
        assert!(t.presets().len() >= 5, "{:?}", t.presets());
        for (p, q) in &t.scenarios {
            let base = p.split_once(':').map_or(*p, |(base, _)| base);
            assert!(
                stampede::scenario::preset(base).is_some(),
                "{p} is not a preset or a preset's variant"
            );
            let (_, _, notices) = Scenario::from_query(q);
            assert!(notices.is_empty(), "{p}: {notices:?}");
            assert!(t.rows_for(p).count() > 0, "{p} has no rows");
        }
        for r in &t.rows {
            assert!(t.runs().contains(&r.preset), "{r:?}");
        }
        // Every row of the file is read: each names a counter of `Report`.
        let lines = DATA
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'));
        assert_eq!(
            t.rows.len(),
            lines.count() - 1,
            "a row names no counter (the header aside)"
        );
    }

    /// The committed file is current: its simulation column is what the
    /// core makes of each run today (else: make conformance).
    #[test]
    fn the_file_is_as_new_as_the_core() {
        let t = parse(DATA);
        for p in t.runs() {
            for (metric, then, now) in t.now(p) {
                assert_eq!(
                    then, now,
                    "{p} {metric}: the file is older than the core; run make conformance"
                );
            }
        }
    }

    /// A file written by an older core is told apart.
    #[test]
    fn an_older_file_is_noticed() {
        let old = DATA.replacen("burst\trecomputes\t1\t", "burst\trecomputes\t2\t", 1);
        let t = parse(&old);
        let now = t.now("burst");
        assert!(
            now.iter()
                .any(|(m, then, now)| *m == Metric::Recomputes && then != now),
            "{now:?}"
        );
    }
}
