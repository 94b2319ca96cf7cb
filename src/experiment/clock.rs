//! Playback: how wall-clock time maps to virtual time. The speed control is
//! logarithmic, from slow motion (1/100 of real time) to fast (100x), and a
//! frame never turns more than a bounded slice of wall time into virtual time,
//! so a background tab coming back does not jump to the end.

/// Slowest and fastest virtual-time multipliers.
pub const MIN_SPEED: f64 = 0.01;
pub const MAX_SPEED: f64 = 100.0;
/// The fallback speed when a link's speed is not a number.
pub const DEFAULT_SPEED: f64 = 0.1;
/// A cold start: the sheds at 100 ms play at 1 s, the last answers by ~11 s.
pub const COLD_SPEED: f64 = 0.1;
/// The speed steady traffic starts at: 20 s of traffic play over 8 s.
pub const STEADY_SPEED: f64 = 2.5;

/// How long a burst's story should take on screen (wall ms).
pub const BURST_STORY_MS: f64 = 8000.0;

/// The speed a scenario starts at (and that its link leaves out). A burst
/// plays its story (the arrivals, then the wait for the recompute or for
/// the deadline, whichever ends it) over about `BURST_STORY_MS`, at the
/// nearest speed the slider offers: the card's 270 ms at 0.033x, a
/// swamped origin's full second at 0.12x.
pub fn default_speed(s: &stampede::scenario::Scenario) -> f64 {
    use stampede::scenario::Workload;
    match s.workload {
        Workload::Steady => STEADY_SPEED,
        Workload::Cold => COLD_SPEED,
        Workload::Burst => {
            let at_once = s.burst_formula() as f64;
            let overload = (at_once / f64::from(s.origin_capacity.max(1))).max(1.0);
            let recompute = if s.hang {
                f64::INFINITY
            } else {
                1.3 * f64::from(s.recompute_ms) * overload
            };
            let story = f64::from(s.spread_ms) + recompute.min(f64::from(s.deadline_ms));
            speed_at(position_of(story / BURST_STORY_MS))
        }
    }
}

/// Quick through quiet stretches: while playing, each frame in which no
/// thread changed what it is doing and no request waits for its answer (the
/// origin grinding on after every caller gave up, the pause between two
/// expiries) speeds the clock up a little more (up to
/// `MAX_RAMP` times the chosen speed); the first frame with something to
/// see drops back to the chosen speed. Only the pace changes, never what
/// is shown at a given virtual time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ramp {
    quiet_frames: u32,
}

pub const MAX_RAMP: f64 = 1000.0;

impl Ramp {
    /// The multiplier for the next frame.
    pub fn factor(&self) -> f64 {
        1.12f64.powi(self.quiet_frames.min(80) as i32).min(MAX_RAMP)
    }

    /// After a frame: did any thread change what it was doing?
    pub fn after_frame(&mut self, playing: bool, eventful: bool) {
        if !playing || eventful {
            self.quiet_frames = 0;
        } else {
            self.quiet_frames = self.quiet_frames.saturating_add(1);
        }
    }

    /// Fast-forwarding noticeably.
    pub fn active(&self) -> bool {
        self.factor() >= 2.0
    }
}
/// Positions of the speed slider (`<input type=range min=0 max=STEPS>`).
pub const SPEED_STEPS: u32 = 100;
/// Wall time one frame may turn into virtual time at most (ms).
pub const MAX_FRAME_MS: f64 = 100.0;
/// Work budget of one frame for the simulation (ms of wall time).
pub const FRAME_BUDGET_MS: f64 = 6.0;

pub fn clamp_speed(speed: f64) -> f64 {
    if speed.is_finite() {
        speed.clamp(MIN_SPEED, MAX_SPEED)
    } else {
        DEFAULT_SPEED
    }
}

/// Slider position (0..=SPEED_STEPS) to speed, evenly spaced on a log scale.
pub fn speed_at(pos: u32) -> f64 {
    let f = f64::from(pos.min(SPEED_STEPS)) / f64::from(SPEED_STEPS);
    let (lo, hi) = (MIN_SPEED.log10(), MAX_SPEED.log10());
    // 10^x as e^(x ln 10): `exp` is in the wasm already, `powf` would add
    // libm's pow (about 2 KB) for this one call.
    round_speed((std::f64::consts::LN_10 * (lo + f * (hi - lo))).exp())
}

/// The slider position closest to `speed`.
pub fn position_of(speed: f64) -> u32 {
    let s = clamp_speed(speed);
    let (lo, hi) = (MIN_SPEED.log10(), MAX_SPEED.log10());
    let f = (s.log10() - lo) / (hi - lo);
    (f * f64::from(SPEED_STEPS))
        .round()
        .clamp(0.0, f64::from(SPEED_STEPS)) as u32
}

/// Two significant digits, so the label and the URL stay short (0.25, 1.6, 40).
pub fn round_speed(speed: f64) -> f64 {
    let s = clamp_speed(speed);
    let mag = 10f64.powi(s.log10().floor() as i32 - 1);
    ((s / mag).round() * mag * 1e6).round() / 1e6
}

/// "0.25×", "1×", "40×".
pub fn speed_label(speed: f64) -> String {
    format!("{}×", stampede::decimal::format(round_speed(speed)))
}

/// Virtual microseconds that `wall_ms` of real time is worth at `speed`.
pub fn virtual_step(wall_ms: f64, speed: f64) -> u64 {
    let wall = if wall_ms.is_finite() {
        wall_ms.clamp(0.0, MAX_FRAME_MS)
    } else {
        0.0
    };
    (wall * clamp_speed(speed) * 1000.0).round() as u64
}

/// Virtual time for people: "840 ms", "12.5 s".
pub fn virtual_label(us: u64) -> String {
    let ms = us as f64 / 1000.0;
    if ms < 1000.0 {
        format!(
            "{} ms",
            stampede::decimal::format((ms * 10.0).round() / 10.0)
        )
    } else {
        format!(
            "{} s",
            stampede::decimal::format((ms / 100.0).round() / 10.0)
        )
    }
}

/// The plain number `data-metric="now_ms"` carries: virtual ms, one decimal.
pub fn now_ms_text(us: u64) -> String {
    stampede::metrics::one_decimal(us as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slider_spans_slow_motion_to_fast() {
        assert_eq!(speed_at(0), MIN_SPEED);
        assert_eq!(speed_at(SPEED_STEPS), MAX_SPEED);
        assert_eq!(speed_at(50), 1.0);
        for pos in 0..=SPEED_STEPS {
            assert_eq!(position_of(speed_at(pos)), pos, "round trip at {pos}");
        }
        assert!(speed_at(30) < speed_at(31));
    }

    #[test]
    fn starting_speeds_sit_on_the_slider_and_fit_the_story() {
        for v in [COLD_SPEED, STEADY_SPEED] {
            assert_eq!(speed_at(position_of(v)), v, "{v}");
        }
        let speed = |name: &str| default_speed(&stampede::scenario::preset(name).unwrap());
        for p in stampede::scenario::PRESETS {
            let v = default_speed(&p.scenario());
            assert_eq!(speed_at(position_of(v)), v, "{}", p.name);
        }
        // The card: ~270 ms of story over ~8 s.
        assert_eq!(speed("burst"), 0.033);
        // No protection: the story is the deadline a swamped origin misses.
        assert!(speed("naive") > 3.0 * speed("burst"));
        assert!(speed("hang") > 3.0 * speed("burst"));
        assert_eq!(speed("failure"), STEADY_SPEED);
    }

    #[test]
    fn quiet_stretches_speed_up_and_news_slows_down() {
        let mut r = Ramp::default();
        assert_eq!(r.factor(), 1.0);
        for _ in 0..30 {
            r.after_frame(true, false);
        }
        assert!(r.active() && r.factor() > 20.0);
        for _ in 0..1000 {
            r.after_frame(true, false);
        }
        assert_eq!(r.factor(), MAX_RAMP);
        r.after_frame(true, true);
        assert_eq!(
            r.factor(),
            1.0,
            "something to see: back to the chosen speed"
        );
        r.after_frame(true, false);
        r.after_frame(false, false);
        assert_eq!(r.factor(), 1.0, "paused: no ramp");
    }

    #[test]
    fn odd_speeds_are_clamped() {
        assert_eq!(clamp_speed(f64::NAN), DEFAULT_SPEED);
        assert_eq!(clamp_speed(1e9), MAX_SPEED);
        assert_eq!(clamp_speed(-3.0), MIN_SPEED);
        assert_eq!(round_speed(0.25), 0.25);
        assert_eq!(speed_label(0.25), "0.25×");
    }

    #[test]
    fn frames_turn_into_virtual_time() {
        assert_eq!(virtual_step(16.0, 0.25), 4_000);
        assert_eq!(virtual_step(16.0, 1.0), 16_000);
        assert_eq!(
            virtual_step(5_000.0, 1.0),
            100_000,
            "a long pause is capped"
        );
        assert_eq!(virtual_step(f64::NAN, 1.0), 0);
        assert_eq!(virtual_label(840_000), "840 ms");
        assert_eq!(virtual_label(12_500_000), "12.5 s");
        assert_eq!(now_ms_text(12_345), "12.3");
    }
}
