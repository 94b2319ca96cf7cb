//! "Write it yourself" (issue 39 §3): the read path as shuffled blocks, each
//! with its right variant and the wrong ones a candidate writes; the one
//! table that maps every variant to one knob or pitfall of the core; the
//! three storms the learner's assembly is run through; and the grade of
//! each storm, from the run's counters, with a sentence made of claims.
//!
//! A block's code is the lines of the example files that carry its card
//! step ([`crate::examples`]): the all-correct assembly, shown in a
//! language, is that example file byte for byte. A wrong variant's code is
//! a short snippet of its own (it is in no file), put in place of those
//! lines.

use stampede::scenario::{Fault, FaultKind, Scenario, Workload};
use stampede::sim::Fleet;
use stampede::Report;

use crate::claims::{text, Claim, Clause, Run, Say};
use crate::examples::{self, Example};

/// What a variant sets in the core: one knob to one value, or one pitfall
/// on or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sets {
    /// A knob by its long name ([`Scenario::set`]) and its value.
    Knob(&'static str, &'static str),
    /// A pitfall by its name ([`stampede::scenario::Pitfalls::NAMES`]), on
    /// or off.
    Pitfall(&'static str, bool),
    /// Nothing to choose: a step the core always runs, as the card has it
    /// (a block with one way to write it, there to be put in its place).
    Always,
}

/// One way to write a block.
#[derive(Debug)]
pub struct Variant {
    /// Its id in a link and in `data-variant`.
    pub id: &'static str,
    /// What the learner reads on the picker.
    pub label: &'static str,
    /// The variant the card and the example files use.
    pub right: bool,
    /// What it sets in the core.
    pub sets: Sets,
    /// A wrong variant's code, by language ([`Example::name`] "go",
    /// "python", "typescript", "rust"; "refresh" takes "typescript"'s),
    /// put in place of the block's lines (indented as they were). Empty for
    /// the right one: its code is the file's.
    pub code: &'static [(&'static str, &'static str)],
}

/// One block of the read path.
#[derive(Debug)]
pub struct Block {
    /// Its id (`data-block`).
    pub id: &'static str,
    /// Its title on the page.
    pub title: &'static str,
    /// The card's step (from 0, as [`examples::lines`] takes it) whose
    /// lines are the block's code in every example file.
    pub step: usize,
    /// Its variants, the right one first.
    pub variants: &'static [Variant],
}

const fn right(id: &'static str, label: &'static str, sets: Sets) -> Variant {
    Variant {
        id,
        label,
        right: true,
        sets,
        code: &[],
    }
}

const fn only(id: &'static str, label: &'static str) -> Variant {
    right(id, label, Sets::Always)
}

/// The read path's blocks, in the card's order: the one table.
pub const BLOCKS: [Block; 8] = [
    Block {
        id: "get",
        title: "GET the value first",
        step: 1,
        variants: &[only(
            "get-first",
            "GET key before any flight; a Redis error is a miss",
        )],
    },
    Block {
        id: "flight",
        title: "Join the process's flight",
        step: 3,
        variants: &[
            right(
                "claim-inside",
                "singleflight(key), the claim inside the flight",
                Sets::Knob("claim", "inner"),
            ),
            Variant {
                id: "claim-outside",
                label: "claim first, singleflight(key) inside the claim",
                right: false,
                sets: Sets::Knob("claim", "outer"),
                code: CLAIM_OUTSIDE,
            },
        ],
    },
    Block {
        id: "claim",
        title: "Claim the key in Redis",
        step: 5,
        variants: &[
            right(
                "claim-px",
                "SET lock:key token NX PX ttl; on a Redis error, compute (fail open)",
                Sets::Pitfall("no-expiry", false),
            ),
            Variant {
                id: "claim-no-px",
                label: "SET lock:key token NX (no PX)",
                right: false,
                sets: Sets::Pitfall("no-expiry", true),
                code: CLAIM_NO_PX,
            },
            Variant {
                id: "fail-closed",
                label:
                    "SET lock:key token NX PX ttl; on a Redis error, wait as a loser (fail closed)",
                right: false,
                sets: Sets::Knob("redis_error", "closed"),
                code: FAIL_CLOSED,
            },
        ],
    },
    Block {
        id: "recheck",
        title: "Won: GET again",
        step: 7,
        variants: &[only(
            "get-again",
            "GET key again: the last holder may have written it",
        )],
    },
    Block {
        id: "origin",
        title: "Ask the origin",
        step: 8,
        variants: &[only("ask-origin", "compute the value at the origin")],
    },
    Block {
        id: "release",
        title: "Release the claim",
        step: 10,
        variants: &[
            right(
                "release-token",
                "delete lock:key only if it still holds my token (a script)",
                Sets::Pitfall("plain-del", false),
            ),
            Variant {
                id: "plain-del",
                label: "DEL lock:key",
                right: false,
                sets: Sets::Pitfall("plain-del", true),
                code: PLAIN_DEL,
            },
        ],
    },
    Block {
        id: "poll",
        title: "Lost: poll for the value",
        step: 11,
        variants: &[
            right(
                "poll-bounded",
                "poll and claim again, until my wait is over",
                Sets::Pitfall("no-deadline", false),
            ),
            Variant {
                id: "poll-forever",
                label: "poll until the value is there, however long",
                right: false,
                sets: Sets::Pitfall("no-deadline", true),
                code: POLL_FOREVER,
            },
        ],
    },
    Block {
        id: "settle",
        title: "Settle the flight",
        step: 12,
        variants: &[
            right(
                "forget-failure",
                "hand the result to the waiters and leave the map",
                Sets::Pitfall("remember-failure", false),
            ),
            Variant {
                id: "remember-failure",
                label: "keep a failed flight in the map for later callers",
                right: false,
                sets: Sets::Pitfall("remember-failure", true),
                code: REMEMBER_FAILURE,
            },
        ],
    },
];

// ---- the wrong variants' code -------------------------------------------------

const CLAIM_OUTSIDE: &[(&str, &str)] = &[
    (
        "go",
        "// claim first, in every request: each one asks Redis\ntoken, won, err := c.claim(ctx, key)\nv, err, _ := c.group.Do(key, func() (any, error) { return c.load(ctx, key, token, won, err) })\n",
    ),
    (
        "python",
        "# claim first, in every request: each one asks Redis\nwon = await self.redis.set(f\"lock:{key}\", token, nx=True, px=self.lock_ttl_ms)\nflight = self.flights.get(key) or self._start(key, won)\n",
    ),
    (
        "typescript",
        "// claim first, in every request: each one asks Redis\nconst won = await this.redis.set(`lock:${key}`, token, \"PX\", this.lockTtlMs, \"NX\");\nlet flight = this.flights.get(key) ?? this.start(key, won);\n",
    ),
    (
        "rust",
        "// claim first, in every request: each one asks Redis\nlet won = self.claim(key, &token).await;\nlet flight = self.flights.join(key, || self.load(key, won));\n",
    ),
];

const CLAIM_NO_PX: &[(&str, &str)] = &[
    (
        "go",
        "// SET lock:key token NX, with no PX: it never expires\nwon, err := c.rdb.SetNX(ctx, \"lock:\"+key, token, 0).Result()\nif err != nil {\n\treturn c.compute(ctx, key) // fail open\n}\n",
    ),
    (
        "python",
        "# SET lock:key token NX, with no PX: it never expires\ntoken = secrets.token_hex(16)\ntry:\n    won = await self.redis.set(f\"lock:{key}\", token, nx=True)\nexcept REDIS_DOWN:\n    return await self._compute(key)  # fail open\n",
    ),
    (
        "typescript",
        "// SET lock:key token NX, with no PX: it never expires\nconst token = randomToken();\nlet won;\ntry {\n  won = await this.redis.set(`lock:${key}`, token, \"NX\");\n} catch {\n  return this.compute(key); // fail open\n}\n",
    ),
    (
        "rust",
        "// SET lock:key token NX, with no PX: it never expires\nlet token = new_token();\nlet won = match redis::cmd(\"SET\").arg(lock_key(key)).arg(&token).arg(\"NX\").query_async(&mut conn).await {\n    Ok(won) => won,\n    Err(_) => return self.compute(key).await, // fail open\n};\n",
    ),
];

const FAIL_CLOSED: &[(&str, &str)] = &[
    (
        "go",
        "// SET lock:key token NX PX ttl; a Redis error counts as lost\nwon, err := c.rdb.SetNX(ctx, \"lock:\"+key, token, c.lockTTL).Result()\nif err != nil {\n\twon = false // fail closed: wait for a holder that may not exist\n}\n",
    ),
    (
        "python",
        "# SET lock:key token NX PX ttl; a Redis error counts as lost\ntoken = secrets.token_hex(16)\ntry:\n    won = await self.redis.set(f\"lock:{key}\", token, nx=True, px=self.lock_ttl_ms)\nexcept REDIS_DOWN:\n    won = False  # fail closed: wait for a holder that may not exist\n",
    ),
    (
        "typescript",
        "// SET lock:key token NX PX ttl; a Redis error counts as lost\nconst token = randomToken();\nlet won = null;\ntry {\n  won = await this.redis.set(`lock:${key}`, token, \"PX\", this.lockTtlMs, \"NX\");\n} catch {\n  won = null; // fail closed: wait for a holder that may not exist\n}\n",
    ),
    (
        "rust",
        "// SET lock:key token NX PX ttl; a Redis error counts as lost\nlet token = new_token();\n// fail closed: wait for a holder that may not exist\nlet won = self.claim(key, &token).await.unwrap_or(false);\n",
    ),
];

const PLAIN_DEL: &[(&str, &str)] = &[
    (
        "go",
        "c.rdb.Del(ctx, \"lock:\"+key) // DEL lock:key, whoever holds it now\n",
    ),
    (
        "python",
        "await self.redis.delete(f\"lock:{key}\")  # DEL lock:key, whoever holds it now\n",
    ),
    (
        "typescript",
        "await this.redis.del(`lock:${key}`); // DEL lock:key, whoever holds it now\n",
    ),
    (
        "rust",
        "let _: Result<(), _> = conn.del(lock_key(key)).await; // DEL lock:key, whoever holds it now\n",
    ),
];

const POLL_FOREVER: &[(&str, &str)] = &[
    (
        "go",
        "// lost: poll for the holder's value, however long it takes\nfor {\n\ttime.Sleep(c.poll)\n\tif v, ok := c.get(ctx, key); ok {\n\t\treturn v, nil\n\t}\n}\n",
    ),
    (
        "python",
        "# lost: poll for the holder's value, however long it takes\nwhile True:\n    await asyncio.sleep(self.poll)\n    value = await self._get(key)\n    if value is not None:\n        return value\n",
    ),
    (
        "typescript",
        "// lost: poll for the holder's value, however long it takes\nfor (;;) {\n  await sleep(this.pollMs);\n  const value = await this.read(key);\n  if (value !== null) return value;\n}\n",
    ),
    (
        "rust",
        "// lost: poll for the holder's value, however long it takes\nloop {\n    tokio::time::sleep(self.poll).await;\n    if let Some(v) = self.get(key).await {\n        return Ok(v);\n    }\n}\n",
    ),
];

const REMEMBER_FAILURE: &[(&str, &str)] = &[
    (
        "go",
        "// a failed flight stays in the map: later callers get its error\nif err != nil {\n\tc.failed[key] = err\n}\n",
    ),
    (
        "python",
        "# a failed flight stays in the map: later callers get its error\nif flight.cancelled() or flight.exception() is None:\n    del self.flights[key]\n",
    ),
    (
        "typescript",
        "// a failed flight stays in the map: later callers get its error\nflight.then(() => this.flights.delete(key), () => {});\n",
    ),
    (
        "rust",
        "// a failed flight stays in the map: later callers get its error\nif result.is_ok() {\n    self.flights.remove(key);\n}\n",
    ),
];

// ---- an assembly ---------------------------------------------------------------

/// The learner's read path: the blocks in the order they put them, each
/// with the variant they picked (indices into [`BLOCKS`] and its
/// variants).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembly {
    pub picks: Vec<(usize, usize)>,
}

impl Assembly {
    /// The card's order, every block right.
    pub fn correct() -> Assembly {
        Assembly {
            picks: (0..BLOCKS.len()).map(|b| (b, 0)).collect(),
        }
    }

    /// The blocks shuffled and a variant picked at random in each, by
    /// `seed`: where the learner starts. Never the card's order.
    pub fn shuffled(seed: u64) -> Assembly {
        let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            // splitmix64
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % n as u64) as usize
        };
        let mut order: Vec<usize> = (0..BLOCKS.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, next(i + 1));
        }
        if order.windows(2).all(|w| w[0] < w[1]) {
            order.rotate_left(1);
        }
        Assembly {
            picks: order
                .into_iter()
                .map(|b| (b, next(BLOCKS[b].variants.len())))
                .collect(),
        }
    }

    /// Moves the block at position `at` one place up (toward the start) or
    /// down; false where it cannot go.
    pub fn shift(&mut self, at: usize, up: bool) -> bool {
        let to = if up { at.checked_sub(1) } else { Some(at + 1) };
        match to {
            Some(to) if at < self.picks.len() && to < self.picks.len() => {
                self.picks.swap(at, to);
                true
            }
            _ => false,
        }
    }

    /// Picks variant `v` of block `b`; false for no such block or variant.
    pub fn pick(&mut self, b: usize, v: usize) -> bool {
        match self.picks.iter_mut().find(|(x, _)| *x == b) {
            Some(p) if v < BLOCKS[b].variants.len() => {
                p.1 = v;
                true
            }
            _ => false,
        }
    }

    /// The card's order with the variant `id` picked in its block (and the
    /// right one elsewhere); None for no such variant.
    pub fn with(id: &str) -> Option<Assembly> {
        let mut a = Assembly::correct();
        let (b, v) = variant(id)?;
        a.picks[b].1 = v;
        Some(a)
    }

    /// The variant picked for block `b`.
    pub fn picked(&self, b: usize) -> &'static Variant {
        let v = self
            .picks
            .iter()
            .find(|(x, _)| *x == b)
            .map_or(0, |(_, v)| *v);
        &BLOCKS[b].variants[v.min(BLOCKS[b].variants.len() - 1)]
    }

    /// The wrong variants picked, in the card's order.
    pub fn wrong(&self) -> Vec<&'static Variant> {
        (0..BLOCKS.len())
            .map(|b| self.picked(b))
            .filter(|v| !v.right)
            .collect()
    }

    /// The first block put before one the card reads ahead of it: (the
    /// block, the block it should follow).
    pub fn misplaced(&self) -> Option<(&'static Block, &'static Block)> {
        self.picks
            .windows(2)
            .find(|w| w[0].0 > w[1].0)
            .map(|w| (&BLOCKS[w[1].0], &BLOCKS[w[0].0]))
    }

    /// A link's text: `block.variant` pairs in order, comma separated.
    pub fn to_link(&self) -> String {
        self.picks
            .iter()
            .map(|&(b, v)| format!("{}.{}", BLOCKS[b].id, BLOCKS[b].variants[v].id))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// An assembly from a link's text; what it cannot read is named, and
    /// every block it leaves out is put back, right, where the card has it.
    pub fn from_link(text: &str) -> (Assembly, Vec<String>) {
        let mut picks: Vec<(usize, usize)> = Vec::new();
        let mut notices = Vec::new();
        for part in text.split(',').filter(|p| !p.is_empty()) {
            let (b, v) = part.split_once('.').unwrap_or((part, ""));
            let Some(bi) = BLOCKS.iter().position(|x| x.id == b) else {
                notices.push(format!("'{}' is no block of the read path", clip(b)));
                continue;
            };
            if picks.iter().any(|(x, _)| *x == bi) {
                notices.push(format!("block '{b}' is named twice: the first is kept"));
                continue;
            }
            let vi = BLOCKS[bi].variants.iter().position(|x| x.id == v);
            if vi.is_none() {
                notices.push(format!(
                    "'{}' is no way to write block '{b}': its right one is kept",
                    clip(v)
                ));
            }
            picks.push((bi, vi.unwrap_or(0)));
        }
        for b in 0..BLOCKS.len() {
            if !picks.iter().any(|(x, _)| *x == b) {
                let at = picks
                    .iter()
                    .position(|(x, _)| *x > b)
                    .unwrap_or(picks.len());
                picks.insert(at, (b, 0));
            }
        }
        (Assembly { picks }, notices)
    }

    /// The storm's scenario run with this read path: the storm's traffic,
    /// then every picked variant's setting.
    pub fn scenario(&self, storm: Storm) -> Scenario {
        let mut s = storm.scenario();
        for b in 0..BLOCKS.len() {
            apply(&mut s, self.picked(b).sets);
        }
        s
    }

    /// The read path as code in the example `e`: the file, each block's
    /// lines replaced by its wrong variant's code where one is picked. The
    /// all-correct assembly is the file byte for byte.
    pub fn code(&self, e: &Example) -> String {
        let lines: Vec<&str> = e.text.split_inclusive('\n').collect();
        let mut swaps: Vec<(std::ops::Range<usize>, &str)> = Vec::new();
        for (b, block) in BLOCKS.iter().enumerate() {
            let v = self.picked(b);
            if v.right {
                continue;
            }
            let (Some(r), Some(code)) = (examples::lines(e, block.step), snippet(v, e)) else {
                continue;
            };
            swaps.push((r, code));
        }
        swaps.sort_by_key(|(r, _)| r.start);
        let mut out = String::with_capacity(e.text.len());
        let mut i = 0;
        for (r, code) in swaps {
            if r.start < i {
                continue;
            }
            out.extend(lines[i..r.start].iter().copied());
            let first = lines[r.start];
            let pad = &first[..first.len() - first.trim_start().len()];
            for l in code.lines() {
                if !l.is_empty() {
                    out.push_str(pad);
                }
                out.push_str(l);
                out.push('\n');
            }
            i = r.end;
        }
        out.extend(lines[i.min(lines.len())..].iter().copied());
        out
    }
}

fn clip(s: &str) -> String {
    stampede::scenario::clip(s)
}

/// A wrong variant's code in `e`'s language.
fn snippet(v: &Variant, e: &Example) -> Option<&'static str> {
    let lang = if e.name == "refresh" {
        "typescript"
    } else {
        e.name
    };
    v.code.iter().find(|(l, _)| *l == lang).map(|(_, c)| *c)
}

/// The block and variant indices of the variant `id`.
pub fn variant(id: &str) -> Option<(usize, usize)> {
    BLOCKS.iter().enumerate().find_map(|(b, block)| {
        block
            .variants
            .iter()
            .position(|v| v.id == id)
            .map(|v| (b, v))
    })
}

/// Sets `sets` in `s`.
pub fn apply(s: &mut Scenario, sets: Sets) {
    match sets {
        Sets::Knob(knob, value) => {
            s.set(knob, value)
                .expect("the table's knobs and values are the core's");
        }
        Sets::Pitfall(name, on) => {
            let mut names: Vec<&str> = s
                .pitfalls
                .enabled()
                .into_iter()
                .filter(|n| *n != name)
                .collect();
            if on {
                names.push(name);
            }
            s.set("pitfalls", &names.join("."))
                .expect("the table's pitfalls are the core's");
        }
        Sets::Always => {}
    }
}

// ---- the storms ----------------------------------------------------------------

/// The three storms a read path is run through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storm {
    /// Every thread of every office misses the same key at once.
    Burst,
    /// Steady traffic; the first claim winner dies holding its claim, then
    /// the origin fails a refresh and slows down so that a holder outlives
    /// its claim.
    Holder,
    /// Steady traffic; Redis hangs for 2 s (commands wait out the client's
    /// timeout).
    RedisDown,
}

impl Storm {
    pub const ALL: [Storm; 3] = [Storm::Burst, Storm::Holder, Storm::RedisDown];

    /// Its id (`data-storm`).
    pub fn id(self) -> &'static str {
        match self {
            Storm::Burst => "burst",
            Storm::Holder => "holder",
            Storm::RedisDown => "redis-down",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Storm::Burst => "A burst: 12 callers miss at once",
            Storm::Holder => "The holder dies holding its claim; the origin then fails and stalls",
            Storm::RedisDown => "Redis hangs for 2 s",
        }
    }

    /// The storm's traffic, with the card's read path (every knob the
    /// blocks set at its right value).
    pub fn scenario(self) -> Scenario {
        let base = Scenario {
            instances: 3,
            threads: 4,
            recompute_ms: 200,
            claim_ttl_ms: 1000,
            deadline_ms: 2000,
            poll_ms: 10,
            redis_timeout_ms: 100,
            value_ttl_ms: 3000,
            ..Scenario::default()
        };
        match self {
            Storm::Burst => base,
            Storm::Holder => Scenario {
                workload: Workload::Steady,
                duration_ms: 12_000,
                think_ms: 200,
                // The first claim winner (the refresh at 3 s, when the
                // warm value expires) dies holding its claim.
                holder_crash: true,
                faults: vec![
                    // The origin fails the refresh after the dead claim.
                    Fault {
                        kind: FaultKind::Origin,
                        start_ms: 3_500,
                        duration_ms: Some(1_000),
                    },
                    // The next refreshes stall past the claim's TTL.
                    Fault {
                        kind: FaultKind::OriginSlow,
                        start_ms: 4_500,
                        duration_ms: Some(3_000),
                    },
                ],
                ..base
            },
            Storm::RedisDown => Scenario {
                workload: Workload::Steady,
                duration_ms: 8_000,
                think_ms: 200,
                redis_outage: stampede::scenario::RedisOutage::Hang,
                faults: vec![Fault {
                    kind: FaultKind::Redis,
                    start_ms: 2_000,
                    duration_ms: Some(2_000),
                }],
                ..base
            },
        }
    }
}

/// The seed the page runs the storms on.
pub const SEED: u64 = 1;

/// A storm's run and its grade.
#[derive(Clone, Debug)]
pub struct Graded {
    pub storm: Storm,
    pub scenario: Scenario,
    pub report: Report,
    pub pass: bool,
    /// What the learner's version did, as claims checked on the run.
    pub sentence: Vec<Clause>,
}

/// Runs `a` through `storm` on `seed` and grades it.
pub fn run(a: &Assembly, storm: Storm, seed: u64) -> Graded {
    let scenario = a.scenario(storm);
    let report = Fleet::new(&scenario, seed).run();
    grade(storm, scenario, report)
}

/// The three storms' grades.
pub fn run_all(a: &Assembly, seed: u64) -> Vec<Graded> {
    Storm::ALL.iter().map(|&s| run(a, s, seed)).collect()
}

// What a storm asks of a read path, each a claim on the run, and the
// claims of its failing.
// The lesson's own claims where a storm asks the same fact (each claim is
// defined once).
use crate::claims::NONE_PINNED as EVERY_REQUEST_ENDED;
use crate::lesson::{
    MORE_THAN_ONE_PER_INSTANCE as MORE_CLAIMS_THAN_OFFICES,
    NOTHING_REMEMBERED as NO_FAILURE_REMEMBERED, ONE_PER_INSTANCE as ONE_CLAIM_PER_OFFICE,
    ONE_RECOMPUTE as ONE_ORIGIN_CALL, PAST_DEADLINE, PINNED as SOME_PINNED, WITHIN_DEADLINE,
};
const EVERY_CALLER_GOT_A_VALUE: Claim = Claim::new("every request got a value", |x| {
    x.r.pinned == 0 && x.r.ledger.values() == x.r.requests
});
const NO_CLAIM_DELETED: Claim = Claim::new("no office's claim was deleted by another", |x| {
    x.r.claims_deleted_of_others == 0
});
const CLAIM_DELETED: Claim = Claim::new("an office's claim was deleted by another", |x| {
    x.r.claims_deleted_of_others > 0
});
const FAILURE_REMEMBERED: Claim =
    Claim::new("a failure was remembered", |x| x.r.remembered_failures > 0);
// The holder that dies is the run's first claim winner (`holder_crash`):
// every other win comes after its death.
const WON_AGAIN_AFTER_THE_CRASH: Claim =
    Claim::new("an office won the claim again after the holder died", |x| {
        x.s.holder_crash && x.r.crashed > 0 && x.r.claim_wins > 1
    });
const NEVER_WON_AGAIN: Claim = Claim::new("nobody won the claim after the holder died", |x| {
    x.s.holder_crash && x.r.crashed > 0 && x.r.claim_wins <= 1
});

/// What `storm` asks of the run: every claim must hold to pass.
pub fn asks(storm: Storm) -> &'static [Claim] {
    match storm {
        Storm::Burst => &[
            EVERY_CALLER_GOT_A_VALUE,
            ONE_ORIGIN_CALL,
            ONE_CLAIM_PER_OFFICE,
        ],
        Storm::Holder => &[
            EVERY_REQUEST_ENDED,
            WITHIN_DEADLINE,
            WON_AGAIN_AFTER_THE_CRASH,
            NO_CLAIM_DELETED,
            NO_FAILURE_REMEMBERED,
        ],
        Storm::RedisDown => &[EVERY_CALLER_GOT_A_VALUE, WITHIN_DEADLINE],
    }
}

fn grade(storm: Storm, scenario: Scenario, report: Report) -> Graded {
    let run = Run::new(&scenario, &report, true);
    let pass = asks(storm).iter().all(|c| c.holds(&run));
    let sentence = say(storm, &run);
    Graded {
        storm,
        pass,
        sentence,
        scenario,
        report,
    }
}

/// What the learner's version did in `storm`, in claims on its run.
fn say(storm: Storm, run: &Run) -> Vec<Clause> {
    use stampede::ledger::End;
    let r = run.r;
    let mut say = Say::new(*run);
    say.plain(format!(
        "{} requests, {} answered with a value",
        r.requests,
        r.ledger.values()
    ));
    for e in End::ALL.into_iter().filter(|e| !e.is_value()) {
        let n = r.ledger.ended(e);
        if n > 0 {
            say.when(
                &[Claim::ledger(e, None, n)],
                format!(", {n} {}", crate::lesson::end_words(e)),
            );
        }
    }
    say.plain(format!(
        "; {}, {}.",
        count(r.recomputes, "origin call"),
        count(r.claim_attempts, "claim attempt")
    ));
    match storm {
        Storm::Burst => {
            say.when(
                &[
                    ONE_ORIGIN_CALL,
                    ONE_CLAIM_PER_OFFICE,
                    EVERY_CALLER_GOT_A_VALUE,
                ],
                " One origin call for the whole burst, one claim per office.",
            );
            say.when(
                &[MORE_CLAIMS_THAN_OFFICES],
                format!(
                    " {} claim attempts for {} offices: each caller asked Redis, not each office once.",
                    r.claim_attempts, run.s.instances
                ),
            );
        }
        Storm::Holder => {
            say.when(
                &[WON_AGAIN_AFTER_THE_CRASH],
                " After the holder died, its claim expired and another office won the key.",
            );
            say.when(
                &[NEVER_WON_AGAIN],
                " The dead holder's claim never expired: no office won the key again.",
            );
            say.when(
                &[CLAIM_DELETED],
                format!(
                    " A holder that outlived its claim deleted another office's claim ({}).",
                    match r.claims_deleted_of_others {
                        1 => "once".to_string(),
                        n => format!("{n} times"),
                    }
                ),
            );
            say.when(
                &[FAILURE_REMEMBERED],
                format!(
                    " {} got a failure kept in the map.",
                    count(r.remembered_failures, "caller")
                ),
            );
        }
        Storm::RedisDown => {
            say.when(
                &[crate::claims::REDIS_FAILED],
                format!(" {} failed.", count(r.redis_errors, "Redis command")),
            );
            say.when(
                &[EVERY_CALLER_GOT_A_VALUE, crate::claims::REDIS_FAILED],
                " Every caller still got a value.",
            );
        }
    }
    if storm != Storm::Burst {
        say.when(
            &[PAST_DEADLINE],
            format!(
                " The slowest caller waited {} ms, past its {} ms deadline.",
                stampede::decimal::format(r.max_ms),
                run.s.deadline_ms
            ),
        );
    }
    say.when(
        &[SOME_PINNED],
        format!(
            " {} still waiting when the run stopped.",
            count(r.pinned, "request")
        ),
    );
    say.done()
}

/// `n` and its noun, plural unless one.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The sentence of a grade, as text.
pub fn sentence(g: &Graded) -> String {
    text(&g.sentence)
}
