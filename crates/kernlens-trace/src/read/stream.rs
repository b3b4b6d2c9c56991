//! Progress of a streamed read (gzip, stdin): the stored bytes its reader consumed.

use std::io::{self, Read};

/// Counts the bytes a reader hands out, for progress on a compressed file.
pub(crate) struct Counted<R> {
    inner: R,
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

/// Where progress of a stream is measured: the stored bytes consumed, out of `total`.
#[derive(Clone)]
pub(crate) struct Meter {
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
    pub(super) total: Option<u64>,
}

impl Meter {
    pub(crate) fn wrap<R: Read>(inner: R, total: Option<u64>) -> (Counted<R>, Meter) {
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        (
            Counted {
                inner,
                count: count.clone(),
            },
            Meter { count, total },
        )
    }

    pub(super) fn done(&self) -> u64 {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }
}
