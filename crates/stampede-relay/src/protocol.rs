//! The relay's wire: one JSON object per WebSocket text message, tagged by
//! `t`. Every message from a client is hostile until parsed: unknown
//! fields and unknown tags are refused (`deny_unknown_fields`), strings are
//! bounded, codes and tokens must have their exact shape.

use serde::{Deserialize, Serialize};

/// Letters and digits nobody misreads off a shared screen (no 0/O, 1/I/L),
/// and a room code's length (31^13 > 2^64: 64.4 bits); the page reads codes
/// with the same crate.
pub use room_code::{LEN as CODE_LEN, LETTERS as CODE_LETTERS};
/// A token's length in hex digits (128 bits).
pub const TOKEN_LEN: usize = 32;
/// The longest line a kit and a candidate pass each other (bytes).
pub const MAX_LINE: usize = 2_048;
/// The longest question a vote carries to the phones (bytes).
pub const MAX_WORDS: usize = 400;
/// The fewest and most options a vote has.
pub const OPTIONS: std::ops::RangeInclusive<u8> = 2..=6;

/// A message from a client.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "kebab-case", deny_unknown_fields)]
pub enum In {
    /// A kit opens a pairing room: it becomes its kit.
    OpenPair {},
    /// A presenter opens a voting room with `options` options.
    OpenVote { options: u8 },
    /// The room's owner (kit or presenter) comes back, with its token.
    Resume { room: String, token: String },
    /// A candidate joins a pairing room, or a phone a voting room; with
    /// the token a join returned, to take the same seat again.
    Join {
        room: String,
        #[serde(default)]
        token: Option<String>,
    },
    /// A line for the other side of a pairing room.
    Send { line: String },
    /// A phone's vote (0 is A).
    Vote { option: u8 },
    /// The presenter asks a new question: every vote is forgotten.
    Ask {
        options: u8,
        #[serde(default)]
        words: String,
    },
    /// The owner ends the room: everything it held is dropped.
    Close {},
}

/// What each side of a room is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Kit,
    Candidate,
    Presenter,
    Phone,
}

/// A message to a client.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "t", rename_all = "kebab-case")]
pub enum Out {
    /// A room opened or resumed: its code and the owner's secret token.
    Opened {
        room: String,
        token: String,
        role: Role,
    },
    /// Joined a room, with the token to take the same seat again.
    Joined {
        room: String,
        token: String,
        role: Role,
        /// A voting room's options and question (0 in a pairing room).
        options: u8,
        words: String,
    },
    /// A line from the other side.
    Line { line: String },
    /// Whether the other side of a pairing room is connected.
    Peer { here: bool },
    /// A voting room's count (to its presenter): votes per option and the
    /// phones in the room.
    Tally { counts: Vec<u32>, phones: u32 },
    /// A phone's vote was counted (`option`), or a new question asked
    /// (`None`).
    Voted { option: Option<u8> },
    /// A new question (to the phones).
    Asked { options: u8, words: String },
    /// Something was refused; the connection stays open.
    Error { code: ErrorCode, message: String },
    /// The room ended: by its owner, or idle.
    Closed { why: String },
}

/// Why a message was refused.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// Not JSON, or not one of the messages above.
    BadMessage,
    /// Longer than the relay takes.
    TooLarge,
    /// More messages than the relay takes from one connection.
    RateLimited,
    /// No room has that code (mistyped, ended or expired).
    NoRoom,
    /// The token does not open that room.
    BadToken,
    /// The seat is taken (a second candidate), or the room is full.
    Taken,
    /// Not something this side of the room may do.
    NotAllowed,
    /// The relay holds as many rooms as it takes.
    Busy,
}

impl Out {
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Out {
        Out::Error {
            code,
            message: message.into(),
        }
    }

    pub fn to_text(&self) -> String {
        // Every `Out` is plain data: serializing it cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{\"t\":\"error\"}".to_string())
    }
}

/// Parses a client's text; the error says what was wrong.
pub fn parse(text: &str) -> Result<In, Out> {
    let msg: In = serde_json::from_str(text)
        .map_err(|e| Out::error(ErrorCode::BadMessage, format!("not a relay message: {e}")))?;
    match &msg {
        In::Send { line } if line.len() > MAX_LINE => Err(Out::error(
            ErrorCode::TooLarge,
            format!(
                "a line is at most {MAX_LINE} bytes; this one is {}",
                line.len()
            ),
        )),
        In::Ask { words, .. } if words.len() > MAX_WORDS => Err(Out::error(
            ErrorCode::TooLarge,
            format!(
                "a question is at most {MAX_WORDS} bytes; this one is {}",
                words.len()
            ),
        )),
        In::OpenVote { options } | In::Ask { options, .. } if !OPTIONS.contains(options) => {
            Err(Out::error(
                ErrorCode::BadMessage,
                format!(
                    "a vote has {} to {} options, not {options}",
                    OPTIONS.start(),
                    OPTIONS.end()
                ),
            ))
        }
        _ => Ok(msg),
    }
}

/// A code as typed: upper case, without spaces or dashes; None unless it
/// has a room code's shape.
pub use room_code::typed as typed_code;

/// True for a token's shape (lower-case hex of its length).
pub fn token_shaped(s: &str) -> bool {
    s.len() == TOKEN_LEN
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A fresh room code from the OS's randomness: each letter from a byte,
/// bytes past the last whole multiple of 31 thrown away, so that every
/// letter is equally likely.
pub fn new_code() -> std::io::Result<String> {
    let n = CODE_LETTERS.len();
    let limit = (256 / n * n) as u8;
    let mut out = String::with_capacity(CODE_LEN);
    let mut buf = [0u8; 32];
    while out.len() < CODE_LEN {
        getrandom::fill(&mut buf).map_err(std::io::Error::other)?;
        for b in buf {
            if b < limit && out.len() < CODE_LEN {
                out.push(CODE_LETTERS[usize::from(b) % n] as char);
            }
        }
    }
    Ok(out)
}

/// A fresh secret token (128 bits from the OS, as hex).
pub fn new_token() -> std::io::Result<String> {
    let mut buf = [0u8; TOKEN_LEN / 2];
    getrandom::fill(&mut buf).map_err(std::io::Error::other)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares two tokens in time that does not depend on where they differ.
pub fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_and_tags_are_refused() {
        assert_eq!(parse(r#"{"t":"open-pair"}"#), Ok(In::OpenPair {}));
        for bad in [
            r#"{"t":"open-pair","admin":true}"#,
            r#"{"t":"vote","option":1,"name":"Ann"}"#,
            r#"{"t":"drop-tables"}"#,
            r#"{"option":1}"#,
            "vote 1",
            r#"{"t":"vote","option":300}"#,
        ] {
            assert!(
                matches!(
                    parse(bad),
                    Err(Out::Error {
                        code: ErrorCode::BadMessage,
                        ..
                    })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn strings_and_options_are_bounded() {
        let long = format!(r#"{{"t":"send","line":"{}"}}"#, "x".repeat(MAX_LINE + 1));
        assert!(matches!(
            parse(&long),
            Err(Out::Error {
                code: ErrorCode::TooLarge,
                ..
            })
        ));
        let ok = format!(r#"{{"t":"send","line":"{}"}}"#, "x".repeat(MAX_LINE));
        assert!(parse(&ok).is_ok());
        assert!(parse(r#"{"t":"open-vote","options":1}"#).is_err());
        assert!(parse(r#"{"t":"open-vote","options":7}"#).is_err());
        assert!(parse(r#"{"t":"open-vote","options":4}"#).is_ok());
    }

    #[test]
    fn codes_are_long_random_and_typed_loosely() {
        assert!((CODE_LETTERS.len() as f64).powi(CODE_LEN as i32) >= 2f64.powi(64));
        let codes: std::collections::BTreeSet<String> =
            (0..2000).map(|_| new_code().unwrap()).collect();
        assert_eq!(codes.len(), 2000, "codes repeat");
        for c in &codes {
            assert_eq!(typed_code(c).as_deref(), Some(c.as_str()));
            let grouped = format!("{}-{} {}", &c[..4], &c[4..8].to_lowercase(), &c[8..]);
            assert_eq!(typed_code(&grouped).as_deref(), Some(c.as_str()));
        }
        // Every letter turns up, in roughly its share.
        let all: String = codes.iter().map(String::as_str).collect();
        for &l in CODE_LETTERS {
            let n = all.bytes().filter(|&b| b == l).count();
            assert!((500..=1_200).contains(&n), "{}: {n}", l as char);
        }
        assert_eq!(typed_code("K7Q2"), None);
        assert_eq!(typed_code("K0Q2K0Q2K0Q2K"), None, "0 is never a code's");
        let t = new_token().unwrap();
        assert!(token_shaped(&t) && !token_shaped(&t.to_uppercase()));
        assert!(same_token(&t, &t.clone()) && !same_token(&t, &new_token().unwrap()));
    }
}
