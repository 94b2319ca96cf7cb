//! Each interview question's title: a few words the kit's picker shows
//! beside its number (issue 40: the picker was bare numbers 1-15, and an
//! interviewer could not find a question without hovering each).

/// The title of question `number` (0: the card's), or "" for none.
pub fn title(number: u32) -> &'static str {
    match number {
        0 => "The card",
        1 => "When the work throws",
        2 => "Coalescing alone",
        3 => "Which layer outside",
        4 => "Leader panics",
        5 => "A waiter's deadline",
        6 => "Forget, old flights",
        7 => "Who sees the error",
        8 => "Stampede or avalanche",
        9 => "When stale is wrong",
        10 => "Release needs a token",
        11 => "Efficiency lock",
        12 => "The claim's TTL",
        13 => "Redis down: open or closed",
        14 => "One mutable result",
        15 => "Flight key ≠ cache key",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_question_has_a_title_of_its_own() {
        let mut seen: Vec<&str> = super::super::questions()
            .map(|q| super::title(q.number))
            .collect();
        assert!(
            seen.iter().all(|t| !t.is_empty() && t.len() <= 28),
            "{seen:?}"
        );
        let n = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), n, "two questions share a title");
    }
}
