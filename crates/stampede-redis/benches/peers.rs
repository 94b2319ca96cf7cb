//! Peer benchmarks (the group vs async_singleflight vs moka): written in a
//! following commit.

fn main() {}
