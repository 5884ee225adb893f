#!/usr/bin/env bash
# Issue 42 item 4: packs before and after `harvest compact` (count, median and p10 size,
# share of the bytes in packs >= 64 MiB), for
#   1. the news demo (`harvest demo --news`: NewsArticles.csv as a site, one crawl), and
#   2. a month of daily runs: 30 `harvest import` runs of deploy/bench/compact_month.py's
#      generated days (250 pages a day, each run its own process and writer; a run also
#      revisits the days before, whose packs it appends to), once with each run writing
#      packs of its own (`[storage] append_packs = false`) and once appending (the default),
# each checked by `harvest fsck` after the compaction.
# Usage: deploy/bench/compact.sh [WORKDIR]   (needs target/release/harvest; the news
# corpus from indexer/tests/fetch-news.sh at deploy/cache/NewsArticles.csv)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${HARVEST_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/harvest}
work=${1:-$(mktemp -d /tmp/harvest-compact-bench.XXXXXX)}
mkdir -p "$work"
echo "work folder: $work"

figures() { # label < compact --json report
  python3 "$root/deploy/bench/compact_figures.py" "$1"
}

check() { # config
  "$bin" -c "$1" fsck --quiet --json > "$work/fsck.json" || { cat "$work/fsck.json"; echo "fsck NOT clean"; exit 1; }
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("{:<20} fsck clean: {} packs, {} pages, {} captures, {} verified".format("", r["packs"], r["pages"], r["captures"], r["verified"]))' "$work/fsck.json"
}

compacted() { # archive-folder label: compact it, print the figures and the time, fsck it
  local t0 t1
  t0=$(date +%s.%N)
  "$bin" -c "$1/harvest.toml" compact --quiet --json > "$1/compact.json"
  t1=$(date +%s.%N)
  figures "$2" < "$1/compact.json"
  echo "                     compact took $(python3 -c "print(f'{$t1-$t0:.1f}')") s"
  check "$1/harvest.toml"
}

# 1. The news demo.
news=$work/news
"$bin" demo --news "$root/deploy/cache/NewsArticles.csv" --dir "$news" --quiet > "$work/news-demo.txt"
compacted "$news" "news demo"

# 2. A month of daily runs, each run appending to the packs of the days it writes
#    (`[storage] append_packs`, the default) and each writing packs of its own.
month_runs() { # folder append_packs label
  local month=$1
  mkdir -p "$month"
  cat > "$month/harvest.toml" <<TOML
data_dir = "$month"
[storage]
append_packs = $2
TOML
  for f in "$work"/warc/day-*.warc.gz; do
    "$bin" -c "$month/harvest.toml" import --quiet "$f" > /dev/null
  done
  compacted "$month" "$3"
}
mkdir -p "$work/warc"
python3 "$root/deploy/bench/compact_month.py" "$work/warc"
month_runs "$work/month-own" false "month, own packs"
month_runs "$work/month" true "month, appending"
