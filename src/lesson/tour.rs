//! The guided tour's script is the core's data (`catalogue::tour`): its steps,
//! their words and the checks on them live beside the presets. The page's
//! tour bar lives in `tour_view`.

pub use catalogue::tour::*;
