//! The timeline chart: four lanes over virtual time sharing one axis —
//! recomputes running at the origin, Redis round trips, errors and timeouts,
//! stale answers — each scaled to its own peak, with a playhead. Cumulative
//! counters are differenced per column, so a lane shows a rate, not a total.

use crate::clock::virtual_label;
use crate::palette::{Scheme, SANS};
use stampede::sim::{Marker, Sample};
use web_sys::CanvasRenderingContext2d as Ctx;

pub struct Lane {
    pub label: &'static str,
    /// Index into `Sample` values as `values()` returns them.
    pub light: &'static str,
    pub dark: &'static str,
    /// A level (max per column) rather than a count per column.
    pub level: bool,
}

pub const LANES: [Lane; 4] = [
    Lane {
        label: "recomputes at the origin",
        light: "#d55e00",
        dark: "#ff7a1a",
        level: true,
    },
    Lane {
        label: "Redis round trips",
        light: "#0072b2",
        dark: "#56b4e9",
        level: false,
    },
    Lane {
        label: "errors and timeouts",
        light: "#b2182b",
        dark: "#ff5c6c",
        level: false,
    },
    Lane {
        label: "stale answers",
        light: "#a6761d",
        dark: "#c99a3e",
        level: false,
    },
];

fn values(s: &Sample) -> [u64; 4] {
    [
        s.origin_running,
        s.redis_round_trips,
        s.failures,
        s.stale_served,
    ]
}

/// Per column and lane: the level (max) or the count in that column.
/// Columns past the last sample are `None` (not simulated yet).
pub fn columns(samples: &[Sample], span: u64, n: usize) -> Vec<Option<[u64; 4]>> {
    let mut out = vec![None; n];
    if samples.is_empty() || n == 0 || span == 0 {
        return out;
    }
    let last_t = samples[samples.len() - 1].t;
    let mut k = 0;
    let mut before = values(&samples[0]);
    for (c, slot) in out.iter_mut().enumerate() {
        let end = span.saturating_mul(c as u64 + 1) / n as u64;
        let start = span.saturating_mul(c as u64) / n as u64;
        if start > last_t || (start == last_t && c > 0) {
            break;
        }
        let mut col = [0u64; 4];
        while k < samples.len() && samples[k].t <= end {
            let v = values(&samples[k]);
            col[0] = col[0].max(v[0]);
            for j in 1..4 {
                col[j] += v[j].saturating_sub(before[j]);
            }
            before = v;
            k += 1;
        }
        if col[0] == 0 && k > 0 {
            // A level holds between samples.
            col[0] = values(&samples[k - 1])[0];
        }
        *slot = Some(col);
    }
    out
}

/// Draws the lanes with a playhead at `now` (virtual µs) over `span`, the
/// markers' names painted in their rows.
pub fn draw(ctx: &Ctx, sc: &Scheme, dark: bool, size: (f64, f64), tl: &Timeline) {
    for l in draw_lanes(ctx, sc, dark, size, tl) {
        let _ = ctx.fill_text(l.text, l.x, l.y);
    }
}

/// Draws everything but the markers' names, and returns where each name
/// goes (css px from the canvas's top left), for a caller that writes them
/// as text elements over the canvas. The canvas is left with the names'
/// font and colour set.
#[inline(never)]
pub fn draw_lanes(
    ctx: &Ctx,
    sc: &Scheme,
    dark: bool,
    (w, h): (f64, f64),
    tl: &Timeline,
) -> Vec<Placed> {
    let Timeline {
        samples,
        markers,
        span,
        now,
    } = *tl;
    ctx.set_fill_style_str(sc.background);
    ctx.fill_rect(0.0, 0.0, w, h);
    let left = 8.0;
    let right = w - 8.0;
    let axis = 18.0;
    // A band on top for the markers' names, in rows.
    let band = ROWS as f64 * ROW_H + 2.0;
    let lane_h = (h - axis - 4.0 - band) / LANES.len() as f64;
    let n = ((right - left) / 3.0).floor().clamp(10.0, 400.0) as usize;
    let cols = columns(samples, span, n);
    let cw = (right - left) / n as f64;
    let mut peaks = [0u64; 4];
    for c in cols.iter().flatten() {
        for j in 0..4 {
            peaks[j] = peaks[j].max(c[j]);
        }
    }
    for (j, lane) in LANES.iter().enumerate() {
        let top = 2.0 + band + lane_h * j as f64;
        let base = top + lane_h - 3.0;
        let room = lane_h - 18.0;
        ctx.set_fill_style_str(sc.grid);
        ctx.fill_rect(left, base, right - left, 1.0);
        ctx.begin_path();
        for (c, col) in cols.iter().enumerate() {
            let Some(col) = col else { break };
            if col[j] == 0 || peaks[j] == 0 {
                continue;
            }
            let bh = (col[j] as f64 / peaks[j] as f64 * room).max(1.5);
            ctx.rect(left + c as f64 * cw, base - bh, cw.max(1.0), bh);
        }
        ctx.set_fill_style_str(if dark { lane.dark } else { lane.light });
        ctx.fill();
        ctx.set_font(&format!("12px {SANS}"));
        ctx.set_text_align("left");
        ctx.set_text_baseline("top");
        ctx.set_fill_style_str(sc.text);
        // The level's peak is the run's own (the proof's number), not the
        // highest sample: samples can fall between two peaks.
        let (unit, peak) = if lane.level {
            ("peak", samples.last().map_or(0, |s| s.origin_peak))
        } else {
            ("max per column", peaks[j])
        };
        let _ = ctx.fill_text(
            &format!("{} — {} {}", lane.label, unit, peak),
            left + 2.0,
            top + 1.0,
        );
    }
    let placed = draw_markers(ctx, sc, markers, span, (left, right), band, h - axis);
    // The time axis.
    ctx.set_fill_style_str(sc.muted);
    ctx.set_font(&format!("11px {SANS}"));
    ctx.set_text_baseline("bottom");
    let x = left + (right - left) * (now.min(span) as f64 / span.max(1) as f64);
    // The ends of the axis, unless the playhead's own label would cover them.
    ctx.set_text_align("left");
    if x > left + 40.0 {
        let _ = ctx.fill_text("0", left, h - 2.0);
    }
    ctx.set_text_align("right");
    if x < right - 90.0 {
        let _ = ctx.fill_text(&virtual_label(span), right, h - 2.0);
    }
    // The playhead.
    if span > 0 {
        ctx.set_fill_style_str(sc.text);
        ctx.fill_rect(x - 0.75, 0.0, 1.5, h - axis + 2.0);
        ctx.set_text_align(if x > w / 2.0 { "right" } else { "left" });
        let label_x = if x > w / 2.0 { x - 4.0 } else { x + 4.0 };
        let _ = ctx.fill_text(&virtual_label(now), label_x, h - 2.0);
    }
    ctx.set_font(MARKER_FONT.with(|f| f.clone()).as_str());
    ctx.set_text_baseline("top");
    ctx.set_text_align("left");
    ctx.set_fill_style_str(sc.text);
    placed
}

/// Rows of marker names above the lanes, and each row's height (css px).
pub const ROWS: usize = 2;
pub const ROW_H: f64 = 14.0;
/// The least room between two names in one row (css px).
pub const NAME_GAP: f64 = 8.0;

thread_local! {
    static MARKER_FONT: String = format!("600 11px {SANS}");
}

/// A marker's name placed over the chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Placed {
    pub text: &'static str,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    /// The marker's time (µs), for the label's `data-marker-t`.
    pub t: u64,
}

/// What the chart shows: samples and markers over a span, and the playhead.
#[derive(Clone, Copy)]
pub struct Timeline<'a> {
    pub samples: &'a [Sample],
    pub markers: &'a [Marker],
    pub span: u64,
    pub now: u64,
}

/// Where on the axis each marker goes, and where its name is written, if
/// anywhere: a name of width `width(name)` goes in the first of `rows`
/// rows where it clears the last name by `gap` (kept inside `left..right`);
/// with no room in any row the marker keeps only its line. Two names never
/// overlap.
pub fn marker_places(
    markers: &[Marker],
    span: u64,
    (left, right): (f64, f64),
    rows: usize,
    gap: f64,
    width: &dyn Fn(&str) -> f64,
) -> Vec<(f64, Option<(f64, usize)>)> {
    let mut ends = vec![f64::NEG_INFINITY; rows];
    markers
        .iter()
        .filter(|m| m.t <= span)
        .map(|m| {
            let x = left + (right - left) * (m.t as f64 / span.max(1) as f64);
            let w = width(m.what.label());
            // Just right of its line, kept inside the chart.
            let tx = (x + 2.0).min(right - w).max(left);
            let row = ends.iter().position(|end| tx >= end + gap);
            if let Some(r) = row {
                ends[r] = tx + w;
            }
            (x, row.map(|r| (tx, r)))
        })
        .collect()
}

/// Dashed lines down the lanes at each marker; returns where the names go.
fn draw_markers(
    ctx: &Ctx,
    sc: &Scheme,
    markers: &[Marker],
    span: u64,
    (left, right): (f64, f64),
    band: f64,
    bottom: f64,
) -> Vec<Placed> {
    if span == 0 {
        return Vec::new();
    }
    MARKER_FONT.with(|f| ctx.set_font(f));
    let width = |text: &str| {
        ctx.measure_text(text)
            .map(|t| t.width())
            .unwrap_or(60.0)
            .ceil()
    };
    let places = marker_places(markers, span, (left, right), ROWS, NAME_GAP, &width);
    ctx.set_stroke_style_str(sc.muted);
    ctx.set_line_width(1.0);
    let _ = ctx.set_line_dash(&js_sys::Array::of2(&3.0.into(), &3.0.into()));
    ctx.begin_path();
    for (x, _) in &places {
        // Under the names' rows: a line never runs through a name.
        ctx.move_to(x.round() + 0.5, band);
        ctx.line_to(x.round() + 0.5, bottom);
    }
    ctx.stroke();
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    places
        .iter()
        .zip(markers.iter().filter(|m| m.t <= span))
        .filter_map(|((_, name), m)| {
            let (tx, row) = (*name)?;
            let text = m.what.label();
            Some(Placed {
                text,
                x: tx,
                y: 2.0 + ROW_H * row as f64,
                w: width(text),
                t: m.t,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: u64, running: u64, trips: u64) -> Sample {
        Sample {
            t,
            origin_running: running,
            redis_round_trips: trips,
            ..Sample::default()
        }
    }

    #[test]
    fn counts_are_differenced_and_levels_kept() {
        let s = [
            sample(0, 0, 0),
            sample(10, 3, 5),
            sample(20, 1, 5),
            sample(30, 0, 9),
        ];
        let c = columns(&s, 40, 4);
        assert_eq!(c[0], Some([3, 5, 0, 0]), "t in 0..=10");
        assert_eq!(c[1], Some([1, 0, 0, 0]));
        assert_eq!(c[2], Some([0, 4, 0, 0]));
        assert_eq!(c[3], None, "not simulated yet");
        let total: u64 = c.iter().flatten().map(|x| x[1]).sum();
        assert_eq!(total, 9, "every round trip lands in one column");
    }

    #[test]
    fn names_never_overlap() {
        use stampede::sim::Milestone;
        let at = |t: u64, what: Milestone| Marker { t, what };
        // Five markers within a few px of each other, as deeper/7 has them.
        let m = [
            at(100, Milestone::KeyExpires),
            at(101, Milestone::RecomputeStarts),
            at(102, Milestone::RecomputeStarts),
            at(103, Milestone::ValueWritten),
            at(990, Milestone::KeyExpires),
        ];
        let width = |t: &str| t.len() as f64 * 6.0;
        let p = marker_places(&m, 1000, (0.0, 600.0), 2, 8.0, &width);
        assert_eq!(p.len(), 5, "every marker keeps its line");
        let named: Vec<(f64, f64, usize)> = p
            .iter()
            .zip(&m)
            .filter_map(|((_, n), mk)| n.map(|(x, r)| (x, x + width(mk.what.label()), r)))
            .collect();
        assert_eq!(
            named.len(),
            3,
            "two rows near t = 100, and the one at the end: {p:?}"
        );
        for (i, a) in named.iter().enumerate() {
            assert!(a.0 >= 0.0 && a.1 <= 600.0, "inside the chart: {a:?}");
            for b in &named[i + 1..] {
                assert!(
                    a.2 != b.2 || a.1 + 8.0 <= b.0 || b.1 + 8.0 <= a.0,
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn empty_input_draws_nothing() {
        assert!(columns(&[], 100, 5).iter().all(Option::is_none));
        assert!(columns(&[sample(0, 0, 0)], 0, 5)
            .iter()
            .all(Option::is_none));
    }
}
