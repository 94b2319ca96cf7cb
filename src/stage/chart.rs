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

/// Draws the lanes with a playhead at `now` (virtual µs) over `span`.
#[inline(never)]
pub fn draw(ctx: &Ctx, sc: &Scheme, dark: bool, (w, h): (f64, f64), tl: &Timeline) {
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
    // A band on top for the markers' names.
    let band = 16.0;
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
    draw_markers(ctx, sc, markers, span, (left, right), band, h - axis);
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
}

/// What the chart shows: samples and markers over a span, and the playhead.
#[derive(Clone, Copy)]
pub struct Timeline<'a> {
    pub samples: &'a [Sample],
    pub markers: &'a [Marker],
    pub span: u64,
    pub now: u64,
}

/// Where on the axis each marker goes, and which get their name written:
/// a name needs room, so one closer than `gap` px to the last named one
/// keeps only its line.
pub fn marker_places(
    markers: &[Marker],
    span: u64,
    (left, right): (f64, f64),
    gap: f64,
) -> Vec<(f64, bool)> {
    let mut last_named = f64::NEG_INFINITY;
    markers
        .iter()
        .filter(|m| m.t <= span)
        .map(|m| {
            let x = left + (right - left) * (m.t as f64 / span.max(1) as f64);
            let named = x - last_named >= gap;
            if named {
                last_named = x;
            }
            (x, named)
        })
        .collect()
}

/// Dashed lines down the lanes at each marker, named in the top band.
fn draw_markers(
    ctx: &Ctx,
    sc: &Scheme,
    markers: &[Marker],
    span: u64,
    (left, right): (f64, f64),
    band: f64,
    bottom: f64,
) {
    if span == 0 {
        return;
    }
    ctx.set_font(&format!("600 11px {SANS}"));
    ctx.set_text_baseline("top");
    ctx.set_text_align("left");
    let places = marker_places(markers, span, (left, right), 96.0);
    ctx.set_stroke_style_str(sc.muted);
    ctx.set_line_width(1.0);
    let _ = ctx.set_line_dash(&js_sys::Array::of2(&3.0.into(), &3.0.into()));
    ctx.begin_path();
    for (x, _) in &places {
        ctx.move_to(x.round() + 0.5, band);
        ctx.line_to(x.round() + 0.5, bottom);
    }
    ctx.stroke();
    let _ = ctx.set_line_dash(&js_sys::Array::new());
    ctx.set_fill_style_str(sc.text);
    for ((x, named), m) in places.iter().zip(markers) {
        if *named {
            let text = m.what.label();
            // Keep the name inside the chart on the right edge.
            let tw = ctx.measure_text(text).map(|t| t.width()).unwrap_or(60.0);
            let tx = x.min(right - tw).max(left);
            let _ = ctx.fill_text(text, tx, 2.0);
        }
    }
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
    fn empty_input_draws_nothing() {
        assert!(columns(&[], 100, 5).iter().all(Option::is_none));
        assert!(columns(&[sample(0, 0, 0)], 0, 5)
            .iter()
            .all(Option::is_none));
    }
}
