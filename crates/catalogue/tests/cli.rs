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

/// `--json` carries the lesson the core words for the link: its counter,
/// that counter's value in the same JSON, and the sentence; a changed
/// preset is told against the preset's own run.
#[test]
fn the_json_carries_the_lesson_of_the_link() {
    let v = json(&["--url", "preset=burst&sf=0&seed=3"]);
    let l = &v["lesson"];
    let metric = l["metric"].as_str().unwrap();
    assert_eq!(metric, "claim_attempts");
    assert_eq!(l["value"].as_f64(), v[metric].as_f64());
    let card = json(&["--preset", "burst", "--seed", "3"]);
    let want = format!(
        "singleflight off: claim attempts {} → {} against the preset's own run.",
        catalogue::lesson::count(card["claim_attempts"].as_u64().unwrap()),
        catalogue::lesson::count(v["claim_attempts"].as_u64().unwrap())
    );
    assert_eq!(l["sentence"], want.as_str());
    let (code, out, _) = sim(&["--url", "preset=burst&sf=0&seed=3"]);
    assert_eq!(code, 0);
    assert!(out.contains(&format!("lesson  {want}")), "{out}");
    // A pitfall that cannot bite says what it needs and where it shows.
    let v = json(&["--url", "pf=no-deadline"]);
    assert_eq!(v["lesson"]["needs"]["link"], "preset=hang&pf=no-deadline");
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

#[test]
fn print_url_round_trips_through_url() {
    let (code, query, _) = sim(&[
        "--preset",
        "cold",
        "--instances",
        "4",
        "--seed",
        "9",
        "--print-url",
    ]);
    assert_eq!(code, 0);
    let query = query.trim();
    assert!(
        query.starts_with('?') && query.contains("i=4") && query.contains("seed=9"),
        "{query}"
    );
    assert_eq!(
        json(&["--url", query]),
        json(&["--preset", "cold", "--instances", "4", "--seed", "9"])
    );
}

#[test]
fn compare_calls_out_the_differences() {
    let (code, out, err) = sim(&["--compare", "preset=claim-outer", "preset=burst"]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("claim_attempts"))
        .unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells, ["claim_attempts", "8000", "40", "×0.005", "b"]);
    assert!(
        !out.lines().any(|l| l.starts_with("recomputes")),
        "both recompute once:\n{out}"
    );
    let (_, md, _) = sim(&[
        "--compare",
        "preset=claim-outer",
        "preset=burst",
        "--format",
        "markdown",
    ]);
    assert!(
        md.contains("| claim_attempts | 8000 | 40 | ×0.005 | b |"),
        "{md}"
    );
    let (_, csv, _) = sim(&[
        "--compare",
        "preset=singleflight",
        "preset=burst",
        "--format",
        "csv",
    ]);
    assert!(
        csv.lines().any(|l| l == "recomputes,40,1,×0.025,b"),
        "{csv}"
    );
    let v: serde_json::Value = serde_json::from_str(
        &sim(&["--compare", "preset=claim-outer", "preset=burst", "--json"]).1,
    )
    .unwrap();
    assert_eq!(v["b"]["report"]["claim_attempts"], 40);
    let (same, out, _) = sim(&["--compare", "preset=burst", "seed=1"]);
    assert_eq!(same, 0);
    assert!(out.contains("agree on every counter"), "{out}");
    for bad in [
        vec!["--compare", "preset=burst"],
        vec![
            "--compare",
            "preset=burst",
            "preset=naive",
            "--instances",
            "3",
        ],
        vec!["--format", "pdf"],
    ] {
        assert_eq!(sim(&bad).0, 2, "{bad:?}");
    }
}

#[test]
fn tables_in_markdown_and_csv() {
    let (_, md, _) = sim(&["--preset", "burst", "--format", "markdown"]);
    assert!(
        md.starts_with("| group | counter | value |\n| --- | --- | --- |"),
        "{md}"
    );
    assert!(md.contains("| origin | recomputes | 1 |"), "{md}");
    let (_, csv, _) = sim(&["--preset", "burst", "--format", "csv"]);
    assert!(csv.lines().any(|l| l == "redis,claim_attempts,40"), "{csv}");
}

#[test]
fn named_comparisons_run_both_designs() {
    let (code, list, _) = sim(&["--list-comparisons"]);
    assert_eq!(code, 0);
    assert!(list.lines().any(|l| l.starts_with("claim-order")), "{list}");
    let (code, out, err) = sim(&["--comparison", "claim-order"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("claim_attempts") && out.contains("8000"),
        "{out}"
    );
    assert_eq!(sim(&["--comparison", "nope"]).0, 2);
}

/// `--list-drills`: one drill a line, its name first, then its title.
#[test]
fn drills_are_listed_one_a_line() {
    let (code, out, _) = sim(&["--list-drills"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), catalogue::drill::DRILLS.len());
    for (line, d) in lines.iter().zip(catalogue::drill::DRILLS) {
        let (name, title) = line.split_once(' ').unwrap();
        assert_eq!(name, d.name);
        assert_eq!(title.trim(), d.title);
    }
}

/// `--drill NAME --solution` passes for every drill, the bare situation
/// does not, and the grade is the core's for the same link, key for key.
#[test]
fn a_drill_is_graded_as_the_core_grades_it() {
    for d in catalogue::drill::DRILLS {
        let v = json(&["--drill", d.name, "--solution"]);
        assert_eq!(v["drill"], d.name);
        assert_eq!(v["passed"], true, "{}: {v}", d.name);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["criteria", "drill", "passed", "seeds"]);
        let (grade, _) = catalogue::drill::grade_link(d, d.solution.link);
        assert_eq!(v["seeds"], serde_json::json!(grade.seeds));
        assert!(grade.seeds.len() >= 5);
        let criteria = v["criteria"].as_array().unwrap();
        assert_eq!(criteria.len(), grade.criteria.len());
        for (c, g) in criteria.iter().zip(&grade.criteria) {
            let mut keys: Vec<&String> = c.as_object().unwrap().keys().collect();
            keys.sort();
            assert_eq!(keys, ["limit", "name", "passed", "value"]);
            assert_eq!(c["name"], g.name.as_str());
            assert_eq!(c["value"].as_f64(), Some(g.value));
            assert_eq!(c["limit"].as_f64(), Some(g.limit));
            assert_eq!(c["passed"], g.passed);
        }
        let start = json(&["--drill", d.name]);
        assert_eq!(start["passed"], false, "{}", d.name);
    }
    // The solution given as a link is the same grade as --solution.
    for d in catalogue::drill::DRILLS.iter().take(3) {
        let linked = json(&["--drill", d.name, "--url", d.solution.link]);
        assert_eq!(linked, json(&["--drill", d.name, "--solution"]));
    }
    let (code, out, _) = sim(&["--drill", "claim-order", "--url", "c=inner"]);
    assert_eq!(code, 0);
    for needle in [
        "claim_attempts <= 40",
        "passed: yes",
        "seeds: 1, 2, 3, 4, 5",
    ] {
        assert!(out.contains(needle), "{needle} in\n{out}");
    }
}

/// A locked knob in the link is refused with a notice on stderr and not
/// applied; bad drill input exits 2.
#[test]
fn a_drill_refuses_locked_knobs() {
    let (code, out, err) = sim(&[
        "--drill",
        "claim-order",
        "--url",
        "?drill=claim-order&c=inner&i=1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("instances: locked in this drill"),
        "stderr: {err}"
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let attempts = v["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "claim_attempts <= 40")
        .unwrap();
    // Had one instance been taken, the attempts would be 1; they are 40.
    assert_eq!(attempts["value"], 40.0);
    for (args, needle) in [
        (vec!["--drill"], "needs a name"),
        (vec!["--drill", "nope"], "unknown drill"),
        (
            vec!["--drill", "claim-order", "--instances", "3"],
            "--drill takes",
        ),
        (
            vec!["--drill", "claim-order", "--solution", "--url", "c=off"],
            "not both",
        ),
    ] {
        let (code, _, err) = sim(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// `--fault` is repeatable and means what the link's `f=` means; a bad one
/// is refused with the kinds listed.
#[test]
fn faults_come_from_flags_as_from_links() {
    let flags = json(&[
        "--workload",
        "steady",
        "--instances",
        "4",
        "--threads",
        "10",
        "--duration-ms",
        "8000",
        "--fault",
        "redis@2000+1000",
        "--fault",
        "holder@4000",
    ]);
    let link = json(&[
        "--url",
        "w=steady&i=4&t=10&dur=8000&f=redis@2000%2B1000,holder@4000",
    ]);
    assert_eq!(flags["log_hash"], link["log_hash"]);
    assert!(flags["redis_errors"].as_u64().unwrap() > 0);
    assert_eq!(flags["scenario"]["faults"].as_array().unwrap().len(), 2);
    let (code, _, err) = sim(&["--fault", "volcano@1"]);
    assert_eq!(code, 2);
    assert!(err.contains("origin-hang"), "{err}");
}
