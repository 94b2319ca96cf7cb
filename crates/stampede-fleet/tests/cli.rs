//! `stampede-fleet` takes stampede-sim's flags, parsed by the core as
//! stampede-sim parses them.

use std::process::Command;

use stampede_testkit::TestRedis;

fn fleet(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stampede-fleet"))
        .args(args)
        .output()
        .expect("the stampede-fleet binary");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The JSON report's counter `name`.
fn counter(json: &str, name: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(json).expect("one JSON object");
    v[name]
        .as_u64()
        .unwrap_or_else(|| panic!("no {name} in {json}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sim_flags_change_the_real_run() {
    let redis = TestRedis::start().await;
    let base = [
        "--redis",
        redis.url.as_str(),
        "--instances",
        "2",
        "--threads",
        "5",
        "--recompute-ms",
        "50",
        "--json",
    ];
    // The defaults: singleflight in each instance, one claim for the fleet.
    let (code, out, err) = fleet(&base);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counter(&out, "requests"), 10);
    assert_eq!(counter(&out, "recomputes"), 1);

    // Keys apart: nothing coalesces, every request computes.
    let mut args = base.to_vec();
    args.extend(["--singleflight", "off", "--claim", "off"]);
    let (code, out, err) = fleet(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counter(&out, "recomputes"), 10);
    assert_eq!(counter(&out, "claim_attempts"), 0);

    // Singleflight alone: one per instance.
    let mut args = base.to_vec();
    args.extend(["--claim", "off"]);
    let (code, out, err) = fleet(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counter(&out, "recomputes"), 2);

    // A loser that degrades instead of waiting: the other instance's
    // requests answer degraded.
    let mut args = base.to_vec();
    args.extend(["--loser", "degrade"]);
    let (code, out, err) = fleet(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(counter(&out, "recomputes"), 1);
    assert_eq!(counter(&out, "degraded"), 5);
}

#[test]
fn bad_flags_are_refused_in_the_cores_words() {
    let (code, _, err) = fleet(&["--claim", "sometimes"]);
    assert_eq!(code, 2);
    assert!(err.contains("--claim"), "{err}");
    let (code, _, err) = fleet(&["--loser"]);
    assert_eq!(code, 2);
    assert!(err.contains("--loser needs a value"), "{err}");
    let (code, _, err) = fleet(&["--pitfall", "nonsense"]);
    assert_eq!(code, 2);
    assert!(err.contains("--pitfall"), "{err}");
    let (code, _, err) = fleet(&["--no-such-knob", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown flag"), "{err}");
}
