//! "Write it yourself" as page state (`?assemble=1`, issue 39 §3): the
//! learner's assembly of the read path, and the three storms' grades once
//! they ran it. Changed only through [`super::action::Action::Assemble`];
//! the blocks, the storms and the grading are the catalogue's
//! (`catalogue::assemble`). No web API: host-tested below.

use catalogue::assemble::{self, Assembly, Graded};

/// The open "Write it yourself".
#[derive(Clone, Debug)]
pub struct Assembling {
    /// The blocks in the learner's order, each with its picked variant.
    pub assembly: Assembly,
    /// The storms' runs of the assembly as it was when Run was pressed;
    /// empty until then, and again once the assembly changes.
    pub graded: Vec<Graded>,
    /// What the link's text named that is no block or variant.
    pub notices: Vec<String>,
    /// "On your own": the card and the code stay hidden until the learner
    /// has answered (run the assembly through the storms once).
    pub own: bool,
    /// Whether the learner has run an assembly through the storms since
    /// it was opened: the answer, after which nothing is hidden.
    pub answered: bool,
}

impl Assembling {
    /// Whether the read path's card and code are hidden now: on one's own,
    /// before the first answer.
    pub fn hides_code(&self) -> bool {
        self.own && !self.answered
    }

    /// The link's `assemble=` text: the mode, then the assembly.
    pub fn to_link(&self) -> String {
        let a = self.assembly.to_link();
        if self.own {
            format!("{OWN},{a}")
        } else {
            a
        }
    }
}

/// The mode's word in the link (`assemble=own` or `assemble=own,get.…`).
pub const OWN: &str = "own";

/// One change to "Write it yourself".
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// Opens it: `1` (or empty) for the blocks shuffled by `seed`, else an
    /// assembly's link text (`get.get-first,flight.claim-inside,…`).
    Open { text: String, seed: u64 },
    /// Moves the block at this position one place up or down.
    Move { at: usize, up: bool },
    /// Picks a variant (by index) of a block (by index in the table).
    Pick { block: usize, variant: usize },
    /// Runs the assembly through the three storms on this seed.
    Run { seed: u64 },
    /// "On your own" (`true`) or with the card beside (`false`).
    Own(bool),
}

/// Applies `e` to the state; `Err` says why nothing changed.
pub fn apply(state: &mut Option<Assembling>, e: Edit) -> Result<(), String> {
    if let Edit::Open { text, seed } = e {
        let (own, rest) = match text.split_once(',') {
            Some((OWN, rest)) => (true, rest),
            _ if text == OWN => (true, ""),
            _ => (false, text.as_str()),
        };
        let (assembly, notices) = match rest {
            "" | "1" => (Assembly::shuffled(seed), Vec::new()),
            t => Assembly::from_link(t),
        };
        *state = Some(Assembling {
            assembly,
            graded: Vec::new(),
            notices,
            own,
            answered: false,
        });
        return Ok(());
    }
    let Some(st) = state.as_mut() else {
        return Err("\"Write it yourself\" is not open".into());
    };
    match e {
        Edit::Open { .. } => unreachable!("handled above"),
        Edit::Move { at, up } => {
            if !st.assembly.shift(at, up) {
                return Err(format!(
                    "the block at {} cannot move {}",
                    at + 1,
                    if up { "up" } else { "down" }
                ));
            }
            st.graded.clear();
        }
        Edit::Pick { block, variant } => {
            if !st.assembly.pick(block, variant) {
                return Err(format!("no variant {variant} of block {block}"));
            }
            st.graded.clear();
        }
        Edit::Run { seed } => {
            st.graded = assemble::run_all(&st.assembly, seed);
            st.answered = true;
        }
        Edit::Own(own) => st.own = own,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalogue::assemble::{variant, BLOCKS};

    /// A learner's session: open shuffled, put every block in the card's
    /// place with the buttons' moves, pick the right variants, run: every
    /// storm passes; pick a plain DEL and run again: a storm fails, and the
    /// grades went away as the assembly changed.
    #[test]
    fn moves_and_picks_build_the_read_path_and_run_grades_it() {
        let mut st = None;
        assert!(apply(&mut st, Edit::Run { seed: 1 }).is_err());
        apply(
            &mut st,
            Edit::Open {
                text: "1".into(),
                seed: 7,
            },
        )
        .unwrap();
        // Bubble sort by moves, as a learner would with the buttons.
        loop {
            let picks = st.as_ref().unwrap().assembly.picks.clone();
            let Some(at) = picks.windows(2).position(|w| w[0].0 > w[1].0) else {
                break;
            };
            apply(&mut st, Edit::Move { at, up: false }).unwrap();
        }
        for block in 0..BLOCKS.len() {
            apply(&mut st, Edit::Pick { block, variant: 0 }).unwrap();
        }
        assert_eq!(st.as_ref().unwrap().assembly, Assembly::correct());
        apply(&mut st, Edit::Run { seed: 1 }).unwrap();
        let g = &st.as_ref().unwrap().graded;
        assert_eq!(g.len(), 3);
        assert!(g.iter().all(|g| g.pass));
        let (block, v) = variant("plain-del").unwrap();
        apply(&mut st, Edit::Pick { block, variant: v }).unwrap();
        assert!(st.as_ref().unwrap().graded.is_empty());
        apply(&mut st, Edit::Run { seed: 1 }).unwrap();
        assert!(st.as_ref().unwrap().graded.iter().any(|g| !g.pass));
        assert!(apply(&mut st, Edit::Move { at: 0, up: true }).is_err());
        assert!(apply(
            &mut st,
            Edit::Pick {
                block: 0,
                variant: 5
            }
        )
        .is_err());
    }

    /// On one's own the card and the code stay hidden until the first
    /// run, and the mode goes into the link and comes back from it; with
    /// the card beside, nothing is hidden.
    #[test]
    fn on_ones_own_the_code_is_hidden_until_answered() {
        let mut st = None;
        apply(
            &mut st,
            Edit::Open {
                text: "own".into(),
                seed: 3,
            },
        )
        .unwrap();
        let s = st.as_ref().unwrap();
        assert!(s.own && s.hides_code() && s.notices.is_empty());
        let link = s.to_link();
        assert!(link.starts_with("own,"), "{link}");
        let mut back = None;
        apply(
            &mut back,
            Edit::Open {
                text: link,
                seed: 9,
            },
        )
        .unwrap();
        let b = back.unwrap();
        assert!(b.own && b.notices.is_empty());
        assert_eq!(b.assembly, s.assembly);
        // A move is no answer; a run is, and the code stays shown after.
        apply(&mut st, Edit::Move { at: 1, up: true }).unwrap();
        assert!(st.as_ref().unwrap().hides_code());
        apply(&mut st, Edit::Run { seed: 1 }).unwrap();
        assert!(!st.as_ref().unwrap().hides_code());
        apply(&mut st, Edit::Move { at: 1, up: true }).unwrap();
        assert!(!st.as_ref().unwrap().hides_code());
        // With the card beside: nothing hidden, and the link says no mode.
        let mut card = None;
        apply(
            &mut card,
            Edit::Open {
                text: "1".into(),
                seed: 3,
            },
        )
        .unwrap();
        assert!(!card.as_ref().unwrap().hides_code());
        apply(&mut card, Edit::Own(true)).unwrap();
        assert!(card.as_ref().unwrap().hides_code());
        apply(&mut card, Edit::Own(false)).unwrap();
        let c = card.unwrap();
        assert!(!c.hides_code() && !c.to_link().starts_with("own"));
    }

    #[test]
    fn a_link_opens_its_assembly_and_names_what_it_cannot_read() {
        let mut st = None;
        apply(
            &mut st,
            Edit::Open {
                text: "release.plain-del,bogus".into(),
                seed: 1,
            },
        )
        .unwrap();
        let st = st.unwrap();
        assert_eq!(st.notices.len(), 1, "{:?}", st.notices);
        assert_eq!(st.assembly.wrong()[0].id, "plain-del");
    }
}
