#!/usr/bin/env bash
# Issue 41 item 5: `harvest bench text-cluster` (the cluster's text index as tantivy splits in
# HDFS beside posting rows in HBase) on a fresh test cluster, stopped at the end.
#   deploy/bench/text-cluster.sh [HARVEST_BINARY] [-- BENCH ARGS...]
# Needs deploy/cache/NewsArticles.csv (indexer/tests/fetch-news.sh).
set -euo pipefail
HARVEST_BENCH_KIND=text-cluster exec "$(dirname "$0")/cluster-ingest.sh" "$@"
