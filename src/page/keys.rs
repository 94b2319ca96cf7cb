//! The page's key map: which command a key sends, and where a focused
//! control keeps the key for itself. No web types: the app hands in the
//! key and what has the focus, and carries the command out.
//!
//! Space always plays and pauses, and the left and right arrows step the
//! clock, wherever the focus is, except where the key types or moves a
//! control: a text or number field, or a slider (its arrows are its own).
//! A focused button does not swallow Space (Enter still presses it), and
//! a picker keeps Up and Down but gives Left and Right to the clock.
//! In the tour, the arrows and Page Up/Down (what presentation clickers
//! send) move through the steps instead; `.` (a clicker's other button)
//! plays and pauses like Space; End jumps to the end of the run.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::action::Action;
use super::{Command, Page};

/// Who takes a key before the page: a trainer's list (Page Up and Down;
/// true when it took the key), the room (presenter mode, full screen, the
/// card's rows, help; true when it took it), the open A/B view (the
/// transport's keys, on its own clock).
#[derive(Clone, Copy)]
pub struct Takers {
    pub list: Callback<web_sys::KeyboardEvent, bool>,
    pub room: Callback<String, bool>,
    pub ab: Callback<Command>,
}

/// The page's keys, as long as the page lives.
pub fn listen(page: Page, takers: Takers) {
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        // With a trainer's list open, Page Up and Down step the list.
        if takers.list.run(ev.clone()) {
            return;
        }
        let key = ev.key();
        let Some(command) = command(&key, page.tour().get_untracked().is_some()) else {
            return;
        };
        let target = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        let keeps_key = target.is_some_and(|el| {
            let (tag, kind) = (el.tag_name(), el.get_attribute("type").unwrap_or_default());
            let editable = el.get_attribute("contenteditable").is_some();
            kept_by(
                Focus {
                    tag: &tag,
                    kind: &kind,
                    editable,
                },
                command,
            )
        });
        if keeps_key {
            return;
        }
        // A room key the room does not take (Escape with no list of keys
        // open) keeps its default.
        if command == Command::Room && !takers.room.run(key.clone()) {
            return;
        }
        ev.prevent_default();
        match command {
            Command::Tour if tour_forward(&key) => {
                page.act(Action::TourNext);
            }
            Command::Tour => {
                page.act(Action::TourBack);
            }
            Command::Room => {}
            // The A/B view answers the same keys, on its own clock.
            _ if page.compare().get_untracked().is_some() => takers.ab.run(command),
            _ => {
                page.act(Action::Transport(command));
            }
        }
    });
    on_cleanup(move || keys.remove());
}

/// What has the focus when a key is pressed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Focus<'a> {
    /// The element's tag, upper case (`INPUT`, `SELECT`, ...).
    pub tag: &'a str,
    /// An input's `type`.
    pub kind: &'a str,
    /// The element is `contenteditable`.
    pub editable: bool,
}

/// The command `key` sends (`touring`: the tour is open), before the
/// focus is asked: Page Up and Down do what the arrows do in every view
/// (what `?` says), never scroll the page.
pub fn command(key: &str, touring: bool) -> Option<Command> {
    Some(match key {
        " " | "." => Command::TogglePlay,
        "ArrowRight" | "PageDown" | "ArrowLeft" | "PageUp" if touring => Command::Tour,
        "ArrowRight" | "PageDown" => Command::Step,
        "ArrowLeft" | "PageUp" => Command::StepBack,
        "n" | "N" => Command::NextEvent,
        "End" => Command::Seek(u64::MAX),
        "p" | "P" | "f" | "F" | "?" | "Escape" | "1" | "2" | "3" | "4" | "5" => Command::Room,
        _ => return None,
    })
}

/// The focused control keeps the key (it types, or moves the control).
pub fn kept_by(focus: Focus, command: Command) -> bool {
    match focus.tag {
        "TEXTAREA" => true,
        // A checkbox has no use for arrows, and Space would toggle it.
        "INPUT" => match command {
            // Letters and digits type into a text or number field.
            Command::Room => !matches!(focus.kind, "checkbox" | "button" | "range"),
            _ => {
                !(focus.kind == "checkbox" && command != Command::TogglePlay)
                    && focus.kind != "button"
            }
        },
        // Space opens a picker, letters pick in it; arrows left and
        // right do nothing there.
        "SELECT" => matches!(command, Command::TogglePlay | Command::Room),
        _ => focus.editable,
    }
}

/// A tour key's way: forward (→, Page Down) or back.
pub fn tour_forward(key: &str) -> bool {
    matches!(key, "ArrowRight" | "PageDown")
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;

    fn on(tag: &'static str, kind: &'static str) -> Focus<'static> {
        Focus {
            tag,
            kind,
            editable: false,
        }
    }

    #[test]
    fn the_arrows_step_the_clock_or_the_tour() {
        assert_eq!(command("ArrowRight", false), Some(Command::Step));
        assert_eq!(command("PageUp", false), Some(Command::StepBack));
        assert_eq!(command("PageDown", true), Some(Command::Tour));
        assert!(tour_forward("PageDown") && !tour_forward("ArrowLeft"));
        assert_eq!(command("End", true), Some(Command::Seek(u64::MAX)));
        assert_eq!(command(".", false), Some(Command::TogglePlay));
        assert_eq!(command("3", false), Some(Command::Room));
        assert_eq!(command("x", false), None);
    }

    #[test]
    fn a_field_keeps_what_it_types_and_a_button_gives_space_back() {
        let space = Command::TogglePlay;
        assert!(kept_by(on("TEXTAREA", ""), space));
        assert!(kept_by(on("INPUT", "number"), Command::Step));
        assert!(kept_by(on("INPUT", "text"), Command::Room));
        assert!(!kept_by(on("INPUT", "range"), Command::Room));
        assert!(kept_by(on("INPUT", "range"), Command::Step));
        assert!(!kept_by(on("INPUT", "checkbox"), Command::Step));
        assert!(kept_by(on("INPUT", "checkbox"), space));
        assert!(!kept_by(on("BUTTON", ""), space));
        assert!(kept_by(on("SELECT", ""), space));
        assert!(!kept_by(on("SELECT", ""), Command::Step));
        let editable = Focus {
            tag: "DIV",
            kind: "",
            editable: true,
        };
        assert!(kept_by(editable, Command::Step));
    }
}
