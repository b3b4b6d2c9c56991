#!/usr/bin/env bash
# Runs the fuzz targets one after another, each for a fixed time, on a stable toolchain.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 300 s, every target)
#
# cargo-fuzz needs nightly-only flags; RUSTC_BOOTSTRAP=1 lets the stable compiler accept them.
# The sanitizer is off (-s none): the code is safe Rust, and without ASan the build is several
# times faster on two cores. Debug assertions (overflow checks included) stay on.
# Seeds are the committed inputs under fuzz/regressions/<target>/; new corpus entries go to
# fuzz/corpus/<target>/ and crashes to fuzz/artifacts/<target>/ (both git-ignored): copy a
# crash into fuzz/regressions/<target>/ once it is fixed, so tests/fuzz_replay.rs keeps it fixed.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

secs=${1:-300}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(trace_reader trace_event trace_fast_paths ident_keys ident_mangled source_ref locate_python locate_cxx
    scratch_hunks scratch_export trace_ranks)
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
target_dir=${KERNLENS_FUZZ_TARGET_DIR:-target}

export RUSTC_BOOTSTRAP=1
cargo fuzz build -s none --target-dir "$target_dir"
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  echo "== $t for ${secs}s"
  # Fork mode keeps going after a crash, so one run reports every distinct failure.
  cargo fuzz run -s none --target-dir "$target_dir" "$t" "corpus/$t" "regressions/$t" -- \
    -max_total_time="$secs" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 >"artifacts/$t.log" 2>&1 || true
  grep -E 'panicked at' -A1 "artifacts/$t.log" | grep -v -e 'panicked at' -e '^--' | sort | uniq -c | head -n 20 || true
  echo "== $t: $(grep -E '^#[0-9]+: cov' "artifacts/$t.log" | tail -n 1)"
  echo "== $t: $(ls "artifacts/$t" | wc -l) artifact(s), $(ls "corpus/$t" | wc -l) corpus entries"
done
