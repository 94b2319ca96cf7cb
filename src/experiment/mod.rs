//! The experiment: the fleet being run and what it measured, its clock and
//! its share link. No drawing and no controls; host-testable.

pub mod clock;
pub mod lab;
pub mod reading;
pub mod url_state;
