//! The line between the interviewer's kit and the candidate's window: the
//! browser's `BroadcastChannel` (two windows of one browser, as before the
//! relay), or the relay (any two browsers). The kit's lines (`hello`,
//! `pair`, `ping`, `to`, and the window's `here`, `ack`, `bye`: see
//! `kit/mod.rs`) are the same on both; the relay adds only who may speak:
//! the window joined with the kit's link hears the kit that opened the
//! room and no one else, and answers only it.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{keep_seat, kept_seat, From, Socket};
use crate::page::kept::Kept;

/// The channel both windows of one browser open.
const CHANNEL: &str = "stampede-lab-kit";

type OnLine = Rc<RefCell<Option<Box<dyn FnMut(String)>>>>;

/// What the kit or the window knows of its relay room, for the kit's panel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoomState {
    /// The room's code, once opened or joined.
    pub room: Option<String>,
    /// The link a candidate opens (the kit's).
    pub link: Option<String>,
    /// The other side is connected.
    pub peer: bool,
    /// The last refusal or ending, in words, and the relay's code for it.
    pub note: Option<String>,
    pub refused: Option<String>,
}

/// A room on the relay, from the kit's side or the window's.
pub struct Remote {
    url: String,
    kit: bool,
    socket: RefCell<Option<Rc<Socket>>>,
    on_line: OnLine,
    pub state: RwSignal<RoomState>,
    /// The candidate's window joined since the kit last paired with it.
    pub fresh_peer: StoredValue<bool>,
}

impl Remote {
    fn new(url: String, kit: bool) -> Rc<Remote> {
        Rc::new(Remote {
            url,
            kit,
            socket: RefCell::new(None),
            on_line: Rc::new(RefCell::new(None)),
            state: RwSignal::new(RoomState::default()),
            fresh_peer: StoredValue::new(false),
        })
    }

    /// The relay's address.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A new connection, sending `first` once open.
    fn connect(self: &Rc<Remote>, first: String) {
        if let Some(old) = self.socket.borrow_mut().take() {
            old.close();
        }
        let me = Rc::downgrade(self);
        let s = Socket::connect(&self.url, move |m| {
            if let Some(me) = me.upgrade() {
                me.heard(m);
            }
        });
        match s {
            Ok(s) => {
                s.send(first.clone());
                // After a drop: the seat back with its token (the kit's
                // room, the window's seat), or the first message again if
                // none was given yet.
                let kit = self.kit;
                s.again(move || {
                    Some(
                        match (
                            kit,
                            kept_seat(Kept::KitRoom),
                            kept_seat(Kept::CandidateSeat),
                        ) {
                            (true, Some((room, token)), _) => format!(
                                r#"{{"t":"resume","room":{},"token":{}}}"#,
                                super::json(&room),
                                super::json(&token)
                            ),
                            (false, _, Some((room, token))) => format!(
                                r#"{{"t":"join","room":{},"token":{}}}"#,
                                super::json(&room),
                                super::json(&token)
                            ),
                            _ => first.clone(),
                        },
                    )
                });
                *self.socket.borrow_mut() = Some(s);
            }
            Err(why) => self.state.update(|st| {
                st.note = Some(why);
                st.refused = Some("unreachable".into());
            }),
        }
    }

    fn heard(self: &Rc<Remote>, m: From) {
        let seat = if self.kit {
            Kept::KitRoom
        } else {
            Kept::CandidateSeat
        };
        match m {
            From::Opened { room, token } | From::Joined { room, token, .. } => {
                keep_seat(seat, &room, &token);
                let link = self.kit.then(|| super::join_link(&self.url, "join", &room));
                self.state.update(|s| {
                    s.room = Some(room);
                    s.link = link;
                    s.note = None;
                    s.refused = None;
                });
            }
            From::Line(l) => {
                let f = self.on_line.borrow_mut().take();
                if let Some(mut f) = f {
                    f(l);
                    let mut slot = self.on_line.borrow_mut();
                    if slot.is_none() {
                        *slot = Some(f);
                    }
                }
            }
            From::Peer(here) => {
                if here && self.kit {
                    self.fresh_peer.set_value(true);
                }
                self.state.update(|s| s.peer = here);
            }
            From::Error { code, message } => self.state.update(|s| {
                s.note = Some(format!("The relay refused: {message}"));
                s.refused = Some(code);
            }),
            From::Closed(why) => {
                seat.remove();
                self.state.update(|s| {
                    *s = RoomState {
                        note: Some(format!("The room ended: {why}")),
                        refused: Some("closed".into()),
                        ..RoomState::default()
                    }
                });
            }
            // The socket reconnects by itself; until the seat is back
            // the panel and the badge say so.
            From::Down(why) => self.state.update(|s| {
                s.peer = false;
                s.note = Some(why);
                s.refused = Some("reconnecting".into());
            }),
            From::Up | From::Tally { .. } | From::Voted(_) | From::Asked { .. } => {}
        }
    }

    /// The kit opens a new room (the old one, if any, is left to expire).
    pub fn open_pair(self: &Rc<Remote>) {
        Kept::KitRoom.remove();
        self.state.set(RoomState::default());
        self.connect(r#"{"t":"open-pair"}"#.into());
    }

    /// The kit takes up the room `code`: with the token this tab holds for
    /// it, if any (a reload); a kit without it is refused by the relay.
    pub fn take(self: &Rc<Remote>, code: &str) {
        let token = kept_seat(Kept::KitRoom)
            .filter(|(c, _)| c == code)
            .map_or_else(|| "0".repeat(32), |(_, t)| t);
        self.state.set(RoomState::default());
        self.connect(format!(
            r#"{{"t":"resume","room":{},"token":{}}}"#,
            super::json(code),
            super::json(&token)
        ));
    }

    fn post(&self, text: &str) {
        // Refused, with no seat: the relay would refuse each line too ("open
        // or join a room first"), and that second refusal would replace the
        // reason on the panel a second later (an unpaired kit says `hello`
        // each second): a second kit read "open or join a room first" where
        // it had been told the room is another kit's.
        if self
            .state
            .with_untracked(|s| s.room.is_none() && s.refused.is_some())
        {
            return;
        }
        if let Some(s) = self.socket.borrow().as_ref() {
            s.line(text);
        }
    }
}

/// The kit's way to the candidate's window, or the window's to the kit.
/// (The relay's side is held in the reactive system's local storage, so
/// that a view's closures that send on it stay `Send`.)
#[derive(Clone)]
pub enum Wire {
    Local(Option<web_sys::BroadcastChannel>),
    Relay(StoredValue<Rc<Remote>, LocalStorage>),
}

impl Wire {
    /// The kit's: the relay when the link names one (taking up the room
    /// this tab opened before a reload), else the browser's channel.
    pub fn for_kit() -> Wire {
        match super::configured() {
            super::Configured::At(url) => {
                let r = Remote::new(url, true);
                if let Some((code, _)) = kept_seat(Kept::KitRoom) {
                    r.take(&code);
                }
                Wire::Relay(StoredValue::new_local(r))
            }
            _ => Wire::local(),
        }
    }

    /// A page window's: the relay when its link joins a room
    /// (`?join=CODE&relay=…`), kept for the tab; else the browser's
    /// channel.
    pub fn for_window() -> Wire {
        let query = crate::web::window().location().search().unwrap_or_default();
        let joined = super::query_value(&query, "join")
            .and_then(|c| room_code::typed(&c))
            .inspect(|c| {
                // A new link's room replaces a seat kept for another.
                if kept_seat(Kept::CandidateSeat).is_none_or(|(k, _)| &k != c) {
                    Kept::CandidateSeat.set(&format!("{c} -"));
                }
            })
            .or_else(|| {
                Kept::CandidateSeat
                    .get()
                    .and_then(|v| room_code::typed(v.split(' ').next()?))
            });
        match (joined, super::configured()) {
            (Some(code), super::Configured::At(url)) => {
                let r = Remote::new(url, false);
                let token = kept_seat(Kept::CandidateSeat)
                    .filter(|(c, _)| *c == code)
                    .map_or("null".to_string(), |(_, t)| super::json(&t));
                r.connect(format!(
                    r#"{{"t":"join","room":{},"token":{token}}}"#,
                    super::json(&code)
                ));
                Wire::Relay(StoredValue::new_local(r))
            }
            _ => Wire::local(),
        }
    }

    fn local() -> Wire {
        Wire::Local(web_sys::BroadcastChannel::new(CHANNEL).ok())
    }

    pub fn remote(&self) -> Option<Rc<Remote>> {
        match self {
            Wire::Relay(r) => Some(r.get_value()),
            Wire::Local(_) => None,
        }
    }

    /// Sends a line to the other side.
    pub fn post(&self, text: &str) {
        match self {
            Wire::Local(Some(ch)) => {
                let _ = ch.post_message(&JsValue::from_str(text));
            }
            Wire::Local(None) => {}
            Wire::Relay(r) => r.with_value(|r| r.post(text)),
        }
    }

    /// Every line from the other side goes to `f`, for the page's life.
    pub fn on_line(&self, mut f: impl FnMut(String) + 'static) {
        match self {
            Wire::Local(Some(ch)) => {
                let cb = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                    move |e: web_sys::MessageEvent| {
                        if let Some(text) = e.data().as_string() {
                            f(text);
                        }
                    },
                );
                ch.set_onmessage(Some(cb.as_ref().unchecked_ref()));
                cb.forget();
            }
            Wire::Local(None) => {}
            Wire::Relay(r) => r.with_value(|r| *r.on_line.borrow_mut() = Some(Box::new(f))),
        }
    }
}
