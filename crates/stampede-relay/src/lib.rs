//! The room's relay: a small WebSocket server that lets the page reach
//! another machine, which a static page cannot do alone.
//!
//! - **Pairing** (the interviewer's kit and a candidate's window): the kit
//!   opens a pairing room and gets its code and a secret token; the
//!   candidate's window joins with the code (from the kit's link) and gets a
//!   token of its own. From then on the relay passes the kit's lines (the
//!   same lines the kit speaks over a `BroadcastChannel` in one browser) to
//!   that window and the window's replies back. Only the connection that
//!   holds the kit's token speaks for the kit: a second kit with the code
//!   but not the token is refused, and a second candidate finds the seat
//!   taken.
//! - **Votes** (presenter mode's question and the room's phones): the
//!   presenter opens a voting room; each phone joins with the code (from a
//!   QR code) and may only vote, once, changing its mind at will; the
//!   presenter gets the tally after every vote. No names: a phone is a
//!   random token, and the room forgets it when it ends.
//!
//! Every message is hostile until parsed ([`protocol`]): a size limit, a
//! rate limit per connection (a token bucket), unknown fields refused. A
//! refusal is an `error` message to the sender alone; nothing is closed.
//! Rooms end when their owner closes them or after [`Config::idle`] without
//! a message, and nothing of them is kept.

pub mod protocol;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;

use protocol::{ErrorCode, In, Out, Role};

/// The relay's limits.
#[derive(Clone, Debug)]
pub struct Config {
    /// The page's built files, served beside the relay (None: relay only).
    pub dist: Option<PathBuf>,
    /// A room with no message for this long ends.
    pub idle: Duration,
    /// The longest message the relay reads (bytes); longer ones are refused
    /// with an error. Past [`HARD_LIMIT`] the WebSocket itself closes.
    pub max_message: usize,
    /// Messages one connection may send at once...
    pub burst: u32,
    /// ...and per second after that.
    pub per_second: f64,
    /// Rooms the relay holds at once.
    pub max_rooms: usize,
    /// Phones one voting room takes.
    pub max_phones: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            dist: None,
            idle: Duration::from_secs(30 * 60),
            max_message: 4_096,
            burst: 40,
            per_second: 10.0,
            max_rooms: 10_000,
            max_phones: 1_000,
        }
    }
}

/// The WebSocket's own limit on a message (bytes): past it the connection
/// closes (1009). Below it, [`Config::max_message`] answers with an error.
pub const HARD_LIMIT: usize = 64 * 1024;
/// Messages queued for one slow client before the relay drops its newest.
const QUEUE: usize = 256;

type Tx = mpsc::Sender<Out>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pair,
    Vote,
}

struct Room {
    kind: Kind,
    owner_token: String,
    owner: Option<(u64, Tx)>,
    last: Instant,
    // A pairing room's candidate: its token once joined, and its window.
    candidate_token: Option<String>,
    candidate: Option<(u64, Tx)>,
    // A voting room's question, every phone's vote (by its token), and the
    // phones connected now.
    options: u8,
    words: String,
    votes: HashMap<String, Option<u8>>,
    phones: HashMap<u64, (String, Tx)>,
}

impl Room {
    fn new(kind: Kind, owner_token: String, owner: (u64, Tx), options: u8) -> Room {
        Room {
            kind,
            owner_token,
            owner: Some(owner),
            last: Instant::now(),
            candidate_token: None,
            candidate: None,
            options,
            words: String::new(),
            votes: HashMap::new(),
            phones: HashMap::new(),
        }
    }

    fn tally(&self) -> Out {
        let mut counts = vec![0u32; usize::from(self.options)];
        for v in self.votes.values().flatten() {
            if let Some(c) = counts.get_mut(usize::from(*v)) {
                *c += 1;
            }
        }
        Out::Tally {
            counts,
            phones: self.phones.len() as u32,
        }
    }

    fn to_owner(&self, out: Out) {
        if let Some((_, tx)) = &self.owner {
            let _ = tx.try_send(out);
        }
    }

    fn to_candidate(&self, out: Out) {
        if let Some((_, tx)) = &self.candidate {
            let _ = tx.try_send(out);
        }
    }

    fn everyone(&self) -> impl Iterator<Item = &Tx> {
        self.owner
            .iter()
            .chain(self.candidate.iter())
            .map(|(_, tx)| tx)
            .chain(self.phones.values().map(|(_, tx)| tx))
    }
}

/// The relay's rooms.
pub struct Relay {
    config: Config,
    rooms: Mutex<HashMap<String, Room>>,
    next: AtomicU64,
}

/// Where a connection sits: its room and side.
#[derive(Clone, Debug)]
struct Seat {
    room: String,
    role: Role,
}

impl Relay {
    pub fn new(config: Config) -> Arc<Relay> {
        Arc::new(Relay {
            config,
            rooms: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        })
    }

    fn rooms(&self) -> MutexGuard<'_, HashMap<String, Room>> {
        // A panic while holding the lock leaves plain data behind: go on.
        self.rooms.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Rooms open now.
    pub fn room_count(&self) -> usize {
        self.rooms().len()
    }

    /// Ends every room idle for longer than the config allows; returns
    /// how many ended.
    pub fn expire(&self) -> usize {
        let idle = self.config.idle;
        let mut rooms = self.rooms();
        let gone: Vec<String> = rooms
            .iter()
            .filter(|(_, r)| r.last.elapsed() >= idle)
            .map(|(c, _)| c.clone())
            .collect();
        for code in &gone {
            if let Some(room) = rooms.remove(code) {
                for tx in room.everyone() {
                    let _ = tx.try_send(Out::Closed {
                        why: format!(
                            "the room was idle for {} s and ended; nothing of it is kept",
                            idle.as_secs()
                        ),
                    });
                }
            }
        }
        gone.len()
    }

    /// Opens a room owned by `me`.
    fn open(&self, kind: Kind, options: u8, me: (u64, Tx)) -> Result<(String, String), Out> {
        let mut rooms = self.rooms();
        if rooms.len() >= self.config.max_rooms {
            return Err(Out::error(
                ErrorCode::Busy,
                "the relay holds as many rooms as it takes; try again later",
            ));
        }
        let token = protocol::new_token().map_err(no_randomness)?;
        let code = loop {
            let c = protocol::new_code().map_err(no_randomness)?;
            if !rooms.contains_key(&c) {
                break c;
            }
        };
        rooms.insert(code.clone(), Room::new(kind, token.clone(), me, options));
        Ok((code, token))
    }

    /// Handles one parsed message from connection `me` at `seat`; returns
    /// the reply to it, if any, and its seat after.
    fn handle(&self, me: (u64, &Tx), seat: &mut Option<Seat>, msg: In) -> Option<Out> {
        let (id, tx) = me;
        let fresh = |m: &str| {
            Out::error(
                ErrorCode::NotAllowed,
                format!("this connection is already in a room; {m}"),
            )
        };
        match msg {
            In::OpenPair {} | In::OpenVote { .. } if seat.is_some() => {
                Some(fresh("open a new connection for another"))
            }
            In::OpenPair {} => Some(match self.open(Kind::Pair, 0, (id, tx.clone())) {
                Ok((room, token)) => {
                    *seat = Some(Seat {
                        room: room.clone(),
                        role: Role::Kit,
                    });
                    Out::Opened {
                        room,
                        token,
                        role: Role::Kit,
                    }
                }
                Err(e) => e,
            }),
            In::OpenVote { options } => {
                Some(match self.open(Kind::Vote, options, (id, tx.clone())) {
                    Ok((room, token)) => {
                        *seat = Some(Seat {
                            room: room.clone(),
                            role: Role::Presenter,
                        });
                        Out::Opened {
                            room,
                            token,
                            role: Role::Presenter,
                        }
                    }
                    Err(e) => e,
                })
            }
            In::Resume { .. } | In::Join { .. } if seat.is_some() => {
                Some(fresh("open a new connection to join another"))
            }
            In::Resume { room, token } => self.resume(&room, &token, (id, tx), seat),
            In::Join { room, token } => self.join(&room, token.as_deref(), (id, tx), seat),
            other => {
                let Some(s) = seat.clone() else {
                    return Some(Out::error(
                        ErrorCode::NotAllowed,
                        "open or join a room first",
                    ));
                };
                self.in_room(id, &s, other)
            }
        }
    }

    fn resume(
        &self,
        code: &str,
        token: &str,
        me: (u64, &Tx),
        seat: &mut Option<Seat>,
    ) -> Option<Out> {
        let Some(code) = protocol::typed_code(code) else {
            return Some(no_room());
        };
        let mut rooms = self.rooms();
        let Some(room) = rooms.get_mut(&code) else {
            return Some(no_room());
        };
        if !protocol::token_shaped(token) || !protocol::same_token(token, &room.owner_token) {
            let who = match room.kind {
                Kind::Pair => "kit that opened it: a second kit cannot drive its candidate",
                Kind::Vote => "presenter that opened it",
            };
            return Some(Out::error(
                ErrorCode::BadToken,
                format!("that room belongs to the {who}"),
            ));
        }
        room.last = Instant::now();
        let role = match room.kind {
            Kind::Pair => Role::Kit,
            Kind::Vote => Role::Presenter,
        };
        // The reply first, then what the owner missed.
        let _ = me.1.try_send(Out::Opened {
            room: code.clone(),
            token: token.to_string(),
            role,
        });
        if let Some((_, old)) = room.owner.replace((me.0, me.1.clone())) {
            let _ = old.try_send(Out::Closed {
                why: "the room was taken up again elsewhere with its token".into(),
            });
        }
        match room.kind {
            Kind::Pair => {
                let here = room.candidate.is_some();
                let _ = me.1.try_send(Out::Peer { here });
                room.to_candidate(Out::Peer { here: true });
            }
            Kind::Vote => {
                let _ = me.1.try_send(room.tally());
            }
        }
        *seat = Some(Seat { room: code, role });
        None
    }

    fn join(
        &self,
        code: &str,
        token: Option<&str>,
        me: (u64, &Tx),
        seat: &mut Option<Seat>,
    ) -> Option<Out> {
        let Some(code) = protocol::typed_code(code) else {
            return Some(no_room());
        };
        if token.is_some_and(|t| !protocol::token_shaped(t)) {
            return Some(Out::error(
                ErrorCode::BadToken,
                "that is not a token this relay gave",
            ));
        }
        let max_phones = self.config.max_phones;
        let mut rooms = self.rooms();
        let Some(room) = rooms.get_mut(&code) else {
            return Some(no_room());
        };
        let (role, token) = match room.kind {
            Kind::Pair => {
                let mine = match (&room.candidate_token, token) {
                    (None, _) => true,
                    (Some(t), Some(given)) => protocol::same_token(t, given),
                    (Some(_), None) => false,
                };
                if !mine {
                    return Some(Out::error(
                        ErrorCode::Taken,
                        "this interview already has its candidate's window",
                    ));
                }
                let token = match room.candidate_token.clone() {
                    Some(t) => t,
                    None => match protocol::new_token() {
                        Ok(t) => t,
                        Err(e) => return Some(no_randomness(e)),
                    },
                };
                room.candidate_token = Some(token.clone());
                if let Some((_, old)) = room.candidate.replace((me.0, me.1.clone())) {
                    let _ = old.try_send(Out::Closed {
                        why: "this window's seat was taken up again elsewhere".into(),
                    });
                }
                room.to_owner(Out::Peer { here: true });
                let _ = me.1.try_send(Out::Peer {
                    here: room.owner.is_some(),
                });
                (Role::Candidate, token)
            }
            Kind::Vote => {
                let known = token.filter(|t| room.votes.contains_key(*t));
                let token = match known {
                    Some(t) => t.to_string(),
                    None => {
                        if room.votes.len() >= max_phones {
                            return Some(Out::error(
                                ErrorCode::Taken,
                                format!("this room takes {max_phones} phones, and has them"),
                            ));
                        }
                        match protocol::new_token() {
                            Ok(t) => t,
                            Err(e) => return Some(no_randomness(e)),
                        }
                    }
                };
                room.votes.entry(token.clone()).or_insert(None);
                room.phones.insert(me.0, (token.clone(), me.1.clone()));
                room.to_owner(room.tally());
                (Role::Phone, token)
            }
        };
        room.last = Instant::now();
        let _ = me.1.try_send(Out::Joined {
            room: code.clone(),
            token: token.clone(),
            role,
            options: room.options,
            words: room.words.clone(),
        });
        // A phone back after a reload sees the vote it gave.
        if let Some(Some(v)) = room.votes.get(&token) {
            let _ = me.1.try_send(Out::Voted { option: Some(*v) });
        }
        *seat = Some(Seat { room: code, role });
        None
    }

    fn in_room(&self, id: u64, seat: &Seat, msg: In) -> Option<Out> {
        let mut rooms = self.rooms();
        let Some(room) = rooms.get_mut(&seat.room) else {
            return Some(Out::error(
                ErrorCode::NoRoom,
                "the room has ended (closed, or idle too long)",
            ));
        };
        // A connection replaced by a newer one with the same token speaks
        // no more for its seat.
        let current = match seat.role {
            Role::Kit | Role::Presenter => room.owner.as_ref().is_some_and(|(i, _)| *i == id),
            Role::Candidate => room.candidate.as_ref().is_some_and(|(i, _)| *i == id),
            Role::Phone => room.phones.contains_key(&id),
        };
        if !current {
            return Some(Out::error(
                ErrorCode::NotAllowed,
                "this seat was taken up again by another connection",
            ));
        }
        let refuse = |what: &str| {
            Some(Out::error(
                ErrorCode::NotAllowed,
                format!("a {} cannot {what}", role_name(seat.role)),
            ))
        };
        room.last = Instant::now();
        match (seat.role, msg) {
            (Role::Kit, In::Send { line }) => {
                room.to_candidate(Out::Line { line });
                None
            }
            (Role::Candidate, In::Send { line }) => {
                room.to_owner(Out::Line { line });
                None
            }
            (Role::Phone, In::Vote { option }) => {
                if option >= room.options {
                    return Some(Out::error(
                        ErrorCode::BadMessage,
                        format!("this vote has options 0 to {}", room.options - 1),
                    ));
                }
                let token = room.phones.get(&id).map(|(t, _)| t.clone())?;
                room.votes.insert(token, Some(option));
                room.to_owner(room.tally());
                Some(Out::Voted {
                    option: Some(option),
                })
            }
            (Role::Presenter, In::Ask { options, words }) => {
                room.options = options;
                room.words = words.clone();
                for v in room.votes.values_mut() {
                    *v = None;
                }
                for (_, tx) in room.phones.values() {
                    let _ = tx.try_send(Out::Asked {
                        options,
                        words: words.clone(),
                    });
                }
                Some(room.tally())
            }
            (Role::Kit | Role::Presenter, In::Close {}) => {
                if let Some(room) = rooms.remove(&seat.room) {
                    for tx in room.everyone() {
                        let _ = tx.try_send(Out::Closed {
                            why: "its owner ended the room; nothing of it is kept".into(),
                        });
                    }
                }
                None
            }
            (_, In::Send { .. }) => refuse("send lines"),
            (_, In::Vote { .. }) => refuse("vote"),
            (_, In::Ask { .. }) => refuse("ask a question"),
            (_, In::Close {}) => refuse("end the room"),
            (_, _) => refuse("do that here"),
        }
    }

    /// Connection `id` went away.
    fn leave(&self, id: u64, seat: &Seat) {
        let mut rooms = self.rooms();
        let Some(room) = rooms.get_mut(&seat.room) else {
            return;
        };
        match seat.role {
            Role::Kit | Role::Presenter => {
                if room.owner.as_ref().is_some_and(|(i, _)| *i == id) {
                    room.owner = None;
                    room.to_candidate(Out::Peer { here: false });
                }
            }
            Role::Candidate => {
                if room.candidate.as_ref().is_some_and(|(i, _)| *i == id) {
                    room.candidate = None;
                    room.to_owner(Out::Peer { here: false });
                }
            }
            Role::Phone => {
                if room.phones.remove(&id).is_some() {
                    room.to_owner(room.tally());
                }
            }
        }
    }
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Kit => "kit",
        Role::Candidate => "candidate's window",
        Role::Presenter => "presenter",
        Role::Phone => "phone",
    }
}

fn no_room() -> Out {
    Out::error(
        ErrorCode::NoRoom,
        "no room has that code: check it, or the room has ended",
    )
}

fn no_randomness(e: std::io::Error) -> Out {
    Out::error(
        ErrorCode::Busy,
        format!("the relay could not draw a random code: {e}"),
    )
}

/// One connection's token bucket.
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn take(&mut self, burst: u32, per_second: f64) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.at).as_secs_f64() * per_second;
        self.tokens = (self.tokens + refill).min(f64::from(burst));
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

async fn upgrade(State(relay): State<Arc<Relay>>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(HARD_LIMIT)
        .max_frame_size(HARD_LIMIT)
        .on_upgrade(move |socket| connection(relay, socket))
}

async fn connection(relay: Arc<Relay>, socket: WebSocket) {
    let id = relay.next.fetch_add(1, Ordering::Relaxed);
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = mpsc::channel::<Out>(QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(out) = rx.recv().await {
            if sink
                .send(Message::Text(out.to_text().into()))
                .await
                .is_err()
            {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let cfg = &relay.config;
    let mut bucket = Bucket {
        tokens: f64::from(cfg.burst),
        at: Instant::now(),
    };
    let mut seat: Option<Seat> = None;
    // Refusals for a flood are said once per run of them, not per message.
    let mut limited = false;
    while let Some(Ok(msg)) = stream.next().await {
        let text = match msg {
            Message::Text(t) => t,
            Message::Binary(_) => {
                let _ = tx.try_send(Out::error(
                    ErrorCode::BadMessage,
                    "the relay reads JSON text messages only",
                ));
                continue;
            }
            Message::Close(_) => break,
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        if !bucket.take(cfg.burst, cfg.per_second) {
            if !limited {
                limited = true;
                let _ = tx.try_send(Out::error(
                    ErrorCode::RateLimited,
                    format!(
                        "too many messages: {} at once and {} a second after that; the rest are dropped",
                        cfg.burst, cfg.per_second
                    ),
                ));
            }
            continue;
        }
        limited = false;
        let reply = if text.len() > cfg.max_message {
            Some(Out::error(
                ErrorCode::TooLarge,
                format!(
                    "a message is at most {} bytes; this one is {}",
                    cfg.max_message,
                    text.len()
                ),
            ))
        } else {
            match protocol::parse(text.as_str()) {
                Ok(m) => relay.handle((id, &tx), &mut seat, m),
                Err(e) => Some(e),
            }
        };
        if let Some(out) = reply {
            let _ = tx.try_send(out);
        }
    }
    if let Some(s) = &seat {
        relay.leave(id, s);
    }
    drop(tx);
    let _ = writer.await;
}

/// The relay's routes: the WebSocket at `/relay`, and the page's files
/// (when configured) at every other path.
pub fn router(relay: Arc<Relay>) -> Router {
    let dist = relay.config.dist.clone();
    let r = Router::new()
        .route("/relay", get(upgrade))
        .with_state(relay);
    match dist {
        Some(d) => r.fallback_service(tower_http::services::ServeDir::new(d)),
        None => r,
    }
}

/// Serves the relay on `listener` until the process ends, ending idle
/// rooms as it goes.
pub async fn serve(listener: tokio::net::TcpListener, relay: Arc<Relay>) -> std::io::Result<()> {
    let every = (relay.config.idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(10));
    let reaper = Arc::downgrade(&relay);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            match reaper.upgrade() {
                Some(r) => {
                    r.expire();
                }
                None => break,
            }
        }
    });
    axum::serve(listener, router(relay)).await
}
