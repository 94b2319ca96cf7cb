//! Claims: what a sentence about a run states, checked against that run.
//!
//! Every sentence, label and verdict the page and the CLI show about a run
//! is built from [`Clause`]s. A clause is words plus the [`Claim`]s those
//! words make (a causal word such as "so", "each retry was an origin call
//! of its own" or "acts in time" is a claim of its own), and a clause is
//! said only where every one of its claims holds for the run on screen:
//! [`Say::when`] drops it otherwise, and [`Say::first`] says the first of
//! several wordings that holds, so that where the preferred words are false
//! a true one is said instead. [`check`] re-checks a finished sentence
//! against its run; the property tests call it on thousands of runs.
//!
//! (Not to be confused with the Redis claim, the lock of [`crate::claim`].)

use crate::scenario::Scenario;
use crate::Report;

/// The run a sentence speaks of: its scenario, its counters so far, and
/// whether it is over.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    pub s: &'a Scenario,
    pub r: &'a Report,
    pub ended: bool,
}

impl<'a> Run<'a> {
    pub fn new(s: &'a Scenario, r: &'a Report, ended: bool) -> Self {
        Run { s, r, ended }
    }
}

/// One statement about a run, and the check that proves it from the run's
/// counters and knobs.
#[derive(Clone, Copy)]
pub struct Claim {
    /// What it states, in a few words (shown by a failing check).
    pub states: &'static str,
    pub holds: fn(&Run) -> bool,
}

impl Claim {
    pub const fn new(states: &'static str, holds: fn(&Run) -> bool) -> Claim {
        Claim { states, holds }
    }
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.states)
    }
}

impl PartialEq for Claim {
    fn eq(&self, other: &Claim) -> bool {
        self.states == other.states
    }
}

/// Words, and the claims they make.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub text: String,
    pub claims: Vec<Claim>,
}

/// A sentence in the making, over one run: clauses are added only where
/// their claims hold.
pub struct Say<'a> {
    run: Run<'a>,
    clauses: Vec<Clause>,
}

impl<'a> Say<'a> {
    pub fn new(run: Run<'a>) -> Self {
        Say {
            run,
            clauses: Vec::new(),
        }
    }

    pub fn run(&self) -> Run<'a> {
        self.run
    }

    fn all_hold(&self, claims: &[Claim]) -> bool {
        claims.iter().all(|c| (c.holds)(&self.run))
    }

    /// Adds `text`, making `claims`, if they all hold for the run; says
    /// whether it did.
    pub fn when(&mut self, claims: &[Claim], text: impl Into<String>) -> bool {
        if !self.all_hold(claims) {
            return false;
        }
        self.clauses.push(Clause {
            text: text.into(),
            claims: claims.to_vec(),
        });
        true
    }

    /// Words that state only counters and knobs of the run (each number is
    /// checked to be one by the tests), no cause.
    pub fn plain(&mut self, text: impl Into<String>) {
        self.when(&[], text);
    }

    /// The first of `options` whose claims all hold; says whether one did.
    /// The last option is usually the plain fallback with no claim, so that
    /// where something happened something true is said.
    pub fn first(&mut self, options: Vec<(&[Claim], String)>) -> bool {
        for (claims, text) in options {
            if self.when(claims, text) {
                return true;
            }
        }
        false
    }

    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }

    /// How many clauses have been said so far.
    pub fn len(&self) -> usize {
        self.clauses.len()
    }

    pub fn done(self) -> Vec<Clause> {
        self.clauses
    }
}

/// The sentence the clauses make: their words, in order.
pub fn text(clauses: &[Clause]) -> String {
    clauses.iter().map(|c| c.text.as_str()).collect()
}

/// Every claim of every clause holds for `run`; otherwise the first that
/// does not, with its words.
pub fn check(run: &Run, clauses: &[Clause]) -> Result<(), String> {
    for c in clauses {
        for claim in &c.claims {
            if !(claim.holds)(run) {
                return Err(format!(
                    "\"{}\" claims \"{}\", which does not hold",
                    c.text, claim.states
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOME_RETRIES: Claim = Claim::new("some retries", |x| x.r.retries > 0);
    const ENDED: Claim = Claim::new("the run ended", |x| x.ended);

    #[test]
    fn a_clause_is_said_only_where_its_claims_hold() {
        let s = Scenario::default();
        let mut r = Report::default();
        let run = Run::new(&s, &r, false);
        let mut say = Say::new(run);
        assert!(!say.when(&[SOME_RETRIES], "retries happened"));
        assert!(say.first(vec![
            (&[SOME_RETRIES, ENDED], "a".into()),
            (&[], "b".into())
        ]));
        let clauses = say.done();
        assert_eq!(text(&clauses), "b");
        assert!(check(&run, &clauses).is_ok());
        // The same clauses checked against another run: a claim that held
        // there is named when it no longer does.
        r.retries = 3;
        let run = Run::new(&s, &r, true);
        let mut say = Say::new(run);
        say.when(&[SOME_RETRIES, ENDED], "3 retries");
        let clauses = say.done();
        r.retries = 0;
        let e = check(&Run::new(&s, &r, true), &clauses).unwrap_err();
        assert!(e.contains("some retries"), "{e}");
    }
}
