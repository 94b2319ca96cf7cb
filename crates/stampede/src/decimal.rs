//! Plain decimal text to and from `f64`, for the numbers the lab reads and
//! writes: knob values in links and flags, and the report's milliseconds.
//!
//! Every such number is a decimal with at most [`DECIMALS`] places (a failure
//! rate of `0.25`, a latency of `206.178` ms), so both directions are exact
//! with integer arithmetic: a value is read as `m / 10^6` with `m` below
//! 2^53, and one IEEE division of two exact doubles is the correctly rounded
//! result, the same double `str::parse` gives (checked against it by the
//! tests below). Writing scales back by 10^6 and prints the integer. This
//! keeps the standard library's general float parsing and printing (about
//! 15 KB of wasm, a tenth of the page's budget headroom) out of the page.

/// Decimal places kept; a seventh is rounded half away from zero.
pub const DECIMALS: u32 = 6;
const SCALE: u64 = 10u64.pow(DECIMALS);
/// The integer part saturates here, so `m` stays below 2^53 (exact in f64).
const MAX_WHOLE: u64 = 1_000_000_000;

/// Reads `[+-]digits[.digits]` (digits on at least one side of the point),
/// surrounding whitespace allowed. Places past the sixth are rounded; a
/// whole part above a billion saturates. `None` for anything else:
/// exponents, `inf`, `NaN`, an empty string, stray characters.
pub fn parse(text: &str) -> Option<f64> {
    let s = text.trim();
    let (negative, s) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) {
        return None;
    }
    let mut w: u64 = 0;
    for b in whole.bytes() {
        w = (w * 10 + u64::from(b - b'0')).min(MAX_WHOLE);
    }
    let mut f: u64 = 0;
    let places = frac.as_bytes();
    for i in 0..DECIMALS as usize {
        f = f * 10 + places.get(i).map_or(0, |b| u64::from(b - b'0'));
    }
    if places.get(DECIMALS as usize).is_some_and(|b| *b >= b'5') {
        f += 1; // may carry into the whole part: 0.9999995 reads as 1
    }
    let v = (w * SCALE + f) as f64 / SCALE as f64;
    Some(if negative { -v } else { v })
}

/// `v` with at most six places and no trailing zeros, as `{}` prints a
/// float: `0.25`, `3`, `-1.5`. Non-finite values print as `0`.
pub fn format(v: f64) -> String {
    if !v.is_finite() {
        return "0".to_string();
    }
    // Saturates for values past 2^64 / 10^6; no knob gets near that.
    let m = (v.abs() * SCALE as f64).round() as u64;
    let mut out = String::new();
    if v < 0.0 && m != 0 {
        out.push('-');
    }
    out.push_str(&(m / SCALE).to_string());
    let mut frac = m % SCALE;
    if frac != 0 {
        let mut places = DECIMALS;
        while frac.is_multiple_of(10) {
            frac /= 10;
            places -= 1;
        }
        let digits = frac.to_string();
        out.push('.');
        for _ in digits.len()..places as usize {
            out.push('0');
        }
        out.push_str(&digits);
    }
    out
}

/// As [`format`], but a whole number keeps one place (`1000.0`), the way
/// JSON writers print a float.
pub fn format_json(v: f64) -> String {
    let mut s = format(v);
    if !s.contains('.') {
        s.push_str(".0");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_the_forms_people_type() {
        assert_eq!(parse("0.25"), Some(0.25));
        assert_eq!(parse(" 3 "), Some(3.0));
        assert_eq!(parse(".5"), Some(0.5));
        assert_eq!(parse("5."), Some(5.0));
        assert_eq!(parse("+1.5"), Some(1.5));
        assert_eq!(parse("-0.033"), Some(-0.033));
        assert_eq!(parse("0.12345649"), Some(0.123456));
        assert_eq!(parse("0.9999995"), Some(1.0));
        assert_eq!(parse("99999999999999"), Some(1e9));
    }

    #[test]
    fn refuses_what_is_not_a_plain_decimal() {
        for bad in [
            "", " ", ".", "-", "+.", "1e3", "inf", "NaN", "1.2.3", "0x10", "1,5", "--1", "½",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn writes_like_display() {
        assert_eq!(format(0.25), "0.25");
        assert_eq!(format(3.0), "3");
        assert_eq!(format(-1.5), "-1.5");
        assert_eq!(format(-0.0), "0");
        assert_eq!(format(0.0000004), "0");
        assert_eq!(format(f64::NAN), "0");
        assert_eq!(format_json(1000.0), "1000.0");
        assert_eq!(format_json(206.178), "206.178");
    }

    proptest! {
        /// Reading agrees with the standard library on every decimal with at
        /// most six places.
        #[test]
        fn parse_matches_std(whole in 0u64..MAX_WHOLE, frac in 0u64..SCALE, places in 0u32..=DECIMALS, neg: bool) {
            let frac = frac % 10u64.pow(places);
            let text = if places == 0 {
                format!("{}{whole}", if neg { "-" } else { "" })
            } else {
                format!("{}{whole}.{frac:0width$}", if neg { "-" } else { "" }, width = places as usize)
            };
            prop_assert_eq!(parse(&text), text.parse::<f64>().ok(), "{}", text);
        }

        /// Writing agrees with `{}` for every value read from such a decimal,
        /// and reading it back gives the same double.
        #[test]
        fn format_matches_display_and_round_trips(m in 0u64..MAX_WHOLE * SCALE, neg: bool) {
            let v = m as f64 / SCALE as f64 * if neg { -1.0 } else { 1.0 };
            prop_assert_eq!(format(v), format!("{}", if v == 0.0 { 0.0 } else { v }));
            prop_assert_eq!(parse(&format(v)), Some(if v == 0.0 { 0.0 } else { v }));
        }

        /// Milliseconds from whole microseconds print as JSON prints them.
        #[test]
        fn report_milliseconds_print_as_json(us in 0u64..1u64 << 40) {
            let v = us as f64 / 1000.0;
            let json = format!("{v}");
            let json = if json.contains('.') { json } else { format!("{json}.0") };
            prop_assert_eq!(format_json(v), json);
        }

        /// Anything at all: no panic, and either a finite number or `None`.
        #[test]
        fn never_panics(s in ".{0,40}") {
            if let Some(v) = parse(&s) {
                prop_assert!(v.is_finite());
            }
        }
    }
}
