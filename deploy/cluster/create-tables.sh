#!/usr/bin/env bash
# Create a {source}_{yyyy} table pre-split into one region per salt bucket
# (the first row-key byte), with the families harvest writes: a (attributes)
# and i (co-located index entries).
# Usage: create-tables.sh SOURCE YEAR [BUCKETS=16]
set -euo pipefail
source_name=${1:?source name, e.g. sina_news}
year=${2:?year, e.g. 2026}
buckets=${3:-16}
[[ "$source_name" =~ ^[a-z0-9_]+$ ]] || { echo "source names are [a-z0-9_]+" >&2; exit 2; }
splits=""
for ((b = 1; b < buckets; b++)); do
  splits+=$(printf '"\\x%02x", ' "$b")
done
echo "create '${source_name}_${year}', {NAME => 'a', BLOOMFILTER => 'ROW', COMPRESSION => 'NONE'}, {NAME => 'i', BLOOMFILTER => 'ROW', COMPRESSION => 'NONE'}, SPLITS => [${splits%, }]" | hbase shell -n
