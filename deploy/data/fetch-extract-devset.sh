#!/usr/bin/env bash
# Downloads the attribute-extraction dev set (harvest bench extract, issue 11) into
# deploy/cache/newspaper4k/ (gitignored): the sdist of newspaper4k 0.9.6 from PyPI, pinned by
# version and sha256, whose tests/data/html holds 30 real news pages and tests/data/metadata
# 20 JSON files with the url, title and publish_date that project expects of them, and
# tests/data/txt 28 files with the article text its tests expect newspaper4k to extract.
#
#   newspaper4k 0.9.6 (sdist) -> newspaper4k/{html/*.html, metadata/*.json, txt/*.txt}
#
# Idempotent: nothing is downloaded when the files are there. Fails loudly (non-zero exit,
# message on stderr) on any download, hash or extraction problem.
#
# Usage: deploy/data/fetch-extract-devset.sh [CACHE_DIR]     (default: <repo>/deploy/cache)
set -euo pipefail

NP_VERSION=0.9.6
NP_SDIST="newspaper4k-${NP_VERSION}.tar.gz"
NP_SHA256=a3f2f0e017dddb6f1019ee77aaa8980e13e6ecea0b949abc7167aae4770d2d0e
NP_PREFIX="newspaper4k-${NP_VERSION}/tests/data"
NP_METADATA_FILES=20
NP_HTML_FILES=30
NP_TXT_FILES=28

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-${here}/../cache}"
mkdir -p "$cache/archives"
cache="$(cd "$cache" && pwd)"
dest="$cache/newspaper4k"

die() { echo "fetch-extract-devset: error: $*" >&2; exit 1; }
info() { echo "fetch-extract-devset: $*" >&2; }

count() { find "$1" -maxdepth 1 -name "*.$2" 2>/dev/null | wc -l; }
if [[ "$(count "$dest/metadata" json)" == "$NP_METADATA_FILES" && "$(count "$dest/html" html)" == "$NP_HTML_FILES" \
        && "$(count "$dest/txt" txt)" == "$NP_TXT_FILES" ]]; then
    info "dev set ready in $dest"
    exit 0
fi

for tool in sha256sum tar; do
    command -v "$tool" >/dev/null || die "$tool is required"
done
PIP=()
if command -v pip3 >/dev/null; then PIP=(pip3);
elif command -v pip >/dev/null; then PIP=(pip);
elif command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then PIP=(python3 -m pip);
fi

archive="$cache/archives/$NP_SDIST"
if [[ ! -f "$archive" ]]; then
    [[ ${#PIP[@]} -gt 0 ]] || die "pip is required to download $NP_SDIST"
    info "downloading $NP_SDIST"
    tmp="$(mktemp -d "$cache/archives/.dl.XXXXXX")"
    if ! "${PIP[@]}" download --quiet --no-deps --disable-pip-version-check --no-binary :all: \
            -d "$tmp" "newspaper4k==${NP_VERSION}" >&2; then
        rm -rf "$tmp"; die "pip download newspaper4k==${NP_VERSION} failed"
    fi
    [[ -f "$tmp/$NP_SDIST" ]] || { ls -l "$tmp" >&2; rm -rf "$tmp"; die "pip did not produce $NP_SDIST"; }
    mv "$tmp/$NP_SDIST" "$archive"
    rm -rf "$tmp"
fi
got="$(sha256sum "$archive" | cut -d' ' -f1)"
[[ "$got" == "$NP_SHA256" ]] || die "sha256 mismatch for $archive: expected $NP_SHA256, got $got (delete it to re-download)"

tmp="$(mktemp -d "$cache/.np.XXXXXX")"
tar -xzf "$archive" -C "$tmp" "$NP_PREFIX/html" "$NP_PREFIX/metadata" "$NP_PREFIX/txt" \
    || { rm -rf "$tmp"; die "cannot extract $NP_PREFIX/{html,metadata,txt} from $NP_SDIST"; }
rm -rf "$dest"
mkdir -p "$dest"
mv "$tmp/$NP_PREFIX/html" "$tmp/$NP_PREFIX/metadata" "$tmp/$NP_PREFIX/txt" "$dest/"
rm -rf "$tmp"
[[ "$(count "$dest/metadata" json)" == "$NP_METADATA_FILES" ]] || die "expected $NP_METADATA_FILES metadata files in $dest/metadata"
[[ "$(count "$dest/html" html)" == "$NP_HTML_FILES" ]] || die "expected $NP_HTML_FILES html files in $dest/html"
[[ "$(count "$dest/txt" txt)" == "$NP_TXT_FILES" ]] || die "expected $NP_TXT_FILES txt files in $dest/txt"
info "dev set ready in $dest"
