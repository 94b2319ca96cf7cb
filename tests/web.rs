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

fn find(root: &web_sys::Element, selector: &str) -> Option<web_sys::Element> {
    root.query_selector(selector).expect("valid selector")
}

fn metric(root: &web_sys::Element, name: &str) -> String {
    find(root, &format!("[data-metric=\"{name}\"]"))
        .unwrap_or_else(|| panic!("no data-metric=\"{name}\" on the page"))
        .text_content()
        .unwrap_or_default()
}

/// Mounts the page as if opened with `query`, returns its host element.
fn mount_with(query: &str) -> (web_sys::Element, impl Drop) {
    let w = window();
    let path = w.location().pathname().expect("pathname");
    w.history()
        .expect("history")
        .replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}?{query}")),
        )
        .expect("replaceState");
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
    (host, handle)
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Lets the page finish starting: its parts are built in tasks after the
/// mount, the knob panel last (a moment later, then in a task of its own).
/// Waits until the knobs are there, or gives up after 10 s (a page that
/// never builds them fails the assertions that follow).
async fn tick(host: &web_sys::Element) {
    for _ in 0..500 {
        if find(host, "[data-control=\"instances\"]").is_some() {
            break;
        }
        sleep(20).await;
    }
    // The effects a last change set off.
    sleep(50).await;
}

#[wasm_bindgen_test]
async fn page_has_its_hooks() {
    let (host, handle) = mount_with("");
    // The controls are built by effects once the page is mounted.
    tick(&host).await;
    let now = metric(&host, "now_ms");
    assert!(
        stampede::decimal::parse(&now).is_some_and(|ms| ms >= 0.0),
        "the clock shows virtual ms: {now:?}"
    );
    // A first visit is the tour's first step: its fleet (3 x 4) misses at once.
    let (first, _, _) = Scenario::from_query(catalogue::tour::STEPS[0].row.link);
    assert_eq!(
        metric(&host, "naive"),
        (first.instances * first.threads).to_string(),
        "the first step's instances x threads"
    );
    for control in [
        "play",
        "step",
        "restart",
        "replay",
        "speed",
        "timeline",
        "seed",
        "new-seed",
        "preset",
        "instances",
        "threads",
        "keys",
        "workload",
        "singleflight",
        "claim",
        "loser",
    ] {
        assert!(
            find(&host, &format!("[data-control=\"{control}\"]")).is_some(),
            "no data-control=\"{control}\" on the page"
        );
    }
    // A first visit lands on the tour's first step, which asks for a
    // prediction first: paused, its question on screen. Skipping the
    // predictions (remembered by the page) makes a step autoplay.
    let play = find(&host, "[data-control=play]").expect("play");
    let asking = document()
        .query_selector(".tour-predict:not([hidden])")
        .expect("valid selector")
        .is_some();
    let want = if asking { "false" } else { "true" };
    assert_eq!(
        play.get_attribute("aria-pressed").as_deref(),
        Some(want),
        "plays unless a prediction is asked first (asking: {asking})"
    );
    let speed = find(&host, "[data-control=speed]").expect("speed");
    assert_eq!(speed.tag_name(), "INPUT");
    assert_eq!(speed.get_attribute("type").as_deref(), Some("range"));
    assert!(
        find(&host, "[role=alert]").is_none(),
        "a clean link shows no banner"
    );
    drop(handle);
}

#[wasm_bindgen_test]
async fn shared_link_sets_the_knobs() {
    let (host, handle) = mount_with("preset=naive&i=12&seed=5&speed=4");
    tick(&host).await;
    assert_eq!(metric(&host, "naive"), "2400", "12 instances x 200 threads");
    let input = |name: &str| {
        find(&host, &format!("[data-control=\"{name}\"]"))
            .expect("control")
            .unchecked_into::<web_sys::HtmlInputElement>()
    };
    assert_eq!(input("instances").value(), "12");
    assert_eq!(input("seed").value(), "5");
    assert!(
        !input("singleflight").checked(),
        "the naive preset is the base"
    );
    assert_eq!(
        input("speed").value(),
        stampede_lab::clock::position_of(4.0).to_string()
    );
    drop(handle);
}

#[wasm_bindgen_test]
async fn broken_link_shows_a_banner_and_a_working_page() {
    let (host, handle) = mount_with("i=%3Cscript%3Ealert(1)%3C/script%3E&zzz=1&speed=NaN");
    tick(&host).await;
    let banner = find(&host, "[role=alert]").expect("a banner for the broken link");
    let text = banner.text_content().unwrap_or_default();
    assert!(
        text.contains("instances") && text.contains("zzz") && text.contains("speed"),
        "{text}"
    );
    assert!(
        find(&banner, "script").is_none(),
        "nothing from the URL becomes markup"
    );
    assert_eq!(metric(&host, "naive"), "8000", "defaults in force");
    drop(handle);
}

#[wasm_bindgen_test]
fn the_lab_runs_the_interview_card_in_wasm() {
    use stampede_lab::lab::{Defence, Lab};
    let mut lab = Lab::new(&Scenario::default(), 7);
    lab.seek(u64::MAX);
    assert!(lab.advance(&|| false));
    assert_eq!(lab.report().recomputes, 1);
    assert_eq!(lab.compared(Defence::None), Some(8000));
    assert_eq!(lab.compared(Defence::Singleflight), Some(40));
    assert!(lab.at_end());
}
