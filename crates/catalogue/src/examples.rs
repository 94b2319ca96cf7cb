//! The card's read path as a candidate writes it (`examples/`): each file's
//! text, embedded at build time byte for byte, and where it carries each
//! step of the card.
//!
//! A step is marked in the code by a comment `card N: ...` (`//` or `#`),
//! N the card's line from 1 (`handle(key)`) to [`STEPS`]: line 1 is
//! `handle(key)`, line i + 2 the core's [`LINES`]\[i\]. A marker after code
//! marks its own line; a marker on a line of its own marks it and the lines
//! after it, up to a blank line, a line indented less than the marker, or
//! another marker on a line of its own indented no deeper (a deeper one, or
//! a marker after code, nests inside it).

use std::ops::Range;

use crate::walkthrough::LINES;

/// The card's lines: `handle(key)`, then the core's.
pub const STEPS: usize = 1 + LINES.len();

/// One file of the read path.
#[derive(Debug)]
pub struct Example {
    /// Its name in a link and in storage.
    pub name: &'static str,
    /// Its name on the picker.
    pub label: &'static str,
    /// Its path from the repository's root.
    pub path: &'static str,
    /// The file, as it is.
    pub text: &'static str,
    /// The card's steps (from 0) this code leaves out, and why.
    pub absent: &'static [(usize, &'static str)],
}

/// The files, in the picker's order.
pub const EXAMPLES: [Example; 5] = [
    Example {
        name: "go",
        label: "Go",
        path: "examples/go/stampede.go",
        text: include_str!("../../../examples/go/stampede.go"),
        absent: &[],
    },
    Example {
        name: "python",
        label: "Python",
        path: "examples/python/stampede.py",
        text: include_str!("../../../examples/python/stampede.py"),
        absent: &[],
    },
    Example {
        name: "typescript",
        label: "TypeScript",
        path: "examples/typescript/stampede.ts",
        text: include_str!("../../../examples/typescript/stampede.ts"),
        absent: &[],
    },
    Example {
        name: "refresh",
        label: "TS: refresh only",
        path: "examples/typescript/refresh.ts",
        text: include_str!("../../../examples/typescript/refresh.ts"),
        absent: &[],
    },
    Example {
        name: "rust",
        label: "Rust",
        path: "examples/rust/src/lib.rs",
        text: include_str!("../../../examples/rust/src/lib.rs"),
        absent: &[],
    },
];

/// The example named `name`.
pub fn example(name: &str) -> Option<&'static Example> {
    EXAMPLES.iter().find(|e| e.name == name)
}

/// A step marked in a text: the step (from 0) and its lines (from 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub step: usize,
    pub lines: Range<usize>,
}

/// The marker on `line`, if any: the step it names (from 0, not checked
/// against [`STEPS`]) and whether code stands before it.
fn marker(line: &str) -> Option<(usize, bool)> {
    for opener in ["// card ", "# card "] {
        if let Some(at) = line.find(opener) {
            let rest = &line[at + opener.len()..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let n: usize = rest[..digits].parse().ok()?;
            if !matches!(rest.as_bytes().get(digits), None | Some(b':')) {
                return None;
            }
            return Some((n.checked_sub(1)?, !line[..at].trim().is_empty()));
        }
    }
    None
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Every marker in `text`, in the order they stand.
pub fn marks(text: &str) -> Vec<Mark> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some((step, after_code)) = marker(line) else {
            continue;
        };
        if after_code {
            out.push(Mark {
                step,
                lines: i..i + 1,
            });
            continue;
        }
        let d = indent(line);
        let end = lines[i + 1..]
            .iter()
            .position(|l| {
                l.trim().is_empty()
                    || indent(l) < d
                    || (indent(l) <= d && marker(l).is_some_and(|(_, after)| !after))
            })
            .map_or(lines.len(), |k| i + 1 + k);
        out.push(Mark {
            step,
            lines: i..end,
        });
    }
    out
}

/// The lines (from 0) of `e` that carry the card's step `step` (from 0):
/// None where the code leaves the step out.
pub fn lines(e: &Example, step: usize) -> Option<Range<usize>> {
    marks(e.text)
        .into_iter()
        .find(|m| m.step == step)
        .map(|m| m.lines)
}

/// Why `e` leaves out `step`, if it does.
pub fn absent(e: &Example, step: usize) -> Option<&'static str> {
    e.absent
        .iter()
        .find(|(s, _)| *s == step)
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn root() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
    }

    #[test]
    fn the_embedded_text_is_the_file_byte_for_byte() {
        for e in &EXAMPLES {
            let file = std::fs::read(root().join(e.path)).unwrap();
            assert!(
                file == e.text.as_bytes(),
                "{}: the embedded text is not the file's",
                e.path
            );
        }
    }

    #[test]
    fn every_example_file_is_on_the_page() {
        // The read path's files in examples/ (not their tests, not config).
        let mut found = Vec::new();
        for dir in ["go", "python", "typescript", "rust/src"] {
            for f in std::fs::read_dir(root().join("examples").join(dir)).unwrap() {
                let name = f.unwrap().file_name().into_string().unwrap();
                let code = [".go", ".py", ".ts", ".rs"]
                    .iter()
                    .any(|x| name.ends_with(x));
                let test = name.contains("test");
                if code && !test {
                    found.push(format!("examples/{dir}/{name}"));
                }
            }
        }
        found.sort();
        let mut shown: Vec<String> = EXAMPLES.iter().map(|e| e.path.to_string()).collect();
        shown.sort();
        assert_eq!(found, shown);
    }

    #[test]
    fn every_step_the_code_implements_is_marked_exactly_once() {
        for e in &EXAMPLES {
            let marks = marks(e.text);
            for m in &marks {
                assert!(m.step < STEPS, "{}: card {} is no step", e.path, m.step + 1);
            }
            for step in 0..STEPS {
                let n = marks.iter().filter(|m| m.step == step).count();
                let want = usize::from(absent(e, step).is_none());
                assert_eq!(
                    n,
                    want,
                    "{}: card {} is marked {n} times (absent: {:?})",
                    e.path,
                    step + 1,
                    absent(e, step)
                );
            }
        }
    }

    #[test]
    fn the_claim_and_the_release_land_on_their_own_code() {
        // Each language's SET NX line is inside step 6's lines, its second
        // read inside step 8's, its release call inside step 11's, its
        // origin call inside step 9's.
        for e in &EXAMPLES {
            let text: Vec<&str> = e.text.lines().collect();
            let has = |step: usize, words: &[&str]| {
                let r = lines(e, step).unwrap();
                text[r.clone()]
                    .iter()
                    .any(|l| words.iter().any(|w| l.contains(w)))
            };
            assert!(has(5, &["NX"]), "{}: the claim", e.path);
            let read = [".get(", "._get(", ".read("];
            assert!(has(7, &read), "{}: the GET after winning", e.path);
            assert!(has(10, &["release", "RELEASE"]), "{}: the release", e.path);
            assert!(has(8, &["origin"]), "{}: the origin", e.path);
            assert!(has(1, &["GET", ".get("]), "{}: the GET", e.path);
        }
    }

    #[test]
    fn a_marker_marks_its_line_or_its_block() {
        let text = "\
fn get() { // card 1: handle(key)
    // card 4: singleflight
    let f = lookup();
    if f.is_none() {
        settle(); // card 13: answer
        // card 12: deeper: nests
        poll();
    }
    // card 5: wait: ends step 4
    wait(f);
}
// card 2: to the blank line
get();

x // no card here, and no card 3x
# card 7
y
";
        let got: Vec<(usize, Range<usize>)> = marks(text)
            .into_iter()
            .map(|m| (m.step + 1, m.lines))
            .collect();
        assert_eq!(
            got,
            [
                (1, 0..1),
                (4, 1..8),
                (13, 4..5),
                (12, 5..7),
                (5, 8..10),
                (2, 11..13),
                (7, 15..17)
            ]
        );
    }
}
