//! The panels: the numbers (arithmetic, counters, the read path counted)
//! and the controls (knobs, transport, preset picker).

pub mod code_panel;
pub mod conformance;
pub mod counters;
pub mod knobs;
pub mod transport;
