//! `stampede-fleet`: runs a scenario for real, instances x threads of tokio
//! tasks against a real Redis, and prints the counts in the simulation's
//! names; `--compare` sets them beside `stampede-sim`'s for the same
//! scenario. Bursts, cold starts and steady traffic; a single Redis or a
//! Redis Cluster.

use std::process::ExitCode;

use stampede::scenario::{self, Scenario};
use stampede::sim::Fleet;
use stampede_fleet::fleet::{self, compare, EXACT};
use stampede_redis::Target;

const USAGE: &str = "\
usage: stampede-fleet [flags]

  --preset NAME       start from a preset (any of stampede-sim's: bursts, cold,
                      steady traffic; redis-down and holder-crash are injected
                      for real)
  --url LINK          start from a share link (the page's address or its query)
  --instances N       instances (each its own flight table and connection)
  --threads N         tasks per instance
  --keys N            keys (cold and steady)
  --duration-ms N     how long steady traffic runs
  --singleflight on|off, --claim MODE, --loser POLICY, --redis-error P,
  --workload W, --jitter F, --fail-rate P, --xfetch-beta F, --recompute-ms N,
  --deadline-ms N, ... every knob flag of stampede-sim, with its values
  --swr, --fenced-writes, --hang, --redis-down, --holder-crash
                      stampede-sim's switches (redis-down and holder-crash
                      are injected for real)
  --redis-outage error|hang, --redis-timeout-ms N, --redis-breaker-ms N
                      a down Redis refuses (a proxy cutting connections) or
                      hangs (the proxy holding them and every byte, passed
                      on in order when a hang window ends); the client's
                      timeout on each command; the breaker that skips
                      Redis after a failure
  --retries N, --retry-backoff-ms N
                      a failed or timed-out attempt tried again after a
                      full-jitter pause, with a deadline of its own
  --fault KIND@START+DURATION
                      redis (through the proxy), origin, origin-hang,
                      origin-slow, holder, ttl-sync (every key re-warmed
                      with one TTL), on the run's clock (repeatable)
  --key-skew S        Zipf-skewed keys for cold and steady traffic
  --local-cache-ms N  each instance's local copy of a fresh value
  --arrivals open, --rate-per-s N
                      open-loop steady traffic: each instance's threads a
                      pool, an accept queue, requests turned away
                      Refused, naming the knob: --redis-ops-per-ms (a real
                      Redis has its own throughput); a Redis fault on a
                      cluster
  --pitfall NAME      remember-failure | no-deadline | key-mismatch |
                      mutable-result | plain-del | no-expiry (repeatable)
  --seed S            the simulation's seed for --compare (default 1)
  --set KNOB=VALUE    any knob by its long name (repeatable)
  --redis URL         the Redis to use (default redis://127.0.0.1:6379); several
                      URLs separated by commas are a Redis Cluster's nodes
  --cluster           read --redis as a cluster even if it names one node
  --json              print one JSON object
  --compare           run the simulation too and print both, with which
                      counters must agree and how closely (the conformance
                      table's tolerance for the preset; exact recomputes and
                      claims for other bursts) and which may differ by real
                      timing (hits vs shared, latencies)
  --conformance       run every preset of the conformance table (sized for a
                      2-core machine) for real and in the simulation, print
                      data/conformance.tsv's content, and fail if a metric is
                      outside its tolerance
  -h, --help          this text";

fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{text}");
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args).await {
        Ok(out) => {
            say(&out);
            ExitCode::SUCCESS
        }
        Err(msg) if msg == "help" => {
            say(USAGE);
            ExitCode::SUCCESS
        }
        Err(msg) => {
            eprintln!("stampede-fleet: {msg}\n(see --help)");
            ExitCode::from(2)
        }
    }
}

async fn run(args: &[String]) -> Result<String, String> {
    let mut s = Scenario::default();
    let mut seed = 1;
    let mut redis = "redis://127.0.0.1:6379".to_string();
    let (mut json, mut both, mut cluster, mut table) = (false, false, false, false);
    let mut preset_name: Option<String> = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Err("help".into()),
            "--preset" => {
                let name = value()?;
                s = scenario::preset(&name)
                    .ok_or(format!("unknown preset '{}'", scenario::clip(&name)))?;
                preset_name = Some(name);
            }
            "--url" => {
                let link = value()?;
                let query = link.split_once('?').map_or(link.as_str(), |(_, q)| q);
                let (from, sd, notices) = Scenario::from_query(query);
                for n in notices {
                    eprintln!("stampede-fleet: the link: {n}");
                }
                (s, seed) = (from, sd);
            }
            "--seed" => {
                let v = value()?;
                seed = v.parse().map_err(|_| {
                    format!("--seed: '{}' is not a whole number", scenario::clip(&v))
                })?;
            }
            "--set" => {
                let kv = value()?;
                let (k, v) = kv.split_once('=').ok_or(format!(
                    "--set wants KNOB=VALUE, not '{}'",
                    scenario::clip(&kv)
                ))?;
                s.set(k, v).map_err(|e| format!("--set {k}: {e}"))?;
            }
            "--redis" => redis = value()?,
            "--json" => json = true,
            "--compare" => both = true,
            "--cluster" => cluster = true,
            "--conformance" => table = true,
            // Every scenario flag of stampede-sim, parsed by the core as
            // stampede-sim parses it.
            f => match s.apply_flag(f, value) {
                Some(r) => r?,
                None => return Err(format!("unknown flag '{}'", scenario::clip(f))),
            },
        }
    }
    let s = s.validated().map_err(|n| {
        n.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    let target = if cluster {
        Target::cluster(&redis)
    } else {
        Target::parse(&redis)
    };
    if table {
        return conformance(&target).await;
    }
    let real = fleet::run(target, &s).await?;
    if !both {
        return if json {
            serde_json::to_string(&real).map_err(|e| e.to_string())
        } else {
            Ok(real
                .fields()
                .into_iter()
                .filter(|(_, v)| v != "0" && v != "0.0")
                .map(|(k, v)| format!("{k:<22} {v}"))
                .collect::<Vec<_>>()
                .join("\n"))
        };
    }
    let sim = Fleet::new(&s, seed).run();
    let rows = compare(&sim, &real);
    // What must agree, and how closely: the conformance table's row for
    // this preset if it has one (at its size there; the tolerance is a
    // guide at another size), else the burst's exact counters for a burst.
    let check = preset_name
        .as_deref()
        .and_then(|n| fleet::checks().into_iter().find(|c| c.preset == n));
    let must: Vec<(stampede::Metric, fleet::Tolerance)> = match &check {
        Some(c) => c.metrics.clone(),
        None if s.workload == stampede::scenario::Workload::Burst => EXACT
            .iter()
            .map(|&m| (m, fleet::Tolerance::EXACT))
            .collect(),
        None => Vec::new(),
    };
    let mut out = format!("{:<24} {:>8} {:>8}  must agree\n", "counter", "sim", "real");
    for (k, a, b) in rows {
        let mark = match must.iter().find(|(m, _)| *m == k) {
            Some((_, t)) => {
                let (x, y) = (a.parse().unwrap_or(0.0), b.parse().unwrap_or(0.0));
                match (t.allows(x, y), *t == fleet::Tolerance::EXACT) {
                    (true, true) => "yes, agrees".to_string(),
                    (false, true) => "yes, DIFFERS".to_string(),
                    (true, false) => format!("within {}", t.describe()),
                    (false, false) => format!("OUTSIDE {}", t.describe()),
                }
            }
            None => "no (timing)".to_string(),
        };
        out.push_str(&format!("{:<24} {a:>8} {b:>8}  {mark}\n", k.name()));
    }
    Ok(out.trim_end().to_string())
}

/// The conformance table: every check's preset run for real and simulated
/// (seed 1), one row per metric.
async fn conformance(target: &Target) -> Result<String, String> {
    let version = redis_version(target).await?;
    let mut out = format!(
        "# date: {}\n# redis: {version}\n# tolerance: {}\n",
        today(),
        fleet::TOLERANCE_NOTE
    );
    let mut rows = String::from("preset\tmetric\tsim\treal\ttolerance\n");
    let mut outside = Vec::new();
    for c in fleet::checks() {
        let s = c
            .scenario
            .validated()
            .map_err(|n| format!("{}: {n:?}", c.preset))?;
        if fleet::redis_faulted(&s) && target.is_cluster() {
            // The outage is a proxy in front of one server.
            out.push_str(&format!(
                "# skipped: {} (an outage is not injected into a cluster)\n",
                c.preset
            ));
            continue;
        }
        out.push_str(&format!("# scenario: {} {}\n", c.preset, s.to_query(1)));
        let sim = Fleet::new(&s, 1).run();
        let started = std::time::Instant::now();
        let real = fleet::run_measured(target.clone(), &s).await?;
        eprintln!(
            "stampede-fleet: {} ran in {:.1} s",
            c.preset,
            started.elapsed().as_secs_f64()
        );
        // Judged on the arrival window the real run really had, as the
        // fleet's tests judge it (`fleet::judge`): a loaded machine's late
        // arrivals find the flight over and recompute. The row keeps the
        // nominal simulation; the window and the simulation on it go in a
        // comment when they differ.
        let judged = fleet::judge(&c.metrics, &s, &sim, &real);
        if judged.on_window.is_some() {
            let on_window: Vec<String> = judged
                .rows
                .iter()
                .map(|j| format!("{} {}", j.metric.name(), j.sim_on_window))
                .collect();
            out.push_str(&format!(
                "# arrivals: {} {:.1} ms against a {} ms spread; simulated on that window: {}\n",
                c.preset,
                real.arrivals_ms,
                s.spread_ms,
                on_window.join(", ")
            ));
        }
        for j in &judged.rows {
            let (m, x, y, tol) = (j.metric.name(), j.sim, j.real, j.tolerance);
            rows.push_str(&format!(
                "{}\t{m}\t{x}\t{y}\t{}\n",
                c.preset,
                tol.describe()
            ));
            if !j.agrees() {
                outside.push(format!(
                    "{} {m}: sim {x} ({} on the real arrival window of {} ms), real {y}, {}",
                    c.preset,
                    j.sim_on_window,
                    judged.window_ms,
                    tol.describe()
                ));
            }
        }
    }
    out.push_str(&rows);
    if outside.is_empty() {
        Ok(out.trim_end().to_string())
    } else {
        eprintln!("{out}");
        Err(format!("outside the tolerance: {}", outside.join("; ")))
    }
}

async fn redis_version(target: &Target) -> Result<String, String> {
    let url = match target {
        Target::Single(u) => u.clone(),
        Target::Cluster(us) => us.first().cloned().unwrap_or_default(),
    };
    let client = redis::Client::open(url.as_str()).map_err(|e| e.to_string())?;
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(&mut con)
        .await
        .map_err(|e| e.to_string())?;
    let v = info
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    Ok(if target.is_cluster() {
        format!("{v} (cluster)")
    } else {
        v
    })
}

/// Today's date (UTC) as YYYY-MM-DD, from the days since 1970 (Howard
/// Hinnant's civil-from-days).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
