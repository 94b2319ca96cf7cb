//! The course's three rungs, one ladder for the tour and the drills: a
//! tour level's words go as deep as its rung, and a drill's rung is how
//! hard it is (each tour level ends with a drill of its own rung).
//!
//! The walk-through's level is not this ladder: it says how much the
//! walk-through asks of the learner on the same card (narrated, faded, on
//! your own), whatever the rung ([`crate::walkthrough::Level`]).

/// A rung of the course, shortest and easiest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// About twenty seconds of reading: what each layer does. Easy drills.
    Basics,
    /// About a minute: the arithmetic, the costs, the rules. Medium drills.
    Solid,
    /// What goes wrong, and where each technique stops helping. Hard drills.
    Deeper,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Basics, Level::Solid, Level::Deeper];

    /// The level's name in links and hooks (`#tour/solid/3`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Basics => "basics",
            Level::Solid => "solid",
            Level::Deeper => "deeper",
        }
    }

    /// The tour level's title.
    pub fn title(self) -> &'static str {
        match self {
            Level::Basics => "Basics",
            Level::Solid => "A solid answer",
            Level::Deeper => "Going deeper",
        }
    }

    /// A drill's difficulty at this rung, as the drill list and the CLI
    /// say it.
    pub fn difficulty(self) -> &'static str {
        match self {
            Level::Basics => "easy",
            Level::Solid => "medium",
            Level::Deeper => "hard",
        }
    }

    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The drill the tour's level ends with (`drill::drill` names it).
    pub fn drill(self) -> &'static str {
        match self {
            Level::Basics => "claim-order",
            Level::Solid => "claim-ttl",
            Level::Deeper => "redis-hangs",
        }
    }
}
