//! Git's extended diff format, written without git: headers, mode and index lines, unified text
//! hunks (histogram diff) and `GIT binary patch` literal hunks.

use std::io::Write as _;

use gix_imara_diff::{Algorithm, Diff, InternedInput};

use crate::changes::{ChangeStatus, Comparison, LoadedChange, is_binary};
use crate::error::Error;

const NULL_ID: &str = "0000000000000000000000000000000000000000";
const CONTEXT: u32 = 3;

/// C-quote `prefix + path` the way git does when the path holds `"`, `\`, a control byte or a
/// byte >= 0x80; otherwise return it plain.
pub fn quote_path(prefix: &str, path: &[u8]) -> Vec<u8> {
    let needs = path
        .iter()
        .any(|&b| b == b'"' || b == b'\\' || b < 0x20 || b == 0x7f || b >= 0x80);
    let mut out = Vec::with_capacity(path.len() + prefix.len() + 2);
    if !needs {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(path);
        return out;
    }
    out.push(b'"');
    out.extend_from_slice(prefix.as_bytes());
    for &b in path {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b if !(0x20..0x7f).contains(&b) => {
                out.extend_from_slice(format!("\\{b:03o}").as_bytes())
            }
            b => out.push(b),
        }
    }
    out.push(b'"');
    out
}

const BASE85: &[u8; 85] =
    b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/// Encode `data` in git's base85: each 4-byte big-endian group (zero padded) becomes 5 characters.
pub fn base85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len().div_ceil(4) * 5);
    for chunk in data.chunks(4) {
        let mut group = [0u8; 4];
        group[..chunk.len()].copy_from_slice(chunk);
        let mut acc = u32::from_be_bytes(group);
        let mut five = [0u8; 5];
        for slot in five.iter_mut().rev() {
            *slot = BASE85[(acc % 85) as usize];
            acc /= 85;
        }
        out.extend_from_slice(&five);
    }
    out
}

fn deflate(data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut w = gix::zlib::stream::deflate::Write::new(Vec::new(), gix::zlib::Compression::DEFAULT);
    w.write_all(data)?;
    w.flush()?;
    Ok(w.into_inner())
}

/// One `literal <size>` hunk: deflated data in base85 lines of at most 52 input bytes, each led
/// by its length character, then a blank line.
fn literal_hunk(out: &mut Vec<u8>, data: &[u8]) -> std::io::Result<()> {
    let packed = deflate(data)?;
    out.extend_from_slice(format!("literal {}\n", data.len()).as_bytes());
    for line in packed.chunks(52) {
        let n = line.len() as u8;
        out.push(if n <= 26 { b'A' + n - 1 } else { b'a' + n - 27 });
        out.extend_from_slice(&base85(line));
        out.push(b'\n');
    }
    out.push(b'\n');
    Ok(())
}

fn split_lines(data: &[u8]) -> Vec<&[u8]> {
    let mut lines = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|b| *b == b'\n')
            .map_or(rest.len(), |p| p + 1);
        lines.push(&rest[..end]);
        rest = &rest[end..];
    }
    lines
}

fn emit_line(out: &mut Vec<u8>, sign: u8, line: &[u8]) {
    out.push(sign);
    out.extend_from_slice(line);
    if !line.ends_with(b"\n") {
        out.extend_from_slice(b"\n\\ No newline at end of file\n");
    }
}

fn range_header(start: u32, count: u32) -> String {
    match count {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        n => format!("{},{n}", start + 1),
    }
}

/// Unified hunks with 3 lines of context, from a histogram line diff.
pub fn unified_hunks(old: &[u8], new: &[u8], out: &mut Vec<u8>) {
    let old_lines = split_lines(old);
    let new_lines = split_lines(new);
    let input = InternedInput::new(old, new);
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
    diff.postprocess_lines(&input);
    let hunks: Vec<_> = diff.hunks().collect();
    let old_len = old_lines.len() as u32;
    let mut i = 0;
    while i < hunks.len() {
        let mut j = i;
        while j + 1 < hunks.len() && hunks[j + 1].before.start - hunks[j].before.end <= 2 * CONTEXT
        {
            j += 1;
        }
        let first = &hunks[i];
        let last = &hunks[j];
        let s_old = first.before.start.saturating_sub(CONTEXT);
        let e_old = (last.before.end + CONTEXT).min(old_len);
        let s_new = first.after.start - (first.before.start - s_old);
        let e_new = last.after.end + (e_old - last.before.end);
        out.extend_from_slice(
            format!(
                "@@ -{} +{} @@\n",
                range_header(s_old, e_old - s_old),
                range_header(s_new, e_new - s_new)
            )
            .as_bytes(),
        );
        let mut pos = s_old;
        for h in &hunks[i..=j] {
            for line in &old_lines[pos as usize..h.before.start as usize] {
                emit_line(out, b' ', line);
            }
            for line in &old_lines[h.before.start as usize..h.before.end as usize] {
                emit_line(out, b'-', line);
            }
            for line in &new_lines[h.after.start as usize..h.after.end as usize] {
                emit_line(out, b'+', line);
            }
            pos = h.before.end;
        }
        for line in &old_lines[pos as usize..e_old as usize] {
            emit_line(out, b' ', line);
        }
        i = j + 1;
    }
}

fn name_line(out: &mut Vec<u8>, marker: &str, prefix: &str, path: &[u8]) {
    out.extend_from_slice(marker.as_bytes());
    out.extend_from_slice(&quote_path(prefix, path));
    // Git ends a name holding a space with a tab so the name's end is unambiguous.
    if path.contains(&b' ') {
        out.push(b'\t');
    }
    out.push(b'\n');
}

/// Header, mode and index lines, then text or binary content, for one side pair.
fn section(
    out: &mut Vec<u8>,
    path: &[u8],
    old: Option<(&str, &str, &[u8])>,
    new: Option<(&str, &str, &[u8])>,
) -> std::io::Result<()> {
    out.extend_from_slice(b"diff --git ");
    out.extend_from_slice(&quote_path("a/", path));
    out.push(b' ');
    out.extend_from_slice(&quote_path("b/", path));
    out.push(b'\n');
    let (old_id, old_mode, old_bytes) = old.unwrap_or((NULL_ID, "", b""));
    let (new_id, new_mode, new_bytes) = new.unwrap_or((NULL_ID, "", b""));
    match (old.is_some(), new.is_some()) {
        (false, true) => {
            out.extend_from_slice(
                format!("new file mode {new_mode}\nindex {old_id}..{new_id}\n").as_bytes(),
            );
        }
        (true, false) => {
            out.extend_from_slice(
                format!("deleted file mode {old_mode}\nindex {old_id}..{new_id}\n").as_bytes(),
            );
        }
        _ if old_mode != new_mode => {
            out.extend_from_slice(format!("old mode {old_mode}\nnew mode {new_mode}\n").as_bytes());
            if old_id != new_id {
                out.extend_from_slice(format!("index {old_id}..{new_id}\n").as_bytes());
            }
        }
        _ => out.extend_from_slice(format!("index {old_id}..{new_id} {new_mode}\n").as_bytes()),
    }
    if old_id == new_id {
        return Ok(());
    }
    if is_binary(old_bytes) || is_binary(new_bytes) {
        out.extend_from_slice(b"GIT binary patch\n");
        literal_hunk(out, new_bytes)?;
        literal_hunk(out, old_bytes)?;
        return Ok(());
    }
    if old_bytes.is_empty() && new_bytes.is_empty() {
        return Ok(());
    }
    if old.is_some() {
        name_line(out, "--- ", "a/", path);
    } else {
        out.extend_from_slice(b"--- /dev/null\n");
    }
    if new.is_some() {
        name_line(out, "+++ ", "b/", path);
    } else {
        out.extend_from_slice(b"+++ /dev/null\n");
    }
    unified_hunks(old_bytes, new_bytes, out);
    Ok(())
}

/// Assemble the patch for `changes` (as classified from `cmp`), one section per change in path
/// order; a type change is a deletion followed by an addition.
pub(crate) fn write_patch(cmp: &Comparison, changes: &[LoadedChange]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    for loaded in changes {
        let key = loaded.change.path_bytes();
        let old = cmp.base.get(key).copied();
        let new = cmp.new.get(key).copied();
        let old_id = old.map(|o| o.id.to_string());
        let new_id = new.map(|n| n.id.to_string());
        let old_side = old
            .zip(old_id.as_deref())
            .map(|(o, id)| (id, o.kind.octal(), loaded.old.as_slice()));
        let new_side = new
            .zip(new_id.as_deref())
            .map(|(n, id)| (id, n.kind.octal(), loaded.new.as_slice()));
        let io = |e| Error::io("write patch for", crate::changes::rel_path(key), e);
        if loaded.change.status == ChangeStatus::TypeChanged {
            section(&mut out, key, old_side, None).map_err(io)?;
            section(&mut out, key, None, new_side).map_err(io)?;
        } else {
            section(&mut out, key, old_side, new_side).map_err(io)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_matches_git() {
        assert_eq!(quote_path("a/", b"x y"), b"a/x y");
        assert_eq!(quote_path("a/", "é".as_bytes()), br#""a/\303\251""#);
        assert_eq!(quote_path("b/", b"q\"t"), br#""b/q\"t""#);
        assert_eq!(quote_path("b/", b"t\tb\\"), br#""b/t\tb\\""#);
    }

    #[test]
    fn base85_of_known_groups() {
        assert_eq!(base85(&[0, 0, 0, 0]), b"00000");
        assert_eq!(base85(&[0xff, 0xff, 0xff, 0xff]), b"|NsC0");
    }

    #[test]
    fn hunks_mark_missing_final_newline() {
        let mut out = Vec::new();
        unified_hunks(b"a\nb\n", b"a\nb", &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn distant_changes_make_separate_hunks_and_near_ones_merge() {
        let old: String = (1..=20).map(|i| format!("line{i}\n")).collect();
        let new = old
            .replace("line2\n", "two\n")
            .replace("line19\n", "nineteen\n");
        let mut out = Vec::new();
        unified_hunks(old.as_bytes(), new.as_bytes(), &mut out);
        let text = String::from_utf8_lossy(&out);
        assert_eq!(text.matches("@@ -").count(), 2, "{text}");
        assert!(
            text.starts_with("@@ -1,5 +1,5 @@\n line1\n-line2\n+two\n line3\n line4\n line5\n"),
            "{text}"
        );
        let new = old
            .replace("line2\n", "two\n")
            .replace("line8\n", "eight\n");
        let mut out = Vec::new();
        unified_hunks(old.as_bytes(), new.as_bytes(), &mut out);
        assert_eq!(String::from_utf8_lossy(&out).matches("@@ -").count(), 1);
    }
}
