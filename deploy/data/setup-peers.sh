#!/usr/bin/env bash
# Sets up the peers the benchmarks compare against, pinned: a Python venv in deploy/cache/venv
# with scikit-learn (LinearSVC, KMeans), jieba (the same Chinese tokenizer as ours), simhash
# (SimHash fingerprints and SimhashIndex, `harvest bench simhash`) and trafilatura (title, date
# and site name of news pages, `harvest bench extract`), imagehash (aHash/dHash/pHash,
# `harvest bench images`), and
# Debian's wget (crawl peer) when missing. Idempotent.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$ROOT/deploy/cache/venv"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import sklearn, jieba, numpy, simhash" 2>/dev/null; then
  "$VENV/bin/pip" install --quiet scikit-learn==1.9.1 jieba==0.42.1 simhash==2.1.2
fi
if ! "$VENV/bin/python" -c "import imagehash" 2>/dev/null; then
  "$VENV/bin/pip" install --quiet imagehash==4.3.2
fi
if ! "$VENV/bin/python" -c "import trafilatura, lxml_html_clean" 2>/dev/null; then
  "$VENV/bin/pip" install --quiet trafilatura==2.3.1 lxml_html_clean==0.4.6
fi
"$VENV/bin/python" -c "import sklearn; print('scikit-learn', sklearn.__version__)"
"$VENV/bin/python" -c "import trafilatura; print('trafilatura', trafilatura.__version__)"
if ! command -v wget >/dev/null; then
  apt-get update -qq && apt-get install -y -qq wget
fi
