//! The room votes from their phones (with a relay: `?relay=ws://…`).
//!
//! - **The projector** (presenter mode, while a tour step asks): a QR code
//!   and a short link (`data-vote-link`) to the phone page, and the phones'
//!   tally (`data-vote-tally`), live. The phones' votes join the hands
//!   counted by key (A–D), which work as before with no relay.
//! - **The phone** (`?vote=CODE&relay=…`): the question and one large
//!   button per option (`data-vote-option`). One vote per phone (a random
//!   token the relay gave it, kept on the phone), changed at will; no name
//!   is asked or kept.
//!
//! The relay opens the room when the vote is first shown, and every step
//! that asks clears the votes (`ask`).

use std::cell::RefCell;
use std::rc::Rc;

use catalogue::tour::{self, Answer, Place};
use leptos::prelude::*;
use web_sys::Element;

use crate::dom::{el, put, set, set_text, text_el};
use crate::page::kept::Kept;
use crate::page::{Bet, Page};
use crate::relay::{self, From, Socket};

/// The letters of the options.
const LETTERS: [&str; 6] = ["A", "B", "C", "D", "E", "F"];
/// The most bytes a question's words take on the wire (the relay's bound).
const MAX_WORDS: usize = 400;

/// True when the link is a phone's vote page.
pub fn wanted(query: &str) -> bool {
    relay::query_value(query, "vote").is_some()
}

/// The key-counted hands and the phones' votes, option by option.
pub fn with_phones(hands: [u32; 4], phones: [u32; 4]) -> [u32; 4] {
    let mut out = hands;
    for (o, p) in out.iter_mut().zip(phones) {
        *o = o.saturating_add(p);
    }
    out
}

/// The question's words for the phones: the question, then an option per
/// line, cut to the relay's bound on a character's edge.
fn words(question: &str, answers: &[Answer]) -> String {
    let mut w = question.trim().to_string();
    for a in answers {
        w.push('\n');
        w.push_str(&a.label);
    }
    if w.len() > MAX_WORDS {
        let mut cut = MAX_WORDS;
        while !w.is_char_boundary(cut) {
            cut -= 1;
        }
        w.truncate(cut);
    }
    w
}

/// The tally's words on the projector.
fn tally_words(counts: &[u32], phones: u32) -> String {
    let voted: u32 = counts.iter().sum();
    let each = counts
        .iter()
        .zip(LETTERS)
        .map(|(n, l)| format!("{l} {n}"))
        .collect::<Vec<_>>()
        .join(" · ");
    let phones_word = if phones == 1 { "phone" } else { "phones" };
    format!("{phones} {phones_word} in the room, {voted} voted: {each}")
}

struct Panel {
    root: Element,
    qr: Element,
    link: Element,
    tally: Element,
    note: Element,
    socket: RefCell<Option<Rc<Socket>>>,
    asked: RefCell<Option<Place>>,
}

/// Presenter mode's vote from phones, under the step's options in `host`;
/// returns the phones' votes per option (none without a relay). `question`
/// is the step's question as the tour wrote it, sent to the phones.
pub(crate) fn mount(
    d: Page,
    picks: RwSignal<Option<(Place, Vec<Answer>)>>,
    question: &Element,
    host: &Element,
) -> RwSignal<[u32; 4]> {
    let phones = RwSignal::new([0u32; 4]);
    let relay::Configured::At(url) = relay::configured() else {
        return phones;
    };
    let root = el("div", "room-vote");
    set(&root, "data-room-vote", "");
    set(&root, "hidden", "");
    let qr = el("div", "room-vote-qr");
    let side = el("div", "room-vote-side");
    put(
        &side,
        &text_el("p", "room-vote-title", "Vote from your phone"),
    );
    let link = el("a", "room-vote-link");
    set(&link, "target", "_blank");
    set(&link, "rel", "noopener");
    put(&side, &link);
    let tally = text_el("p", "room-vote-tally", "Opening the room's vote…");
    set(&tally, "data-vote-tally", "");
    set(&tally, "aria-live", "polite");
    put(&side, &tally);
    let note = el("p", "room-vote-note");
    set(&note, "role", "alert");
    set(&note, "hidden", "");
    put(&side, &note);
    put(&root, &qr);
    put(&root, &side);
    put(host, &root);
    let panel = Rc::new(Panel {
        root,
        qr,
        link,
        tally,
        note,
        socket: RefCell::new(None),
        asked: RefCell::new(None),
    });
    let panel = StoredValue::new_local(panel);
    let bet = d.bet();
    let presenting = d.presenting();
    let question = question.clone();
    crate::dom::effect(move || {
        let shown = bet.get() == Bet::Asking && presenting.get();
        let p = panel.get_value();
        let _ = p.root.toggle_attribute_with_force("hidden", !shown);
        if !shown {
            return;
        }
        if p.socket.borrow().is_none() {
            open(&p, &url, phones);
        }
        picks.with(|picks| {
            if let Some((place, answers)) = picks {
                if *p.asked.borrow() != Some(*place) {
                    *p.asked.borrow_mut() = Some(*place);
                    phones.set([0; 4]);
                    let question = question
                        .text_content()
                        .filter(|q| !q.is_empty())
                        .unwrap_or_else(|| tour::place_name(*place));
                    let n = answers.len().clamp(2, LETTERS.len());
                    if let Some(s) = p.socket.borrow().as_ref() {
                        s.send(format!(
                            r#"{{"t":"ask","options":{n},"words":{}}}"#,
                            relay::json(&words(&question, answers))
                        ));
                    }
                }
            }
        });
    });
    phones
}

/// Opens (or, after a reload, takes up) the room's vote.
fn open(p: &Rc<Panel>, url: &str, phones: RwSignal<[u32; 4]>) {
    let me = Rc::downgrade(p);
    let relay_url = url.to_string();
    let s = Socket::connect(url, move |m| {
        let Some(p) = me.upgrade() else { return };
        match m {
            From::Opened { room, token } => {
                relay::keep_seat(Kept::VoteRoom, &room, &token);
                let link = relay::join_link(&relay_url, "vote", &room);
                set(&p.link, "href", &link);
                set(&p.link, "data-vote-link", &link);
                set_text(&p.link, &link);
                crate::page::qr_code::draw(
                    &p.qr,
                    &link,
                    &format!("QR code of the room's vote: {link}"),
                );
                set_text(&p.tally, &tally_words(&[0; 4], 0));
                let _ = p.note.set_attribute("hidden", "");
            }
            From::Tally { counts, phones: n } => {
                let mut four = [0u32; 4];
                for (f, c) in four.iter_mut().zip(&counts) {
                    *f = *c;
                }
                phones.set(four);
                set_text(&p.tally, &tally_words(&counts, n));
                set(
                    &p.tally,
                    "data-vote-tally",
                    &counts
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(","),
                );
            }
            // The room kept from before a reload has ended: a new one.
            From::Error { code, .. } if code == "no-room" && Kept::VoteRoom.get().is_some() => {
                Kept::VoteRoom.remove();
                if let Some(s) = p.socket.borrow().as_ref() {
                    s.send(r#"{"t":"open-vote","options":4}"#.to_string());
                }
                *p.asked.borrow_mut() = None;
            }
            From::Error { message, .. } | From::Closed(message) | From::Down(message) => {
                set_text(&p.note, &format!("The room's vote: {message}"));
                let _ = p.note.remove_attribute("hidden");
            }
            _ => {}
        }
    });
    match s {
        Ok(s) => {
            let first = match relay::kept_seat(Kept::VoteRoom) {
                Some((room, token)) => format!(
                    r#"{{"t":"resume","room":{},"token":{}}}"#,
                    relay::json(&room),
                    relay::json(&token)
                ),
                None => r#"{"t":"open-vote","options":4}"#.to_string(),
            };
            s.send(first);
            // After a drop: the room back with its token.
            s.again(|| {
                relay::kept_seat(Kept::VoteRoom).map(|(room, token)| {
                    format!(
                        r#"{{"t":"resume","room":{},"token":{}}}"#,
                        relay::json(&room),
                        relay::json(&token)
                    )
                })
            });
            *p.socket.borrow_mut() = Some(s);
            // A new step asks again once the room is open.
            *p.asked.borrow_mut() = None;
        }
        Err(why) => {
            set_text(&p.note, &why);
            let _ = p.note.remove_attribute("hidden");
        }
    }
}

/// The phone's page: the question and a button per option.
#[component]
pub fn Phone() -> impl IntoView {
    if let Some(body) = crate::web::document().body() {
        let _ = body.class_list().add_1("phone-window");
    }
    let query = crate::web::window().location().search().unwrap_or_default();
    let code = relay::query_value(&query, "vote").and_then(|c| room_code::typed(&c));
    let words = RwSignal::new(String::new());
    let options = RwSignal::new(0u8);
    let mine = RwSignal::new(None::<u8>);
    let note = RwSignal::new(None::<String>);
    let socket = StoredValue::new_local(None::<Rc<Socket>>);
    match (code, relay::configured()) {
        (Some(code), relay::Configured::At(url)) => {
            let s = Socket::connect(&url, move |m| match m {
                From::Joined {
                    room,
                    token,
                    options: n,
                    words: w,
                } => {
                    relay::keep_seat(Kept::PhoneSeat, &room, &token);
                    options.set(n);
                    words.set(w);
                    note.set(None);
                }
                From::Asked {
                    options: n,
                    words: w,
                } => {
                    options.set(n);
                    words.set(w);
                    mine.set(None);
                }
                From::Voted(v) => mine.set(v),
                From::Error { message, .. } => note.set(Some(message)),
                From::Closed(why) => {
                    options.set(0);
                    note.set(Some(format!("The vote has ended: {why}")));
                }
                From::Down(why) => note.set(Some(why)),
                _ => {}
            });
            match s {
                Ok(s) => {
                    let token = relay::kept_seat(Kept::PhoneSeat)
                        .filter(|(c, _)| *c == code)
                        .map_or("null".to_string(), |(_, t)| relay::json(&t));
                    s.send(format!(
                        r#"{{"t":"join","room":{},"token":{token}}}"#,
                        relay::json(&code)
                    ));
                    // After a drop: the same seat (and vote) with its token.
                    s.again(move || {
                        let token = relay::kept_seat(Kept::PhoneSeat)
                            .filter(|(c, _)| *c == code)
                            .map_or("null".to_string(), |(_, t)| relay::json(&t));
                        Some(format!(
                            r#"{{"t":"join","room":{},"token":{token}}}"#,
                            relay::json(&code)
                        ))
                    });
                    socket.set_value(Some(s));
                }
                Err(why) => note.set(Some(why)),
            }
        }
        (None, _) => note.set(Some(
            "This vote link has no room code in it: scan the code on the screen again.".into(),
        )),
        (Some(_), relay::Configured::Bad(why)) => note.set(Some(why)),
        (Some(_), relay::Configured::None) => note.set(Some(
            "This vote link names no relay: scan the code on the screen again.".into(),
        )),
    }
    let vote = move |i: u8| {
        socket.with_value(|s| {
            if let Some(s) = s {
                s.send(format!(r#"{{"t":"vote","option":{i}}}"#));
            }
        })
    };
    let buttons = move || {
        let w = words.get();
        let labels: Vec<String> = w.lines().skip(1).map(str::to_string).collect();
        (0..options.get())
            .map(|i| {
                let label = labels.get(usize::from(i)).cloned().unwrap_or_default();
                view! {
                    <button type="button" class="phone-option" data-vote-option=i
                        aria-pressed=move || if mine.get() == Some(i) { "true" } else { "false" }
                        on:click=move |_| vote(i)>
                        <b>{LETTERS[usize::from(i).min(LETTERS.len() - 1)]}</b> " " {label}
                    </button>
                }
            })
            .collect_view()
    };
    view! {
        <main class="phone" data-phone-vote="">
            <h1>"Stampede Lab · the room's vote"</h1>
            <p class="phone-question">{move || words.with(|w| w.lines().next().unwrap_or("").to_string())}</p>
            <div class="phone-options">{buttons}</div>
            <p class="phone-mine" data-vote-mine=move || mine.get().map(|i| LETTERS[usize::from(i).min(5)])>
                {move || match mine.get() {
                    Some(i) => format!("Your vote: {}. Tap another to change it.", LETTERS[usize::from(i).min(5)]),
                    None => "Tap your answer. Your vote is anonymous: no name is asked or kept.".to_string(),
                }}
            </p>
            <p class="phone-note" role="alert" data-vote-note="" hidden=move || note.with(Option::is_none)>
                {move || note.get()}
            </p>
        </main>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phones_join_the_hands() {
        assert_eq!(with_phones([1, 0, 2, 0], [3, 1, 0, 0]), [4, 1, 2, 0]);
        assert_eq!(with_phones([u32::MAX, 0, 0, 0], [1, 0, 0, 0])[0], u32::MAX);
    }

    #[test]
    fn the_tally_says_phones_and_votes() {
        assert_eq!(
            tally_words(&[3, 5, 0, 1], 12),
            "12 phones in the room, 9 voted: A 3 · B 5 · C 0 · D 1"
        );
        assert_eq!(
            tally_words(&[0, 0], 1),
            "1 phone in the room, 0 voted: A 0 · B 0"
        );
    }
}
