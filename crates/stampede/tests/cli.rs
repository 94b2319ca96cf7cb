//! The command line: the interview card's table comes out of `--json`, and
//! bad input exits with status 2 and says what was wrong.

use std::process::Command;

fn sim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stampede-sim"))
        .args(args)
        .output()
        .expect("run stampede-sim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut a = args.to_vec();
    a.push("--json");
    let (code, out, err) = sim(&a);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).expect("one JSON object")
}

#[test]
fn the_interview_table() {
    let rows = [
        ("off", "off", 8000, 0),
        ("on", "off", 40, 0),
        ("off", "outer", 1, 8000),
        ("on", "inner", 1, 40),
        ("on", "outer", 1, 8000),
    ];
    for (sf, claim, recomputes, attempts) in rows {
        let v = json(&["--preset", "burst", "--singleflight", sf, "--claim", claim]);
        assert_eq!(v["recomputes"], recomputes, "sf {sf} claim {claim}");
        assert_eq!(v["claim_attempts"], attempts, "sf {sf} claim {claim}");
        assert_eq!(v["requests"], 8000);
    }
}

#[test]
fn json_has_every_promised_key() {
    let v = json(&[]);
    for k in [
        "requests",
        "recomputes",
        "claim_attempts",
        "claim_wins",
        "redis_round_trips",
        "stale_served",
        "degraded",
        "errors",
        "timeouts",
        "p50_ms",
        "p99_ms",
        "max_wait_ms",
        "origin_peak_concurrency",
        "corrupted",
        "log_hash",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
}

#[test]
fn every_preset_runs() {
    let (code, list, _) = sim(&["--list-presets"]);
    assert_eq!(code, 0);
    for line in list.lines() {
        let name = line.split_whitespace().next().unwrap();
        let v = json(&["--preset", name]);
        assert!(v["requests"].as_u64().unwrap() > 0, "{name}");
    }
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for (args, needle) in [
        (vec!["--instances", "0"], "instances"),
        (vec!["--instances", "many"], "whole number"),
        (vec!["--claim", "sideways"], "off, inner, outer or refresh"),
        (vec!["--pitfall", "nope"], "unknown pitfall"),
        (vec!["--preset", "nope"], "unknown preset"),
        (vec!["--frobnicate"], "unknown flag"),
        (vec!["--threads"], "needs a value"),
        (vec!["--jitter", "2"], "jitter"),
        (vec!["--seed", "-1"], "seed"),
    ] {
        let (code, _, err) = sim(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn flags_override_the_preset_wherever_they_appear() {
    let v = json(&["--instances", "10", "--preset", "singleflight"]);
    assert_eq!(v["recomputes"], 10);
}

#[test]
fn the_table_names_every_counter_once() {
    let (code, out, _) = sim(&["--preset", "burst"]);
    assert_eq!(code, 0);
    let v = json(&["--preset", "burst"]);
    for key in v.as_object().unwrap().keys() {
        if key == "scenario" || key == "seed" {
            continue;
        }
        let lines = out
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(key.as_str()))
            .count();
        assert_eq!(lines, 1, "{key} appears {lines} times in\n{out}");
    }
}

#[test]
fn a_share_link_runs_the_same_scenario_and_seed() {
    let link = json(&[
        "--url",
        "http://127.0.0.1:8080/lab/?preset=hang&i=4&seed=9&speed=2",
    ]);
    let flags = json(&["--preset", "hang", "--instances", "4", "--seed", "9"]);
    assert_eq!(link, flags);
    let query = json(&["--url", "i=3&t=5&c=outer&seed=4"]);
    assert_eq!(query["claim_attempts"], 15);
    assert_eq!(query["seed"], 4);
    // A link is read as the page reads it: clamped, with the page's notices.
    let (code, out, err) = sim(&["--url", "i=99999&zz=1&t=2", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("clamped to 1000"), "{err}");
    assert!(err.contains("unknown setting 'zz'"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["requests"], 2000);
}
