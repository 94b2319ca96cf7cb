//! The fleet on a canvas: offices (instances) in a grid, each full of threads
//! drawn as small glyphs coloured by state, and Redis and the origin as actors
//! on the right that pulses travel to. Every frame draws one canvas path per
//! colour, so 8,000 threads cost a handful of fills. A fleet too large to draw
//! thread by thread is drawn aggregated: each office as bands of its states.

use crate::fleet_layout::{Layout, Rect};
use crate::lab::Channel;
use crate::palette::{colour, look_of, scheme, Glyph, Scheme, LOOKS, MONO, SANS};
use crate::pen::Pen;
use stampede::read_path::Activity;
use stampede::Metric;
use web_sys::CanvasRenderingContext2d as Ctx;

/// How long a pulse takes to reach its actor (wall ms).
pub const PULSE_MS: f64 = 650.0;
/// Pulses alive at most; older ones are dropped first.
pub const MAX_LIVE_PULSES: usize = 2_500;
/// New pulses per channel per frame at most: beyond this a crowd is drawn
/// as an evenly thinned sample (it still reads as a crowd, and drawing every
/// one of 8,000 would cost the frame).
pub const PULSES_PER_CHANNEL: usize = 400;

#[derive(Clone, Copy, Debug)]
struct Pulse {
    from: (f64, f64),
    to: (f64, f64),
    born: f64,
    channel: Channel,
}

/// What the actors say, from the frame's measurements.
#[derive(Clone, Copy, Debug, Default)]
pub struct ActorStats {
    pub redis_round_trips: u64,
    pub live_claims: u64,
    /// The office (instance) whose token is the live claim, if one is.
    pub claim_office: Option<u32>,
    pub claim_attempts: u64,
    pub origin_running: u64,
    pub origin_capacity: u32,
    pub recomputes: u64,
    pub redis_errors: u64,
    pub releases_refused: u64,
    pub overlapping_recomputes: u64,
    pub origin_timeouts: u64,
    pub origin_failures: u64,
    /// The claim at Redis: its TTL running down against its holder's
    /// work, or its holder dead (the core's `Fleet::claim_clock`).
    pub claim: Option<stampede::sim::ClaimClock>,
}

impl ActorStats {
    /// The actors' numbers for a fleet, its report and its scenario.
    pub fn of(
        fleet: &stampede::Fleet,
        report: &stampede::Report,
        s: &stampede::Scenario,
    ) -> ActorStats {
        ActorStats {
            redis_round_trips: report.redis_round_trips,
            live_claims: fleet.live_claims() as u64,
            claim_office: fleet.live_claim_office(),
            claim_attempts: report.claim_attempts,
            origin_running: fleet.origin_running(),
            origin_capacity: s.origin_capacity,
            recomputes: report.recomputes,
            redis_errors: report.redis_errors,
            releases_refused: report.releases_refused,
            overlapping_recomputes: report.overlapping_recomputes,
            origin_timeouts: report.origin_timeouts,
            origin_failures: report.origin_failures,
            claim: fleet.claim_clock(),
        }
    }
}

/// What a box's word counts: a counter of the run, or one of the page's
/// own numbers (`catalogue::lesson::DERIVED_MEANINGS`, named there).
#[derive(Clone, Copy, Debug)]
pub enum Counts {
    Run(Metric),
    Page(&'static str),
}

impl Counts {
    /// What it counts, in the core's words (`catalogue::lesson::meaning`).
    pub fn meaning(self) -> Option<&'static str> {
        match self {
            Counts::Run(m) => Some(catalogue::lesson::meaning(m)),
            Counts::Page(name) => catalogue::lesson::derived_meaning(name),
        }
    }
}

/// The words the Redis and origin boxes use, each with what it shows.
pub const TERMS: [(&str, &str, Counts); 11] = [
    (
        "Redis",
        "claim attempts",
        Counts::Run(Metric::ClaimAttempts),
    ),
    ("Redis", "round trips", Counts::Run(Metric::RedisRoundTrips)),
    (
        "Redis",
        "claim: office N / held / free",
        Counts::Page("live_claims"),
    ),
    ("Redis", "errors", Counts::Run(Metric::RedisErrors)),
    (
        "Redis",
        "releases refused",
        Counts::Run(Metric::ReleasesRefused),
    ),
    ("Origin", "recomputes", Counts::Run(Metric::Recomputes)),
    ("Origin", "running now", Counts::Page("origin_running")),
    ("Origin", "capacity", Counts::Page("origin_capacity")),
    (
        "Origin",
        "overlapping",
        Counts::Run(Metric::OverlappingRecomputes),
    ),
    ("Origin", "timed out", Counts::Run(Metric::OriginTimeouts)),
    ("Origin", "failed", Counts::Run(Metric::OriginFailures)),
];

/// The boxes' words and what they count, as a list under the legend.
pub fn build_terms(root: &web_sys::Element) {
    use crate::dom::{el, put, set, text_el};
    let dl = el("dl", "terms");
    set(&dl, "aria-label", "What the Redis and Origin boxes count");
    for (actor, term, metric) in TERMS {
        let div = el("div", "");
        set(&div, "data-term", term);
        put(&div, &text_el("dt", "", &format!("{actor}: {term}")));
        put(&div, &text_el("dd", "", metric.meaning().unwrap_or("")));
        put(&dl, &div);
    }
    put(root, &dl);
}

/// The canvas's drawing state between frames.
#[derive(Default)]
pub struct FleetView {
    layout: Option<Layout>,
    pulses: Vec<Pulse>,
    by_state: Vec<Vec<u32>>,
    bands: Vec<Vec<Rect>>,
    /// Pulses that reached each actor recently (wall time), for the flash.
    arrivals: [f64; 2],
    /// The states the base layer shows, and in which theme.
    shown: Option<(Vec<u8>, bool)>,
    /// Threads repainted this frame, and whether their new glyph covers the old.
    covered: Vec<(u32, bool)>,
    pen: Pen,
    /// Per office, the state counts its bands show (aggregated drawing).
    office_counts: Vec<[u32; Activity::COUNT]>,
}

impl FleetView {
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }

    /// Recomputes the layout when the size or the fleet's shape changed;
    /// says whether it did.
    #[inline(never)]
    pub fn fit(&mut self, width: f64, height: f64, instances: u32, threads: u32) -> bool {
        self.fit_worded(width, height, instances, threads, || 1.0)
    }

    /// As [`FleetView::fit`], the canvas words at `words()` times their
    /// size, asked only when the layout is made again (a resize, presenter
    /// mode: [`words_of`]).
    #[inline(never)]
    pub fn fit_worded(
        &mut self,
        width: f64,
        height: f64,
        instances: u32,
        threads: u32,
        words: impl FnOnce() -> f64,
    ) -> bool {
        let same = self.layout.as_ref().is_some_and(|l| {
            l.width == width
                && l.height == height
                && l.instances == instances
                && l.threads == threads
        });
        if !same {
            self.layout = Some(Layout::worded(width, height, instances, threads, words()));
            self.pulses.clear();
            self.shown = None;
        }
        !same
    }

    pub fn clear_pulses(&mut self) {
        self.pulses.clear();
    }

    pub fn add_pulses(&mut self, pulses: &[(u32, Channel)], now: f64) {
        let Some(l) = &self.layout else { return };
        let mut fresh = Vec::new();
        for ch in Channel::ALL {
            let of: Vec<u32> = pulses.iter().filter(|p| p.1 == ch).map(|p| p.0).collect();
            let stride = of.len().div_ceil(PULSES_PER_CHANNEL).max(1);
            let kept: Vec<u32> = of.into_iter().step_by(stride).collect();
            let n = kept.len();
            let actor = if ch.to_redis() {
                l.redis
            } else {
                l.origin_actor
            };
            for (k, g) in kept.into_iter().enumerate() {
                // Spread the landing points so a crowd of pulses reads as a crowd.
                let spread = (k as f64 / n.max(1) as f64 - 0.5) * actor.h * 0.5;
                let dock = (actor.x, actor.y + actor.h / 2.0 + spread);
                let src = l.source(g);
                let (from, to) = if ch == Channel::Answer {
                    (dock, src)
                } else {
                    (src, dock)
                };
                fresh.push(Pulse {
                    from,
                    to,
                    born: now,
                    channel: ch,
                });
            }
        }
        let keep = MAX_LIVE_PULSES.saturating_sub(fresh.len());
        if self.pulses.len() > keep {
            let excess = self.pulses.len() - keep;
            self.pulses.drain(..excess);
        }
        self.pulses.extend(fresh.into_iter().take(MAX_LIVE_PULSES));
    }

    /// Draws one frame on two layers: `base` keeps the offices and threads
    /// between frames and only repaints the threads whose state changed;
    /// `overlay` is cleared and redrawn (pulses, actors). `now` is wall time.
    #[inline(never)]
    pub fn draw(
        &mut self,
        (base, overlay): (&Ctx, Option<&Ctx>),
        states: &[u8],
        stats: &ActorStats,
        dark: bool,
        now: f64,
    ) {
        let Some(l) = self.layout.clone() else { return };
        let sc = scheme(dark);
        let stale = match &self.shown {
            Some((shown, d)) => *d != dark || shown.len() != states.len(),
            None => true,
        };
        if l.aggregated && !stale {
            self.draw_aggregated(base, &l, states, dark, false);
        } else if stale {
            base.set_fill_style_str(sc.background);
            base.fill_rect(0.0, 0.0, l.width, l.height);
            self.draw_offices(base, &l, sc);
            if l.aggregated {
                self.draw_aggregated(base, &l, states, dark, true);
            } else {
                self.sort_states(states.iter().enumerate().map(|(g, s)| (g as u32, *s)));
                self.draw_threads(base, &l, dark, None);
            }
            self.shown = Some((states.to_vec(), dark));
        } else if let Some((shown, _)) = self.shown.take() {
            let mut shown = shown;
            let shapes = l.cell >= 5.0;
            self.covered.clear();
            let mut changed = Vec::new();
            for (g, (new, old)) in states.iter().zip(shown.iter_mut()).enumerate() {
                if new != old {
                    // A filled square paints over an old square or ring
                    // exactly; anything else needs its cell cleared first.
                    // A labelled thread's words change too: always cleared.
                    let covers = !l.labelled
                        && (!shapes
                            || (look_of(*new).glyph == Glyph::Square
                                && matches!(look_of(*old).glyph, Glyph::Square | Glyph::Ring)));
                    self.covered.push((g as u32, covers));
                    changed.push((g as u32, *new));
                    *old = *new;
                }
            }
            if !changed.is_empty() {
                self.sort_states(changed.into_iter());
                self.draw_threads(base, &l, dark, Some(sc.office));
            }
            self.shown = Some((shown, dark));
        }
        let Some(overlay) = overlay else { return };
        overlay.clear_rect(0.0, 0.0, l.width, l.height);
        self.draw_halos(overlay, &l, states, dark);
        self.draw_pulses(overlay, sc, now);
        self.draw_actors(overlay, &l, sc, stats, now);
        if let Some(c) = &stats.claim {
            draw_claim_clock(overlay, &l, sc, c);
            if let (true, Some(g)) = (c.dead, c.holder) {
                draw_dead_holder(overlay, &l, sc, g, dark);
            }
        }
    }

    /// Forgets what the base layer shows, so the next frame repaints it all.
    pub fn invalidate(&mut self) {
        self.shown = None;
    }

    fn sort_states(&mut self, threads: impl Iterator<Item = (u32, u8)>) {
        self.by_state.resize_with(Activity::COUNT, Vec::new);
        for b in &mut self.by_state {
            b.clear();
        }
        for (g, s) in threads {
            let k = usize::from(s).min(Activity::COUNT - 1);
            self.by_state[k].push(g);
        }
    }

    fn draw_offices(&mut self, ctx: &Ctx, l: &Layout, sc: &Scheme) {
        let pen = &mut self.pen;
        pen.clear();
        for i in 0..l.instances {
            let o = l.office(i);
            pen.rect(o.x, o.y, o.w, o.h);
        }
        pen.fill(ctx, sc.office);
        if l.instances <= 400 {
            pen.stroke(ctx, sc.office_line, 1.0);
        }
        if l.labelled {
            // A small fleet's offices by name, so one can be followed.
            ctx.set_font(&font("600 ", px(12.0, l.words), SANS));
            ctx.set_text_align("left");
            ctx.set_text_baseline("middle");
            ctx.set_fill_style_str(sc.muted);
            for i in 0..l.instances {
                let o = l.office(i);
                let _ = ctx.fill_text_with_max_width(
                    &format!("office {}", i + 1),
                    o.x + 6.0,
                    o.y + l.header / 2.0 + 2.0,
                    o.w - 12.0,
                );
            }
        }
    }

    /// Draws the threads sorted by `sort_states`, one path per state; with
    /// `clear`, first paints over the cells whose new glyph does not cover
    /// the old one. Glyphs sit on whole pixels: crisp, and cheaper to fill.
    fn draw_threads(&mut self, ctx: &Ctx, l: &Layout, dark: bool, clear: Option<&str>) {
        let Self {
            pen,
            by_state,
            covered,
            ..
        } = self;
        let shapes = l.cell >= 5.0;
        let t = l.threads.max(1);
        if let Some(bg) = clear {
            pen.clear();
            for (g, _) in covered.iter().filter(|(_, covers)| !covers) {
                let r = l.thread(g / t, g % t);
                pen.rect(r.x, r.y, r.w, r.h);
            }
            pen.fill(ctx, bg);
        }
        for (k, members) in by_state.iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let look = &LOOKS[k];
            let glyph = if shapes { look.glyph } else { Glyph::Square };
            pen.clear();
            let mut size = 1.0;
            for g in members {
                let r = l.glyph(g / t, g % t);
                size = r.w;
                glyph_path(pen, glyph, r.x, r.y, r.w);
            }
            let line = if l.labelled { 3.0 } else { 2.0 };
            paint(
                ctx,
                pen,
                glyph,
                colour(look, dark),
                // Not f64::clamp: `line` is no constant, and its panic
                // message would bring float formatting into the wasm.
                (size / 4.0).max(1.0).min(line),
            );
            if l.labelled {
                draw_words(ctx, l, members, look.label, dark);
            }
        }
    }

    /// Each office as bands, one per state, as tall as its share of the
    /// office's threads. With `all` false only offices whose counts changed
    /// since the last frame are repainted.
    fn draw_aggregated(&mut self, ctx: &Ctx, l: &Layout, states: &[u8], dark: bool, all: bool) {
        let Self {
            pen,
            bands,
            office_counts,
            ..
        } = self;
        bands.resize_with(Activity::COUNT, Vec::new);
        for b in bands.iter_mut() {
            b.clear();
        }
        let t = l.threads.max(1) as usize;
        let offices = states.len() / t;
        if all || office_counts.len() != offices {
            office_counts.clear();
            office_counts.resize(offices, [u32::MAX; Activity::COUNT]);
        }
        pen.clear();
        let mut counts = [0u32; Activity::COUNT];
        for (i, office) in states.chunks_exact(t).enumerate() {
            counts.fill(0);
            for s in office {
                counts[usize::from(*s).min(Activity::COUNT - 1)] += 1;
            }
            if office_counts[i] == counts {
                continue;
            }
            office_counts[i] = counts;
            let o = l.office(i as u32);
            let inner = Rect {
                x: o.x + l.pad,
                y: o.y + l.pad,
                w: (o.w - 2.0 * l.pad).max(1.0),
                h: (o.h - 2.0 * l.pad).max(1.0),
            };
            pen.rect(inner.x, inner.y, inner.w, inner.h);
            // Band edges on whole pixels, at least one pixel per state present.
            let mut done = 0u32;
            let mut top = inner.y.round();
            for (k, n) in counts.iter().enumerate() {
                if *n == 0 {
                    continue;
                }
                done += n;
                let edge = (inner.y + inner.h * f64::from(done) / t as f64).round();
                let bottom = edge.max(top + 1.0);
                bands[k].push(Rect {
                    x: inner.x,
                    y: top,
                    w: inner.w,
                    h: bottom - top,
                });
                top = bottom;
            }
        }
        // Clear the repainted offices, then one path per state.
        pen.fill(ctx, scheme(dark).office);
        for (k, rects) in bands.iter().enumerate() {
            if rects.is_empty() {
                continue;
            }
            pen.clear();
            for r in rects {
                pen.rect(r.x, r.y, r.w, r.h);
            }
            pen.fill(ctx, colour(&LOOKS[k], dark));
        }
    }

    fn draw_pulses(&mut self, ctx: &Ctx, sc: &Scheme, now: f64) {
        let mut landed = [false; 2];
        self.pulses.retain(|p| {
            let alive = now - p.born < PULSE_MS;
            if !alive && p.channel != Channel::Answer {
                landed[usize::from(!p.channel.to_redis())] = true;
            }
            alive
        });
        for (k, hit) in landed.iter().enumerate() {
            if *hit {
                self.arrivals[k] = now;
            }
        }
        let size = if self.layout.as_ref().is_some_and(|l| l.labelled) {
            // A small fleet's few pulses are followed one by one.
            8.0
        } else if self.pulses.len() > 2000 {
            2.0
        } else {
            3.0
        };
        for ch in 0..Channel::COUNT {
            self.pen.clear();
            for p in self.pulses.iter().filter(|p| p.channel as usize == ch) {
                let f = ((now - p.born) / PULSE_MS).clamp(0.0, 1.0);
                let e = f * f * (3.0 - 2.0 * f);
                let x = p.from.0 + (p.to.0 - p.from.0) * e;
                let y = p.from.1 + (p.to.1 - p.from.1) * e;
                self.pen.rect(
                    (x - size / 2.0).round(),
                    (y - size / 2.0).round(),
                    size,
                    size,
                );
            }
            self.pen.fill(ctx, sc.pulses[ch]);
        }
    }

    fn draw_actors(&self, ctx: &Ctx, l: &Layout, sc: &Scheme, s: &ActorStats, now: f64) {
        let flash = |k: usize| (1.0 - (now - self.arrivals[k]) / 300.0).clamp(0.0, 1.0);
        let load = if s.origin_capacity == 0 {
            0.0
        } else {
            (s.origin_running as f64 / f64::from(s.origin_capacity)).min(1.0)
        };
        let claim = match (s.live_claims, s.claim_office) {
            (0, _) => "claim: free".to_string(),
            (1, Some(i)) => format!("claim: office {}", i + 1),
            _ => "claim: held".to_string(),
        };
        let redis = actor_lines(
            &[
                (s.redis_errors, "errors"),
                (s.releases_refused, "releases refused"),
            ],
            [format!("{} round trips", s.redis_round_trips), claim],
        );
        Actor {
            name: "Redis",
            hero: s.claim_attempts,
            hero_label: "claim attempts",
            lines: redis,
            accent: sc.pulses[0],
            flash: flash(0),
            load: 0.0,
        }
        .draw(ctx, sc, &l.redis, l.words);
        let origin = actor_lines(
            &[
                (s.overlapping_recomputes, "overlapping"),
                (s.origin_timeouts, "timed out"),
                (s.origin_failures, "failed"),
            ],
            [
                format!("{} running now", s.origin_running),
                format!("capacity {}", s.origin_capacity),
            ],
        );
        Actor {
            name: "Origin",
            hero: s.recomputes,
            hero_label: "recomputes",
            lines: origin,
            accent: sc.pulses[3],
            flash: flash(1),
            load,
        }
        .draw(ctx, sc, &l.origin_actor, l.words);
    }

    /// Rings around the few threads doing the expensive work or holding the
    /// claim, so that "one recompute" can be found among 8,000 threads.
    fn draw_halos(&self, ctx: &Ctx, l: &Layout, states: &[u8], dark: bool) {
        // A handful at most: a ring around each of dozens of threads is noise.
        const MAX: usize = 8;
        if l.aggregated {
            return;
        }
        let t = l.threads.max(1);
        let radius = l.glyph(0, 0).w * 0.75 + 5.0;
        for state in [Activity::Recomputing, Activity::Holding] {
            let marked: Vec<u32> = states
                .iter()
                .enumerate()
                .filter(|(_, s)| **s == state as u8)
                .take(MAX + 1)
                .map(|(g, _)| g as u32)
                .collect();
            if marked.is_empty() || marked.len() > MAX {
                continue;
            }
            // The one thread doing the work gets a bigger ring and a label:
            // "1 recompute" must be findable among 8,000 threads.
            let alone = marked.len() == 1;
            let radius = if alone { radius * 1.6 + 3.0 } else { radius };
            let colour = look_of(state as u8).colour(dark);
            ctx.begin_path();
            for g in &marked {
                let r = l.glyph(g / t, g % t);
                let (x, y) = r.centre();
                ctx.move_to(x + radius, y);
                let _ = ctx.arc(x, y, radius, 0.0, std::f64::consts::TAU);
            }
            ctx.set_stroke_style_str(colour);
            ctx.set_line_width(if alone { 3.0 } else { 2.0 });
            ctx.stroke();
            // A small fleet's threads say what they do under their glyphs.
            if alone && !l.labelled {
                let r = l.glyph(marked[0] / t, marked[0] % t);
                let (x, y) = r.centre();
                let text = if state == Activity::Holding {
                    "holds the claim, recomputing"
                } else {
                    "recomputing"
                };
                ring_label(ctx, l, (x, y, radius), text, colour, dark);
            }
        }
    }
}

/// The claim's TTL under the Redis box: a track as long as the TTL, from
/// the claim's SET to its expiry; the part gone by since the holder began
/// its work in the origin's colour, the TTL left in Redis's, "now" where
/// they meet. A dead holder's claim is drawn in the danger colour: it only
/// runs out.
fn draw_claim_clock(ctx: &Ctx, l: &Layout, sc: &Scheme, c: &stampede::sim::ClaimClock) {
    let r = &l.redis;
    let gap = l.origin_actor.y - (r.y + r.h);
    let (x, w) = (r.x + 4.0, r.w - 8.0);
    if gap < 12.0 || w < 20.0 || c.ttl == 0 {
        return;
    }
    let ms = |us: u64| crate::clock::now_ms_text(us);
    let left = format!("TTL {} ms left", ms(c.left()));
    let (over, under) = match (c.dead, c.working()) {
        (true, _) => ("holder dead".to_string(), Some(left)),
        (false, Some(w)) => (left, Some(format!("recomputing {} ms", ms(w)))),
        (false, None) => (left, None),
    };
    let bar_h = 5.0;
    // A canvas word: larger on a projector, as the boxes' own words are.
    let px = px(if r.w >= 110.0 { 11.0 } else { 10.0 }, l.words);
    let line = px + 2.0;
    let mut y = r.y + r.h + 2.0;
    let text = |t: &str, y: f64, colour: &str| {
        ctx.set_font(&font("600 ", px, SANS));
        ctx.set_text_align("center");
        ctx.set_text_baseline("top");
        ctx.set_fill_style_str(colour);
        let _ = ctx.fill_text_with_max_width(t, r.x + r.w / 2.0, y, r.w + 8.0);
    };
    let colour = if c.dead { sc.danger } else { sc.text };
    if gap >= line + bar_h + 6.0 {
        text(&over, y, colour);
        y += line;
    }
    let bar_y = y;
    if let Some(u) = under.filter(|_| gap >= 2.0 * line + bar_h + 8.0) {
        text(&u, bar_y + bar_h + 2.0, colour);
    }
    let y = bar_y;
    let span = c.ttl as f64;
    let at = |t: u64| x + w * (t.saturating_sub(c.set_at) as f64 / span).min(1.0);
    ctx.set_fill_style_str(sc.office);
    ctx.fill_rect(x, y, w, bar_h);
    // The TTL left.
    let now_x = at(c.now);
    ctx.set_fill_style_str(if c.dead { sc.danger } else { sc.pulses[0] });
    ctx.fill_rect(now_x, y, x + w - now_x, bar_h);
    // The holder's work so far.
    if let Some(since) = c.working_since.filter(|_| !c.dead) {
        let from = at(since);
        ctx.set_fill_style_str(sc.pulses[3]);
        ctx.fill_rect(from, y, (now_x - from).max(1.0), bar_h);
    }
    ctx.set_fill_style_str(sc.text);
    ctx.fill_rect(now_x - 1.0, y - 2.0, 2.0, bar_h + 4.0);
}

/// A cross and a ring on the thread that died holding the claim, and its
/// words beside it: the claim it left stays until its TTL runs out.
fn draw_dead_holder(ctx: &Ctx, l: &Layout, sc: &Scheme, g: u32, dark: bool) {
    if l.aggregated {
        return;
    }
    let t = l.threads.max(1);
    let r = l.glyph(g / t, g % t);
    let (x, y) = r.centre();
    let radius = r.w * 0.75 + 5.0;
    ctx.begin_path();
    ctx.move_to(x + radius, y);
    let _ = ctx.arc(x, y, radius, 0.0, std::f64::consts::TAU);
    let k = radius * 0.7;
    ctx.move_to(x - k, y - k);
    ctx.line_to(x + k, y + k);
    ctx.move_to(x + k, y - k);
    ctx.line_to(x - k, y + k);
    ctx.set_stroke_style_str(sc.danger);
    ctx.set_line_width(3.0);
    ctx.stroke();
    ring_label(
        ctx,
        l,
        (x, y, radius),
        "dead, holding the claim",
        sc.danger,
        dark,
    );
}

/// Words beside a ring at (x, y) of `radius`, on a light band: right of
/// it, or left where the Redis box leaves no room on the right.
fn ring_label(
    ctx: &Ctx,
    l: &Layout,
    (x, y, radius): (f64, f64, f64),
    text: &str,
    colour: &str,
    dark: bool,
) {
    let size = px(12.0, l.words);
    ctx.set_font(&font("700 ", size, SANS));
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    let w = ctx.measure_text(text).map(|m| m.width()).unwrap_or(80.0);
    let right = x + radius + 6.0 + w + 8.0 <= l.redis.x;
    let tx = if right {
        x + radius + 6.0
    } else {
        (x - radius - 6.0 - w - 8.0).max(0.0)
    };
    let half = size * 0.75;
    let ty = (y - half).max(0.0);
    ctx.set_fill_style_str(if dark {
        "rgba(21,27,35,0.88)"
    } else {
        "rgba(255,255,255,0.9)"
    });
    ctx.fill_rect(tx, ty, w + 8.0, 2.0 * half);
    ctx.set_fill_style_str(colour);
    let _ = ctx.fill_text(text, tx + 4.0, ty + half);
}

/// A canvas font: `weight` (empty, or with its trailing space), `size` px
/// written through `stampede::decimal` (`{}` on an f64 links the standard
/// library's float printing into the page), and the `family`.
fn font(weight: &str, size: f64, family: &str) -> String {
    format!("{weight}{}px {family}", stampede::decimal::format(size))
}

/// A canvas word's size (css px): `base` (the page's) times `words`,
/// rounded to a tenth so that a few sizes share the font cache.
fn px(base: f64, words: f64) -> f64 {
    (base * words * 10.0).round() / 10.0
}

/// The canvas words' scale for the canvas `el`: its registered CSS length
/// `--canvas-words` (style/presenter.css: larger on a projector, with the
/// screen's height, as the room's DOM numbers are) over the page's 12 px.
pub fn words_of(el: &web_sys::Element) -> f64 {
    crate::web::window()
        .get_computed_style(el)
        .ok()
        .flatten()
        .and_then(|st| st.get_property_value("--canvas-words").ok())
        .and_then(|v| stampede::decimal::parse(v.trim().strip_suffix("px")?))
        .map_or(1.0, |v| (v / 12.0).clamp(1.0, 3.0))
}

/// Draws the actors' text once, off to the side, and wipes it: the first use
/// of each font size costs tens of milliseconds, better spent before the
/// animation starts than in its first frame.
pub fn warm_up(ctx: &Ctx, sc: &Scheme) {
    for w in [150.0, 90.0] {
        let r = Rect {
            x: 0.0,
            y: 0.0,
            w,
            h: 200.0,
        };
        Actor {
            name: "Redis",
            hero: 8000,
            hero_label: "claim attempts",
            lines: vec![
                ("0 errors".to_string(), true),
                ("0 round trips".to_string(), false),
            ],
            accent: sc.pulses[0],
            flash: 0.0,
            load: 0.5,
        }
        .draw(ctx, sc, &r, 1.0);
        ctx.clear_rect(r.x - 4.0, r.y - 4.0, r.w + 8.0, r.h + 8.0);
    }
}

/// An actor's lines: the damage that happened (counts above zero) first, in
/// the danger colour, since it is what the lesson is about; then the rest.
fn actor_lines(alarms: &[(u64, &str)], plain: [String; 2]) -> Vec<(String, bool)> {
    alarms
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| (format!("{n} {what}"), true))
        .chain(plain.into_iter().map(|l| (l, false)))
        .collect()
}

/// Redis or the origin: a name, one big number, a couple of lines, a fill
/// for load and a flash when pulses arrive.
struct Actor {
    name: &'static str,
    hero: u64,
    hero_label: &'static str,
    /// Lines under the number; `true` marks damage, drawn in the danger colour.
    lines: Vec<(String, bool)>,
    accent: &'static str,
    flash: f64,
    load: f64,
}

impl Actor {
    fn draw(&self, ctx: &Ctx, sc: &Scheme, r: &Rect, words: f64) {
        ctx.begin_path();
        let _ = ctx.round_rect_with_f64(r.x, r.y, r.w, r.h, 10.0);
        ctx.set_fill_style_str(sc.actor);
        ctx.fill();
        if self.load > 0.0 {
            ctx.save();
            ctx.clip();
            ctx.set_global_alpha(0.28);
            ctx.set_fill_style_str(self.accent);
            let h = r.h * self.load;
            ctx.fill_rect(r.x, r.y + r.h - h, r.w, h);
            ctx.restore();
        }
        let hurt = self.lines.iter().any(|(_, alarm)| *alarm);
        ctx.begin_path();
        let _ = ctx.round_rect_with_f64(r.x, r.y, r.w, r.h, 10.0);
        ctx.set_stroke_style_str(if hurt { sc.danger } else { self.accent });
        ctx.set_line_width(1.5 + 2.5 * self.flash + if hurt { 1.5 } else { 0.0 });
        ctx.stroke();

        // On a projector (words scaled up) the full sizes, whatever the
        // box: the A/B view's narrow boxes once wrote 10 px words.
        let wide = r.w >= 110.0 || words > 1.0;
        let cx = r.x + r.w / 2.0;
        let max_w = r.w - 10.0;
        ctx.set_text_align("center");
        ctx.set_text_baseline("top");
        ctx.set_fill_style_str(sc.text);
        let title = px(if wide { 15.0 } else { 13.0 }, words);
        ctx.set_font(&font("600 ", title, SANS));
        let mut y = r.y + 8.0;
        let _ = ctx.fill_text_with_max_width(self.name, cx, y, max_w);
        y += title + 6.0;
        let hero = px(if wide { 30.0 } else { 22.0 }, words);
        ctx.set_font(&font("700 ", hero, MONO));
        ctx.set_fill_style_str(self.accent);
        let _ = ctx.fill_text_with_max_width(&self.hero.to_string(), cx, y, max_w);
        y += hero + 2.0;
        let small = px(if wide { 12.0 } else { 10.0 }, words);
        ctx.set_font(&font("", small, SANS));
        ctx.set_fill_style_str(sc.text);
        let _ = ctx.fill_text_with_max_width(self.hero_label, cx, y, max_w);
        y += small + 8.0;
        for (line, alarm) in &self.lines {
            if y + small > r.y + r.h - 4.0 {
                break;
            }
            if *alarm {
                ctx.set_font(&font("700 ", small, SANS));
                ctx.set_fill_style_str(sc.danger);
            } else {
                ctx.set_font(&font("", small, SANS));
                ctx.set_fill_style_str(sc.muted);
            }
            let _ = ctx.fill_text_with_max_width(line, cx, y, max_w);
            y += small + 5.0;
        }
    }
}

/// A labelled thread's state in words under its glyph, on at most two
/// lines (broken between words), in the text colour.
fn draw_words(ctx: &Ctx, l: &Layout, members: &[u32], label: &str, dark: bool) {
    let px = l.label_px();
    // Room to spare on each side: neighbours' words must not run together.
    let width = l.cell * 0.84;
    ctx.set_font(&font("", px, SANS));
    ctx.set_text_align("center");
    ctx.set_text_baseline("top");
    ctx.set_fill_style_str(scheme(dark).text);
    let wide = |s: &str| ctx.measure_text(s).map(|m| m.width()).unwrap_or(0.0);
    let lines: Vec<String> = if wide(label) <= width {
        vec![label.to_string()]
    } else {
        // Break at the last space that leaves the first line fitting.
        let cut = label
            .match_indices(' ')
            .map(|(i, _)| i)
            .rfind(|i| wide(&label[..*i]) <= width)
            .or_else(|| label.find(' '));
        match cut {
            Some(i) => vec![label[..i].to_string(), label[i + 1..].to_string()],
            None => vec![label.to_string()],
        }
    };
    let t = l.threads.max(1);
    for g in members {
        let r = l.glyph(g / t, g % t);
        let mut y = r.y + r.h + 4.0;
        for line in &lines {
            let _ = ctx.fill_text_with_max_width(line, r.x + r.w / 2.0, y, width);
            y += px * 1.2;
        }
    }
}

/// Adds one glyph to the pen.
fn glyph_path(pen: &mut Pen, glyph: Glyph, x: f64, y: f64, s: f64) {
    match glyph {
        Glyph::Square => pen.rect(x, y, s, s),
        Glyph::Ring => {
            let w = (s / 4.0).clamp(1.0, 2.0) / 2.0;
            pen.rect(x + w, y + w, s - 2.0 * w, s - 2.0 * w);
        }
        Glyph::Triangle => {
            pen.move_to(x + s / 2.0, y - s * 0.1);
            pen.line_to(x + s * 1.08, y + s);
            pen.line_to(x - s * 0.08, y + s);
            pen.close();
        }
        Glyph::Diamond => {
            pen.move_to(x + s / 2.0, y - s * 0.12);
            pen.line_to(x + s * 1.12, y + s / 2.0);
            pen.line_to(x + s / 2.0, y + s * 1.12);
            pen.line_to(x - s * 0.12, y + s / 2.0);
            pen.close();
        }
        Glyph::Cross => {
            pen.move_to(x, y);
            pen.line_to(x + s, y + s);
            pen.move_to(x + s, y);
            pen.line_to(x, y + s);
        }
        Glyph::HollowDiamond => {
            let w = (s / 4.0).clamp(1.0, 2.0) / 2.0;
            pen.move_to(x + s / 2.0, y + w);
            pen.line_to(x + s - w, y + s / 2.0);
            pen.line_to(x + s / 2.0, y + s - w);
            pen.line_to(x + w, y + s / 2.0);
            pen.close();
        }
        Glyph::Circle => {
            // An octagon: round enough at a few pixels, and one path. Its
            // corners are constants, so no trigonometry is linked in.
            const C: f64 = 0.923_879_532_511_286_7; // cos 22.5°
            const S: f64 = 0.382_683_432_365_089_8; // sin 22.5°
            const CORNERS: [(f64, f64); 8] = [
                (C, S),
                (S, C),
                (-S, C),
                (-C, S),
                (-C, -S),
                (-S, -C),
                (S, -C),
                (C, -S),
            ];
            let w = (s / 4.0).clamp(1.0, 2.0) / 2.0;
            let (cx, cy, r) = (x + s / 2.0, y + s / 2.0, s / 2.0 - w);
            for (k, (dx, dy)) in CORNERS.iter().enumerate() {
                let (px, py) = (cx + r * dx, cy + r * dy);
                if k == 0 {
                    pen.move_to(px, py);
                } else {
                    pen.line_to(px, py);
                }
            }
            pen.close();
        }
    }
}

fn paint(ctx: &Ctx, pen: &Pen, glyph: Glyph, colour: &str, line: f64) {
    match glyph {
        Glyph::Ring | Glyph::Cross | Glyph::HollowDiamond | Glyph::Circle => {
            pen.stroke(ctx, colour, line)
        }
        _ => pen.fill(ctx, colour),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_box_word_is_explained_by_the_core() {
        for (_, term, metric) in TERMS {
            assert!(metric.meaning().is_some(), "{term}");
        }
    }

    #[test]
    fn a_crowd_of_pulses_is_thinned_per_channel() {
        let mut v = FleetView::default();
        let _ = v.fit(1200.0, 560.0, 40, 200);
        let mut burst: Vec<(u32, Channel)> = (0..8000).map(|g| (g, Channel::Read)).collect();
        burst.push((17, Channel::Recompute));
        v.add_pulses(&burst, 0.0);
        let reads = v
            .pulses
            .iter()
            .filter(|p| p.channel == Channel::Read)
            .count();
        assert_eq!(reads, PULSES_PER_CHANNEL);
        assert_eq!(
            v.pulses
                .iter()
                .filter(|p| p.channel == Channel::Recompute)
                .count(),
            1,
            "the lone recompute is never thinned away"
        );
        for _ in 0..20 {
            v.add_pulses(&burst, 0.0);
        }
        assert!(v.pulses.len() <= MAX_LIVE_PULSES);
    }
}
