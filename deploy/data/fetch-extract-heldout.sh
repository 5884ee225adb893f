#!/usr/bin/env bash
# Downloads the held-out sets of `harvest bench extract --set heldout` (issue 11): real, labelled,
# openly published web pages that harvest's extraction rules were not built on, shipped as test
# data inside two Go modules, fetched with the Go client (`go mod download`, which checks each
# module against the Go checksum database), pinned by version, go.sum hash and the zip's sha256,
# and inside one PyPI sdist, fetched with pip and pinned by version and sha256.
#
#   github.com/markusmobius/go-htmldate v1.10.1 (Apache-2.0, a Go port of Python's htmldate):
#     test-files/{comparison,mediacloud,mock}/*.html, 1,000 real pages (German / English news and
#     blogs; the mediacloud pages in many languages), each labelled with its URL and publish day
#     in scripts/comparison/data-{default,mediacloud}.go
#     -> htmldate/{comparison,mediacloud,mock}/, htmldate/data-{default,mediacloud}.go, LICENSE
#   codeberg.org/readeck/go-readability/v2 v2.1.3 (MIT, a Go port of Mozilla's Readability.js):
#     test-pages/*/{source.html,expected-metadata.json}, 134 pages labelled with title, byline,
#     siteName and (56 of them) publishedTime (which pages are real: bench/src/extract.rs)
#     -> readability/<page>/{source.html,expected-metadata.json}, LICENSE
#   gne 0.4.3 (PyPI sdist of GeneralNewsExtractor: its LICENSE file is the GPL-3.0, its metadata
#     says MIT; pinned by sha256): tests/*/*.html,
#     62 real pages of Chinese news portals (163, Sina, Toutiao, The Paper, ifeng, Tencent,
#     People's Daily, Xinhua, Guancha, Huanqiu, ...) saved in 2019; the labels (title, publish
#     time, media, author) are ours, written by reading each page: bench/data/gne-labels.tsv
#     -> gne/<site>/<page>.html, gne/LICENSE
#   twnews 0.1.6, 0.2.4 and 0.3.3 (PyPI wheels, MIT, pinned by sha256): twnews/samples/*, the
#     sample article each version's tests parse from seven Taiwanese news sites (Apple Daily,
#     China Times, CNA, ETtoday, Liberty Times, SETN, UDN; Traditional Chinese), 20 pages saved
#     in 2016-2019 (0.1.6 has no China Times page; its judicial.html, a search page, is left
#     out), 8 articles in different site layouts; labels (headline, publish time to the minute,
#     author) from each version's tests/soup asserts, kept in bench/data/twnews-labels.tsv
#     -> twnews/<version>/<site>.html, twnews/LICENSE
#
# Everything goes under CACHE_DIR/extract-heldout (gitignored); the sdist stays in
# CACHE_DIR/archives, the module zips in CACHE_DIR/gomod (a Go module cache, writable so it can be deleted). Idempotent: nothing is
# downloaded when the files are there. Fails loudly (non-zero exit, message on stderr) on any
# download, hash or extraction problem.
#
# Usage: deploy/data/fetch-extract-heldout.sh [--pypi-only] [CACHE_DIR]   (default: <repo>/deploy/cache)
#   --pypi-only: only the sets that come from PyPI (gne, twnews), which need no Go client: what
#   the tests use (tests/text_accuracy.rs); the Go modules' sets are left as they are.
set -euo pipefail

HTMLDATE_MOD=github.com/markusmobius/go-htmldate
HTMLDATE_VERSION=v1.10.1
HTMLDATE_H1="h1:bkUp0aThgtwhaKvDQ2Q2zqORCEx/E2epCXm63ikODjc="
HTMLDATE_SHA256=b43e703ea7605917239029f51af7d035067c66756c4e2f5dcc2a916b38212302
HTMLDATE_PAGES=1014      # 745 comparison + 200 mediacloud + 69 mock

READABILITY_MOD=codeberg.org/readeck/go-readability/v2
READABILITY_VERSION=v2.1.3
READABILITY_H1="h1:6SR63+o3nHiZT6Ntq2Px4nNd2eSfrtsDpdM4uL3id9c="
READABILITY_SHA256=1ebdeed0ad5ce08e9cc0b05db617327d86538c7b36c53eeb5cba3d2a47f4f26a
READABILITY_PAGES=134    # with both source.html and expected-metadata.json

GNE_VERSION=0.4.3
GNE_SDIST="gne-${GNE_VERSION}.tar.gz"
GNE_SHA256=26ed77fc2b96d5e9dd28b288ebfdeaf6bf7f034a92b8f75067c64eefffd0b4a9
GNE_PAGES=62

TWNEWS_WHEELS=(
    "0.1.6 d889e23314371ce0d76e6e41958c9fe292a04223c5c268b3052c3471d5ec745a"
    "0.2.4 e91e5d25b98b0489ac45137be5e2960ddcaec76a572d1f957e038c226a98f661"
    "0.3.3 705f3e98f13e95a797c42cfdc54bd416b4b4deef09b10b541a04f84fb2a5a4ee"
)
TWNEWS_PAGES=20

pypi_only=false
if [[ "${1:-}" == "--pypi-only" ]]; then
    pypi_only=true
    shift
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-${here}/../cache}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
dest="$cache/extract-heldout"

die() { echo "fetch-extract-heldout: error: $*" >&2; exit 1; }
info() { echo "fetch-extract-heldout: $*" >&2; }

html_count() { find "$dest/htmldate" -mindepth 2 -maxdepth 2 -type f 2>/dev/null | wc -l; }
page_count() { find "$dest/readability" -mindepth 2 -maxdepth 2 -name source.html 2>/dev/null | wc -l; }
gne_count() { find "$dest/gne" -mindepth 2 -maxdepth 2 -name '*.html' 2>/dev/null | wc -l; }
tw_count() { find "$dest/twnews" -mindepth 2 -maxdepth 2 -name '*.html' 2>/dev/null | wc -l; }
if [[ -f "$dest/.complete" && "$(html_count)" == "$HTMLDATE_PAGES" && "$(page_count)" == "$READABILITY_PAGES" \
    && "$(gne_count)" == "$GNE_PAGES" && "$(tw_count)" == "$TWNEWS_PAGES" ]]; then
    info "held-out sets ready in $dest"
    exit 0
fi
if $pypi_only && [[ -f "$dest/.complete-pypi" && "$(gne_count)" == "$GNE_PAGES" \
    && "$(tw_count)" == "$TWNEWS_PAGES" ]]; then
    info "held-out sets from PyPI ready in $dest"
    exit 0
fi

tools=(sha256sum python3 tar)
$pypi_only || tools+=(go)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || die "$tool is required"
done

# Downloads MOD@VERSION into the module cache, checks its go.sum hash and its zip's sha256,
# prints the zip's path.
fetch_module() {
    local mod="$1" version="$2" h1="$3" sha="$4" json zip sum got
    info "go mod download $mod@$version"
    json="$(cd "$cache" && GOMODCACHE="$cache/gomod" GOFLAGS=-modcacherw GOWORK=off GO111MODULE=on \
        go mod download -json "$mod@$version")" || die "go mod download $mod@$version failed"
    zip="$(sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p' <<<"$json")"
    sum="$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$json")"
    [[ -n "$zip" && -f "$zip" ]] || die "go mod download $mod@$version gave no zip: $json"
    [[ "$sum" == "$h1" ]] || die "go.sum hash mismatch for $mod@$version: expected $h1, got $sum"
    got="$(sha256sum "$zip" | cut -d' ' -f1)"
    [[ "$got" == "$sha" ]] || die "sha256 mismatch for $zip: expected $sha, got $got (delete $cache/gomod to re-download)"
    echo "$zip"
}

if ! $pypi_only; then
    htmldate_zip="$(fetch_module "$HTMLDATE_MOD" "$HTMLDATE_VERSION" "$HTMLDATE_H1" "$HTMLDATE_SHA256")"
    readability_zip="$(fetch_module "$READABILITY_MOD" "$READABILITY_VERSION" "$READABILITY_H1" "$READABILITY_SHA256")"
fi

# Downloads a PyPI archive into CACHE_DIR/archives unless it is there, checks its sha256.
# Usage: fetch_pypi FILE SPEC SHA256 PIP_OPTION (--no-binary :all: for an sdist,
# --only-binary :all: for a wheel).
mkdir -p "$cache/archives"
fetch_pypi() {
    local file="$cache/archives/$1" spec="$2" sha="$3" got
    if [[ ! -f "$file" ]]; then
        info "pip download $spec"
        python3 -m pip download --quiet --no-deps "$4" :all: --disable-pip-version-check \
            -d "$cache/archives" "$spec" >&2 || die "pip download $spec failed"
    fi
    got="$(sha256sum "$file" | cut -d' ' -f1)"
    [[ "$got" == "$sha" ]] || die "sha256 mismatch for $file: expected $sha, got $got (delete it to re-download)"
}
# gne: the sdist (the test pages are only there); twnews: the wheels (no sdist).
fetch_pypi "$GNE_SDIST" "gne==$GNE_VERSION" "$GNE_SHA256" --no-binary
gne_archive="$cache/archives/$GNE_SDIST"
for entry in "${TWNEWS_WHEELS[@]}"; do
    read -r version sha <<<"$entry"
    fetch_pypi "twnews-$version-py3-none-any.whl" "twnews==$version" "$sha" --only-binary
done

tmp="$(mktemp -d "$cache/.heldout.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# A module zip holds every file under "MOD@VERSION/". Extracted with Python's zipfile: unzip
# mangles the UTF-8 names (seglerblog.stössenseer.de.sauber.html) without a UTF-8 locale.
# Usage: extract ZIP DEST PREFIX...: the members under each PREFIX, paths kept.
extract() {
    python3 - "$@" <<'PY'
import sys, zipfile
path, dest, prefixes = sys.argv[1], sys.argv[2], tuple(sys.argv[3:])
with zipfile.ZipFile(path) as z:
    members = [m for m in z.namelist() if m.startswith(prefixes) and not m.endswith("/")]
    if not members:
        sys.exit(f"no member of {path} under {prefixes}")
    z.extractall(dest, members)
PY
}
mkdir -p "$tmp/out"
if ! $pypi_only; then
hd="$HTMLDATE_MOD@$HTMLDATE_VERSION"
extract "$htmldate_zip" "$tmp/hd" "$hd/LICENSE" "$hd/scripts/comparison/data-default.go" \
    "$hd/scripts/comparison/data-mediacloud.go" "$hd/test-files/comparison/" \
    "$hd/test-files/mediacloud/" "$hd/test-files/mock/" \
    || die "cannot extract the test files from $htmldate_zip"
mkdir -p "$tmp/out/htmldate"
mv "$tmp/hd/$hd/test-files/comparison" "$tmp/hd/$hd/test-files/mediacloud" \
    "$tmp/hd/$hd/test-files/mock" "$tmp/hd/$hd/scripts/comparison/data-default.go" \
    "$tmp/hd/$hd/scripts/comparison/data-mediacloud.go" "$tmp/hd/$hd/LICENSE" "$tmp/out/htmldate/"

rd="$READABILITY_MOD@$READABILITY_VERSION"
extract "$readability_zip" "$tmp/rd" "$rd/LICENSE" "$rd/test-pages/" \
    || die "cannot extract the test pages from $readability_zip"
mv "$tmp/rd/$rd/test-pages" "$tmp/out/readability"
mv "$tmp/rd/$rd/LICENSE" "$tmp/out/readability/"
# A page counts only with both files.
for page in "$tmp/out/readability"/*/; do
    [[ -f "$page/source.html" && -f "$page/expected-metadata.json" ]] || rm -rf "$page"
done
fi

gp="gne-$GNE_VERSION"
mkdir -p "$tmp/gne"
tar -xzf "$gne_archive" -C "$tmp/gne" "$gp/tests" "$gp/LICENSE" \
    || die "cannot extract tests/ and LICENSE from $gne_archive"
mv "$tmp/gne/$gp/tests" "$tmp/out/gne"
mv "$tmp/gne/$gp/LICENSE" "$tmp/out/gne/"
# Each version's samples, decompressed (0.2.4 gzip, 0.3.3 xz); the licence from 0.3.3.
python3 - "$cache/archives" "$tmp/out/twnews" "${TWNEWS_WHEELS[@]}" <<'PY' \
    || die "cannot extract the twnews samples"
import gzip, lzma, os, sys, zipfile
archives, out, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
for entry in entries:
    version = entry.split()[0]
    with zipfile.ZipFile(f"{archives}/twnews-{version}-py3-none-any.whl") as z:
        os.makedirs(f"{out}/{version}", exist_ok=True)
        for name in z.namelist():
            base = name.rsplit("/", 1)[-1]
            if name.endswith("LICENSE"):
                with open(f"{out}/LICENSE", "wb") as f:
                    f.write(z.read(name))
            if not name.startswith("twnews/samples/") or base.startswith("judicial"):
                continue
            data = z.read(name)
            if base.endswith(".gz"):
                data, base = gzip.decompress(data), base[:-3]
            elif base.endswith(".xz"):
                data, base = lzma.decompress(data), base[:-3]
            if base.endswith(".html"):
                with open(f"{out}/{version}/{base}", "wb") as f:
                    f.write(data)
if not os.path.exists(f"{out}/LICENSE"):
    sys.exit("no LICENSE in the twnews wheels")
PY
chmod -R u+w "$tmp/out"

if $pypi_only; then
    mkdir -p "$dest"
    rm -rf "$dest/gne" "$dest/twnews"
    mv "$tmp/out/gne" "$tmp/out/twnews" "$dest/"
    [[ "$(gne_count)" == "$GNE_PAGES" ]] \
        || die "expected $GNE_PAGES gne pages in $dest/gne, found $(gne_count)"
    [[ "$(tw_count)" == "$TWNEWS_PAGES" ]] \
        || die "expected $TWNEWS_PAGES twnews pages in $dest/twnews, found $(tw_count)"
    touch "$dest/.complete-pypi"
    info "held-out sets from PyPI ready in $dest"
    exit 0
fi
rm -rf "$dest"
mv "$tmp/out" "$dest"
[[ "$(html_count)" == "$HTMLDATE_PAGES" ]] \
    || die "expected $HTMLDATE_PAGES htmldate pages in $dest/htmldate, found $(html_count)"
[[ "$(page_count)" == "$READABILITY_PAGES" ]] \
    || die "expected $READABILITY_PAGES readability pages in $dest/readability, found $(page_count)"
[[ "$(gne_count)" == "$GNE_PAGES" ]] \
    || die "expected $GNE_PAGES gne pages in $dest/gne, found $(gne_count)"
[[ "$(tw_count)" == "$TWNEWS_PAGES" ]] \
    || die "expected $TWNEWS_PAGES twnews pages in $dest/twnews, found $(tw_count)"
touch "$dest/.complete" "$dest/.complete-pypi"
info "held-out sets ready in $dest"
