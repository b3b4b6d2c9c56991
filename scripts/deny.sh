#!/usr/bin/env bash
# Supply-chain policy check over deny.toml: licenses, duplicate versions and wildcards (bans),
# and where crates come from (sources), for the main workspace and the fuzz workspace.
#
#   scripts/deny.sh            bans, licenses, sources (no network needed)
#   scripts/deny.sh --all      also advisories (needs the RustSec advisory database: fetched
#                              from GitHub, or a checkout of it at $KERNLENS_ADVISORY_DB)
#
# Installs cargo-deny from crates.io when it is missing (about 10 minutes of compiling on two
# cores); set KERNLENS_NO_INSTALL=1 to fail instead.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo-deny >/dev/null 2>&1; then
  if [ "${KERNLENS_NO_INSTALL:-}" = 1 ]; then
    echo "deny.sh: cargo-deny is not installed (cargo install cargo-deny --locked)" >&2
    exit 2
  fi
  cargo install cargo-deny --locked
fi

checks=(bans licenses sources)
global=(--locked)
if [ "${1:-}" = "--all" ]; then
  checks=(advisories bans licenses sources)
  if [ -n "${KERNLENS_ADVISORY_DB:-}" ]; then
    # A vendored snapshot (a checkout of the RustSec advisory-db repository): cargo-deny reads
    # its cache directory, named for the database URL, and --offline forbids the fetch.
    cache="${CARGO_HOME:-$HOME/.cargo}/advisory-dbs/advisory-db-3157b0e258782691"
    mkdir -p "$(dirname "$cache")"
    rm -rf "$cache"
    cp -a "$KERNLENS_ADVISORY_DB" "$cache"
    global+=(--offline)
  fi
fi

status=0
for manifest in Cargo.toml fuzz/Cargo.toml; do
  echo "== cargo deny check ${checks[*]} ($manifest)"
  cargo deny "${global[@]}" --workspace --manifest-path "$manifest" --config deny.toml check "${checks[@]}" ||
    status=1
done
exit "$status"
