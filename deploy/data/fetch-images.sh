#!/usr/bin/env bash
# Fetches the real images of the image-hash tests and benchmark (issue 12) into
# deploy/cache/ (gitignored), pinned by version and sha256:
#
#   scikit-image 0.25.2 (PyPI wheel, cp311 manylinux x86_64) -> skimage-data/*.{png,jpg}
#       the 24 photographs, scans and drawings of skimage/data/ (tifs, the tiny gif,
#       .npy/.npz/.xml left out)
#
# The wheel's pure-data folder is the same in every platform's wheel; this one is
# pinned because a hash needs one file. Idempotent; fails loudly (non-zero exit,
# message on stderr) on any download, hash or extraction problem.
# Usage: deploy/data/fetch-images.sh [CACHE_DIR]
set -euo pipefail

SKIMAGE_VERSION=0.25.2
SKIMAGE_WHEEL="scikit_image-${SKIMAGE_VERSION}-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
SKIMAGE_SHA256=24cc986e1f4187a12aa319f777b36008764e856e5013666a4a83f8df083c2641
# Every image file of skimage/data/ in that wheel (checked after extraction).
SKIMAGE_IMAGES=(
    astronaut.png brick.png camera.png cell.png chelsea.png chessboard_GRAY.png
    chessboard_RGB.png clock_motion.png coffee.png coins.png color.png grass.png
    gravel.png horse.png hubble_deep_field.jpg ihc.png logo.png microaneurysms.png
    moon.png motorcycle_left.png motorcycle_right.png page.png phantom.png
    retina.jpg rocket.jpg text.png
)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-${here}/../cache}"
mkdir -p "$cache/archives"
cache="$(cd "$cache" && pwd)"

die() { echo "fetch-images: error: $*" >&2; exit 1; }
info() { echo "fetch-images: $*" >&2; }
check_sha() {
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    [[ "$got" == "$2" ]] || die "sha256 mismatch for $1: expected $2, got $got (delete it to re-download)"
}

dest="$cache/skimage-data"
stamp="scikit-image $SKIMAGE_VERSION $SKIMAGE_SHA256"
if [[ -f "$dest/.stamp" && "$(cat "$dest/.stamp")" == "$stamp" ]]; then
    info "skimage-data ready in $dest"
    exit 0
fi

if [[ ! -f "$cache/archives/$SKIMAGE_WHEEL" ]]; then
    info "downloading $SKIMAGE_WHEEL"
    python3 -m pip download --quiet --no-deps --only-binary :all: --disable-pip-version-check \
        --python-version 3.11 --implementation cp --abi cp311 \
        --platform manylinux_2_17_x86_64 -d "$cache/archives" "scikit-image==${SKIMAGE_VERSION}" >&2 \
        || die "pip download scikit-image failed"
fi
check_sha "$cache/archives/$SKIMAGE_WHEEL" "$SKIMAGE_SHA256"

rm -rf "$dest.part" && mkdir -p "$dest.part"
members=()
for f in "${SKIMAGE_IMAGES[@]}"; do members+=("skimage/data/$f"); done
python3 - "$cache/archives/$SKIMAGE_WHEEL" "$dest.part" "${members[@]}" <<'PY' || die "cannot extract images from $SKIMAGE_WHEEL"
import os, sys, zipfile
wheel, out, members = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for m in members:
        with open(os.path.join(out, os.path.basename(m)), "wb") as f:
            f.write(z.read(m))
PY
for f in "${SKIMAGE_IMAGES[@]}"; do
    [[ -s "$dest.part/$f" ]] || die "$f is missing or empty in $SKIMAGE_WHEEL"
done
echo "$stamp" > "$dest.part/.stamp"
rm -rf "$dest" && mv "$dest.part" "$dest"
info "skimage-data ready in $dest (${#SKIMAGE_IMAGES[@]} images)"
