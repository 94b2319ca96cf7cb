//! `stampede-fleet`: runs a scenario for real, instances x threads of tokio
//! tasks against a real Redis, and prints the counts in the simulation's
//! names; `--compare` sets them beside `stampede-sim`'s for the same
//! scenario. Bursts, cold starts and steady traffic; a single Redis or a
//! Redis Cluster.

use std::process::ExitCode;

use stampede::scenario::{self, Scenario};
use stampede::sim::Fleet;
use stampede_redis::fleet::{self, compare, EXACT};
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
  --redis URL         the Redis to use (default redis://127.0.0.1:6379); several
                      URLs separated by commas are a Redis Cluster's nodes
  --cluster           read --redis as a cluster even if it names one node
  --json              print one JSON object
  --compare           run the simulation too and print both, with which
                      counters must agree exactly (recomputes, claims) and
                      which may differ by real timing (polls, hits vs shared)
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
    let (mut json, mut both, mut cluster) = (false, false, false);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Err("help".into()),
            "--preset" => {
                let name = value()?;
                s = scenario::preset(&name)
                    .ok_or(format!("unknown preset '{}'", scenario::clip(&name)))?;
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
            "--instances" | "--threads" | "--keys" | "--duration-ms" => {
                let knob = flag[2..].replace('-', "_");
                let knob = knob.as_str();
                s.set(knob, &value()?).map_err(|e| format!("{flag}: {e}"))?;
            }
            "--redis" => redis = value()?,
            "--json" => json = true,
            "--compare" => both = true,
            "--cluster" => cluster = true,
            other => return Err(format!("unknown flag '{}'", scenario::clip(other))),
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
    let mut out = format!("{:<18} {:>8} {:>8}  must agree\n", "counter", "sim", "real");
    for (k, a, b) in rows {
        let exact = EXACT.contains(&k.as_str());
        let mark = match (exact, a == b) {
            (true, true) => "yes, agrees",
            (true, false) => "yes, DIFFERS",
            (false, _) => "no (timing)",
        };
        out.push_str(&format!("{k:<18} {a:>8} {b:>8}  {mark}\n"));
    }
    Ok(out.trim_end().to_string())
}
