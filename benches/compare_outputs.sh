#!/usr/bin/env bash
# Byte-compares what two kernlens builds write for the same traces: `summary --json` (whole
# trace, `--window auto --top 0`, `--window cpu-steps --top 3`), `triage --json --no-discover`
# against fixtures/src, `report` and `split --window auto --json` with the files they write.
# Exit status and stderr count too. Used for every "outputs byte-identical" claim in
# PERFORMANCE.md. Usage: benches/compare_outputs.sh BASE_BIN NEW_BIN [TRACE...]
# (default traces: every fixtures/traces file, plus /tmp/gm1.json and /tmp/e10.json if present)
set -u
cd "$(dirname "$0")/.."
base=$1 new=$2; shift 2
traces=("$@")
if [ ${#traces[@]} = 0 ]; then
  traces=(fixtures/traces/*.json* fixtures/traces/memprof/*.json*)
  for t in /tmp/gm1.json /tmp/e10.json; do [ -s "$t" ] && traces+=("$t"); done
fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
modes=("summary --json" "summary --json --window auto --top 0" "summary --json --window cpu-steps --top 3"
       "triage --json --no-discover --root fixtures/src" "report -o @OUT@" "split --window auto --json -o @OUT@.json")
differ=0; n=0
for t in "${traces[@]}"; do
  [ -e "$t" ] || continue
  for mode in "${modes[@]}"; do
    for side in base new; do
      bin=$base; [ $side = new ] && bin=$new
      out=$dir/out; rm -f "$out" "$out.json"
      # shellcheck disable=SC2086 # the mode is words
      "$bin" ${mode//@OUT@/$out} "$t" > "$dir/$side" 2>&1; echo "rc=$?" >> "$dir/$side"
      for f in "$out" "$out.json"; do [ -f "$f" ] && cat "$f" >> "$dir/$side"; done
      sed -i "s#$dir#DIR#g" "$dir/$side"
    done
    n=$((n + 1))
    cmp -s "$dir/base" "$dir/new" || { differ=$((differ + 1)); echo "DIFF: $t :: $mode"; }
  done
done
echo "$n compared, $differ differ"
[ $differ = 0 ]
