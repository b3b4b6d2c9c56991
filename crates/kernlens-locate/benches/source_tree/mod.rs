//! A deterministic synthetic source tree for locate benchmarks (locate.md
//! locate.md "Performance goals"): about 60 % `.py`, 25 % `.cu`/`.cuh`, 15 % `.cpp`/`.h`, filler code
//! from a fixed vocabulary, and planted definitions, re-exports and
//! f-string composers for the benchmark names. Shared by the criterion
//! bench and the `gen_source_tree` example.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

use kernlens_locate::keywords_for;

/// The 14 real fixture names, one a line.
pub const REAL_NAMES: &str = include_str!("../locate_names.txt");

const WORDS: &[&str] = &[
    "tensor", "block", "offset", "load", "store", "stride", "ptr", "mask", "acc", "scale", "grid",
    "stream", "dtype", "shape", "index", "value", "weight", "bias", "input", "output", "buffer",
    "warp", "lane", "tile", "row", "col", "sum", "max", "min", "exp", "norm", "eps", "rank",
    "world", "group", "expert", "token", "head", "seq", "batch", "cache", "page", "slot",
];

/// A small xorshift generator: deterministic for a seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn word(&mut self) -> &'static str {
        WORDS[self.below(WORDS.len())]
    }
}

/// The 50 benchmark names: the real ones, then synthetic aiter/vllm-style
/// names (the last 10 of them mangled).
pub fn bench_names() -> Vec<String> {
    let mut names: Vec<String> = REAL_NAMES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect();
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut i = 0;
    while names.len() < 40 {
        let n = format!(
            "_{}_{}_{}_fwd_kernel_v{i}",
            rng.word(),
            rng.word(),
            rng.word()
        );
        names.push(n);
        i += 1;
    }
    while names.len() < 50 {
        let base = format!("{}_{}_reduce_kernel{i}", rng.word(), rng.word());
        names.push(format!("_ZN4vllm{}{}IfLi4EEEvPT_", base.len(), base));
        i += 1;
    }
    names
}

fn filler(rng: &mut Rng, out: &mut Vec<u8>, bytes: usize, python: bool) {
    let start = out.len();
    while out.len() - start < bytes {
        let (a, b, c) = (rng.word(), rng.word(), rng.word());
        let n = rng.below(64);
        let line = match (python, rng.below(4)) {
            (true, 0) => format!("def {a}_{b}_{n}({c}, {a}):\n"),
            (true, 1) => format!("    {a}_{b} = {c}[{n}] * {a}_{c}  # {b}\n"),
            (true, 2) => format!("    return {a}({b}_{c}, {n})\n"),
            (true, _) => format!("    {a} = tl.load({b}_ptr + {c}_offs, mask={a}_mask)\n"),
            (false, 0) => format!("static inline int {a}_{b}_{n}(const float* {c}) {{\n"),
            (false, 1) => format!("  {a}_{b}[{n}] = {c}[threadIdx.x] * {a};  // {b}\n"),
            (false, 2) => format!("  return {a}_{c} + {n};\n}}\n"),
            (false, _) => format!("  float {a}_{b} = __shfl_xor_sync(0xffffffff, {c}, {n});\n"),
        };
        out.extend_from_slice(line.as_bytes());
    }
}

/// What was written.
#[derive(Debug, Default)]
pub struct TreeSummary {
    /// Files written.
    pub files: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// Writes about `total_bytes` of sources under `out`, planting every name.
pub fn generate(out: &Path, total_bytes: u64, seed: u64) -> io::Result<TreeSummary> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut summary = TreeSummary::default();
    let write = |rel: &str, data: &[u8], s: &mut TreeSummary| -> io::Result<()> {
        let p = out.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::File::create(&p)?.write_all(data)?;
        s.files += 1;
        s.bytes += data.len() as u64;
        Ok(())
    };
    let mut file_no = 0usize;
    let mut buf = Vec::with_capacity(64 * 1024);
    while summary.bytes < total_bytes {
        let pick = rng.below(100);
        let (ext, python) = match pick {
            0..=59 => ("py", true),
            60..=79 => ("cu", false),
            80..=84 => ("cuh", false),
            85..=94 => ("cpp", false),
            _ => ("h", false),
        };
        let size = 1024 + rng.below(23 * 1024);
        buf.clear();
        filler(&mut rng, &mut buf, size, python);
        let rel = format!(
            "pkg{}/mod{}/{}_{}_{file_no}.{ext}",
            file_no % 40,
            (file_no / 40) % 50,
            rng.word(),
            rng.word()
        );
        write(&rel, &buf, &mut summary)?;
        file_no += 1;
    }
    for (i, name) in bench_names().iter().enumerate() {
        let plan = keywords_for(name);
        let base = plan.base;
        if base.is_empty() {
            continue;
        }
        let dir = format!("pkg{}/planted{i}", i % 40);
        if base.starts_with("mfma_") {
            let head: Vec<&str> = base.split('_').take(3).collect();
            let text = format!(
                "import flydsl.compiler as flyc\n\n\ndef compile_{i}(a, b, o):\n    return flyc.compile(f\"{}_a{{a}}_w{{b}}_{{o}}\")\n",
                head.join("_")
            );
            write(&format!("{dir}/composer.py"), text.as_bytes(), &mut summary)?;
        } else if name.starts_with("_Z") || name.contains("::") || base == "foo_kernel" {
            let text = format!(
                "template <typename T, int N>\n__global__ void __launch_bounds__(256)\n{base}(\n    T* out,\n    const T* in) {{\n  out[0] = in[0];\n}}\n"
            );
            write(&format!("{dir}/{base}.cu"), text.as_bytes(), &mut summary)?;
            let call =
                format!("void launch_{i}(float* o) {{ {base}<float, 4><<<1, 64>>>(o, o); }}\n");
            write(&format!("{dir}/launch.cpp"), call.as_bytes(), &mut summary)?;
        } else {
            let text = format!(
                "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef {base}(x_ptr, BLOCK: tl.constexpr):\n    pass\n"
            );
            write(
                &format!("{dir}/impl/kernel.py"),
                text.as_bytes(),
                &mut summary,
            )?;
            let init = format!("from .impl.kernel import {base}\n__all__ = [\"{base}\"]\n");
            write(&format!("{dir}/__init__.py"), init.as_bytes(), &mut summary)?;
        }
    }
    Ok(summary)
}
