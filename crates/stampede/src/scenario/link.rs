//! The compact share-link form: every knob by its long and short name, read
//! and written as text, and the parsers the URL and the CLI share.

use super::*;

/// Short URL keys for every knob, in the order they are written.
const URL_KEYS: [(&str, &str); 44] = [
    ("i", "instances"),
    ("t", "threads"),
    ("k", "keys"),
    ("w", "workload"),
    ("sf", "singleflight"),
    ("c", "claim"),
    ("l", "loser"),
    ("re", "redis_error"),
    ("rc", "recompute_ms"),
    ("cap", "origin_capacity"),
    ("ct", "claim_ttl_ms"),
    ("rtt", "rtt_ms"),
    ("dl", "deadline_ms"),
    ("ot", "origin_timeout_ms"),
    ("vt", "value_ttl_ms"),
    ("j", "jitter"),
    ("st", "stale_ms"),
    ("swr", "stale_while_revalidate"),
    ("xfetch_beta", "xfetch_beta"),
    ("fw", "fenced_writes"),
    ("adm", "admission"),
    ("aw", "admission_wait_ms"),
    ("nt", "negative_ttl_ms"),
    ("fr", "fail_rate"),
    ("oo", "origin_outage_ms"),
    ("hang", "hang"),
    ("rd", "redis_down"),
    ("hc", "holder_crash"),
    ("ro", "redis_outage"),
    ("rto", "redis_timeout_ms"),
    ("rbk", "redis_breaker_ms"),
    ("rops", "redis_ops_per_ms"),
    ("l1", "local_cache_ms"),
    ("zs", "key_skew"),
    ("f", "faults"),
    ("rt", "retries"),
    ("rbo", "retry_backoff_ms"),
    ("arr", "arrivals"),
    ("rps", "rate_per_s"),
    ("pf", "pitfalls"),
    ("poll", "poll_ms"),
    ("sp", "spread_ms"),
    ("dur", "duration_ms"),
    ("th", "think_ms"),
];

/// The long name of every knob, in URL order: what [`Scenario::set`] and
/// [`Scenario::get`] accept.
pub fn knob_names() -> impl Iterator<Item = &'static str> {
    URL_KEYS.iter().map(|(_, long)| *long)
}

fn workload_name(w: Workload) -> &'static str {
    match w {
        Workload::Burst => "burst",
        Workload::Steady => "steady",
        Workload::Cold => "cold",
    }
}
fn claim_name(c: ClaimMode) -> &'static str {
    match c {
        ClaimMode::Off => "off",
        ClaimMode::Inner => "inner",
        ClaimMode::Outer => "outer",
        ClaimMode::Refresh => "refresh",
    }
}
fn loser_name(l: LoserPolicy) -> &'static str {
    match l {
        LoserPolicy::Stale => "stale",
        LoserPolicy::Wait => "wait",
        LoserPolicy::Degrade => "degrade",
        LoserPolicy::Compute => "compute",
    }
}
fn redis_outage_name(r: RedisOutage) -> &'static str {
    match r {
        RedisOutage::Error => "error",
        RedisOutage::Hang => "hang",
    }
}
fn redis_error_name(r: RedisErrorPolicy) -> &'static str {
    match r {
        RedisErrorPolicy::Open => "open",
        RedisErrorPolicy::Closed => "closed",
    }
}

pub fn parse_workload(s: &str) -> Result<Workload, String> {
    match s {
        "burst" => Ok(Workload::Burst),
        "steady" => Ok(Workload::Steady),
        "cold" => Ok(Workload::Cold),
        _ => Err(format!("'{}' is not burst, steady or cold", clip(s))),
    }
}
pub fn parse_claim(s: &str) -> Result<ClaimMode, String> {
    match s {
        "off" => Ok(ClaimMode::Off),
        "inner" => Ok(ClaimMode::Inner),
        "outer" => Ok(ClaimMode::Outer),
        "refresh" => Ok(ClaimMode::Refresh),
        _ => Err(format!("'{}' is not off, inner, outer or refresh", clip(s))),
    }
}
pub fn parse_loser(s: &str) -> Result<LoserPolicy, String> {
    match s {
        "stale" => Ok(LoserPolicy::Stale),
        "wait" => Ok(LoserPolicy::Wait),
        "degrade" => Ok(LoserPolicy::Degrade),
        "compute" => Ok(LoserPolicy::Compute),
        _ => Err(format!(
            "'{}' is not stale, wait, degrade or compute",
            clip(s)
        )),
    }
}
pub fn parse_redis_error(s: &str) -> Result<RedisErrorPolicy, String> {
    match s {
        "open" => Ok(RedisErrorPolicy::Open),
        "closed" => Ok(RedisErrorPolicy::Closed),
        _ => Err(format!("'{}' is not open or closed", clip(s))),
    }
}
pub fn parse_redis_outage(s: &str) -> Result<RedisOutage, String> {
    match s {
        "error" => Ok(RedisOutage::Error),
        "hang" => Ok(RedisOutage::Hang),
        _ => Err(format!("'{}' is not error or hang", clip(s))),
    }
}
/// One fault as a link writes it: `redis@2000+3000`, `holder@5000`.
pub fn fault_text(f: &Fault) -> String {
    match f.duration_ms {
        Some(d) => format!("{}@{}+{d}", f.kind.name(), f.start_ms),
        None => format!("{}@{}", f.kind.name(), f.start_ms),
    }
}

/// `KIND@START+DURATION`, `+DURATION` left out for "to the end".
pub fn parse_fault(s: &str) -> Result<Fault, String> {
    let t = s.trim();
    let bad = || {
        format!(
            "'{}' is not a fault such as redis@2000+3000 (kinds: {})",
            clip(t),
            FaultKind::ALL.map(FaultKind::name).join(", ")
        )
    };
    let (kind, when) = t.split_once('@').ok_or_else(bad)?;
    let kind = FaultKind::from_name(kind.trim()).ok_or_else(bad)?;
    let (start, duration) = match when.split_once('+') {
        Some((a, b)) => (a, Some(b)),
        None => (when, None),
    };
    let number = |v: &str| parse_u32(v).map_err(|_| bad());
    Ok(Fault {
        kind,
        start_ms: number(start)?,
        duration_ms: duration.map(number).transpose()?,
    })
}

/// Faults separated by commas (or spaces: a `+` in a link reads as one).
pub fn parse_faults(s: &str) -> Result<Vec<Fault>, String> {
    // In a query a `+` decodes as a space: `redis@2000 3000` is `+3000`.
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let part = match part.split_once(' ') {
            Some((a, b)) => format!("{a}+{}", b.trim()),
            None => part.to_string(),
        };
        out.push(parse_fault(&part)?);
    }
    Ok(out)
}

pub fn parse_arrivals(s: &str) -> Result<Arrivals, String> {
    match s {
        "closed" => Ok(Arrivals::Closed),
        "open" => Ok(Arrivals::Open),
        _ => Err(format!("'{}' is not closed or open", clip(s))),
    }
}

pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "on" | "true" | "yes" => Ok(true),
        "0" | "off" | "false" | "no" => Ok(false),
        _ => Err(format!("'{}' is not on or off", clip(s))),
    }
}
pub fn parse_u32(s: &str) -> Result<u32, String> {
    let t = s.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{}' is not a whole number", clip(s)));
    }
    // Saturate rather than reject: a huge number is a clamping matter.
    Ok(t.parse::<u64>()
        .map_or(u32::MAX, |v| v.min(u32::MAX as u64) as u32))
}
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    crate::decimal::parse(s)
        .ok_or_else(|| format!("'{}' is not a decimal number such as 0.25", clip(s)))
}

/// Shortens untrusted text (from a URL or a flag) before it goes into a
/// message: control characters dropped, at most 24 characters kept.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().filter(|c| !c.is_control()).take(24).collect();
    if s.chars().count() > 24 {
        out.push('…');
    }
    out
}

impl Scenario {
    /// Sets one knob by its long name from text; used by the URL and the CLI.
    pub fn set(&mut self, knob: &str, value: &str) -> Result<(), String> {
        match knob {
            "workload" => self.workload = parse_workload(value)?,
            "singleflight" => self.singleflight = parse_bool(value)?,
            "claim" => self.claim = parse_claim(value)?,
            "loser" => self.loser = parse_loser(value)?,
            "redis_error" => self.redis_error = parse_redis_error(value)?,
            "redis_outage" => self.redis_outage = parse_redis_outage(value)?,
            "key_skew" => self.key_skew = parse_fraction(value)?,
            "faults" => self.faults = parse_faults(value)?,
            "arrivals" => self.arrivals = parse_arrivals(value)?,
            "jitter" => self.jitter = parse_fraction(value)?,
            "fail_rate" => self.fail_rate = parse_fraction(value)?,
            "xfetch_beta" => self.xfetch_beta = parse_fraction(value)?,
            "stale_while_revalidate" => self.stale_while_revalidate = parse_bool(value)?,
            "fenced_writes" => self.fenced_writes = parse_bool(value)?,
            "hang" => self.hang = parse_bool(value)?,
            "redis_down" => self.redis_down = parse_bool(value)?,
            "holder_crash" => self.holder_crash = parse_bool(value)?,
            "pitfalls" => {
                let mut p = Pitfalls::default();
                for name in value.split(['.', ',']).filter(|s| !s.is_empty()) {
                    p.enable(name).map_err(|_| {
                        format!(
                            "'{}' is not a pitfall ({})",
                            clip(name),
                            Pitfalls::NAMES.join(", ")
                        )
                    })?;
                }
                self.pitfalls = p;
            }
            other => {
                let v = parse_u32(value)?;
                match self.u32_field(other) {
                    Some(f) => *f = v,
                    None => return Err(format!("unknown knob '{}'", clip(other))),
                }
            }
        }
        Ok(())
    }

    /// A command-line flag that sets the scenario, as `stampede-sim` and
    /// `stampede-fleet` both take them: the switches (`--hang`), `--pitfall
    /// NAME` and `--fault SPEC` (repeatable), and every knob by its name
    /// (`--claim-ttl-ms 100`). `value` is asked only by a flag that takes
    /// one. `None`: not a scenario flag.
    pub fn apply_flag(
        &mut self,
        flag: &str,
        value: impl FnOnce() -> Result<String, String>,
    ) -> Option<Result<(), String>> {
        let on = |field: &mut bool| {
            *field = true;
            Ok(())
        };
        Some(match flag {
            "--swr" => on(&mut self.stale_while_revalidate),
            "--fenced-writes" => on(&mut self.fenced_writes),
            "--hang" => on(&mut self.hang),
            "--redis-down" => on(&mut self.redis_down),
            "--holder-crash" => on(&mut self.holder_crash),
            "--pitfall" => value().and_then(|v| {
                self.pitfalls
                    .enable(&v)
                    .map_err(|e| format!("--pitfall: {e}"))
            }),
            "--fault" => value().and_then(|v| {
                let f = parse_fault(&v).map_err(|e| format!("--fault: {e}"))?;
                self.faults.push(f);
                Ok(())
            }),
            f => {
                let knob = f.strip_prefix("--")?.replace('-', "_");
                // Pitfalls come one at a time through --pitfall.
                if knob == "pitfalls" || !knob_names().any(|k| k == knob) {
                    return None;
                }
                value().and_then(|v| self.set(&knob, &v).map_err(|e| format!("{f}: {e}")))
            }
        })
    }

    /// The knob's value as text, in the form [`Scenario::set`] accepts.
    pub fn get(&self, knob: &str) -> Option<String> {
        let mut me = self.clone();
        Some(match knob {
            "workload" => workload_name(self.workload).into(),
            "singleflight" => (self.singleflight as u8).to_string(),
            "claim" => claim_name(self.claim).into(),
            "loser" => loser_name(self.loser).into(),
            "redis_error" => redis_error_name(self.redis_error).into(),
            "redis_outage" => redis_outage_name(self.redis_outage).into(),
            "key_skew" => fmt_f64(self.key_skew),
            "arrivals" => match self.arrivals {
                Arrivals::Closed => "closed".into(),
                Arrivals::Open => "open".into(),
            },
            "faults" => self
                .faults
                .iter()
                .map(fault_text)
                .collect::<Vec<_>>()
                .join(","),
            "jitter" => fmt_f64(self.jitter),
            "fail_rate" => fmt_f64(self.fail_rate),
            "xfetch_beta" => fmt_f64(self.xfetch_beta),
            "stale_while_revalidate" => (self.stale_while_revalidate as u8).to_string(),
            "fenced_writes" => (self.fenced_writes as u8).to_string(),
            "hang" => (self.hang as u8).to_string(),
            "redis_down" => (self.redis_down as u8).to_string(),
            "holder_crash" => (self.holder_crash as u8).to_string(),
            "pitfalls" => self.pitfalls.enabled().join("."),
            other => me.u32_field(other).map(|v| v.to_string())?,
        })
    }

    /// The compact query string: only knobs that differ from the default,
    /// plus the seed. `Scenario::from_query(s.to_query(seed))` gives `s` back.
    pub fn to_query(&self, seed: u64) -> String {
        let base = Scenario::default();
        let mut parts = Vec::new();
        for (short, long) in URL_KEYS {
            let v = self.get(long).unwrap_or_default();
            if base.get(long).as_deref() != Some(v.as_str()) {
                parts.push(format!("{short}={v}"));
            }
        }
        parts.push(format!("seed={seed}"));
        parts.join("&")
    }

    /// Parses a query string (with or without the leading `?`). Never fails:
    /// what it cannot use it ignores, what is out of range it clamps, and it
    /// says so in the notices. Unknown keys are reported, not fatal.
    pub fn from_query(query: &str) -> (Scenario, u64, Vec<Notice>) {
        let mut s = Scenario::default();
        let mut seed = 1u64;
        let mut notices = Vec::new();
        let q = query.strip_prefix('?').unwrap_or(query);
        if q.len() > MAX_QUERY_LEN {
            notices.push(Notice::new(
                "url",
                format!(
                    "the link is {} characters long (more than {MAX_QUERY_LEN}); ignored it and used the defaults",
                    q.len()
                ),
            ));
            return (s, seed, notices);
        }
        // A preset sets the base; other keys then override it.
        let pairs: Vec<(String, String)> = q
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        if let Some((_, name)) = pairs.iter().find(|(k, _)| k == "preset") {
            match preset(name) {
                Some(p) => s = p,
                None => notices.push(Notice::new(
                    "preset",
                    format!("'{}' is not a preset; using the defaults", clip(name)),
                )),
            }
        }
        for (k, v) in &pairs {
            if k == "preset" {
                continue;
            }
            if k == "seed" {
                match v.trim().parse::<u64>() {
                    Ok(x) => seed = x,
                    Err(_) => notices.push(Notice::new(
                        "seed",
                        format!("'{}' is not a whole number; using 1", clip(v)),
                    )),
                }
                continue;
            }
            let long = URL_KEYS
                .iter()
                .find(|(short, long)| short == k || long == k)
                .map(|(_, long)| *long);
            match long {
                Some(long) => {
                    if let Err(e) = s.set(long, v) {
                        notices.push(Notice::new(
                            long,
                            format!("{e}; kept {}", s.get(long).unwrap_or_default()),
                        ));
                    }
                }
                None => notices.push(Notice::new(
                    "url",
                    format!("ignored the unknown setting '{}'", clip(k)),
                )),
            }
        }
        notices.extend(s.validate());
        (s, seed, notices)
    }
}

/// Decodes '+' and %XX escapes (`percent-encoding`); invalid escapes are
/// kept as text, invalid UTF-8 becomes U+FFFD. Never panics.
pub fn percent_decode(s: &str) -> String {
    let spaced = s.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}
