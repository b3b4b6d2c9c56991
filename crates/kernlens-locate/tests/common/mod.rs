//! Helpers shared by the integration tests.
#![allow(clippy::unwrap_used, dead_code)]

use std::path::Path;

/// Copies a fixture tree into a temp directory (fixtures stay read-only).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}
