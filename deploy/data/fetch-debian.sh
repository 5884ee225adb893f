#!/usr/bin/env bash
# Fetch pinned Debian packages used by harvest's demo and benchmarks, verify them,
# and extract them into deploy/cache/ (gitignored).
#
#   deploy/data/fetch-debian.sh                       # libreoffice-help-zh-cn (demo site + corpus)
#   deploy/data/fetch-debian.sh libreoffice-help-common  # its CSS, scripts, icons (tests/pywb.rs)
#   deploy/data/fetch-debian.sh postgresql-doc-15     # PostgreSQL 15 HTML docs (benchmarks)
#   deploy/data/fetch-debian.sh all
#
# Result: deploy/cache/<package>_<version>_all.deb and the extracted tree
# deploy/cache/<package>/ (e.g. deploy/cache/libreoffice-help-zh-cn/usr/share/...).
# Idempotent: a verified extraction (stamp file) is kept as is. Fails loudly on any
# mismatch. Set HARVEST_CACHE to use another cache folder.
# Needs apt-get/apt-cache/dpkg-deb; runs `apt-get update` once itself when the apt
# lists do not know the pinned version and we are root.
set -euo pipefail

# package | pinned version (Debian 12 "bookworm" main) | sha256 of the .deb
PINS=(
  "libreoffice-help-zh-cn|4:7.4.7-1+deb12u14|db867cdece4c2f9c7eebe65e519c6cf386fdcf49d6e061db3dffec893b3e1dee"
  "libreoffice-help-common|4:7.4.7-1+deb12u14|cb2614d0d6c55d58ad3a20b6d788ca93df8f4c70baeec269f078aa8ab3100f86"
  "postgresql-doc-15|15.18-0+deb12u1|3c598277a463c44d672daa2c335deb8d8252e1852fb025fd4578ea2d9a1b90f0"
)
DEFAULT_PACKAGE="libreoffice-help-zh-cn"
STAMP_NAME=".harvest-fetch-stamp"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${HARVEST_CACHE:-$(cd "$SCRIPT_DIR/.." && pwd)/cache}"

die() { echo "fetch-debian: error: $*" >&2; exit 1; }
log() { echo "fetch-debian: $*" >&2; }

for tool in apt-get apt-cache dpkg-deb sha256sum; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found (this script needs a Debian system)"
done

pin_of() {
  local want="$1" entry
  for entry in "${PINS[@]}"; do
    if [[ "${entry%%|*}" == "$want" ]]; then echo "$entry"; return 0; fi
  done
  return 1
}

# `apt-cache show pkg=badversion` exits 0, so ask madison for the exact version.
apt_knows() {
  apt-cache madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' | grep -qxF "$2"
}

fetch_one() {
  local pkg="$1" entry ver sha rest deb dest stamp tmp
  entry="$(pin_of "$pkg")" || die "unknown package '$pkg' (known: $(printf '%s ' "${PINS[@]%%|*}"))"
  rest="${entry#*|}"; ver="${rest%%|*}"; sha="${rest#*|}"
  deb="$CACHE/${pkg}_${ver#*:}_all.deb"
  dest="$CACHE/$pkg"
  stamp="$pkg $ver $sha"
  mkdir -p "$CACHE"

  if [[ -f "$dest/$STAMP_NAME" && "$(cat "$dest/$STAMP_NAME")" == "$stamp" ]]; then
    log "$pkg $ver already extracted in $dest"
    echo "$dest"
    return 0
  fi

  if [[ -f "$deb" ]] && echo "$sha  $deb" | sha256sum -c --status; then
    log "$pkg $ver: using cached $deb"
  else
    rm -f "$deb"
    if ! apt_knows "$pkg" "$ver"; then
      [[ "$(id -u)" == 0 ]] || die "apt does not know $pkg=$ver; run 'apt-get update' as root first"
      log "apt lists do not know $pkg=$ver; running apt-get update"
      apt-get update -qq || die "apt-get update failed"
      apt_knows "$pkg" "$ver" || die "$pkg=$ver is no longer served by the configured Debian mirrors;" \
        "see 'apt-cache policy $pkg' and update the pin (version and sha256) in $0"
    fi
    tmp="$(mktemp -d "$CACHE/.download.XXXXXX")"
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" EXIT
    (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$ver") \
      || die "apt-get download $pkg=$ver failed"
    shopt -s nullglob
    local got=("$tmp"/"${pkg}"_*.deb)
    shopt -u nullglob
    [[ ${#got[@]} -eq 1 ]] || die "expected one .deb for $pkg in $tmp, found ${#got[@]}"
    echo "$sha  ${got[0]}" | sha256sum -c --status \
      || die "sha256 mismatch for $pkg=$ver: got $(sha256sum "${got[0]}" | cut -d' ' -f1), pinned $sha"
    mv "${got[0]}" "$deb"
    rm -rf "$tmp"
    trap - EXIT
    log "$pkg $ver downloaded and verified: $deb"
  fi

  tmp="$(mktemp -d "$CACHE/.extract.XXXXXX")"
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  dpkg-deb -x "$deb" "$tmp" || die "dpkg-deb -x $deb failed"
  echo "$stamp" > "$tmp/$STAMP_NAME"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  chmod 755 "$dest"
  trap - EXIT
  log "$pkg $ver extracted into $dest"
  echo "$dest"
}

main() {
  local targets=("$@")
  [[ ${#targets[@]} -gt 0 ]] || targets=("$DEFAULT_PACKAGE")
  if [[ ${#targets[@]} -eq 1 && "${targets[0]}" == "all" ]]; then
    targets=("${PINS[@]%%|*}")
  fi
  local t
  for t in "${targets[@]}"; do
    fetch_one "$t"
  done
}

main "$@"
