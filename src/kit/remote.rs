//! The kit's relay panel: "Pair a candidate" opens a room on the relay and
//! gives the link (`data-pair-link`) and its code (`data-pair-room`) to
//! send the candidate; their window, in any browser, joins with it, and the
//! kit pairs with it as it answers. Without a relay the panel says so
//! (`data-relay="off"`): pairing then works between windows of this
//! browser, as before.

use std::rc::Rc;

use leptos::prelude::*;

use crate::relay::wire::Remote;
use crate::relay::{grouped, Configured};

/// True (once) when the window that just joined the kit's relay room
/// answers with `code`: the kit pairs with it.
pub(super) fn pairs_now(
    remote: Option<&Remote>,
    code: &str,
    paired: RwSignal<Option<String>>,
) -> bool {
    let Some(r) = remote else { return false };
    if !r.fresh_peer.get_value() || paired.get_untracked().as_deref() == Some(code) {
        return false;
    }
    r.fresh_peer.set_value(false);
    true
}

/// A candidate's window joined through the relay: what the relay says
/// (a bad code, a seat taken, the room ended, the connection gone) shows
/// on the window's badge (`data-relay-note`).
pub(super) fn notes_on(r: Rc<Remote>, badge: web_sys::Element) {
    let state = r.state;
    crate::dom::effect(move || {
        state.with(|s| match &s.note {
            Some(note) => {
                crate::dom::set_text(&badge, note);
                crate::dom::set(
                    &badge,
                    "data-relay-note",
                    s.refused.as_deref().unwrap_or(""),
                );
                let _ = badge.remove_attribute("hidden");
            }
            None => {
                // Back from a note (a dropped connection): the room again.
                let was_note = badge.has_attribute("data-relay-note");
                let _ = badge.remove_attribute("data-relay-note");
                if s.room.is_some() && (was_note || badge.has_attribute("hidden")) {
                    crate::dom::set_text(
                        &badge,
                        "Joined the interviewer's room: waiting for the kit.",
                    );
                    let _ = badge.remove_attribute("hidden");
                }
            }
        })
    });
}

/// The panel above the kit's pairing line.
pub(super) fn panel(remote: Option<Rc<Remote>>) -> AnyView {
    let Some(r) = remote else {
        let why = match crate::relay::configured() {
            Configured::Bad(why) => why,
            _ => "No relay: the kit pairs with a window of this browser only. To pair a candidate on another machine, start the relay (make room) and open the kit with ?relay=ws://HOST:PORT.".to_string(),
        };
        return view! { <p class="kit-relay" data-relay="off">{why}</p> }.into_any();
    };
    let state = r.state;
    let open = {
        let r = r.clone();
        move |_| r.open_pair()
    };
    let typed = RwSignal::new(String::new());
    let take = {
        let r = r.clone();
        move |e: leptos::ev::SubmitEvent| {
            e.prevent_default();
            match room_code::typed(&typed.get_untracked()) {
                Some(code) => r.take(&code),
                None => state.update(|s| {
                    s.note = Some("A relay room's code is 13 letters and digits (dashes and spaces are fine).".into());
                    s.refused = Some("typed".into());
                }),
            }
        }
    };
    let url = r.url().to_string();
    let link = move || {
        state.with(|s| {
            s.room.clone().map(|room| {
                let link = s.link.clone().unwrap_or_default();
                let peer = s.peer;
                view! {
                    <p class="kit-relay-link">
                        "Send the candidate this link (any browser, any machine): "
                        <a data-pair-link=link.clone() href=link.clone() target="_blank" rel="noopener">{link.clone()}</a>
                        " · room code " <strong class="kit-code" data-pair-room=room.clone()>{grouped(&room)}</strong>
                        " · "
                        <span data-relay-peer=if peer { "1" } else { "0" }>
                            {if peer { "their window is connected." } else { "waiting for their window to open it." }}
                        </span>
                    </p>
                }
            })
        })
    };
    view! {
        <div class="kit-relay" data-relay="on">
            <p>
                <button type="button" data-pair-start="" on:click=open>"Pair a candidate"</button>
                " through the relay at " <code>{url}</code>
            </p>
            {link}
            <p class="kit-relay-note" role="alert" data-relay-note=move || state.with(|s| s.refused.clone())
                hidden=move || state.with(|s| s.note.is_none())>
                {move || state.with(|s| s.note.clone())}
            </p>
            <form class="kit-relay-take" on:submit=take>
                <label>"Or take up a room this kit opened (after a reload): "
                    <input type="text" size="17" maxlength="40" autocomplete="off" data-relay-room-input=""
                        prop:value=move || typed.get()
                        on:input=move |e| typed.set(event_target_value(&e)) />
                </label>
                " " <button type="submit">"Take up"</button>
            </form>
        </div>
    }
    .into_any()
}
