//! What the unit tests share: the repository's fixture traces, gzip both ways (one
//! definition, so a test of the gzip path and one of split build their inputs alike), and
//! the one-byte damage the mutation laws apply to real and generated events.

use std::io::{Read, Write};
use std::path::PathBuf;

/// The path of `fixtures/traces/<name>` in the repository.
pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/traces")
        .join(name)
}

/// Every member of `gz`, decoded.
pub(crate) fn gunzip(gz: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(gz)
        .read_to_end(&mut plain)
        .unwrap_or_else(|e| panic!("gunzip: {e}"));
    plain
}

/// `plain` as one gzip member written by flate2 at `level`.
pub(crate) fn gzip_at(plain: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(plain).unwrap_or_else(|e| panic!("gzip: {e}"));
    e.finish().unwrap_or_else(|e| panic!("gzip: {e}"))
}

/// Damages `b` at a random place: byte `c` replaces one, or one is removed, or `c` is
/// inserted (each a third of the time). `b` must not be empty.
pub(crate) fn damage(rng: &mut fastrand::Rng, b: &mut Vec<u8>, c: u8) {
    let at = rng.usize(0..b.len());
    match rng.u8(0..3) {
        0 => b[at] = c,
        1 => {
            b.remove(at);
        }
        _ => b.insert(at, c),
    }
}
