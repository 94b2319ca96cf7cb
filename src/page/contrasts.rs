//! The contrast runs: the runs a lesson's or a step's words compare
//! against (the preset a change was made from, the tour step's baseline),
//! each run once per scenario and seed, in a task of its own, and handed to
//! the page (`Action::Contrast`).

use leptos::prelude::*;

use super::action::Action;
use super::{contrast_of, Page};

/// Runs the contrast runs the page's state asks for, as it asks for them.
pub fn run(page: Page) {
    let wanted = Memo::new(move |_| {
        let mut want = Vec::new();
        if let Some(c) = page
            .scenario()
            .with(|s| catalogue::lesson::contrast(s, page.base().get()))
        {
            want.push((c, page.seed().get()));
        }
        if let Some(q) = page.step().and_then(|s| s.contrast) {
            let (c, sd, _) = stampede::Scenario::from_query(q);
            want.push((c, sd));
        }
        want
    });
    crate::dom::effect(move || {
        for (c, sd) in wanted.get() {
            if page
                .contrasts()
                .with_untracked(|have| contrast_of(have, &c, sd).is_some())
            {
                continue;
            }
            set_timeout(
                move || {
                    let r = stampede::Fleet::new(&c, sd).run();
                    page.act(Action::Contrast(Box::new((c, sd, r))));
                },
                std::time::Duration::ZERO,
            );
        }
    });
}
