//! Writes the synthetic benchmark source tree (locate.md "Performance goals") and the
//! benchmark names: `gen_source_tree OUT_DIR [BYTES] [SEED]`. BYTES accepts a
//! `K`, `M` or `G` suffix (default 1G); the names go to `OUT_DIR.names.txt`.

#[path = "../benches/source_tree/mod.rs"]
mod source_tree;

use std::process::ExitCode;

fn parse_bytes(s: &str) -> Option<u64> {
    let (num, mul) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mul)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: gen_source_tree OUT_DIR [BYTES] [SEED]");
        return ExitCode::from(2);
    };
    let bytes = args.get(1).map_or(Some(1 << 30), |b| parse_bytes(b));
    let seed = args.get(2).map_or(Some(1), |s| s.parse().ok());
    let (Some(bytes), Some(seed)) = (bytes, seed) else {
        eprintln!(
            "gen_source_tree: BYTES must be a number with an optional K/M/G suffix, SEED a number"
        );
        return ExitCode::from(2);
    };
    let out = std::path::Path::new(out);
    match source_tree::generate(out, bytes, seed) {
        Ok(s) => {
            let names = source_tree::bench_names().join("\n") + "\n";
            let names_path = format!("{}.names.txt", out.display());
            if let Err(e) = std::fs::write(&names_path, names) {
                eprintln!("gen_source_tree: cannot write '{names_path}': {e}");
                return ExitCode::from(1);
            }
            println!(
                "{} files, {} bytes under {}; names in {names_path}",
                s.files,
                s.bytes,
                out.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "gen_source_tree: cannot write under '{}': {e}",
                out.display()
            );
            ExitCode::from(1)
        }
    }
}
