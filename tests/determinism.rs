//! The simulation in wasm must write the same event log as on the host, bit
//! for bit: every preset, several seeds. The host's hashes come from
//! `scripts/host-hashes.sh` through HOST_LOG_HASHES (`make test-browser`).
#![cfg(target_arch = "wasm32")]

use stampede::scenario::{preset, preset_names};
use stampede::sim::Fleet;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn every_preset_matches_the_host() {
    let Some(table) = option_env!("HOST_LOG_HASHES") else {
        panic!("HOST_LOG_HASHES is not set: run through `make test-browser`");
    };
    let mut checked = 0;
    for entry in table.split(',').filter(|e| !e.is_empty()) {
        let mut parts = entry.split(':');
        let (Some(name), Some(seed), Some(hash)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!("malformed entry {entry:?}");
        };
        let seed: u64 = seed.parse().expect("seed");
        let scenario = preset(name).unwrap_or_else(|| panic!("unknown preset {name}"));
        let mut fleet = Fleet::new(&scenario, seed);
        fleet.run();
        assert_eq!(
            format!("{:016x}", fleet.log_hash()),
            hash,
            "preset {name} seed {seed}"
        );
        checked += 1;
    }
    // Every preset, not a subset: a preset added later must be covered too.
    assert!(
        checked >= 3 * preset_names().len(),
        "only {checked} runs checked"
    );
}
