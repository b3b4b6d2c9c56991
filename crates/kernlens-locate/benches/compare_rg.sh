#!/usr/bin/env bash
# Compares `kernlens locate` of the 50 benchmark names with the ripgrep anchor
# of locate.md §14 on one tree: median wall time of 5 warm runs each.
# Usage: compare_rg.sh TREE_DIR [KERNLENS_BIN]
# Make the tree with:
#   cargo run --release -p kernlens-locate --example gen_source_tree -- TREE_DIR 1G 1
set -euo pipefail
tree=${1:?usage: compare_rg.sh TREE_DIR [KERNLENS_BIN]}
bin=${2:-target/release/kernlens}
names_file="${tree%/}.names.txt"
mapfile -t names < "$names_file"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" locate --dump-keywords "${names[@]}" > "$work/keywords.txt"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # label, command...
  local label=$1; shift
  "$@" > /dev/null 2>&1 || true # warm the page cache
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f '%e' -o "$work/t" "$@" > /dev/null 2>&1 || true
    cat "$work/t"
  done | median > "$work/$label"
  echo "$label: $(cat "$work/$label") s (median of 5)"
}
run rg rg -F -c -uu --max-filesize 8M -g '*.{py,cu,cuh,hip,cpp,cc,cxx,c,h,hpp,hh}' -f "$work/keywords.txt" "$tree"
run kernlens "$bin" locate --no-discover --root "$tree" --json "${names[@]}"
awk -v k="$(cat "$work/kernlens")" -v r="$(cat "$work/rg")" 'BEGIN {printf "ratio kernlens/rg: %.2f (goal <= 1.30)\n", k / r}'
