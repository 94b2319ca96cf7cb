//! A sentence about a run still in progress says so (issue 40: mid-run the
//! candidate read "1 recompute ran" at t = 11.9 ms of a run that ends at
//! 40 recomputes, as if it were the run's last word). Kept apart from the
//! lessons' rules (`lesson.rs`): one check and one mark, for every rule.

use crate::claims::{self, Claim, Clause};

/// The run goes on: what a mid-run clause claims.
pub const RUNNING: Claim = Claim::new("the run goes on", |x| !x.ended);

/// What a mid-run sentence that states the run's numbers ends with.
pub const MARK: &str = " So far: the run goes on.";

/// True when `sentence` reads as a run in progress: its numbers are "so
/// far", or it says what to watch for (no number of the run yet), or what
/// comes when the run ends.
pub fn says_in_progress(sentence: &str) -> bool {
    let s = sentence.to_ascii_lowercase();
    ["so far", "watch", "when this run ends"]
        .iter()
        .any(|w| s.contains(w))
}

/// Ends a mid-run sentence (`clauses`) that does not already say so with
/// [`MARK`]; true when it did.
pub fn mark(clauses: &mut Vec<Clause>) -> bool {
    if says_in_progress(&claims::text(clauses)) {
        return false;
    }
    clauses.push(Clause {
        text: MARK.to_string(),
        claims: vec![RUNNING],
    });
    true
}
