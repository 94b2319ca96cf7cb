//! Playback speeds: the slider's logarithmic scale from slow motion (1/100
//! of real time) to fast (100x), and the speed a scenario starts at. The
//! page's clock (`src/experiment/clock.rs`) plays at these speeds; they live
//! here, beside the tour, so that the tour's pacing (how soon each step's
//! number is known, in wall time) is checked where its steps are written.

/// Slowest and fastest virtual-time multipliers.
pub const MIN_SPEED: f64 = 0.01;
pub const MAX_SPEED: f64 = 100.0;
/// The fallback speed when a link's speed is not a number.
pub const DEFAULT_SPEED: f64 = 0.1;
/// A cold start: the sheds at 100 ms play at 1 s, the last answers by ~11 s.
pub const COLD_SPEED: f64 = 0.1;
/// The speed steady traffic starts at, at least: 12 s of traffic play
/// over 4.8 s.
pub const STEADY_SPEED: f64 = 2.5;
/// How long steady traffic's story should take on screen at most (wall
/// ms): a longer run starts faster (20 s at 2.8x, 30 s at 4x), so that its
/// end (a steady run's numbers are final there) comes within 8 s.
pub const STEADY_STORY_MS: f64 = 7500.0;

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
        Workload::Steady => {
            STEADY_SPEED.max(speed_at_least(f64::from(s.duration_ms) / STEADY_STORY_MS))
        }
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
/// Positions of the speed slider (`<input type=range min=0 max=STEPS>`).
pub const SPEED_STEPS: u32 = 100;

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

/// The slowest speed the slider offers that is at least `speed`.
pub fn speed_at_least(speed: f64) -> f64 {
    let pos = position_of(speed);
    if speed_at(pos) < speed {
        speed_at(pos + 1)
    } else {
        speed_at(pos)
    }
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
