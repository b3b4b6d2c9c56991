//! `scale <src> <out> (--copies N | --target-bytes B) [--gap-us G]`: writes an N× larger
//! copy of a real Kineto trace for benchmarks (trace.md "Synthetic-trace scaler"). `.gz` output is
//! compressed on the fly; memory does not depend on N.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: scale <src> <out> (--copies N | --target-bytes B) [--gap-us G]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        return usage();
    }
    let (src_path, out_path) = (&args[0], &args[1]);
    let mut copies: Option<u64> = None;
    let mut target: Option<u64> = None;
    let mut gap_us = 0i64;
    let mut rest = args[2..].iter();
    while let Some(flag) = rest.next() {
        let Some(v) = rest.next() else { return usage() };
        match (flag.as_str(), v.parse::<u64>()) {
            ("--copies", Ok(n)) => copies = Some(n),
            ("--target-bytes", Ok(n)) => target = Some(n),
            ("--gap-us", Ok(n)) => gap_us = n as i64,
            _ => return usage(),
        }
    }
    let mut raw = Vec::new();
    if let Err(e) = File::open(src_path).and_then(|mut f| f.read_to_end(&mut raw)) {
        eprintln!("scale: cannot read '{src_path}': {e}");
        return ExitCode::from(1);
    }
    let src = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        if let Err(e) = flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut plain) {
            eprintln!("scale: cannot decompress '{src_path}': {e}");
            return ExitCode::from(1);
        }
        plain
    } else {
        raw
    };
    let n = match (copies, target) {
        (Some(n), None) => n,
        (None, Some(b)) => b.div_ceil(src.len().max(1) as u64),
        _ => return usage(),
    };
    let file = match File::create(out_path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("scale: cannot create '{out_path}': {e}");
            return ExitCode::from(1);
        }
    };
    let buffered = BufWriter::with_capacity(1 << 20, file);
    let result = if out_path.ends_with(".gz") {
        let mut gz = flate2::write::GzEncoder::new(buffered, flate2::Compression::default());
        kernlens_xtask::scale(&src, &mut gz, n, gap_us * 1000).and_then(|s| {
            gz.finish()?.flush()?;
            Ok(s)
        })
    } else {
        let mut w = buffered;
        kernlens_xtask::scale(&src, &mut w, n, gap_us * 1000)
    };
    match result {
        Ok(s) => {
            eprintln!(
                "scale: wrote {} copies, {} events, span {} ns",
                s.copies, s.events_written, s.span_ns
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scale: {e}");
            ExitCode::from(1)
        }
    }
}
