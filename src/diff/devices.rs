//! GPU models from a trace's `deviceProperties` member.
//!
//! The trace reader does not keep top-level members other than `traceEvents` (trace.md,
//! "Locating the array"), so the diff reads them itself. Kineto writes `deviceProperties`
//! before `traceEvents`, so only the head of the file is read (at most [`HEAD_BYTES`]
//! after decompression): this is not a second pass over the trace. A member that comes
//! later, a file that cannot be read again, or a stream source gives `None`, and the
//! GPU-model check is then skipped rather than guessed.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;

/// The most trace text read to find `deviceProperties`.
pub(crate) const HEAD_BYTES: usize = 4 << 20;

const EVENTS: &[u8] = b"\"traceEvents\"";

#[derive(Deserialize)]
struct Device {
    #[serde(default)]
    id: Option<i64>,
    #[serde(default)]
    name: Option<String>,
}

/// The `name` of every `deviceProperties` entry, in id order; `None` when the head of the
/// file has no such member or it cannot be read.
pub(crate) fn gpu_models(path: &Path) -> Option<Vec<String>> {
    let head = read_head(path)?;
    models_in(&head)
}

fn read_head(path: &Path) -> Option<Vec<u8>> {
    let mut file = File::open(path).ok()?;
    let mut magic = [0u8; 2];
    let got = file.read(&mut magic).ok()?;
    let file = File::open(path).ok()?;
    let mut input: Box<dyn Read> = if got == 2 && magic == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    // Read in small steps and stop at `traceEvents`: the member sits in the first
    // kilobyte of a Kineto trace, and the events after it are not needed.
    let mut head = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    while head.len() < HEAD_BYTES {
        let searched_to = head.len().saturating_sub(EVENTS.len());
        match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            // A damaged stream still gives the bytes before the damage.
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
        if find(&head[searched_to..], EVENTS).is_some() {
            break;
        }
    }
    (!head.is_empty()).then_some(head)
}

/// Finds the top-level-looking `"deviceProperties"` before `"traceEvents"` and parses the
/// array after it.
fn models_in(head: &[u8]) -> Option<Vec<String>> {
    const MEMBER: &[u8] = b"\"deviceProperties\"";
    let events = find(head, EVENTS).unwrap_or(head.len());
    let at = find(&head[..events], MEMBER)? + MEMBER.len();
    let rest = &head[at..];
    let colon = rest.iter().position(|&b| !b.is_ascii_whitespace())?;
    if rest[colon] != b':' {
        return None;
    }
    let mut reader = serde_json::Deserializer::from_slice(&rest[colon + 1..]);
    let mut devices = Vec::<Device>::deserialize(&mut reader).ok()?;
    devices.sort_by_key(|d| d.id);
    Some(
        devices
            .into_iter()
            .map(|d| d.name.unwrap_or_default())
            .collect(),
    )
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::models_in;

    #[test]
    fn models_come_from_the_member_before_the_events() {
        let head = br#"{"schemaVersion":1,"deviceProperties" : [{"id":1,"name":"B"},{"id":0,"name":"A"}],"traceEvents":[{"name":"deviceProperties"}]}"#;
        assert_eq!(models_in(head).unwrap(), ["A", "B"]);
    }

    #[test]
    fn a_member_after_the_events_or_none_gives_no_models() {
        assert_eq!(
            models_in(br#"{"traceEvents":[],"deviceProperties":[]}"#),
            None
        );
        assert_eq!(models_in(br#"{"traceEvents":[]}"#), None);
        assert_eq!(models_in(br#"{"deviceProperties": 3}"#), None);
    }
}
