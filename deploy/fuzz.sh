#!/usr/bin/env bash
# Longer fuzz run of every parser target (issue 13): each target runs for
# SECONDS (default 60) in release, then a table of executions and crashes per
# target is printed. A crash stops its test with the shrunk input and the seed
# (HARVEST_FUZZ_SEED=... reproduces it); the script exits non-zero then.
#
#   deploy/fuzz.sh [SECONDS]
#
# HARVEST_FUZZ_DEBUG=1 runs the debug build instead (no release build needed;
# fewer executions per second).
# The CI smoke run is the same tests with 256 cases a target
# (`cargo test --workspace --release --features cluster` runs them).
set -uo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
export HARVEST_FUZZ_SECS="$secs" HARVEST_FUZZ_REPORT="$report"
profile=(--release)
[ "${HARVEST_FUZZ_DEBUG:-}" = 1 ] && profile=()
status=0
# One test binary at a time, one target at a time: the figures are per target.
for spec in "packer fuzz" "crawler fuzz" "indexer fuzz" "harvest fuzz"; do
  set -- $spec
  cargo test "${profile[@]}" -q -p "$1" --test "$2" -- --test-threads 1 || status=1
done
echo
printf '%-22s %12s %9s %8s %11s\n' target executions seconds crashes slowest_ms
sort "$report" | awk '{ printf "%-22s %12d %9.1f %8d %11d\n", $1, $2, $3, $4, $5; e += $2; c += $4 }
  END { printf "%-22s %12d %9s %8d\n", "total", e, "", c }'
exit $status
