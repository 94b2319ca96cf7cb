//! The lesson: the guided tour (its script as data in `tour`, its bar on
//! the page in `tour_view`). It drives the same experiment, canvas and
//! counters as the sandbox: no second simulation, no recorded animation.

pub mod assemble;
pub mod drills;
pub mod practice;
pub mod presenter;
pub mod room_vote;
pub mod tour;
pub mod tour_view;
