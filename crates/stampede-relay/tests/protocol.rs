//! The relay's protocol, on a real relay on a loopback port, with real
//! WebSocket clients: pairing, votes, and every refusal the security
//! section of docs/ARCHITECTURE.md promises. No test waits on the clock
//! for a result: each reads messages until the one it expects arrives.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use stampede_relay::protocol::{ErrorCode, Out, Role};
use stampede_relay::{Config, Relay};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn relay(config: Config) -> (String, Arc<Relay>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/relay", listener.local_addr().unwrap());
    let r = Relay::new(config);
    tokio::spawn(stampede_relay::serve(listener, r.clone()));
    (url, r)
}

struct Client(Ws);

impl Client {
    async fn new(url: &str) -> Client {
        Client(tokio_tungstenite::connect_async(url).await.unwrap().0)
    }

    async fn say(&mut self, text: &str) {
        self.0.send(Message::text(text)).await.unwrap();
    }

    /// The next message, or None when the relay closed the connection.
    async fn next(&mut self) -> Option<Out> {
        loop {
            match self.0.next().await? {
                Ok(Message::Text(t)) => return Some(serde_json::from_str(&t).unwrap()),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => continue,
            }
        }
    }

    /// Reads on until a message `want` takes (tallies and peer notices in
    /// between are skipped).
    async fn until(&mut self, want: impl Fn(&Out) -> bool) -> Out {
        loop {
            let m = self.next().await.expect("the relay closed the connection");
            if want(&m) {
                return m;
            }
        }
    }

    async fn error(&mut self) -> (ErrorCode, String) {
        match self.until(|m| matches!(m, Out::Error { .. })).await {
            Out::Error { code, message } => (code, message),
            _ => unreachable!(),
        }
    }

    /// Opens a room: its code and token.
    async fn open(&mut self, what: &str) -> (String, String) {
        self.say(what).await;
        match self
            .until(|m| matches!(m, Out::Opened { .. } | Out::Error { .. }))
            .await
        {
            Out::Opened { room, token, .. } => (room, token),
            other => panic!("not opened: {other:?}"),
        }
    }

    async fn join(
        &mut self,
        room: &str,
        token: Option<&str>,
    ) -> Result<String, (ErrorCode, String)> {
        let t = token.map_or("null".to_string(), |t| format!("\"{t}\""));
        self.say(&format!(r#"{{"t":"join","room":"{room}","token":{t}}}"#))
            .await;
        match self
            .until(|m| matches!(m, Out::Joined { .. } | Out::Error { .. }))
            .await
        {
            Out::Joined { token, .. } => Ok(token),
            Out::Error { code, message } => Err((code, message)),
            _ => unreachable!(),
        }
    }

    async fn line(&mut self) -> String {
        match self.until(|m| matches!(m, Out::Line { .. })).await {
            Out::Line { line } => line,
            _ => unreachable!(),
        }
    }

    async fn tally_where(&mut self, want: impl Fn(&[u32], u32) -> bool) -> Vec<u32> {
        match self
            .until(|m| matches!(m, Out::Tally { counts, phones } if want(counts, *phones)))
            .await
        {
            Out::Tally { counts, .. } => counts,
            _ => unreachable!(),
        }
    }
}

fn send(line: &str) -> String {
    serde_json::json!({ "t": "send", "line": line }).to_string()
}

#[tokio::test]
async fn a_kit_and_its_candidate_pass_lines_both_ways() {
    let (url, _) = relay(Config::default()).await;
    let mut kit = Client::new(&url).await;
    let (room, _) = kit.open(r#"{"t":"open-pair"}"#).await;
    assert_eq!(room.len(), 13);
    let mut cand = Client::new(&url).await;
    // Typed loosely, as read off a screen.
    let loose = format!("{}-{}", &room[..4], room[4..].to_lowercase());
    let ctoken = cand.join(&loose, None).await.unwrap();
    kit.until(|m| *m == Out::Peer { here: true }).await;
    kit.say(&send("to K7Q2 1 throw holder")).await;
    assert_eq!(cand.line().await, "to K7Q2 1 throw holder");
    cand.say(&send("ack K7Q2 1 done")).await;
    assert_eq!(kit.line().await, "ack K7Q2 1 done");
    // The window reloads: its token takes the seat again.
    drop(cand);
    kit.until(|m| *m == Out::Peer { here: false }).await;
    let mut again = Client::new(&url).await;
    assert_eq!(again.join(&room, Some(&ctoken)).await.unwrap(), ctoken);
    kit.say(&send("ping")).await;
    assert_eq!(again.line().await, "ping");
}

#[tokio::test]
async fn a_bad_code_is_refused_and_the_connection_goes_on() {
    let (url, _) = relay(Config::default()).await;
    let mut c = Client::new(&url).await;
    for bad in [
        "",
        "K7Q2",
        "AAAAAAAAAAAAA",
        "0000000000000",
        &"A".repeat(500),
    ] {
        let (code, message) = c.join(bad, None).await.unwrap_err();
        assert_eq!(code, ErrorCode::NoRoom, "{bad}: {message}");
        assert!(message.contains("no room has that code"), "{message}");
    }
    // Not a relay message at all.
    c.say("hello").await;
    let (code, message) = c.error().await;
    assert_eq!(code, ErrorCode::BadMessage);
    assert!(message.starts_with("not a relay message"), "{message}");
    c.0.send(Message::binary(vec![1u8, 2, 3])).await.unwrap();
    assert_eq!(c.error().await.0, ErrorCode::BadMessage);
    // Still open: the same connection opens a room.
    let (room, _) = c.open(r#"{"t":"open-pair"}"#).await;
    assert_eq!(room.len(), 13);
}

#[tokio::test]
async fn only_the_kit_that_paired_drives_the_candidate() {
    let (url, _) = relay(Config::default()).await;
    let mut kit = Client::new(&url).await;
    let (room, token) = kit.open(r#"{"t":"open-pair"}"#).await;
    let mut cand = Client::new(&url).await;
    cand.join(&room, None).await.unwrap();

    // A second kit with the code: no token, a wrong one, or as a
    // second candidate.
    let mut other = Client::new(&url).await;
    let wrong = "0123456789abcdef0123456789abcdef";
    other
        .say(&format!(
            r#"{{"t":"resume","room":"{room}","token":"{wrong}"}}"#
        ))
        .await;
    let (code, message) = other.error().await;
    assert_eq!(code, ErrorCode::BadToken);
    assert!(
        message.contains("a second kit cannot drive its candidate"),
        "{message}"
    );
    other
        .say(&format!(
            r#"{{"t":"resume","room":"{room}","token":"not a token"}}"#
        ))
        .await;
    assert_eq!(other.error().await.0, ErrorCode::BadToken);
    assert_eq!(
        other.join(&room, None).await.unwrap_err().0,
        ErrorCode::Taken
    );
    assert_eq!(
        other.join(&room, Some(wrong)).await.unwrap_err().0,
        ErrorCode::Taken
    );
    other.say(&send("to K7Q2 1 throw holder")).await;
    assert_eq!(other.error().await.0, ErrorCode::NotAllowed);

    // The candidate cannot end the room or vote; the kit still drives it.
    cand.say(r#"{"t":"close"}"#).await;
    assert_eq!(cand.error().await.0, ErrorCode::NotAllowed);
    kit.say(&send("to K7Q2 2 open preset=naive")).await;
    assert_eq!(cand.line().await, "to K7Q2 2 open preset=naive");

    // The kit reloads: its token takes the room up again.
    drop(kit);
    let mut kit = Client::new(&url).await;
    kit.say(&format!(
        r#"{{"t":"resume","room":"{room}","token":"{token}"}}"#
    ))
    .await;
    kit.until(|m| {
        matches!(
            m,
            Out::Opened {
                role: Role::Kit,
                ..
            }
        )
    })
    .await;
    kit.say(&send("ping")).await;
    assert_eq!(cand.line().await, "ping");
}

#[tokio::test]
async fn a_phone_can_only_vote_once_and_change_its_mind() {
    let (url, relay) = relay(Config::default()).await;
    let mut host = Client::new(&url).await;
    let (room, _) = host.open(r#"{"t":"open-vote","options":4}"#).await;
    let mut a = Client::new(&url).await;
    let mut b = Client::new(&url).await;
    let ta = a.join(&room, None).await.unwrap();
    b.join(&room, None).await.unwrap();
    host.tally_where(|_, phones| phones == 2).await;

    a.say(r#"{"t":"vote","option":1}"#).await;
    a.say(r#"{"t":"vote","option":2}"#).await;
    b.say(r#"{"t":"vote","option":2}"#).await;
    assert_eq!(
        host.tally_where(|c, _| c.iter().sum::<u32>() == 2 && c[2] == 2)
            .await,
        [0, 0, 2, 0]
    );

    for (what, msg) in [
        ("send", send("to K7Q2 1 throw holder")),
        ("ask", r#"{"t":"ask","options":2}"#.to_string()),
        ("close", r#"{"t":"close"}"#.to_string()),
        ("open", r#"{"t":"open-vote","options":4}"#.to_string()),
    ] {
        a.say(&msg).await;
        let (code, message) = a.error().await;
        assert_eq!(code, ErrorCode::NotAllowed, "{what}: {message}");
    }
    a.say(r#"{"t":"vote","option":4}"#).await;
    assert_eq!(
        a.error().await.0,
        ErrorCode::BadMessage,
        "no option E of four"
    );
    // No names: a phone that says one is refused.
    a.say(r#"{"t":"vote","option":0,"name":"Ann"}"#).await;
    assert_eq!(a.error().await.0, ErrorCode::BadMessage);

    // A phone that reloads keeps its one vote.
    drop(a);
    host.tally_where(|_, phones| phones == 1).await;
    let mut a = Client::new(&url).await;
    assert_eq!(a.join(&room, Some(&ta)).await.unwrap(), ta);
    a.until(|m| *m == Out::Voted { option: Some(2) }).await;
    a.say(r#"{"t":"vote","option":0}"#).await;
    assert_eq!(host.tally_where(|c, _| c[0] == 1).await, [1, 0, 1, 0]);

    // A new question forgets every vote; the phones hear it.
    host.say(r#"{"t":"ask","options":3,"words":"Who recomputes?"}"#)
        .await;
    assert_eq!(host.tally_where(|c, _| c.len() == 3).await, [0, 0, 0]);
    b.until(|m| matches!(m, Out::Asked { options: 3, words } if words == "Who recomputes?"))
        .await;

    // The room ends: nothing of it is kept, a phone's token opens nothing.
    host.say(r#"{"t":"close"}"#).await;
    b.until(|m| matches!(m, Out::Closed { .. })).await;
    assert_eq!(relay.room_count(), 0);
    let mut c = Client::new(&url).await;
    assert_eq!(
        c.join(&room, Some(&ta)).await.unwrap_err().0,
        ErrorCode::NoRoom
    );
}

#[tokio::test]
async fn a_flood_from_one_phone_is_cut_and_the_others_are_not() {
    let (url, _) = relay(Config {
        burst: 8,
        // Practically no refill: whatever the machine's speed, the flood
        // runs past the bucket.
        per_second: 0.001,
        ..Config::default()
    })
    .await;
    let mut host = Client::new(&url).await;
    let (room, _) = host.open(r#"{"t":"open-vote","options":4}"#).await;
    let mut flood = Client::new(&url).await;
    let mut calm = Client::new(&url).await;
    flood.join(&room, None).await.unwrap();
    calm.join(&room, None).await.unwrap();
    for i in 0..300 {
        flood
            .say(&format!(r#"{{"t":"vote","option":{}}}"#, i % 4))
            .await;
    }
    let (code, message) = flood.error().await;
    assert_eq!(code, ErrorCode::RateLimited);
    assert!(message.starts_with("too many messages"), "{message}");
    calm.say(r#"{"t":"vote","option":3}"#).await;
    calm.until(|m| *m == Out::Voted { option: Some(3) }).await;
    // One vote per phone, however many it sent: the flooder's last
    // counted one and the calm one's. The bucket of 8 took the join and
    // 7 votes (i = 0..=6), so the last counted was 6 % 4 = option 2.
    let counts = host.tally_where(|c, _| c.iter().sum::<u32>() == 2).await;
    assert_eq!(counts, [0, 0, 1, 1]);
    // The flooder hears of it once per run, not once per message.
    flood.say(r#"{"t":"vote","option":0}"#).await;
    let mut errors = 0;
    calm.say(r#"{"t":"vote","option":2}"#).await;
    host.tally_where(|c, _| c == [0, 0, 2, 0]).await;
    drop(calm);
    drop(host);
    // Reading on would wait for ever: count what has arrived so far.
    while let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(200), flood.next()).await {
        if matches!(m, Out::Error { .. }) {
            errors += 1;
        }
    }
    assert_eq!(errors, 0, "a second error for the same flood");
}

#[tokio::test]
async fn a_message_too_large_is_refused_and_one_far_too_large_closes_only_its_own() {
    let (url, _) = relay(Config::default()).await;
    let mut kit = Client::new(&url).await;
    let (room, _) = kit.open(r#"{"t":"open-pair"}"#).await;
    let mut cand = Client::new(&url).await;
    cand.join(&room, None).await.unwrap();

    kit.say(&send(&"x".repeat(3_000))).await;
    let (code, message) = kit.error().await;
    assert_eq!(code, ErrorCode::TooLarge);
    assert!(message.contains("at most 2048 bytes"), "{message}");
    kit.say(&format!(
        r#"{{"t":"open-pair","pad":"{}"}}"#,
        "y".repeat(5_000)
    ))
    .await;
    let (code, message) = kit.error().await;
    assert_eq!(code, ErrorCode::TooLarge);
    assert!(message.contains("at most 4096 bytes"), "{message}");
    kit.say(&send("still here")).await;
    assert_eq!(cand.line().await, "still here");

    // Past the WebSocket's own limit the sender's connection closes...
    let mut big = Client::new(&url).await;
    let _ = big
        .0
        .send(Message::text("z".repeat(stampede_relay::HARD_LIMIT + 1)))
        .await;
    assert_eq!(big.next().await, None);
    // ...and nothing else.
    kit.say(&send("and still")).await;
    assert_eq!(cand.line().await, "and still");
}

#[tokio::test]
async fn an_idle_room_ends_and_keeps_nothing() {
    let (url, relay) = relay(Config {
        // Long enough that a loaded machine's gaps between the open, the
        // join and the vote never end the room before it is used; the test
        // then waits this long, once.
        idle: Duration::from_secs(2),
        ..Config::default()
    })
    .await;
    let mut host = Client::new(&url).await;
    let (room, _) = host.open(r#"{"t":"open-vote","options":4}"#).await;
    let mut phone = Client::new(&url).await;
    let token = phone.join(&room, None).await.unwrap();
    phone.say(r#"{"t":"vote","option":1}"#).await;
    host.tally_where(|c, _| c[1] == 1).await;
    // Nobody says anything: the room ends, and both hear why.
    match host.until(|m| matches!(m, Out::Closed { .. })).await {
        Out::Closed { why } => assert!(why.contains("idle"), "{why}"),
        _ => unreachable!(),
    }
    phone.until(|m| matches!(m, Out::Closed { .. })).await;
    assert_eq!(relay.room_count(), 0);
    phone.say(r#"{"t":"vote","option":2}"#).await;
    let (code, message) = phone.error().await;
    assert_eq!(code, ErrorCode::NoRoom);
    assert!(message.contains("ended"), "{message}");
    let mut again = Client::new(&url).await;
    assert_eq!(
        again.join(&room, Some(&token)).await.unwrap_err().0,
        ErrorCode::NoRoom
    );
}
