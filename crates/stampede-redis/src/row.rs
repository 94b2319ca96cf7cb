//! The one value layout (`value:{key}`), shared by the cache,
//! [`ClaimStore`](crate::ClaimStore) and the Lua scripts in
//! `src/scripts/`: one Redis string, a one-line text header and the
//! payload's bytes after it, so that a read is one `GET` and a header
//! parse.
//!
//! ```text
//! S1 <fence> <neg> <version> <fresh> <stale> <delta>\n<payload>
//! ```
//!
//! - `S1`: the layout's mark (a row that does not start with it, or whose
//!   header does not parse, is no value at all: a decode miss);
//! - `fence`: the fencing number the value was written under (0:
//!   unfenced, or no value);
//! - `neg`: a cached failure (negative caching) until then (wall-clock
//!   ms; 0: none);
//! - `version`: the value's version, when its computation started
//!   (wall-clock ms, low 32 bits), or `-` for a row with no value (a
//!   failure mark alone);
//! - `fresh`, `stale`: fresh until then, servable stale until then
//!   (wall-clock ms);
//! - `delta`: the recompute's duration (µs), for XFetch.
//!
//! Every number is unsigned decimal ASCII, one space apart; the payload is
//! whatever follows the first `\n`, as the origin's codec wrote it. The
//! scripts find the fence and the mark by the header's order: a new field
//! goes at the end of the header, and a change to the order is a new mark
//! (`S2`).

use std::time::{SystemTime, UNIX_EPOCH};

/// A row's header: everything stored with a value but the payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// The fencing number the value was written under (0: unfenced).
    pub fence: u64,
    /// A cached failure until then (wall-clock ms; 0: none).
    pub negative_until: u64,
    /// The value's version; `None`: the row holds no value (a failure
    /// mark alone).
    pub version: Option<u32>,
    /// Fresh until then (wall-clock ms).
    pub fresh_until: u64,
    /// Servable stale until then (wall-clock ms).
    pub stale_until: u64,
    /// The recompute's duration (µs).
    pub delta: u64,
}

/// The layout's mark, with the space after it.
const MARK: &[u8] = b"S1 ";

/// The longest header [`Header::parse`] looks through for its end after
/// the mark: six numbers of at most 20 digits, each with a space or the
/// `\n` after it.
const LONGEST: usize = 6 * 21;

impl Header {
    /// The row holding `payload` under this header.
    pub fn encode(&self, payload: &[u8]) -> Vec<u8> {
        let version = match self.version {
            Some(v) => v.to_string(),
            None => "-".to_string(),
        };
        let head = format!(
            "S1 {} {} {} {} {} {}\n",
            self.fence,
            self.negative_until,
            version,
            self.fresh_until,
            self.stale_until,
            self.delta
        );
        let mut row = Vec::with_capacity(head.len() + payload.len());
        row.extend_from_slice(head.as_bytes());
        row.extend_from_slice(payload);
        row
    }

    /// A stored row's header, and where its payload starts; `None` if the
    /// row is not in this layout.
    pub fn parse(row: &[u8]) -> Option<(Header, usize)> {
        let rest = row.strip_prefix(MARK)?;
        let end = rest.iter().take(LONGEST).position(|&b| b == b'\n')?;
        let mut fields = rest[..end].split(|&b| b == b' ');
        let fence = number(fields.next()?)?;
        let negative_until = number(fields.next()?)?;
        let version = match fields.next()? {
            b"-" => None,
            digits => Some(u32::try_from(number(digits)?).ok()?),
        };
        let header = Header {
            fence,
            negative_until,
            version,
            fresh_until: number(fields.next()?)?,
            stale_until: number(fields.next()?)?,
            delta: number(fields.next()?)?,
        };
        if fields.next().is_some() {
            return None;
        }
        Some((header, MARK.len() + end + 1))
    }
}

/// Wall-clock milliseconds since the Unix epoch: the unit of the header's
/// times (`fresh`, `stale`, the negative mark), shared by every instance.
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Whether `e` says the key holds another type than a string: a row of
/// another layout (the hash of the crate's versions before this one, in a
/// rolling deploy). Read as a row that is not in the layout (a decode
/// miss), not as a Redis error.
pub(crate) fn foreign_type(e: &redis::RedisError) -> bool {
    e.code() == Some("WRONGTYPE")
}

/// What `GET value:{key}` found: the stored row, if any; a key of another
/// type as an empty row (no row in the layout is empty).
pub(crate) fn stored_row(
    r: redis::RedisResult<Option<Vec<u8>>>,
) -> redis::RedisResult<Option<Vec<u8>>> {
    match r {
        Err(e) if foreign_type(&e) => Ok(Some(Vec::new())),
        r => r,
    }
}

/// Unsigned decimal ASCII, at least one digit, no sign, no overflow.
fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        if d.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_reads_back_as_written() {
        let h = Header {
            fence: 7,
            negative_until: 0,
            version: Some(u32::MAX),
            fresh_until: 1_764_700_000_000,
            stale_until: 1_764_700_300_000,
            delta: 1234,
        };
        let row = h.encode(b"pay\nload");
        assert_eq!(
            &row[..],
            &b"S1 7 0 4294967295 1764700000000 1764700300000 1234\npay\nload"[..]
        );
        let (back, at) = Header::parse(&row).unwrap();
        assert_eq!((back, &row[at..]), (h, &b"pay\nload"[..]));
        let mark = Header {
            negative_until: 5,
            ..Header::default()
        };
        let row = mark.encode(b"");
        assert_eq!(&row[..], b"S1 0 5 - 0 0 0\n");
        assert_eq!(Header::parse(&row), Some((mark, row.len())));
    }

    #[test]
    fn a_row_in_another_layout_is_none() {
        for row in [
            &b""[..],
            b"{\"json\":1}",
            b"S1 7 0 1 2 3 4",
            b"S1 7 0 1 2 3\npayload",
            b"S1 7 0 1 2 3 4 5\npayload",
            b"S1 7 0 x 2 3 4\npayload",
            b"S1 7 0 4294967296 2 3 4\n",
            b"S1 7  1 2 3 4\n",
            b"S1 -7 0 1 2 3 4\n",
            b"S2 7 0 1 2 3 4\n",
            b"S1 99999999999999999999 0 1 2 3 4\n",
        ] {
            assert_eq!(Header::parse(row), None, "{}", String::from_utf8_lossy(row));
        }
    }
}
