//! How each thread state looks: a colour from a colour-blind-safe set
//! (Okabe–Ito hues, plus greys) and a glyph as a second channel, so the states
//! that matter most — recomputing, waiting, failing — read without colour.

use stampede::read_path::Activity;

/// The shape a thread is drawn with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Glyph {
    Square,
    /// Hollow square: the thread is waiting on its instance's flight.
    Ring,
    /// Hollow diamond: waiting on the claim (the holder is a diamond).
    HollowDiamond,
    /// Hollow circle: queued for an admission permit.
    Circle,
    /// Pointing up: the thread is doing the expensive work.
    Triangle,
    /// The claim holder.
    Diamond,
    /// The request failed.
    Cross,
}

#[derive(Clone, Copy, Debug)]
pub struct Look {
    pub state: Activity,
    /// What the legend says.
    pub label: &'static str,
    pub help: &'static str,
    pub light: &'static str,
    pub dark: &'static str,
    pub glyph: Glyph,
}

const fn look(
    state: Activity,
    label: &'static str,
    help: &'static str,
    light: &'static str,
    dark: &'static str,
    glyph: Glyph,
) -> Look {
    Look {
        state,
        label,
        help,
        light,
        dark,
        glyph,
    }
}

/// One entry per `Activity`, in its numeric order.
pub const LOOKS: [Look; Activity::COUNT] = [
    look(
        Activity::Idle,
        "idle",
        "no request yet",
        "#cfd6df",
        "#34404f",
        Glyph::Square,
    ),
    look(
        Activity::Reading,
        "reading the cache",
        "GET in flight",
        "#56b4e9",
        "#56b4e9",
        Glyph::Square,
    ),
    look(
        Activity::Following,
        "waiting on a flight",
        "attached to its instance's leader",
        "#0072b2",
        "#7fb8ec",
        Glyph::Ring,
    ),
    look(
        Activity::Claiming,
        "claiming",
        "SET lock NX PX in flight",
        "#d9c21f",
        "#f0e442",
        Glyph::Square,
    ),
    look(
        Activity::Holding,
        "holding the claim",
        "won the claim",
        "#e69f00",
        "#d08c00",
        Glyph::Diamond,
    ),
    look(
        Activity::Polling,
        "waiting on the claim",
        "lost it; polling the cache",
        "#cc79a7",
        "#c77aa8",
        Glyph::HollowDiamond,
    ),
    look(
        Activity::Recomputing,
        "recomputing",
        "calling the origin",
        "#d55e00",
        "#ff9a4d",
        Glyph::Triangle,
    ),
    look(
        Activity::Queued,
        "queued",
        "waiting for an admission permit",
        "#8f7fc8",
        "#a898e0",
        Glyph::Circle,
    ),
    look(
        Activity::Writing,
        "writing",
        "SET of the new value",
        "#7a9a3a",
        "#9cc45a",
        Glyph::Square,
    ),
    look(
        Activity::Hit,
        "served",
        "from the cache or its own recompute",
        "#009e73",
        "#2bc497",
        Glyph::Square,
    ),
    look(
        Activity::Shared,
        "served by its flight",
        "got the leader's result",
        "#66c2a5",
        "#1f8f70",
        Glyph::Square,
    ),
    look(
        Activity::Stale,
        "served stale",
        "answered with the old value",
        "#a6761d",
        "#dbb060",
        Glyph::Square,
    ),
    look(
        Activity::Degraded,
        "degraded",
        "answered with a fallback",
        "#9e9e9e",
        "#8a8a8a",
        Glyph::Square,
    ),
    look(
        Activity::Error,
        "error",
        "the recompute failed",
        "#b2182b",
        "#ff5c6c",
        Glyph::Cross,
    ),
    look(
        Activity::Timeout,
        "timed out",
        "its own deadline passed",
        "#1d1d1d",
        "#f2f2f2",
        Glyph::Cross,
    ),
    look(
        Activity::Corrupted,
        "corrupted",
        "got a shared value another caller changed",
        "#c51b7d",
        "#e0559b",
        Glyph::Cross,
    ),
];

impl Look {
    pub fn colour(&self, dark: bool) -> &'static str {
        colour(self, dark)
    }
}

pub fn look_of(state: u8) -> &'static Look {
    LOOKS.get(usize::from(state)).unwrap_or(&LOOKS[0])
}

pub fn colour(look: &Look, dark: bool) -> &'static str {
    if dark {
        look.dark
    } else {
        look.light
    }
}

/// The page's font stacks (as in style/main.css): canvas text that asks for
/// the fonts the page already laid out finds them in the font cache, instead
/// of a first-use font lookup costing tens of milliseconds mid-animation.
pub const SANS: &str = "system-ui, sans-serif";
pub const MONO: &str = "ui-monospace, Menlo, Consolas, monospace";

/// Colours of the page's canvases that are not thread states.
#[derive(Clone, Copy, Debug)]
pub struct Scheme {
    pub background: &'static str,
    pub office: &'static str,
    pub office_line: &'static str,
    pub text: &'static str,
    pub muted: &'static str,
    pub wire: &'static str,
    pub actor: &'static str,
    pub grid: &'static str,
    /// Pulse colours by `Channel`.
    pub pulses: [&'static str; 5],
    /// Damage on Redis or the origin (errors, overlaps, refused releases).
    pub danger: &'static str,
}

pub const LIGHT: Scheme = Scheme {
    background: "#ffffff",
    office: "#f1f4f8",
    office_line: "#d5dbe3",
    text: "#111827",
    muted: "#5b6675",
    wire: "rgba(90,102,117,0.16)",
    actor: "#e9eef4",
    grid: "#e3e8ee",
    pulses: ["#0072b2", "#c9a400", "#009e73", "#d55e00", "#2bb08a"],
    danger: "#b2182b",
};

pub const DARK: Scheme = Scheme {
    background: "#151b23",
    office: "#1d2530",
    office_line: "#2f3a48",
    text: "#e6edf3",
    muted: "#98a6b8",
    wire: "rgba(152,166,184,0.14)",
    actor: "#222c38",
    grid: "#26303c",
    pulses: ["#56b4e9", "#f0e442", "#2bc497", "#ff7a1a", "#7fe0c0"],
    danger: "#ff5c6c",
};

pub fn scheme(dark: bool) -> &'static Scheme {
    if dark {
        &DARK
    } else {
        &LIGHT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_look_per_state_in_order() {
        for (i, l) in LOOKS.iter().enumerate() {
            assert_eq!(l.state as usize, i, "{}", l.label);
        }
        assert_eq!(
            look_of(200).state,
            Activity::Idle,
            "unknown bytes draw as idle"
        );
    }

    #[test]
    fn the_important_states_have_their_own_shape() {
        assert_eq!(look_of(Activity::Recomputing as u8).glyph, Glyph::Triangle);
        assert_eq!(look_of(Activity::Holding as u8).glyph, Glyph::Diamond);
        // The three ways of waiting differ by shape, not colour alone: on
        // the flight (square), on the claim (diamond), on a permit (circle).
        let waits: Vec<Glyph> = [Activity::Following, Activity::Polling, Activity::Queued]
            .iter()
            .map(|w| look_of(*w as u8).glyph)
            .collect();
        assert_eq!(waits, [Glyph::Ring, Glyph::HollowDiamond, Glyph::Circle]);
        for e in [Activity::Error, Activity::Timeout, Activity::Corrupted] {
            assert_eq!(look_of(e as u8).glyph, Glyph::Cross);
        }
    }

    fn luminance(hex: &str) -> f64 {
        let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
        let ch = |shift: u32| {
            let c = f64::from((v >> shift) & 0xff) / 255.0;
            if c <= 0.039_28 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * ch(16) + 0.7152 * ch(8) + 0.0722 * ch(0)
    }

    /// WCAG contrast of a state's colour against the canvas background.
    fn contrast(state: Activity, dark: bool) -> f64 {
        let (a, b) = (
            luminance(look_of(state as u8).colour(dark)),
            luminance(scheme(dark).background),
        );
        (a.max(b) + 0.05) / (a.min(b) + 0.05)
    }

    /// Within each family of states, what stands out more in the light
    /// theme stands out more in the dark one too.
    #[test]
    fn both_themes_keep_the_order_of_prominence() {
        use Activity::*;
        for family in [
            &[Following, Queued, Polling][..],
            &[Recomputing, Holding],
            &[Stale, Hit, Degraded, Shared],
            &[Timeout, Error, Corrupted],
        ] {
            for theme in [false, true] {
                for w in family.windows(2) {
                    assert!(
                        contrast(w[0], theme) > contrast(w[1], theme),
                        "{:?} should stand out more than {:?} (dark: {theme})",
                        w[0],
                        w[1]
                    );
                }
            }
        }
    }
}
