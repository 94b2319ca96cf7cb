//! Playback: how wall-clock time maps to virtual time. The speed control is
//! logarithmic, from slow motion (1/100 of real time) to fast (100x), and a
//! frame never turns more than a bounded slice of wall time into virtual time,
//! so a background tab coming back does not jump to the end.

/// Slowest and fastest virtual-time multipliers.
pub const MIN_SPEED: f64 = 0.01;
pub const MAX_SPEED: f64 = 100.0;
/// The speed a burst starts at: its 10 ms of arrivals play over a tenth of
/// a second, long enough to watch the wave, and a 200 ms recompute over 2 s.
pub const DEFAULT_SPEED: f64 = 0.1;
/// The speed steady traffic starts at: 20 s of traffic play over 10 s.
pub const STEADY_SPEED: f64 = 2.0;

/// The speed a scenario starts at (and that its link leaves out).
pub fn default_speed(s: &stampede::scenario::Scenario) -> f64 {
    match s.workload {
        stampede::scenario::Workload::Steady => STEADY_SPEED,
        _ => DEFAULT_SPEED,
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
    round_speed(10f64.powf(lo + f * (hi - lo)))
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
    let mag = 10f64.powf(s.log10().floor() - 1.0);
    ((s / mag).round() * mag * 1e6).round() / 1e6
}

/// "0.25×", "1×", "40×".
pub fn speed_label(speed: f64) -> String {
    format!("{}×", round_speed(speed))
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
        format!("{} ms", (ms * 10.0).round() / 10.0)
    } else {
        format!("{} s", (ms / 100.0).round() / 10.0)
    }
}

/// The plain number `data-metric="now_ms"` carries: virtual ms, one decimal.
pub fn now_ms_text(us: u64) -> String {
    format!("{:.1}", us as f64 / 1000.0)
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
