//! Where the fleet goes on the stage: the grid of offices, the cells of their
//! threads, and Redis and the origin on the right. Pure geometry (css pixels),
//! tested on the host; `fleet_view` draws it.

/// Below this cell size (css px) threads are drawn aggregated.
pub const MIN_CELL: f64 = 2.0;
/// Above this many threads the fleet is drawn aggregated whatever the size.
pub const MAX_DRAWN: u64 = 250_000;
/// A fleet of at most this many threads is small enough to follow by eye:
/// each office is named and each thread drawn large with its state in words.
pub const SMALL_FLEET: u64 = 64;
/// The smallest cell (css px) that holds a thread's glyph and its words.
pub const LABEL_CELL: f64 = 44.0;
/// Room above an office's threads for its name, in a small fleet.
const HEADER: f64 = 18.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
    pub fn contains(&self, other: &Rect) -> bool {
        other.x >= self.x - 1e-6
            && other.y >= self.y - 1e-6
            && other.x + other.w <= self.x + self.w + 1e-6
            && other.y + other.h <= self.y + self.h + 1e-6
    }
}

/// Where everything goes for one canvas size and fleet shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    pub instances: u32,
    pub threads: u32,
    pub cols: u32,
    pub office_w: f64,
    pub office_h: f64,
    pub gap: f64,
    pub origin: (f64, f64),
    /// Thread cell size and threads per row inside an office.
    pub cell: f64,
    pub per_row: u32,
    pub pad: f64,
    pub aggregated: bool,
    /// A small fleet: offices named, threads large with their state in words.
    pub labelled: bool,
    /// Room above the threads of each office (its name, when labelled).
    pub header: f64,
    pub redis: Rect,
    pub origin_actor: Rect,
    /// The canvas words' scale (1: the page's 12 px; larger on a
    /// projector, as the room's DOM numbers are): the actors widen with it.
    pub words: f64,
}

/// The canvas height for a width: wide screens get a landscape stage.
pub fn stage_height(width: f64) -> f64 {
    if width < 560.0 {
        (width * 0.72).clamp(260.0, 460.0)
    } else {
        (width * 0.55).clamp(300.0, 520.0)
    }
}

/// Best cell size for `t` threads in `w` x `h`, and how many per row.
fn fit_cells(t: u32, w: f64, h: f64) -> (f64, u32) {
    if w <= 0.0 || h <= 0.0 {
        return (0.0, 1);
    }
    let t = f64::from(t.max(1));
    let guess = (t * w / h).sqrt().ceil().max(1.0);
    let mut best = (0.0, 1);
    for cols in [guess - 2.0, guess - 1.0, guess, guess + 1.0, guess + 2.0] {
        if cols < 1.0 {
            continue;
        }
        let rows = (t / cols).ceil();
        let c = (w / cols).min(h / rows);
        if c > best.0 {
            best = (c, cols as u32);
        }
    }
    best
}

impl Layout {
    pub fn new(width: f64, height: f64, instances: u32, threads: u32) -> Layout {
        Layout::worded(width, height, instances, threads, 1.0)
    }

    /// As [`Layout::new`], with the canvas words at `words` times their
    /// size: Redis's and the origin's boxes widen to hold them.
    pub fn worded(width: f64, height: f64, instances: u32, threads: u32, words: f64) -> Layout {
        let words = if words.is_finite() {
            words.clamp(1.0, 3.0)
        } else {
            1.0
        };
        let n = instances.max(1);
        let edge = 6.0;
        // Not f64::clamp: with a bound that is no constant its panic message
        // links the standard library's float printing into the page.
        let actor_w = (width * 0.17 * words.min(1.5)).max(76.0).min(150.0 * words);
        let fleet_w = (width - actor_w - 3.0 * edge).max(10.0);
        let fleet_h = (height - 2.0 * edge).max(10.0);
        let gap = match n {
            0..=64 => 6.0,
            65..=400 => 3.0,
            _ => 2.0,
        };
        let pad = if n <= 100 { 3.0 } else { 1.0 };
        let total = u64::from(n) * u64::from(threads);
        // The office's name is a canvas word: its room grows with them.
        let header = if total <= SMALL_FLEET {
            HEADER * words
        } else {
            0.0
        };
        let mut best: Option<(f64, f64, u32, f64, f64, f64, u32)> = None;
        for cols in 1..=n {
            let rows = n.div_ceil(cols);
            let ow = (fleet_w - gap * f64::from(cols - 1)) / f64::from(cols);
            let oh = (fleet_h - gap * f64::from(rows - 1)) / f64::from(rows);
            if ow <= 2.0 || oh <= 2.0 {
                continue;
            }
            let (cell, per_row) = fit_cells(threads, ow - 2.0 * pad, oh - 2.0 * pad - header);
            // Prefer big threads; among aggregated layouts, square offices.
            let score = if cell >= MIN_CELL {
                cell * 1000.0
            } else {
                ow.min(oh)
            };
            if best.is_none_or(|b| score > b.0) {
                best = Some((score, cell, per_row, ow, oh, f64::from(cols), cols));
            }
        }
        let (_, cell, per_row, ow, oh, _, cols) =
            best.unwrap_or((0.0, 0.0, 1, fleet_w, fleet_h, 1.0, 1));
        let rows = n.div_ceil(cols);
        let used_h = f64::from(rows) * oh + gap * f64::from(rows - 1);
        let used_w = f64::from(cols) * ow + gap * f64::from(cols - 1);
        let origin = (
            edge + (fleet_w - used_w) / 2.0,
            edge + (fleet_h - used_h) / 2.0,
        );
        let ax = width - edge - actor_w;
        // Under Redis, room for the claim's clock (its TTL left, its
        // holder's work) before the origin.
        let redis = Rect {
            x: ax,
            y: edge + fleet_h * 0.04,
            w: actor_w,
            h: fleet_h * 0.36,
        };
        let origin_actor = Rect {
            x: ax,
            y: edge + fleet_h * 0.54,
            w: actor_w,
            h: fleet_h * 0.40,
        };
        Layout {
            width,
            height,
            instances: n,
            threads,
            cols,
            office_w: ow,
            office_h: oh,
            gap,
            origin,
            cell,
            per_row: per_row.max(1),
            pad,
            aggregated: cell < MIN_CELL || total > MAX_DRAWN,
            labelled: total <= SMALL_FLEET && cell >= LABEL_CELL,
            header,
            redis,
            origin_actor,
            words,
        }
    }

    pub fn office(&self, i: u32) -> Rect {
        let (c, r) = (i % self.cols, i / self.cols);
        Rect {
            x: self.origin.0 + f64::from(c) * (self.office_w + self.gap),
            y: self.origin.1 + f64::from(r) * (self.office_h + self.gap),
            w: self.office_w,
            h: self.office_h,
        }
    }

    /// The cell of thread `t` of instance `i`.
    pub fn thread(&self, i: u32, t: u32) -> Rect {
        let o = self.office(i);
        let rows = self.threads.div_ceil(self.per_row);
        let used_w = f64::from(self.per_row) * self.cell;
        let used_h = f64::from(rows) * self.cell;
        let x0 = o.x + (o.w - used_w) / 2.0;
        let y0 = o.y + self.header + (o.h - self.header - used_h) / 2.0;
        Rect {
            x: x0 + f64::from(t % self.per_row) * self.cell,
            y: y0 + f64::from(t / self.per_row) * self.cell,
            w: self.cell,
            h: self.cell,
        }
    }

    /// Where thread `t` of instance `i` is drawn: its glyph's square. In a
    /// labelled (small) fleet the glyph sits above its words, at most 60 px;
    /// otherwise it nearly fills its cell.
    pub fn glyph(&self, i: u32, t: u32) -> Rect {
        let c = self.thread(i, t);
        if self.labelled {
            let size = (self.cell * 0.42).clamp(24.0, 60.0).round();
            let block = size + 4.0 + 2.0 * self.label_px() * 1.2;
            Rect {
                x: (c.x + (c.w - size) / 2.0).round(),
                y: (c.y + ((c.h - block) / 2.0).max(0.0)).round(),
                w: size,
                h: size,
            }
        } else {
            let size = (self.cell * 0.78).round().max(1.0);
            let inset = ((self.cell - size) / 2.0).max(0.0);
            Rect {
                x: (c.x + inset).round(),
                y: (c.y + inset).round(),
                w: size,
                h: size,
            }
        }
    }

    /// The size (css px) of a labelled thread's words: the page's, times
    /// the canvas words' scale on a projector (as every other canvas word
    /// is; they once stayed at 16 px at 1920 x 1080 beside 26 px office
    /// names), as far as two lines of a long state ("served by its
    /// flight") still fit the cell's width.
    pub fn label_px(&self) -> f64 {
        let page = (self.cell * 0.15).clamp(10.0, 16.0);
        let room = (self.cell * 0.14).max(page);
        (page * self.words).min(room).round()
    }

    /// The thread (global index) whose cell holds the point, if the fleet
    /// is drawn thread by thread.
    pub fn thread_at(&self, x: f64, y: f64) -> Option<u32> {
        if self.aggregated || self.threads == 0 {
            return None;
        }
        let (dx, dy) = (x - self.origin.0, y - self.origin.1);
        if dx < 0.0 || dy < 0.0 {
            return None;
        }
        let (c, r) = (
            (dx / (self.office_w + self.gap)) as u32,
            (dy / (self.office_h + self.gap)) as u32,
        );
        let i = r * self.cols + c;
        if c >= self.cols || i >= self.instances {
            return None;
        }
        let o = self.thread(i, 0);
        let (tx, ty) = (x - o.x, y - o.y);
        if tx < 0.0 || ty < 0.0 || tx >= f64::from(self.per_row) * self.cell {
            return None;
        }
        let t = (ty / self.cell) as u32 * self.per_row + (tx / self.cell) as u32;
        (t < self.threads).then_some(i * self.threads + t)
    }

    /// Where a pulse of global thread index `g` starts.
    pub fn source(&self, g: u32) -> (f64, f64) {
        let t = self.threads.max(1);
        let (i, k) = (g / t, g % t);
        if self.aggregated {
            self.office(i).centre()
        } else {
            self.glyph(i, k).centre()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(l: &Layout) -> Rect {
        Rect {
            x: 0.0,
            y: 0.0,
            w: l.width,
            h: l.height,
        }
    }

    #[test]
    fn the_interview_fleet_is_drawn_thread_by_thread() {
        for (w, h) in [(1200.0, 560.0), (358.0, 376.0)] {
            let l = Layout::new(w, h, 40, 200);
            assert!(!l.aggregated, "{w}x{h}: cell {}", l.cell);
            let stage = within(&l);
            for i in 0..40 {
                assert!(stage.contains(&l.office(i)), "office {i} at {w}");
                let o = l.office(i);
                for t in [0, 199] {
                    assert!(o.contains(&l.thread(i, t)), "thread {i}/{t} at {w}");
                }
            }
            assert!(stage.contains(&l.redis) && stage.contains(&l.origin_actor));
            assert!(l.office(39).x + l.office(39).w <= l.redis.x);
        }
    }

    #[test]
    fn huge_fleets_are_aggregated() {
        let l = Layout::new(1200.0, 560.0, 1000, 1000);
        assert!(l.aggregated);
        assert!(within(&l).contains(&l.office(999)));
        let l = Layout::new(1200.0, 560.0, 1, 10_000);
        assert!(!l.aggregated, "one office of 10,000 still fits: {}", l.cell);
        let l = Layout::new(358.0, 376.0, 40, 10_000);
        assert!(l.aggregated);
    }

    /// The tour's small fleet, 3 offices of 4 threads, is drawn large
    /// enough to follow by eye on a laptop, a phone and a projector: every
    /// thread's cell holds a glyph of at least 24 px and its words, inside
    /// its office, below the office's name.
    #[test]
    fn a_small_fleet_is_drawn_large_and_labelled() {
        // The stage canvas at 1280x800, 390x844, 1280x720 and 1920x1080.
        for w in [760.0, 358.0, 1000.0, 1400.0] {
            let l = Layout::new(w, stage_height(w), 3, 4);
            assert!(l.labelled, "{w}: cell {}", l.cell);
            assert!(l.cell >= LABEL_CELL, "{w}: cell {}", l.cell);
            for i in 0..3 {
                let o = l.office(i);
                for t in 0..4 {
                    let c = l.thread(i, t);
                    assert!(o.contains(&c), "thread {i}/{t} at {w}");
                    assert!(c.y >= o.y + l.header - 1e-6, "under the name at {w}");
                    let g = l.glyph(i, t);
                    assert!(g.w >= 24.0 && c.contains(&g), "glyph {g:?} at {w}");
                    let words = g.y + g.h + 4.0 + 2.4 * l.label_px();
                    assert!(words <= c.y + c.h + 1.0, "words below the cell at {w}");
                }
            }
        }
        let big = Layout::new(760.0, stage_height(760.0), 40, 200);
        assert!(!big.labelled && big.header == 0.0);
    }

    /// On a projector every canvas word grows with `words` (presenter
    /// mode's `--canvas-words`), the threads' own words too, and the
    /// small fleet still holds them: each glyph of at least 24 px with its
    /// two lines of words inside its cell, under its office's name, which
    /// has the room of its larger type.
    #[test]
    fn a_projector_s_thread_words_grow_with_the_other_canvas_words() {
        // The stage canvas in presenter mode at 1280x720 and 1920x1080,
        // with the scale presenter.css gives there (max(16px, 2.4vh) / 12).
        for (w, h, words) in [(770.0, 440.0, 1.44), (1175.0, 660.0, 2.16)] {
            let page = Layout::new(w, h, 3, 4);
            let room = Layout::worded(w, h, 3, 4, words);
            assert!(room.labelled, "{w}: cell {}", room.cell);
            // At 1920 x 1080 the cells are large: the words grow; at
            // 1280 x 720 they stay as large as two lines fit.
            let grows = room.cell >= 150.0;
            assert!(
                room.label_px() > page.label_px() || !grows,
                "{w}x{h}: the threads' words stay {} px at scale {words}",
                room.label_px()
            );
            assert!(room.header >= 12.0 * words, "{w}: the name's room");
            for i in 0..3 {
                for t in 0..4 {
                    let (c, g) = (room.thread(i, t), room.glyph(i, t));
                    assert!(g.w >= 24.0 && c.contains(&g), "glyph {g:?} at {w}");
                    let below = g.y + g.h + 4.0 + 2.4 * room.label_px();
                    assert!(below <= c.y + c.h + 1.0, "words below the cell at {w}");
                    assert!(c.y >= room.office(i).y + room.header - 1e-6);
                }
            }
        }
        // A phone and the page keep the page's sizes.
        let l = Layout::worded(358.0, 376.0, 3, 4, 1.0);
        assert_eq!(l.label_px(), Layout::new(358.0, 376.0, 3, 4).label_px());
    }

    #[test]
    fn stage_is_landscape_on_laptops_and_taller_on_phones() {
        assert!(stage_height(1200.0) < 1200.0 * 0.6);
        assert!(stage_height(358.0) >= 260.0);
    }
}
