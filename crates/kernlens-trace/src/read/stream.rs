//! Progress of a streamed read (gzip, stdin): how far into the stored bytes its reader got.

use std::io::{self, Read, Seek};

/// Tells how far a reader got into its input, for progress on a compressed file.
pub(crate) struct Counted<R> {
    inner: R,
    /// The offset of the next byte read (the input starts at 0).
    pos: u64,
    /// The furthest offset reached, for the meter: a read resumed at an access point
    /// (zran.rs) jumps ahead, and may step back a little into bytes it had buffered.
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        self.count
            .fetch_max(self.pos, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}

impl<R: Seek> Counted<R> {
    /// Reads on from offset `to`.
    pub(crate) fn jump(&mut self, to: u64) -> io::Result<()> {
        self.inner.seek(io::SeekFrom::Start(to))?;
        self.pos = to;
        self.count
            .fetch_max(to, std::sync::atomic::Ordering::Relaxed);
        Ok(())
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
                pos: 0,
                count: count.clone(),
            },
            Meter { count, total },
        )
    }

    pub(super) fn done(&self) -> u64 {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }
}
