//! Browser tests: the simulation core and the page, compiled to wasm32 and run
//! in headless Chromium by wasm-bindgen-test-runner (`make test-browser`).
//! The determinism check compares the wasm run's event-log hash with the one
//! the host CLI computed for the same scenario and seed, passed in at compile
//! time as HOST_LOG_HASH (16 hex digits, as `stampede-sim --json` prints it)
//! by the Makefile.
#![cfg(target_arch = "wasm32")]

use leptos::prelude::*;
use stampede::scenario::Scenario;
use stampede::sim::Fleet;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn interview_card_collapses_to_one_recompute() {
    let scenario = Scenario::default();
    let mut fleet = Fleet::new(&scenario, 7);
    let report = fleet.run();
    assert_eq!(report.recomputes, 1, "both layers: one recompute in all");
    assert_eq!(
        report.claim_attempts, 40,
        "claim inside singleflight: one attempt per instance"
    );
}

#[wasm_bindgen_test]
fn wasm_event_log_matches_the_host() {
    let Some(host) = option_env!("HOST_LOG_HASH") else {
        panic!(
            "HOST_LOG_HASH is not set: build through `make test-browser`, which runs \
             stampede-sim --seed 7 --json on the host and passes its log_hash"
        );
    };
    let host = u64::from_str_radix(host.trim(), 16)
        .unwrap_or_else(|e| panic!("HOST_LOG_HASH={host:?} is not a hex u64: {e}"));
    let mut fleet = Fleet::new(&Scenario::default(), 7);
    fleet.run();
    assert_eq!(
        fleet.log_hash(),
        host,
        "the same scenario and seed must give the same event log in wasm and on the host"
    );
}

fn metric(root: &web_sys::Element, name: &str) -> String {
    root.query_selector(&format!("[data-metric=\"{name}\"]"))
        .expect("valid selector")
        .unwrap_or_else(|| panic!("no data-metric=\"{name}\" on the page"))
        .text_content()
        .unwrap_or_default()
}

#[wasm_bindgen_test]
fn page_shows_the_naive_count() {
    let host = document().create_element("div").expect("create div");
    document()
        .body()
        .expect("body")
        .append_child(&host)
        .expect("append");
    let handle = leptos::mount::mount_to(
        host.clone().unchecked_into::<web_sys::HtmlElement>(),
        stampede_lab::App,
    );
    assert_eq!(metric(&host, "naive"), "8000", "40 instances x 200 threads");
    assert_eq!(metric(&host, "recomputes"), "1");
    assert_eq!(metric(&host, "claim_attempts"), "40");
    for control in ["instances", "threads", "singleflight", "claim"] {
        assert!(
            host.query_selector(&format!("[data-control=\"{control}\"]"))
                .expect("valid selector")
                .is_some(),
            "no data-control=\"{control}\" on the page"
        );
    }
    drop(handle);
}
