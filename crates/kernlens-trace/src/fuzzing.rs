//! Laws over the reader's internals for cargo-fuzz (feature `fuzzing`; not public API).
//!
//! The fast paths must never read an event differently from the cursor: whatever they
//! accept, the cursor accepts with the same event and the same end. These entry points
//! panic when that fails, so the fuzzer reports it.

use crate::event::{Wanted, parse_event};
use crate::json::Cursor;
use crate::shape::Shapes;

const ALL: Wanted = Wanted::EVERYTHING;

/// The cursor's reading of an event at the start of `text`.
fn by_cursor(text: &[u8]) -> Option<(String, usize)> {
    let mut c = Cursor::new(text, 0);
    let ev = parse_event(&mut c, &mut Vec::new(), ALL).ok()?;
    Some((format!("{ev:?}"), c.i))
}

/// `data` is `A 0x00 B` (or one text used as both): a shape learned from `A` (when the
/// cursor accepts it) must read `B` as the cursor does or not at all.
pub fn fast_paths_agree(data: &[u8]) {
    let (a, b) = match data.iter().position(|&c| c == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, data),
    };
    let Some((_, end)) = by_cursor(a) else {
        return;
    };
    let mut shapes = Shapes::default();
    shapes.learn(a, 0, end);
    if let Some((ev, end)) = shapes.read(b, 0, ALL) {
        let fast = (format!("{:?}", Ok::<_, ()>(ev)), end);
        let slow = {
            let mut c = Cursor::new(b, 0);
            let ev = parse_event(&mut c, &mut Vec::new(), ALL);
            (format!("{ev:?}"), c.i)
        };
        assert_eq!(fast, slow, "shape of {a:?} on {b:?}");
    }
}
