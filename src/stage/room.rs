//! What the room's display asks of the stage: presenter mode on, the
//! room's theme, and the height the room's layout gives the fleet. Presenter
//! mode (`crate::lesson::presenter`) holds them as signals; the app copies
//! them into the engine, which paints by them each frame.

use crate::fleet_layout::Layout;
use crate::palette::Scheme;

/// The room's display, as the engine paints by it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Display {
    /// Presenter mode is on.
    pub(crate) presenting: bool,
    /// The room's theme is dark (light by default on a projector).
    pub(crate) dark: bool,
    /// The height the stage's box has in presenter mode (css px).
    pub(crate) stage_h: f64,
}

impl Display {
    /// The fleet canvas's height for a width: in presenter mode the height
    /// of the box the room's layout gives it (the screen less the legend),
    /// else the page's own proportion.
    pub(crate) fn stage_height(&self, width: f64) -> f64 {
        if self.presenting && self.stage_h >= 200.0 {
            self.stage_h.floor()
        } else {
            crate::fleet_layout::stage_height(width)
        }
    }

    /// Whether the canvases paint dark: the room's theme in presenter mode,
    /// the system's otherwise.
    pub(crate) fn dark(&self, system: bool) -> bool {
        if self.presenting {
            self.dark
        } else {
            system
        }
    }
}

/// Rings the followed thread on the overlay: in presenter mode a ring the
/// back row sees, and a caption beside it (who it is and what it does).
pub(crate) fn ring_followed(
    presenting: bool,
    ctx: &web_sys::CanvasRenderingContext2d,
    l: &Layout,
    g: u32,
    activity: u8,
    sc: &Scheme,
) {
    if l.aggregated || l.threads == 0 {
        return;
    }
    let r = l.thread(g / l.threads, g % l.threads);
    ctx.set_stroke_style_str(sc.text);
    if !presenting {
        ctx.set_line_width(2.0);
        ctx.stroke_rect(r.x - 2.0, r.y - 2.0, r.w + 4.0, r.h + 4.0);
        return;
    }
    let (cx, cy) = r.centre();
    // A small fleet's cell is already large (glyph and words): ring it
    // close; a dense fleet's few pixels need a ring the back row sees.
    let radius = if l.labelled {
        r.w * 0.62
    } else {
        (r.w * 2.0).max(16.0)
    };
    ctx.set_line_width(4.0);
    ctx.begin_path();
    let _ = ctx.arc(cx, cy, radius, 0.0, std::f64::consts::TAU);
    ctx.stroke();
    let text = format!(
        "office {}, thread {}: {}",
        g / l.threads + 1,
        g % l.threads + 1,
        crate::palette::look_of(activity).label
    );
    // The room's size, larger still on a projector with the canvas words
    // (at most 1.5 times: it must stay beside the ring on the canvas).
    let size = (22.0 * l.words.clamp(1.0, 1.5)).round();
    let band = (size * 1.55).round();
    // The size through stampede::decimal: `{}` on an f64 links the standard
    // library's float printing into the page.
    ctx.set_font(&format!(
        "700 {}px {}",
        stampede::decimal::format(size),
        crate::palette::SANS
    ));
    let w = ctx.measure_text(&text).map_or(200.0, |m| m.width()) + 16.0;
    // Beside the ring, kept on the canvas: right of it, or left near the edge.
    let x = if cx + radius + 8.0 + w <= l.width {
        cx + radius + 8.0
    } else {
        (cx - radius - 8.0 - w).max(0.0)
    };
    // max then min: f64::clamp with a bound that is no constant brings
    // float formatting (its panic message) into the wasm.
    let y = (cy - band / 2.0).max(0.0).min((l.height - band).max(0.0));
    ctx.set_fill_style_str(sc.background);
    ctx.fill_rect(x, y, w, band);
    ctx.stroke_rect(x, y, w, band);
    ctx.set_fill_style_str(sc.text);
    ctx.set_text_align("left");
    ctx.set_text_baseline("middle");
    let _ = ctx.fill_text(&text, x + 8.0, y + band / 2.0);
}
