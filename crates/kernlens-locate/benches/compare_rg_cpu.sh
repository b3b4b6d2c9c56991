#!/usr/bin/env bash
# CPU (user+sys) of `kernlens locate` against `rg -F -c` over the same keyword
# set, on each tree given: the scan goal of issue 21 (kernlens <= 1.0x rg).
# Runs are interleaved (rg, then each kernlens binary, N rounds) after one
# warming round, so a noisy host slows all sides alike; the table gives the
# best of N with its ratio to rg's best, then the median of N with its ratio
# to rg's median, and the spread (best and worst) of each side.
# Usage: compare_rg_cpu.sh NAMES_FILE ROUNDS KERNLENS_BIN[,KERNLENS_BIN...] TREE...
#   NAMES_FILE: kernel names, one a line (benches/real_tree_names.txt)
set -euo pipefail
names_file=${1:?usage: compare_rg_cpu.sh NAMES_FILE ROUNDS BINS TREE...}
rounds=${2:?rounds}
IFS=, read -r -a bins <<< "${3:?kernlens binaries, comma-separated}"
shift 3
mapfile -t names < "$names_file"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"${bins[0]}" locate --dump-keywords "${names[@]}" > "$work/keywords.txt"
echo "keywords: $(wc -l < "$work/keywords.txt") from ${#names[@]} names"
# CPU seconds of all threads, user and system: perf's task-clock (to the
# microsecond) where perf runs, else /usr/bin/time (to 10 ms).
if perf stat -x, -e task-clock true > /dev/null 2>&1; then
  cpu() { # out-file, command...
    local out=$1; shift
    perf stat -x, -e task-clock -o "$work/t" "$@" > /dev/null 2>&1 || true
    awk -F, '$3 == "task-clock" {printf "%.4f\n", $1 / 1000}' "$work/t" >> "$out"
  }
else
  cpu() {
    local out=$1; shift
    /usr/bin/time -f '%U %S' -o "$work/t" "$@" > /dev/null 2>&1 || true
    awk '{printf "%.3f\n", $1 + $2}' "$work/t" >> "$out"
  }
fi
stats() { # best, median, worst
  sort -n "$1" | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
    printf "%.4f %.4f %.4f\n", a[1], m, a[NR]}'
}
printf '%-20s %8s %8s %8s' tree MiB rg_best rg_med
for b in "${bins[@]}"; do printf ' %14s %6s %8s %6s' "$(basename "$b")_best" ratio median ratio; done
printf '\n'
for tree in "$@"; do
  rm -f "$work"/cpu.*
  mib=$(find "$tree" -type f \( -name '*.py' -o -name '*.cu' -o -name '*.cuh' -o -name '*.hip' \
    -o -name '*.cpp' -o -name '*.cc' -o -name '*.cxx' -o -name '*.c' -o -name '*.h' -o -name '*.hpp' \
    -o -name '*.hh' \) -printf '%s\n' | awk '{s += $1} END {printf "%.0f", s / 1048576}')
  rg_cmd=(rg -F -c -uu --max-filesize 8M -g '*.{py,cu,cuh,hip,cpp,cc,cxx,c,h,hpp,hh}' -f "$work/keywords.txt" "$tree")
  for round in $(seq 0 "$rounds"); do
    sink=$work/cpu.rg; [ "$round" = 0 ] && sink=/dev/null
    cpu "$sink" "${rg_cmd[@]}"
    for i in "${!bins[@]}"; do
      sink=$work/cpu.$i; [ "$round" = 0 ] && sink=/dev/null
      cpu "$sink" "${bins[$i]}" locate --no-discover --root "$tree" --json "${names[@]}"
    done
  done
  read -r rg_min rg_med rg_max < <(stats "$work/cpu.rg")
  printf '%-20s %8s %8s %8s' "$(basename "$tree")" "$mib" "$rg_min" "$rg_med"
  for i in "${!bins[@]}"; do
    read -r k_min k_med k_max < <(stats "$work/cpu.$i")
    printf ' %14s %6s %8s %6s' "$k_min" "$(awk -v k="$k_min" -v r="$rg_min" 'BEGIN {printf "%.2f", k / r}')" \
      "$k_med" "$(awk -v k="$k_med" -v r="$rg_med" 'BEGIN {printf "%.2f", k / r}')"
    echo "$(basename "$tree") $(basename "${bins[$i]}") min $k_min max $k_max" >> "$work/spread"
  done
  echo "$(basename "$tree") rg min $rg_min max $rg_max" >> "$work/spread"
  printf '\n'
  # Every binary must answer exactly as the first: same `--json`, byte for byte.
  for i in "${!bins[@]}"; do
    "${bins[$i]}" locate --no-discover --root "$tree" --json "${names[@]}" > "$work/json.$i" 2> /dev/null || true
    if ! cmp -s "$work/json.0" "$work/json.$i"; then
      echo "$(basename "$tree"): --json of $(basename "${bins[$i]}") differs from $(basename "${bins[0]}")" >> "$work/json_diffs"
    fi
  done
done
if [ "${#bins[@]}" -gt 1 ]; then
  if [ -s "$work/json_diffs" ]; then cat "$work/json_diffs"; else echo "--json: identical for every binary on every tree"; fi
fi
echo "spread (best and worst of $rounds):"
cat "$work/spread"
