//! `stampede-sim`: runs one scenario and prints what happened, as a table or
//! as one JSON object (`--json`). Bad flags exit with status 2 and a message.

use std::process::ExitCode;

use catalogue::presets;
use stampede::scenario::{self, Scenario};
use stampede::sim::Fleet;
use stampede::Metric as M;

const USAGE: &str = "\
usage: stampede-sim [flags]

  --preset NAME            start from a preset (see --list-presets)
  --url LINK               start from a share link (the page's address or its
                           query): the same scenario and seed, the same notices
                           on stderr; later flags override it
  --instances N            instances in the fleet            (default 40)
  --threads N              request threads per instance      (default 200)
  --keys N                 distinct keys                     (default 1)
  --workload W             burst | steady | cold             (default burst)
  --singleflight on|off    coalesce inside each instance     (default on)
  --claim MODE             off | inner | outer | refresh     (default inner)
                           refresh: only the refresh of a stale value is claimed
  --loser POLICY           stale | wait | degrade | compute  (default wait)
  --redis-error P          open | closed                     (default open)
  --recompute-ms N         mean origin latency               (default 200)
  --origin-capacity N      concurrent recomputes before the origin slows (default 64)
  --claim-ttl-ms N         claim TTL                         (default 5000)
  --rtt-ms N               Redis round trip                  (default 1)
  --deadline-ms N          per-request deadline: ends the caller's wait,
                           never a recompute already started (default 1000)
  --origin-timeout-ms N    the origin call's own timeout; then the flight
                           settles failed and the claim is released (default 3000)
  --value-ttl-ms N         value TTL                         (default 10000)
  --jitter F               TTL jitter fraction 0..1          (default 0)
  --stale-ms N             stale window after expiry         (default 0)
  --swr                    serve stale at once, refresh behind (claim-guarded)
  --fenced-writes          claim wins take a fencing number; older writes are refused
  --xfetch-beta F          early refresh (XFetch): a reader refreshes before expiry
                           when now - delta*F*ln(rand) >= expiry; 0 = off (default 0)
  --admission N            recompute permits per instance, 0 = unlimited
  --admission-wait-ms N    queue this long for a permit, then answer degraded (default 100)
  --negative-ttl-ms N      cache failures this long, 0 = off
  --fail-rate P            probability a recompute fails
  --origin-outage-ms N     origin fails every call for the first N ms
  --hang                   the origin never answers
  --redis-down             every Redis command errors
  --holder-crash           the first claim winner dies holding the claim
  --fault KIND@START+DUR   a fault from START ms for DUR ms (+DUR left out: to the end);
                           KIND: redis | origin | origin-hang | origin-slow | holder |
                           ttl-sync (a deploy re-warms every key with one TTL) (repeatable)
  --redis-outage O         error | hang: what a down Redis does      (default error)
  --redis-timeout-ms N     the Redis client's timeout on a hang      (default 100)
  --redis-breaker-ms N     after a Redis error or timeout, stop asking Redis this long (0 = off)
  --redis-ops-per-ms N     Redis throughput; beyond it commands queue (0 = unlimited)
  --local-cache-ms N       each instance's own copy of a value read from Redis (0 = off)
  --key-skew S             Zipf skew of key popularity, cold and steady (0 = the workload's own)
  --retries N              a failed or timed-out attempt tries again, each with its own deadline
  --retry-backoff-ms N     pause before a retry: uniform up to N, doubled per attempt (default 50)
  --arrivals A             closed | open: steady traffic's arrivals  (default closed)
  --rate-per-s N           open loop: requests a second across the fleet (default 2000)
  --pitfall NAME           remember-failure | no-deadline | key-mismatch | mutable-result |
                           plain-del | no-expiry (repeatable)
                           no-deadline also removes the origin timeout; plain-del releases
                           with a DEL that checks no token; no-expiry claims with no PX
  --poll-ms N              how often waiting losers re-read  (default 50)
  --spread-ms N            burst arrival window              (default 10)
  --duration-ms N          steady traffic duration           (default 60000)
  --think-ms N             steady pause between requests     (default 1000)
  --seed S                 random seed                       (default 1)
  --json                   print one JSON object
  --format F               text | markdown | csv: the table's form (default text)
  --print-url              print the share link's query for the flags given, and exit
  --walk                   the interview mode's walk-through of one thread: each question,
                           its time and its right option, read from the run
  --level L                with --walk: narrated | faded | own (default faded)
  --follow W               with --walk: holder | office1 | office3 | a thread's number
                           (default holder)
  --compare A B            run two share links (or queries) side by side: every counter
                           that differs, the ratio, and which side is better for it
  --comparison NAME        the same for a named pair of designs (see --list-comparisons)
  --list-comparisons       list the named comparisons and exit
  --list-presets           list presets and exit
  --list-drills            list the drills, one a line: name, then title, and exit
  --drill NAME             grade a drill: its situation with the allowed knobs of
                           --url LINK applied (a locked knob is refused with a
                           notice on stderr), over its fixed seeds (the link's
                           seed is ignored); every criterion's worst value, its
                           limit and whether it passed; --json for one JSON object
  --solution               with --drill: grade the drill's worked solution
  -h, --help               this text";

/// Prints to stdout; a reader that went away (`| head`) is not an error.
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{text}");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            say(&out);
            ExitCode::SUCCESS
        }
        Err(Exit::Help) => {
            say(USAGE);
            ExitCode::SUCCESS
        }
        Err(Exit::Bad(msg)) => {
            eprintln!("stampede-sim: {msg}\n(see --help)");
            ExitCode::from(2)
        }
    }
}

/// The readable table: every Report field once, grouped by what it is about.
const TABLE: &[(&str, &[M])] = &[
    (
        "how requests ended",
        &[
            M::Requests,
            M::Hits,
            M::Computed,
            M::Shared,
            M::StaleServed,
            M::Degraded,
            M::Errors,
            M::Timeouts,
            M::Pinned,
        ],
    ),
    (
        "origin",
        &[
            M::Recomputes,
            M::Misses,
            M::EarlyRefreshes,
            M::OverlappingRecomputes,
            M::OriginFailures,
            M::OriginTimeouts,
            M::OriginPeakConcurrency,
            M::AdmissionWaits,
            M::AdmissionShed,
            M::Retries,
            M::RetryRecomputes,
            M::Rejected,
        ],
    ),
    (
        "redis",
        &[
            M::RedisRoundTrips,
            M::RedisErrors,
            M::RedisSkipped,
            M::RedisQueuePeak,
            M::LocalHits,
            M::ClaimAttempts,
            M::ClaimWins,
            M::Releases,
            M::ReleasesRefused,
            M::ReleasesRefusedExpired,
            M::ReleasesRefusedTaken,
            M::ClaimsDeletedOfOthers,
            M::Unclaims,
            M::LateClaims,
            M::LateClaimsReleased,
            M::LateClaimsHeldAtResume,
            M::ValuesWritten,
            M::StaleOverwrites,
            M::WritesRefused,
            M::NegativeHits,
        ],
    ),
    (
        "latency",
        &[M::P50Ms, M::P99Ms, M::RedisP99Ms, M::MaxMs, M::MaxWaitMs],
    ),
    (
        "damage",
        &[
            M::Corrupted,
            M::RememberedFailures,
            M::Crashed,
            M::FaultBites,
            M::Handovers,
        ],
    ),
    ("run", &[M::ElapsedMs, M::Events]),
];

enum Exit {
    Help,
    Bad(String),
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Text,
    Markdown,
    Csv,
}

/// A share link (the page's address or just its query) as a scenario and
/// seed, read as the page reads it: what it cannot use is reported on
/// stderr and clamped or ignored, never fatal.
fn link_scenario(which: &str, link: &str) -> (Scenario, u64) {
    let query = link.split_once('?').map_or(link, |(_, q)| q);
    let query = query.split('#').next().unwrap_or_default();
    // The playback speed, presenter mode, a moment, embed mode: the page's own.
    let query: Vec<&str> = query
        .split('&')
        .filter(|p| !catalogue::playlist::is_page_key(p))
        .collect();
    let (s, seed, notices) = Scenario::from_query(&query.join("&"));
    for n in notices {
        eprintln!("stampede-sim: {which}: {n}");
    }
    (s, seed)
}

/// A table as aligned text, Markdown or CSV.
fn render(format: Format, head: &[&str], rows: &[Vec<String>]) -> String {
    match format {
        Format::Csv => std::iter::once(head.join(","))
            .chain(rows.iter().map(|r| r.join(",")))
            .collect::<Vec<_>>()
            .join("\n"),
        Format::Markdown => {
            let line = |cells: Vec<&str>| format!("| {} |", cells.join(" | "));
            let mut out = vec![
                line(head.to_vec()),
                line(head.iter().map(|_| "---").collect()),
            ];
            out.extend(
                rows.iter()
                    .map(|r| line(r.iter().map(String::as_str).collect())),
            );
            out.join("\n")
        }
        Format::Text => {
            let widths: Vec<usize> = (0..head.len())
                .map(|c| {
                    rows.iter()
                        .map(|r| r[c].chars().count())
                        .chain([head[c].len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let line = |cells: Vec<&str>| {
                cells
                    .iter()
                    .zip(&widths)
                    .map(|(c, w)| format!("{c:<w$}"))
                    .collect::<Vec<_>>()
                    .join("  ")
                    .trim_end()
                    .to_string()
            };
            std::iter::once(line(head.to_vec()))
                .chain(
                    rows.iter()
                        .map(|r| line(r.iter().map(String::as_str).collect())),
                )
                .collect::<Vec<_>>()
                .join("\n")
        }
    }
}

/// Two runs side by side: every counter that differs, its ratio, and which
/// side is better for it (as the page's A/B view calls it out).
fn compare(
    (a, seed_a): (Scenario, u64),
    (b, seed_b): (Scenario, u64),
    format: Format,
    json: bool,
    subject: Option<stampede::Metric>,
) -> Result<String, Exit> {
    let ra = Fleet::new(&a, seed_a).run();
    let rb = Fleet::new(&b, seed_b).run();
    let diffs = stampede::metrics::differences(&ra, &rb);
    // A named comparison asks about one counter: the verdict says where it
    // favours the other side (as the page's A/B view does).
    let (side, verdict) = match subject {
        Some(m) => stampede::metrics::verdict_on(&ra, &rb, true, m),
        None => stampede::metrics::verdict(&ra, &rb, true),
    };
    let num = |v: f64| {
        if v.fract() == 0.0 {
            format!("{}", v as i64)
        } else {
            format!("{v}")
        }
    };
    if json {
        let d: Vec<serde_json::Value> = diffs
            .iter()
            .map(|d| {
                serde_json::json!({
                    "counter": d.metric.name(), "a": d.a, "b": d.b, "ratio": d.ratio,
                    "better": d.better.map(|c| c.to_string()),
                })
            })
            .collect();
        let v = serde_json::json!({
            "a": { "query": a.to_query(seed_a), "report": ra },
            "b": { "query": b.to_query(seed_b), "report": rb },
            "differences": d,
            "verdict": { "better": side.map(|c| c.to_string()), "sentence": verdict },
            "objective": stampede::metrics::OBJECTIVE,
        });
        return Ok(v.to_string());
    }
    let rows: Vec<Vec<String>> = diffs
        .iter()
        .map(|d| {
            vec![
                d.metric.name().to_string(),
                num(d.a),
                num(d.b),
                d.ratio.map_or_else(
                    || "—".to_string(),
                    |r| format!("×{}", (r * 1000.0).round() / 1000.0),
                ),
                d.better.map_or_else(String::new, |c| c.to_string()),
            ]
        })
        .collect();
    let head = ["counter", "A", "B", "B / A", "better"];
    let mut out = String::new();
    if format == Format::Text {
        out.push_str(&format!(
            "A: ?{}\nB: ?{}\n\n",
            a.to_query(seed_a),
            b.to_query(seed_b)
        ));
    }
    if rows.is_empty() {
        out.push_str("The two runs agree on every counter.");
    } else {
        out.push_str(&render(format, &head, &rows));
    }
    if format == Format::Text {
        out.push_str(&format!("\n\n{verdict}\n{}", stampede::metrics::OBJECTIVE));
    }
    Ok(out)
}

/// `--walk`: the interview mode's walk-through of one thread, each question
/// with its time and right option (what the page asks for the same link).
fn walk_through(
    s: &Scenario,
    seed: u64,
    level: &str,
    follow: &str,
    json: bool,
) -> Result<String, Exit> {
    use catalogue::walkthrough::{self as w, Level};
    let level = Level::parse(level).ok_or_else(|| {
        Exit::Bad(format!(
            "--level: '{}' is not narrated, faded or own",
            scenario::clip(level)
        ))
    })?;
    let who = w::who(follow, s.threads).ok_or_else(|| {
        Exit::Bad(format!(
            "--follow: '{}' is not holder, office1, office3 or a thread's number",
            scenario::clip(follow)
        ))
    })?;
    let walk = w::walk(s, seed, who, level);
    if json {
        return serde_json::to_string(&walk).map_err(|e| Exit::Bad(e.to_string()));
    }
    Ok(walk.text(s))
}

fn run(args: &[String]) -> Result<String, Exit> {
    // A preset is the base wherever it appears; other flags override it.
    let mut s = Scenario::default();
    if let Some(i) = args.iter().position(|a| a == "--preset") {
        let name = args
            .get(i + 1)
            .ok_or_else(|| Exit::Bad("--preset needs a name".into()))?;
        s = scenario::preset(name).ok_or_else(|| {
            Exit::Bad(format!(
                "unknown preset '{name}' (presets: {})",
                scenario::preset_names().join(", ")
            ))
        })?;
    }
    let format = match args.iter().position(|a| a == "--format") {
        Some(i) => match args.get(i + 1).map(String::as_str) {
            Some("text") => Format::Text,
            Some("markdown") => Format::Markdown,
            Some("csv") => Format::Csv,
            Some(other) => {
                return Err(Exit::Bad(format!(
                    "--format: '{}' is not text, markdown or csv",
                    scenario::clip(other)
                )))
            }
            None => return Err(Exit::Bad("--format needs a value".into())),
        },
        None => Format::Text,
    };
    if let Some(i) = args.iter().position(|a| a == "--comparison") {
        let name = args
            .get(i + 1)
            .ok_or_else(|| Exit::Bad("--comparison needs a name".into()))?;
        let c = presets::comparison(name).ok_or_else(|| {
            let names: Vec<&str> = presets::COMPARISONS.iter().map(|c| c.name).collect();
            Exit::Bad(format!(
                "unknown comparison '{}' (comparisons: {})",
                scenario::clip(name),
                names.join(", ")
            ))
        })?;
        let json = args.iter().any(|a| a == "--json");
        let mut out = String::new();
        if format == Format::Text && !json {
            out.push_str(&format!(
                "{}\nA: {}\nB: {}\nthe question's counter: {}\n\n",
                c.question,
                c.a_label,
                c.b_label,
                c.metric.name()
            ));
        }
        let table = compare((c.a(), 1), (c.b(), 1), format, json, Some(c.metric))?;
        if json {
            // The pair's own facts beside the two runs, as the page shows them.
            let mut v: serde_json::Value =
                serde_json::from_str(&table).map_err(|e| Exit::Bad(e.to_string()))?;
            v["name"] = c.name.into();
            v["question"] = c.question.into();
            v["metric"] = c.metric.name().into();
            v["winner"] = c.winner.to_string().into();
            return Ok(v.to_string());
        }
        out.push_str(&table);
        return Ok(out);
    }
    if let Some(i) = args.iter().position(|a| a == "--drill") {
        return drill(args, i);
    }
    if let Some(i) = args.iter().position(|a| a == "--compare") {
        let (Some(a), Some(b)) = (args.get(i + 1), args.get(i + 2)) else {
            return Err(Exit::Bad("--compare needs two links".into()));
        };
        let extra = args
            .iter()
            .enumerate()
            .filter(|(k, x)| {
                !(i..=i + 2).contains(k)
                    && *x != "--json"
                    && *x != "--format"
                    && !(k > &0 && args[k - 1] == "--format")
            })
            .map(|(_, x)| x.as_str())
            .collect::<Vec<_>>();
        if !extra.is_empty() {
            return Err(Exit::Bad(format!(
                "--compare takes two links and --format or --json, not '{}'",
                extra.join(" ")
            )));
        }
        let json = args.iter().any(|a| a == "--json");
        return compare(
            link_scenario("A", a),
            link_scenario("B", b),
            format,
            json,
            None,
        );
    }
    let mut seed = 1u64;
    if let Some(i) = args.iter().position(|a| a == "--url") {
        let link = args
            .get(i + 1)
            .ok_or_else(|| Exit::Bad("--url needs a link".into()))?;
        (s, seed) = link_scenario("the link", link);
    }
    let mut json = false;
    let mut print_url = false;
    let mut walk: Option<(String, String)> = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| Exit::Bad(format!("{name} needs a value")))
        };
        match flag.as_str() {
            "-h" | "--help" => return Err(Exit::Help),
            "--list-comparisons" => {
                let lines: Vec<String> = presets::COMPARISONS
                    .iter()
                    .map(|c| format!("{:<14} {}", c.name, c.question))
                    .collect();
                return Ok(lines.join("\n"));
            }
            "--list-drills" => {
                let lines: Vec<String> = catalogue::drill::DRILLS
                    .iter()
                    .map(|d| format!("{:<22} {}", d.name, d.title))
                    .collect();
                return Ok(lines.join("\n"));
            }
            "--list-presets" => {
                let lines: Vec<String> = presets::PRESETS
                    .iter()
                    .map(|p| format!("{:<14} {}", p.name, p.row.words))
                    .collect();
                return Ok(lines.join("\n"));
            }
            "--preset" => {
                value("--preset")?;
            }
            "--url" => {
                value("--url")?;
            }
            "--format" => {
                value("--format")?;
            }
            "--print-url" => print_url = true,
            "--json" => json = true,
            "--walk" => {
                walk.get_or_insert(("faded".into(), "holder".into()));
            }
            "--level" => {
                let v = value("--level")?;
                walk.get_or_insert(("faded".into(), "holder".into())).0 = v;
            }
            "--follow" => {
                let v = value("--follow")?;
                walk.get_or_insert(("faded".into(), "holder".into())).1 = v;
            }
            "--seed" => {
                let v = value("--seed")?;
                seed = v
                    .parse()
                    .map_err(|_| Exit::Bad(format!("--seed: '{v}' is not a whole number")))?;
            }
            f => {
                let got = s.apply_flag(f, || {
                    value(f).map_err(|e| match e {
                        Exit::Bad(m) => m,
                        Exit::Help => String::new(),
                    })
                });
                match got {
                    Some(r) => r.map_err(Exit::Bad)?,
                    None if f.starts_with("--") => {
                        return Err(Exit::Bad(format!("unknown flag '{f}'")))
                    }
                    None => return Err(Exit::Bad(format!("unexpected argument '{f}'"))),
                }
            }
        }
    }
    // Out-of-range values are an error on the command line (the page clamps).
    let s = s.validated().map_err(|notices| {
        Exit::Bad(
            notices
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        )
    })?;
    if print_url {
        return Ok(format!("?{}", s.to_query(seed)));
    }
    if let Some((level, follow)) = walk {
        return walk_through(&s, seed, &level, &follow, json);
    }
    let mut fleet = Fleet::new(&s, seed);
    let report = fleet.run();
    // The lesson, as the page words it for the same link: made from the
    // closest preset, against that preset's own run when no lesson fits.
    let base = scenario::closest_preset(&s);
    let then = catalogue::lesson::contrast(&s, base).map(|c| Fleet::new(&c, seed).run());
    let lesson = catalogue::lesson::lesson(&s, base, &report, true, then.as_ref());
    if format != Format::Text {
        let rows: Vec<Vec<String>> = TABLE
            .iter()
            .flat_map(|(group, names)| names.iter().map(move |n| (group, n)))
            .map(|(group, m)| vec![group.to_string(), m.name().to_string(), report.text(*m)])
            .collect();
        return Ok(render(format, &["group", "counter", "value"], &rows));
    }
    if json {
        let mut v = serde_json::to_value(&report).map_err(|e| Exit::Bad(e.to_string()))?;
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("seed".into(), seed.into());
            m.insert(
                "log_hash".into(),
                format!("{:016x}", fleet.log_hash()).into(),
            );
            m.insert(
                "scenario".into(),
                serde_json::to_value(&s).map_err(|e| Exit::Bad(e.to_string()))?,
            );
            let mut l = serde_json::json!({
                "name": lesson.name,
                "metric": lesson.metric,
                "value": lesson.value,
                "sentence": lesson.sentence,
            });
            if let Some(n) = &lesson.needs {
                l["needs"] = serde_json::json!({ "text": n.text, "link": n.link });
            }
            m.insert("lesson".into(), l);
        }
        return Ok(v.to_string());
    }
    let mut out = format!(
        "{} instances x {} threads, {} keys, {:?} workload, singleflight {}, claim {:?}, losers {:?}, seed {seed}\n",
        s.instances,
        s.threads,
        s.keys,
        s.workload,
        if s.singleflight { "on" } else { "off" },
        s.claim,
        s.loser
    );
    out.push_str(&format!("\n  lesson  {}\n", lesson.sentence));
    if let Some(n) = &lesson.needs {
        out.push_str(&format!("          {} (?{})\n", n.text, n.link));
    }
    let naive = s.instances as u64 * s.threads as u64;
    out.push_str(&format!(
        "\n  {:<28} {naive}\n  {:<28} {}\n",
        "naive (instances x threads)", "measured recomputes", report.recomputes
    ));
    for (title, metrics) in TABLE {
        out.push_str(&format!("\n  {title}\n"));
        for m in *metrics {
            out.push_str(&format!("    {:<26} {}\n", m.name(), report.text(*m)));
        }
    }
    out.push_str("\n  ledger   how each request ended/why\n");
    for (end, cause, n) in report.ledger.rows() {
        let cell = format!("{}/{}", end.name(), cause.name());
        out.push_str(&format!("    {cell:<26} {n}\n"));
    }
    out.push_str("\n  fault_acts   what each fault window did\n");
    if s.faults.is_empty() {
        out.push_str("    (the scenario lists no fault)\n");
    }
    {
        for (f, a) in s.faults.iter().zip(&report.fault_acts) {
            // The lessons' own words for what a window did.
            let did = catalogue::lesson::fault_acts_words_in(&s, a);
            let did = if did.is_empty() {
                "nothing".into()
            } else {
                did
            };
            let f = stampede::scenario::fault_text(f);
            out.push_str(&format!("    {f:<26} {did}\n"));
        }
    }
    out.push_str(&format!(
        "\n    {:<26} {:016x}",
        "log_hash",
        fleet.log_hash()
    ));
    Ok(out)
}

/// `--drill NAME [--url LINK | --solution] [--json]`: the learner's
/// scenario (the drill's situation with the link's allowed knobs), graded
/// on the drill's seeds as the page grades it.
fn drill(args: &[String], i: usize) -> Result<String, Exit> {
    use catalogue::drill;
    let names = || {
        drill::DRILLS
            .iter()
            .map(|d| d.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let name = args
        .get(i + 1)
        .filter(|n| !n.starts_with("--"))
        .ok_or_else(|| Exit::Bad(format!("--drill needs a name (drills: {})", names())))?;
    let d = drill::drill(name).ok_or_else(|| {
        Exit::Bad(format!(
            "unknown drill '{}' (drills: {})",
            scenario::clip(name),
            names()
        ))
    })?;
    let mut link: Option<&str> = None;
    let (mut json, mut solution) = (false, false);
    let mut k = 0;
    while k < args.len() {
        match args[k].as_str() {
            _ if k == i || k == i + 1 => {}
            "--json" => json = true,
            "--solution" => solution = true,
            "--url" => {
                k += 1;
                link = Some(
                    args.get(k)
                        .ok_or_else(|| Exit::Bad("--url needs a link".into()))?,
                );
            }
            other => {
                return Err(Exit::Bad(format!(
                    "--drill takes --url LINK, --solution and --json, not '{}'",
                    scenario::clip(other)
                )))
            }
        }
        k += 1;
    }
    if solution && link.is_some() {
        return Err(Exit::Bad(
            "--drill takes --url or --solution, not both".into(),
        ));
    }
    let link = if solution {
        d.solution.link
    } else {
        link.unwrap_or("")
    };
    let (grade, notices) = drill::grade_link(d, link);
    for n in &notices {
        eprintln!("stampede-sim: the link: {n}");
    }
    if json {
        let criteria: Vec<serde_json::Value> = grade
            .criteria
            .iter()
            .map(|c| {
                serde_json::json!({
                    "name": c.name, "value": c.value, "limit": c.limit, "passed": c.passed,
                })
            })
            .collect();
        let v = serde_json::json!({
            "drill": d.name,
            "criteria": criteria,
            "passed": grade.passed,
            "seeds": grade.seeds,
        });
        return Ok(v.to_string());
    }
    let (s, _) = drill::apply(d, link);
    let yes = |b: bool| if b { "yes" } else { "no" }.to_string();
    let rows: Vec<Vec<String>> = grade
        .criteria
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                stampede::decimal::format(c.value),
                stampede::decimal::format(c.limit),
                // A bound on answering time speaks of every caller: the
                // value leaves out those never answered, so say them.
                match c.never_answered {
                    0 => yes(c.passed),
                    n => format!("no: {n} never answered"),
                },
            ]
        })
        .collect();
    let seeds: Vec<String> = grade.seeds.iter().map(u64::to_string).collect();
    Ok(format!(
        "drill {} ({}): {}\n{}\nlink: ?{}\nseeds: {} (a criterion passes only on every seed; its value is the worst)\n\n{}\n\npassed: {}",
        d.name,
        d.level.difficulty(),
        d.title,
        d.story.words,
        d.link(&s),
        seeds.join(", "),
        render(Format::Text, &["criterion", "value", "limit", "passed"], &rows),
        yes(grade.passed)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table shows every counter of the report exactly once.
    #[test]
    fn the_table_lists_every_counter_once() {
        let mut listed: Vec<M> = TABLE
            .iter()
            .flat_map(|(_, ms)| ms.iter().copied())
            .collect();
        listed.sort_unstable();
        let mut all = M::ALL.to_vec();
        all.sort_unstable();
        assert_eq!(listed, all);
    }
}
