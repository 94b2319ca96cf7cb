//! The relay under a day's load at once: one relay process (the real
//! binary), 50 pairing rooms of a kit and a candidate, and 5 voting rooms
//! of a presenter and 200 phones. Prints the message latency (kit to
//! candidate, one way; a phone's vote to its acknowledgement, round trip)
//! at p50/p99/max and the relay's memory (RSS, and its peak), for
//! BENCHMARKS.md:
//!
//! ```text
//! cargo bench -p stampede-relay --bench load
//! ```

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const KITS: usize = 50;
const LINES: usize = 40;
const VOTE_ROOMS: usize = 5;
const PHONES: usize = 200;
const VOTES: usize = 3;

async fn connect(url: &str) -> Ws {
    tokio_tungstenite::connect_async(url)
        .await
        .expect("connect")
        .0
}

async fn say(ws: &mut Ws, v: serde_json::Value) {
    ws.send(Message::text(v.to_string())).await.expect("send");
}

async fn next(ws: &mut Ws) -> serde_json::Value {
    loop {
        match ws.next().await.expect("open").expect("read") {
            Message::Text(t) => return serde_json::from_str(&t).expect("json"),
            _ => continue,
        }
    }
}

async fn until(ws: &mut Ws, t: &str) -> serde_json::Value {
    loop {
        let m = next(ws).await;
        if m["t"] == t {
            return m;
        }
    }
}

fn rss(pid: u32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = |k: &str| {
        s.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (kb("VmRSS:"), kb("VmHWM:"))
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_stampede-relay"))
        .args(["--host", "127.0.0.1", "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the relay");
    let pid = child.id().expect("pid");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let at = loop {
        let l = lines
            .next_line()
            .await
            .expect("read")
            .expect("the relay said nothing");
        if let Some(rest) = l.split("listening on ").nth(1) {
            break rest.split_whitespace().next().expect("address").to_string();
        }
    };
    let url = format!("ws://{at}/relay");
    let idle = rss(pid);
    let t0 = Instant::now();

    // The interviews: each kit sends LINES lines stamped with the time.
    let mut interviews = Vec::new();
    for _ in 0..KITS {
        let url = url.clone();
        interviews.push(tokio::spawn(async move {
            let mut kit = connect(&url).await;
            say(&mut kit, serde_json::json!({"t": "open-pair"})).await;
            let room = until(&mut kit, "opened").await["room"]
                .as_str()
                .unwrap()
                .to_string();
            let mut cand = connect(&url).await;
            say(&mut cand, serde_json::json!({"t": "join", "room": room})).await;
            until(&mut cand, "joined").await;
            until(&mut kit, "peer").await;
            let mut lat = Vec::with_capacity(LINES);
            for i in 0..LINES {
                let sent = t0.elapsed().as_nanos() as u64;
                say(
                    &mut kit,
                    serde_json::json!({"t": "send", "line": format!("to K7Q2 {i} {sent}")}),
                )
                .await;
                let m = until(&mut cand, "line").await;
                let stamp: u64 = m["line"]
                    .as_str()
                    .unwrap()
                    .rsplit(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                lat.push((t0.elapsed().as_nanos() as u64 - stamp) as f64 / 1e6);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (lat, kit, cand)
        }));
    }

    // The rooms' votes: 200 phones join, then each votes VOTES times.
    let mut rooms = Vec::new();
    for _ in 0..VOTE_ROOMS {
        let url = url.clone();
        rooms.push(tokio::spawn(async move {
            let mut host = connect(&url).await;
            say(
                &mut host,
                serde_json::json!({"t": "open-vote", "options": 4}),
            )
            .await;
            let room = until(&mut host, "opened").await["room"]
                .as_str()
                .unwrap()
                .to_string();
            let mut phones = Vec::with_capacity(PHONES);
            for _ in 0..PHONES {
                let mut p = connect(&url).await;
                say(&mut p, serde_json::json!({"t": "join", "room": room})).await;
                until(&mut p, "joined").await;
                phones.push(p);
            }
            let mut voters = Vec::new();
            for (i, mut p) in phones.into_iter().enumerate() {
                voters.push(tokio::spawn(async move {
                    let mut lat = Vec::with_capacity(VOTES);
                    for v in 0..VOTES {
                        let sent = Instant::now();
                        say(
                            &mut p,
                            serde_json::json!({"t": "vote", "option": (i + v) % 4}),
                        )
                        .await;
                        until(&mut p, "voted").await;
                        lat.push(sent.elapsed().as_secs_f64() * 1e3);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    (lat, p)
                }));
            }
            let mut lat = Vec::new();
            let mut keep = Vec::new();
            for v in voters {
                let (l, p) = v.await.unwrap();
                lat.extend(l);
                keep.push(p);
            }
            // The presenter's last tally counts every phone once.
            let mut last = serde_json::Value::Null;
            while let Ok(m) =
                tokio::time::timeout(Duration::from_millis(300), until(&mut host, "tally")).await
            {
                last = m;
            }
            (lat, last, host, keep)
        }));
    }

    let mut pair_lat = Vec::new();
    let mut keep_pairs = Vec::new();
    for h in interviews {
        let (l, k, c) = h.await.unwrap();
        pair_lat.extend(l);
        keep_pairs.push((k, c));
    }
    let mut vote_lat = Vec::new();
    let mut keep_rooms = Vec::new();
    for h in rooms {
        let (l, last, host, phones) = h.await.unwrap();
        let counted: u64 = last["counts"]
            .as_array()
            .map_or(0, |c| c.iter().filter_map(|v| v.as_u64()).sum());
        assert_eq!(counted, PHONES as u64, "a room's last tally: {last}");
        vote_lat.extend(l);
        keep_rooms.push((host, phones));
    }
    let loaded = rss(pid);
    let conns = KITS * 2 + VOTE_ROOMS * (PHONES + 1);
    println!("relay load: {KITS} interviews (kit + candidate, {LINES} lines each), {VOTE_ROOMS} rooms of {PHONES} phones ({VOTES} votes each): {conns} connections, {:.1} s", t0.elapsed().as_secs_f64());
    println!(
        "kit -> candidate, one way ({} lines): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        pair_lat.len(),
        pct(&mut pair_lat, 0.5),
        pct(&mut pair_lat, 0.99),
        pct(&mut pair_lat, 1.0)
    );
    println!(
        "phone vote -> acknowledged, round trip ({} votes): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        vote_lat.len(),
        pct(&mut vote_lat, 0.5),
        pct(&mut vote_lat, 0.99),
        pct(&mut vote_lat, 1.0)
    );
    println!(
        "relay memory: {:.1} MB RSS idle, {:.1} MB RSS with every room open, {:.1} MB peak",
        idle.0 as f64 / 1024.0,
        loaded.0 as f64 / 1024.0,
        loaded.1 as f64 / 1024.0
    );
    drop(keep_pairs);
    drop(keep_rooms);
    let _ = child.kill().await;
}
