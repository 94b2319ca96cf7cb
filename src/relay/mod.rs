//! The way to the room's relay (`crates/stampede-relay`): a WebSocket to
//! a relay the link names (`?relay=ws://HOST:PORT`, or `wss://`), kept for
//! the tab's life because the page rewrites its own link. Without one, the
//! page sends nothing anywhere: the kit pairs through the browser
//! ([`Wire::Local`]) and presenter mode counts hands by key.
//!
//! The relay's messages are JSON objects tagged by `t`
//! (docs/ARCHITECTURE.md has the protocol); the page reads them into
//! [`From`] and never trusts them further than that: a field of the wrong
//! type is a message ignored.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::page::kept::Kept;
use crate::web::window;

pub mod wire;

/// The longest relay address the page takes.
const MAX_URL: usize = 300;

/// A relay address as given: `ws://` or `wss://`, a host, no spaces or
/// quotes; a bare host and port gets the relay's path (`/relay`). None for
/// anything else.
pub fn address(given: &str) -> Option<String> {
    let g = given.trim();
    let lower = g.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("ws://")
        .or_else(|| lower.strip_prefix("wss://"))?;
    if g.len() > MAX_URL
        || rest.is_empty()
        || rest.starts_with('/')
        || g.chars()
            .any(|c| c.is_whitespace() || c.is_control() || "\"'<>\\`".contains(c))
        || g.contains(['?', '#'])
    {
        return None;
    }
    let scheme_len = g.len() - rest.len();
    let path_at = g[scheme_len..].find('/').map(|i| i + scheme_len);
    Some(match path_at {
        None => format!("{g}/relay"),
        Some(i) if &g[i..] == "/" => format!("{}/relay", &g[..i]),
        Some(_) => g.to_string(),
    })
}

/// A key's value in a query (`?a=1&b=2`), percent-decoded.
pub fn query_value(query: &str, key: &str) -> Option<String> {
    query
        .trim_start_matches('?')
        .split('&')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .map(|v| {
            js_sys::decode_uri_component(&v.replace('+', " "))
                .ok()
                .and_then(|s| s.as_string())
                .unwrap_or_default()
        })
}

/// What the link said of a relay: none, a good address, or a bad one
/// (with why).
#[derive(Clone, Debug, PartialEq)]
pub enum Configured {
    None,
    At(String),
    Bad(String),
}

/// The relay this tab uses: the link's `relay=`, kept for the tab (the
/// page rewrites its link), else the one kept.
pub fn configured() -> Configured {
    let query = window().location().search().unwrap_or_default();
    match query_value(&query, "relay") {
        Some(given) => match address(&given) {
            Some(a) => {
                Kept::Relay.set(&a);
                Configured::At(a)
            }
            None => Configured::Bad(format!(
                "The link's relay address ({}) is not a ws:// or wss:// address; working without a relay.",
                given.chars().take(80).collect::<String>()
            )),
        },
        None => Kept::Relay
            .get()
            .and_then(|a| address(&a))
            .map_or(Configured::None, Configured::At),
    }
}

/// The page's own address without its query and step, for the links it
/// hands out (a candidate's, a phone's).
pub fn page_base() -> String {
    let href = window().location().href().unwrap_or_default();
    href.split(['?', '#']).next().unwrap_or("").to_string()
}

/// A link to this page that joins `room` on `relay`, with `key` (`join` for
/// a candidate's window, `vote` for a phone).
pub fn join_link(relay: &str, key: &str, room: &str) -> String {
    let enc = js_sys::encode_uri_component(relay)
        .as_string()
        .unwrap_or_default();
    format!("{}?{key}={room}&relay={enc}", page_base())
}

/// A room code shown to people: groups of four or five.
pub fn grouped(code: &str) -> String {
    let c: Vec<char> = code.chars().collect();
    c.chunks(if c.len() == 13 { 5 } else { 4 })
        .map(|g| g.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("-")
}

/// A relay's message, read.
#[derive(Clone, Debug, PartialEq)]
pub enum From {
    Opened {
        room: String,
        token: String,
    },
    Joined {
        room: String,
        token: String,
        options: u8,
        words: String,
    },
    Line(String),
    Peer(bool),
    Tally {
        counts: Vec<u32>,
        phones: u32,
    },
    Voted(Option<u8>),
    Asked {
        options: u8,
        words: String,
    },
    Error {
        code: String,
        message: String,
    },
    Closed(String),
    /// The connection opened, or went (with why).
    Up,
    Down(String),
}

fn text(o: &JsValue, k: &str) -> Option<String> {
    js_sys::Reflect::get(o, &JsValue::from_str(k))
        .ok()?
        .as_string()
}

fn num(o: &JsValue, k: &str) -> Option<f64> {
    js_sys::Reflect::get(o, &JsValue::from_str(k))
        .ok()?
        .as_f64()
}

fn small(o: &JsValue, k: &str) -> Option<u8> {
    num(o, k)
        .filter(|n| (0.0..=255.0).contains(n))
        .map(|n| n as u8)
}

/// Reads one message from the relay; None for anything else.
pub fn read(raw: &str) -> Option<From> {
    if raw.len() > 16 * 1024 {
        return None;
    }
    let o = js_sys::JSON::parse(raw).ok()?;
    if !o.is_object() {
        return None;
    }
    Some(match text(&o, "t")?.as_str() {
        "opened" => From::Opened {
            room: text(&o, "room")?,
            token: text(&o, "token")?,
        },
        "joined" => From::Joined {
            room: text(&o, "room")?,
            token: text(&o, "token")?,
            options: small(&o, "options")?,
            words: text(&o, "words").unwrap_or_default(),
        },
        "line" => From::Line(text(&o, "line")?),
        "peer" => From::Peer(
            js_sys::Reflect::get(&o, &JsValue::from_str("here"))
                .ok()?
                .as_bool()?,
        ),
        "tally" => {
            let arr = js_sys::Reflect::get(&o, &JsValue::from_str("counts")).ok()?;
            let arr: js_sys::Array = arr.dyn_into().ok()?;
            let counts = arr
                .iter()
                .take(8)
                .map(|v| v.as_f64().map(|n| n.clamp(0.0, 1e6) as u32))
                .collect::<Option<Vec<_>>>()?;
            From::Tally {
                counts,
                phones: num(&o, "phones").map_or(0, |n| n.clamp(0.0, 1e6) as u32),
            }
        }
        "voted" => From::Voted(small(&o, "option")),
        "asked" => From::Asked {
            options: small(&o, "options")?,
            words: text(&o, "words").unwrap_or_default(),
        },
        "error" => From::Error {
            code: text(&o, "code").unwrap_or_default(),
            message: text(&o, "message").unwrap_or_default(),
        },
        "closed" => From::Closed(text(&o, "why").unwrap_or_default()),
        _ => return None,
    })
}

/// A string as a JSON string literal.
pub fn json(s: &str) -> String {
    js_sys::JSON::stringify(&JsValue::from_str(s))
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_else(|| "\"\"".into())
}

/// The first wait before reconnecting, and the longest (ms): each failed
/// try doubles the wait, with a quarter either way at random so that a
/// room's phones do not all come back in the same instant.
const RETRY_FIRST_MS: f64 = 500.0;
const RETRY_MOST_MS: f64 = 8_000.0;

/// The wait before reconnection try `n` (0 the first), for a random
/// `r` in 0..1.
pub fn retry_wait_ms(n: u32, r: f64) -> f64 {
    let base = (RETRY_FIRST_MS * 2f64.powi(n.min(16) as i32)).min(RETRY_MOST_MS);
    base * (0.75 + 0.5 * r.clamp(0.0, 1.0))
}

type OnFrom = Rc<RefCell<dyn FnMut(From)>>;
type Again = RefCell<Option<Box<dyn Fn() -> Option<String>>>>;

/// One WebSocket to the relay: messages sent before it opens wait, and
/// every message from it, and its opening and closing, go to `on`. When
/// the connection drops it is made again, with a growing wait
/// ([`retry_wait_ms`]), until [`Socket::close`]; each new connection first
/// sends what [`Socket::again`] gives (taking the seat back with its
/// token).
pub struct Socket {
    url: String,
    ws: RefCell<Option<web_sys::WebSocket>>,
    waiting: RefCell<Vec<String>>,
    on: OnFrom,
    again: Again,
    /// Failed tries since the last open.
    tries: Cell<u32>,
    closed: Cell<bool>,
}

impl Socket {
    pub fn connect(url: &str, on: impl FnMut(From) + 'static) -> Result<Rc<Socket>, String> {
        let s = Rc::new(Socket {
            url: url.to_string(),
            ws: RefCell::new(None),
            waiting: RefCell::new(Vec::new()),
            on: Rc::new(RefCell::new(on)),
            again: RefCell::new(None),
            tries: Cell::new(0),
            closed: Cell::new(false),
        });
        s.open()?;
        Ok(s)
    }

    /// What a new connection sends first after a drop (None: nothing).
    pub fn again(&self, f: impl Fn() -> Option<String> + 'static) {
        *self.again.borrow_mut() = Some(Box::new(f));
    }

    fn open(self: &Rc<Socket>) -> Result<(), String> {
        let url = &self.url;
        let ws = web_sys::WebSocket::new(url).map_err(|e| {
            format!(
                "The relay at {url} cannot be reached from this page: {}",
                e.as_string()
                    .or_else(|| js_sys::Reflect::get(&e, &"message".into())
                        .ok()?
                        .as_string())
                    .unwrap_or_else(|| "the browser refused the address".into())
            )
        })?;
        {
            let on = self.on.clone();
            let cb = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                move |e: web_sys::MessageEvent| {
                    if let Some(m) = e.data().as_string().and_then(|t| read(&t)) {
                        (on.borrow_mut())(m);
                    }
                },
            );
            ws.set_onmessage(Some(cb.as_ref().unchecked_ref()));
            cb.forget();
        }
        {
            let me = Rc::downgrade(self);
            let cb = Closure::<dyn FnMut()>::new(move || {
                let Some(me) = me.upgrade() else { return };
                let again = me.tries.replace(0) > 0;
                if let Some(ws) = me.ws.borrow().as_ref() {
                    if again {
                        if let Some(first) = me.again.borrow().as_ref().and_then(|f| f()) {
                            let _ = ws.send_with_str(&first);
                        }
                    }
                    for m in me.waiting.borrow_mut().drain(..) {
                        let _ = ws.send_with_str(&m);
                    }
                }
                (me.on.borrow_mut())(From::Up);
            });
            ws.set_onopen(Some(cb.as_ref().unchecked_ref()));
            cb.forget();
        }
        {
            let me = Rc::downgrade(self);
            let cb = Closure::<dyn FnMut()>::new(move || {
                let Some(me) = me.upgrade() else { return };
                if me.closed.get() {
                    return;
                }
                let n = me.tries.get();
                me.tries.set(n + 1);
                let wait = retry_wait_ms(n, js_sys::Math::random());
                (me.on.borrow_mut())(From::Down(format!(
                    "The connection to the relay ({}) dropped: reconnecting in {} s (try {})…",
                    me.url,
                    // Whole seconds as an integer: `{:.0}` on an f64 links
                    // the standard library's float printing into the page.
                    (wait / 1000.0).ceil() as u64,
                    n + 1
                )));
                let again = Rc::downgrade(&me);
                leptos::prelude::set_timeout(
                    move || {
                        if let Some(s) = again.upgrade() {
                            if !s.closed.get() {
                                if let Err(why) = s.open() {
                                    (s.on.borrow_mut())(From::Down(why));
                                }
                            }
                        }
                    },
                    std::time::Duration::from_millis(wait as u64),
                );
            });
            ws.set_onclose(Some(cb.as_ref().unchecked_ref()));
            cb.forget();
        }
        *self.ws.borrow_mut() = Some(ws);
        Ok(())
    }

    /// Sends a message (raw JSON), or keeps it until the socket opens; a
    /// message while the connection is down is dropped (the seat is taken
    /// back when it comes again, and the kit's lines are acknowledged).
    pub fn send(&self, msg: String) {
        let Some(ws) = self.ws.borrow().clone() else {
            return;
        };
        if ws.ready_state() == web_sys::WebSocket::OPEN {
            let _ = ws.send_with_str(&msg);
        } else if ws.ready_state() == web_sys::WebSocket::CONNECTING && self.tries.get() == 0 {
            self.waiting.borrow_mut().push(msg);
        }
    }

    /// A line for the other side of a pairing room.
    pub fn line(&self, line: &str) {
        self.send(format!(r#"{{"t":"send","line":{}}}"#, json(line)));
    }

    /// Closes the connection for good (no reconnecting).
    pub fn close(&self) {
        self.closed.set(true);
        if let Some(ws) = self.ws.borrow().as_ref() {
            let _ = ws.close();
        }
    }
}

/// A room's code and the token this tab holds for it, kept as `code token`.
pub fn kept_seat(k: Kept) -> Option<(String, String)> {
    let v = k.get()?;
    let (c, t) = v.split_once(' ')?;
    (c.len() == 13 && t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| (c.to_string(), t.to_string()))
}

pub fn keep_seat(k: Kept, room: &str, token: &str) {
    k.set(&format!("{room} {token}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relay_address_is_ws_or_wss_and_gets_its_path() {
        assert_eq!(
            address("ws://10.0.0.5:8090").as_deref(),
            Some("ws://10.0.0.5:8090/relay")
        );
        assert_eq!(
            address("wss://room.example/").as_deref(),
            Some("wss://room.example/relay")
        );
        assert_eq!(
            address("wss://h/x/relay").as_deref(),
            Some("wss://h/x/relay")
        );
        for bad in [
            "http://h:1",
            "ws://",
            "ws:///x",
            "javascript:alert(1)",
            "ws://h\"x",
            "ws://h?x=1",
            "ws://a b",
        ] {
            assert_eq!(address(bad), None, "{bad}");
        }
        assert_eq!(address(&format!("ws://{}", "a".repeat(400))), None);
    }

    #[test]
    fn reconnecting_waits_longer_each_try_up_to_a_bound() {
        for r in [0.0, 0.3, 0.5, 1.0] {
            let waits: Vec<f64> = (0..12).map(|n| retry_wait_ms(n, r)).collect();
            assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
            assert!(waits[0] >= 0.75 * RETRY_FIRST_MS && waits[0] <= 1.25 * RETRY_FIRST_MS);
            assert!(waits[11] <= 1.25 * RETRY_MOST_MS && waits[11] >= 0.75 * RETRY_MOST_MS);
        }
        assert!(retry_wait_ms(u32::MAX, 2.0) <= 1.25 * RETRY_MOST_MS);
    }

    #[test]
    fn codes_are_grouped_for_reading_aloud() {
        assert_eq!(grouped("ABCDEFGHJKMNP"), "ABCDE-FGHJK-MNP");
        assert_eq!(grouped("K7Q2"), "K7Q2");
    }
}
