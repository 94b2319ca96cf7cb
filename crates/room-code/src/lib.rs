//! The room codes of the room's relay, one definition for both ends: the
//! relay (`crates/stampede-relay`) makes and checks them, the page
//! (`src/relay`) reads them from a link or as typed. No dependencies, so
//! the page's wasm takes it for free.

/// Letters and digits nobody misreads off a shared screen (no 0/O, 1/I/L).
pub const LETTERS: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/// A room code's length: 31^13 > 2^64, so a code carries 64.4 bits.
pub const LEN: usize = 13;

/// A code as typed or linked: upper case, spaces and dashes dropped; None
/// unless it has a room code's shape (and for anything over four times
/// a code's length, before reading it).
pub fn typed(s: &str) -> Option<String> {
    if s.len() > 4 * LEN {
        return None;
    }
    let c: String = s
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    (c.len() == LEN && c.bytes().all(|b| LETTERS.contains(&b))).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_read_however_it_is_typed_and_nothing_else_is() {
        assert_eq!(typed("ABCDE-fghjk mnp").as_deref(), Some("ABCDEFGHJKMNP"));
        assert_eq!(typed(" 23456 78923 456 ").as_deref(), Some("2345678923456"));
        for bad in [
            "",
            "K7Q2",
            "K0Q2K0Q2K0Q2K",
            "ABCDEFGHJKMNPQ",
            "ABCDEFGHJKMNÉ",
            "ABCDEFGHJKMN_",
        ] {
            assert_eq!(typed(bad), None, "{bad}");
        }
        let long = format!("ABCDEFGHJKMNP{}", " ".repeat(60));
        assert_eq!(typed(&long), None);
        // Every code of the letters reads back as itself.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2_000 {
            let code: String = (0..LEN)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    LETTERS[(x % LETTERS.len() as u64) as usize] as char
                })
                .collect();
            assert_eq!(typed(&code).as_deref(), Some(code.as_str()));
            assert_eq!(typed(&code.to_lowercase()).as_deref(), Some(code.as_str()));
        }
    }
}
