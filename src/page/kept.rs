//! What outlives a reload: every key the page keeps in the browser's
//! storage, in one table, read and written here (through `web.rs`) and
//! nowhere else. `localStorage` keeps a key for good, `sessionStorage` for
//! the tab's life. A browser that refuses storage just forgets.

/// A thing the page keeps across a reload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// "Skip predictions" in the tour (the tab: a rehearsal's click once
    /// opened the class, in another tab or days later, with the answers
    /// on screen).
    SkipPredictions,
    /// Presenter mode across the page's own links (the tab).
    Present,
    /// The room's theme: "dark", or light (for good).
    RoomTheme,
    /// The interview questions left open, for the way back (the tab).
    OpenQuestions,
    /// The room's hands on a step: `<place>:a,b,c,d` (the tab).
    Votes,
    /// The question a link came from, for the page it opened (the tab).
    FromQuestion,
    /// The read path's language (for good).
    Language,
    /// The walk-through's level (for good).
    WalkLevel,
    /// The trainer's list being built, in its link form (for good).
    Playlist,
    /// The room's public address of the page, for the QR code (for good).
    PublicBase,
    /// The learner's practice record (for good).
    Progress,
    /// The kit's scoresheet and notes (for good).
    KitSheet,
    KitNotes,
    /// A page window's pairing code, and the kit's paired code (the tab).
    PairCode,
    KitPaired,
    /// The room's relay, from the link's `relay=` (the tab).
    Relay,
    /// The relay rooms this tab holds, as `code token`: the kit's pairing
    /// room, a candidate's seat, presenter mode's vote (the tab), and a
    /// phone's vote (for good: one vote per phone).
    KitRoom,
    CandidateSeat,
    VoteRoom,
    PhoneSeat,
}

impl Kept {
    /// Every key, for the test that keeps them apart.
    pub const ALL: [Kept; 20] = [
        Kept::SkipPredictions,
        Kept::Present,
        Kept::RoomTheme,
        Kept::OpenQuestions,
        Kept::Votes,
        Kept::FromQuestion,
        Kept::Language,
        Kept::WalkLevel,
        Kept::Playlist,
        Kept::PublicBase,
        Kept::Progress,
        Kept::KitSheet,
        Kept::KitNotes,
        Kept::PairCode,
        Kept::KitPaired,
        Kept::Relay,
        Kept::KitRoom,
        Kept::CandidateSeat,
        Kept::VoteRoom,
        Kept::PhoneSeat,
    ];

    /// Its storage key (what a browser's storage shows, and the e2e specs
    /// read).
    pub const fn key(self) -> &'static str {
        match self {
            Kept::SkipPredictions => "stampede-skip-predictions",
            Kept::Present => "stampede-present",
            Kept::RoomTheme => "stampede-room-theme",
            Kept::OpenQuestions => "stampede-open-questions",
            Kept::Votes => "stampede-votes",
            Kept::FromQuestion => "stampede-from-question",
            Kept::Language => "stampede-language",
            Kept::WalkLevel => "stampede-walk-level",
            Kept::Playlist => "stampede-playlist",
            Kept::PublicBase => "stampede-public-base",
            Kept::Progress => "stampede-progress",
            Kept::KitSheet => "stampede-kit-sheet",
            Kept::KitNotes => "stampede-kit-notes",
            Kept::PairCode => "stampede-pair-code",
            Kept::KitPaired => "stampede-kit-paired",
            Kept::Relay => "stampede-relay",
            Kept::KitRoom => "stampede-kit-room",
            Kept::CandidateSeat => "stampede-candidate-seat",
            Kept::VoteRoom => "stampede-vote-room",
            Kept::PhoneSeat => "stampede-phone-seat",
        }
    }

    /// Kept for the tab's life only (`sessionStorage`).
    pub const fn for_the_tab(self) -> bool {
        matches!(
            self,
            Kept::SkipPredictions
                | Kept::Present
                | Kept::OpenQuestions
                | Kept::Votes
                | Kept::FromQuestion
                | Kept::PairCode
                | Kept::KitPaired
                | Kept::Relay
                | Kept::KitRoom
                | Kept::CandidateSeat
                | Kept::VoteRoom
        )
    }

    fn area(self) -> &'static str {
        if self.for_the_tab() {
            "sessionStorage"
        } else {
            "localStorage"
        }
    }

    /// The kept text, if any; None outside, when the browser keeps no
    /// storage for the page at all.
    pub fn read(self) -> Option<Option<String>> {
        crate::web::storage(self.area(), "getItem", &[self.key()]).map(|v| v.as_string())
    }

    /// The kept text, if any.
    pub fn get(self) -> Option<String> {
        crate::web::storage(self.area(), "getItem", &[self.key()]).and_then(|v| v.as_string())
    }

    /// Keeps `value`; false when the browser refused (full, or off).
    pub fn set(self, value: &str) -> bool {
        crate::web::storage(self.area(), "setItem", &[self.key(), value]).is_some()
    }

    /// Forgets it.
    pub fn remove(self) {
        let _ = crate::web::storage(self.area(), "removeItem", &[self.key()]);
    }

    /// Keeps `on` as "1", or forgets it.
    pub fn set_flag(self, on: bool) {
        if on {
            self.set("1");
        } else {
            self.remove();
        }
    }

    /// Kept as "1".
    pub fn flag(self) -> bool {
        self.get().as_deref() == Some("1")
    }
}

/// The read path's language kept from the last visit (None: the card).
pub fn language() -> Option<&'static str> {
    Kept::Language
        .get()
        .and_then(|v| super::action::language_of(&v))
        .flatten()
}

/// Keeps what the page's state holds for after a reload, as it changes:
/// "Skip predictions", presenter mode for the tab, the read path's
/// language.
pub fn keep(page: super::Page) {
    // "Skip predictions" was once kept for good: a browser that kept it
    // then forgets it, so the next class asks again.
    let _ = crate::web::storage("localStorage", "removeItem", &[Kept::SkipPredictions.key()]);
    crate::dom::effect(move || Kept::SkipPredictions.set_flag(page.skipping().get()));
    crate::dom::effect(move || Kept::Present.set_flag(page.presenting().get()));
    crate::dom::effect(move || {
        Kept::Language.set(page.language().get().unwrap_or("card"));
    });
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::Kept;

    #[test]
    fn every_kept_thing_has_a_key_of_its_own() {
        let mut keys: Vec<&str> = Kept::ALL.iter().map(|k| k.key()).collect();
        assert!(keys.iter().all(|k| k.starts_with("stampede-")));
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Kept::ALL.len());
    }
}
