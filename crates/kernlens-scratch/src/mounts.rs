//! Which filesystem a path lives on, from a mount table given as text.
//!
//! The table is a value so that tests (and callers on odd systems) can hand one in; reading
//! `/proc/self/mountinfo` or `/proc/mounts` happens at the edge through [`MountTable::read`].

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::policy::ScratchPolicy;

/// One mount: where, and of which type.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mount {
    /// Mount point with octal escapes decoded and no trailing `/` (except `/` itself).
    pub mount_point: Vec<u8>,
    /// Filesystem type as written in the table.
    pub fs_type: String,
}

/// A parsed mount table, in file order (later lines are higher on a mount stack).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MountTable {
    /// The mounts in table order.
    pub mounts: Vec<Mount>,
}

/// Decode the table's octal escapes: `\040` is a space, `\134` a backslash. Invalid escapes stay.
fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'\\'
            && i + 3 < field.len()
            && field[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value = u32::from(field[i + 1] - b'0') * 64
                + u32::from(field[i + 2] - b'0') * 8
                + u32::from(field[i + 3] - b'0');
            if let Ok(byte) = u8::try_from(value) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(field[i]);
        i += 1;
    }
    out
}

fn normalise_mount_point(raw: &[u8]) -> Vec<u8> {
    let mut mp = unescape(raw);
    while mp.last() == Some(&b'/') {
        mp.pop();
    }
    if mp.is_empty() {
        mp.push(b'/');
    }
    mp
}

impl MountTable {
    /// Parse `/proc/mounts` (`source mountpoint type ...`) or `/proc/self/mountinfo`
    /// (`id parent dev root mountpoint options ... - type source ...`) text. Lines with too few
    /// fields are skipped.
    pub fn parse(text: &str) -> MountTable {
        let mut mounts = Vec::new();
        for line in text.lines() {
            let fields: Vec<&str> = line.split([' ', '\t']).filter(|f| !f.is_empty()).collect();
            if fields.len() < 3 {
                continue;
            }
            // mountinfo: numeric id and parent, then a lone `-` before the type.
            let is_mountinfo = fields[0].bytes().all(|b| b.is_ascii_digit())
                && fields[1].bytes().all(|b| b.is_ascii_digit())
                && fields.len() >= 7;
            let (mp, fs_type) = match fields.iter().position(|f| *f == "-") {
                Some(dash) if is_mountinfo && dash >= 6 && dash + 1 < fields.len() => {
                    (fields[4], fields[dash + 1])
                }
                _ => (fields[1], fields[2]),
            };
            mounts.push(Mount {
                mount_point: normalise_mount_point(mp.as_bytes()),
                fs_type: fs_type.to_owned(),
            });
        }
        MountTable { mounts }
    }

    /// Read and parse the table at `path`. An unreadable table is an empty one: every path then
    /// counts as local.
    pub fn read(path: &Path) -> MountTable {
        match std::fs::read(path) {
            Ok(bytes) => MountTable::parse(&String::from_utf8_lossy(&bytes)),
            Err(_) => MountTable::default(),
        }
    }

    /// The filesystem type of `path`: the longest matching mount point of its nearest existing,
    /// canonicalised ancestor; on equal length the later line wins. `None` when nothing matches.
    pub fn fs_type_of(&self, path: &Path) -> Option<String> {
        let resolved = nearest_existing_canonical(path);
        self.fs_type_of_resolved(resolved.as_os_str().as_bytes())
    }

    fn fs_type_of_resolved(&self, path: &[u8]) -> Option<String> {
        let mut best: Option<&Mount> = None;
        for mount in &self.mounts {
            let mp = mount.mount_point.as_slice();
            let matches = mp == b"/"
                || mp == path
                || (path.len() > mp.len() && path.starts_with(mp) && path[mp.len()] == b'/');
            if matches && best.is_none_or(|b| mp.len() >= b.mount_point.len()) {
                best = Some(mount);
            }
        }
        best.map(|m| m.fs_type.clone())
    }

    /// True when `path` lies on a network filesystem according to `policy`. Unknown counts as local.
    pub fn is_network_fs(&self, path: &Path, policy: &ScratchPolicy) -> bool {
        self.fs_type_of(path)
            .is_some_and(|t| policy.is_network_fs(&t))
    }
}

/// Canonicalise the nearest ancestor that exists, then re-append the missing tail, so a path that
/// does not exist yet compares like for like with canonical ones.
pub(crate) fn nearest_existing_canonical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut tail = Vec::new();
    let mut cur = absolute.as_path();
    loop {
        if let Ok(canon) = cur.canonicalize() {
            let mut out = canon;
            for part in tail.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                cur = parent;
            }
            _ => return absolute,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> MountTable {
        MountTable::parse(
            "rootfs / ext4 rw 0 0\nsrv:/e /mnt nfs4 rw 0 0\n/dev/sdb1 /mnt/local\\040disk xfs rw 0 0\n",
        )
    }

    #[test]
    fn longest_prefix_on_component_boundaries() {
        let t = table();
        assert_eq!(t.fs_type_of_resolved(b"/mnt/x").as_deref(), Some("nfs4"));
        assert_eq!(
            t.fs_type_of_resolved(b"/mnt/local disk/y").as_deref(),
            Some("xfs")
        );
        assert_eq!(t.fs_type_of_resolved(b"/mntx").as_deref(), Some("ext4"));
        assert_eq!(t.fs_type_of_resolved(b"/mnt").as_deref(), Some("nfs4"));
    }

    #[test]
    fn later_line_wins_on_a_mount_stack() {
        let t = MountTable::parse(
            "rootfs / ext4 rw 0 0\nsrv:/e /mnt nfs4 rw 0 0\ntmpfs /mnt tmpfs rw 0 0\n",
        );
        assert_eq!(t.fs_type_of_resolved(b"/mnt/x").as_deref(), Some("tmpfs"));
    }

    #[test]
    fn escapes_decode_and_invalid_ones_stay() {
        assert_eq!(unescape(br"a\040b\011c\012d\134e"), b"a b\tc\nd\\e");
        assert_eq!(unescape(br"a\09b\4"), br"a\09b\4");
        assert_eq!(normalise_mount_point(b"/srv/"), b"/srv");
        assert_eq!(normalise_mount_point(b"/"), b"/");
    }

    #[test]
    fn short_lines_are_skipped_and_tabs_split() {
        let t = MountTable::parse("garbage\n\nx\t/data\tnfs\trw 0 0\n");
        assert_eq!(t.mounts.len(), 1);
        assert_eq!(t.fs_type_of_resolved(b"/data/a").as_deref(), Some("nfs"));
        assert_eq!(t.fs_type_of_resolved(b"/other"), None);
    }

    #[test]
    fn mountinfo_format_is_understood() {
        let t = MountTable::parse(
            "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
             40 22 0:50 / /mnt/shared rw,relatime shared:20 - nfs4 srv:/x rw,vers=4.2\n\
             41 22 0:51 / /mnt/sp\\040ace rw - xfs /dev/sdb rw\n",
        );
        assert_eq!(
            t.fs_type_of_resolved(b"/mnt/shared/a").as_deref(),
            Some("nfs4")
        );
        assert_eq!(
            t.fs_type_of_resolved(b"/mnt/sp ace").as_deref(),
            Some("xfs")
        );
        assert_eq!(t.fs_type_of_resolved(b"/home").as_deref(), Some("ext4"));
    }

    #[test]
    fn unreadable_table_means_local() {
        let t = MountTable::read(Path::new("/nonexistent/kernlens/mounts"));
        assert!(t.mounts.is_empty());
        assert_eq!(t.fs_type_of(Path::new("/tmp")), None);
        assert!(!t.is_network_fs(Path::new("/tmp"), &ScratchPolicy::default()));
    }

    proptest::proptest! {
        #[test]
        fn mount_point_only_matches_on_component_boundary(a in "[a-z]{1,6}", b in "[a-z]{1,6}") {
            let t = MountTable::parse(&format!("r / ext4 rw 0 0\ns /{a} nfs rw 0 0\n"));
            let joined = format!("/{a}{b}");
            let got = t.fs_type_of_resolved(joined.as_bytes());
            proptest::prop_assert_eq!(got.as_deref(), Some("ext4"));
            let child = format!("/{a}/{b}");
            let got = t.fs_type_of_resolved(child.as_bytes());
            proptest::prop_assert_eq!(got.as_deref(), Some("nfs"));
        }
    }
}
