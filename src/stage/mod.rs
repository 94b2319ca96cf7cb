//! The stage: the fleet's canvas (layout, colours and shapes, batched
//! paths) and the timeline chart. Draws what the experiment measured.

pub mod chart;
pub mod fleet_layout;
pub mod fleet_view;
pub mod palette;
pub mod panel;
pub mod pen;
pub mod room;
pub mod shot;
