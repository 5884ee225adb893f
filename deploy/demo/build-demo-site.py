#!/usr/bin/env python3
"""Build the harvest demo site and the demo training corpus.

Input: the extracted Debian package libreoffice-help-zh-cn (see
deploy/data/fetch-debian.sh). The site root is <extract>/usr/share/libreoffice/help/,
so a page is served as http://HOST/zh-CN/text/<module>/....html.

The script runs a breadth-first crawl from an entry page with the link rules a
crawler uses (a[href] only, resolved against <base href> when the page has one,
fragment dropped, same host, only files that exist, robots.txt honoured) and
keeps every page within link depth D. Outputs (into --out):

  site.tar.gz         robots.txt + the chosen pages, original bytes, paths
                      relative to the site root, deterministic archive
  site-manifest.tsv   path, sha256, module, depth, robots (allow|disallow)
  train.tsv.gz        label<TAB>text for every other page of the package
  LICENSE-libreoffice-help.txt   the package's copyright file (debian/copyright)
  LICENSE-MPL-2.0.txt            the MPL-2.0 text it points to (Debian common-licenses)

Standard library only. Reproducible: same package -> byte-identical outputs.
"""

import argparse
import collections
import gzip
import hashlib
import html.parser
import io
import os
import re
import shutil
import sys
import tarfile
import urllib.parse

# Virtual origin used to resolve links; only the path part matters.
ORIGIN = "http://127.0.0.1/"
HELP_SUBDIR = os.path.join("usr", "share", "libreoffice", "help")
MPL_TEXT = "/usr/share/common-licenses/MPL-2.0"
COPYRIGHT = os.path.join("usr", "share", "doc", "libreoffice-help-zh-cn", "copyright")
PAGE_SUFFIX = ".html"
TEXT_PREFIX = "zh-CN/text/"
DEFAULT_ENTRY = "zh-CN/text/shared/guide/aaa_start.html"
DEFAULT_DEPTH = 2
DEFAULT_DISALLOW = "/zh-CN/text/shared/autopi/"
MIN_CLASS_PAGES = 30
OTHER_LABEL = "other"
# Fixed timestamp for archive members (2023-01-01T00:00:00Z) so the tarball is reproducible.
FIXED_MTIME = 1672531200
MANIFEST_HEADER = ("path", "sha256", "module", "depth", "robots")
# Elements whose text is never shown. <footer> holds the hidden "Help content debug
# info" block (source path /text/<module>/... .xhp), which would leak the label.
HIDDEN_TAGS = {"script", "style", "noscript", "template", "footer", "head"}
BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt",
    "figcaption", "figure", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "img", "li", "main", "nav", "ol", "p", "pre", "section", "table", "tbody",
    "td", "tfoot", "th", "thead", "tr", "ul", "label", "button", "input", "code",
}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link",
             "meta", "param", "source", "track", "wbr"}
WS_RE = re.compile(r"\s+")


class PageParser(html.parser.HTMLParser):
    """Collects <base href>, a[href] values, the <title> and the visible text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.base = None
        self.hrefs = []
        self.title_parts = []
        self.text_parts = []
        self.meta = []
        self._in_title = False
        self._hidden = []  # stack of open hidden elements

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "base" and self.base is None and a.get("href") is not None:
            self.base = a["href"]
        elif tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"])
        elif tag == "meta":
            self.meta.append(a)
        elif tag == "title":
            self._in_title = True
        if tag in HIDDEN_TAGS and tag not in VOID_TAGS:
            self._hidden.append(tag)
        if tag in BLOCK_TAGS:
            self.text_parts.append(" ")

    def handle_startendtag(self, tag, attrs):
        # <br/>, <img/> ...: a start tag that is closed at once.
        self.handle_starttag(tag, attrs)
        if tag in HIDDEN_TAGS and tag not in VOID_TAGS:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if tag in HIDDEN_TAGS and tag in self._hidden:
            while self._hidden and self._hidden.pop() != tag:
                pass
        if tag in BLOCK_TAGS:
            self.text_parts.append(" ")

    def handle_data(self, data):
        if self._in_title:
            self.title_parts.append(data)
        elif not self._hidden:
            self.text_parts.append(data)


def collapse(s):
    return WS_RE.sub(" ", s).strip()


def parse_page(data):
    """Parses raw page bytes (UTF-8, as declared by every page of the package)."""
    p = PageParser()
    p.feed(data.decode("utf-8", errors="replace"))
    p.close()
    return p


def page_url(rel):
    return urllib.parse.urljoin(ORIGIN, urllib.parse.quote(rel))


def module_of(rel):
    if rel.startswith(TEXT_PREFIX):
        return rel[len(TEXT_PREFIX):].split("/", 1)[0]
    return ""


class Robots:
    """Minimal robots.txt for the single User-agent: * group we write."""

    def __init__(self, disallow):
        self.disallow = [d for d in disallow if d]

    def text(self):
        lines = ["# harvest demo site: one small folder is disallowed to exercise robots.txt handling.",
                 "User-agent: *"]
        lines += ["Disallow: " + d for d in self.disallow]
        return ("\n".join(lines) + "\n").encode("ascii")

    def allowed(self, path):
        return not any(path.startswith(d) for d in self.disallow)


class Site:
    def __init__(self, help_root):
        self.root = help_root
        self._cache = {}

    def read(self, rel):
        with open(os.path.join(self.root, rel), "rb") as f:
            return f.read()

    def parsed(self, rel):
        if rel not in self._cache:
            self._cache[rel] = parse_page(self.read(rel))
        return self._cache[rel]

    def links(self, rel, stats):
        """Resolved in-site link targets of a page, as site-relative paths.

        Returns (existing .html targets, set of missing targets); updates stats.
        """
        p = self.parsed(rel)
        url = page_url(rel)
        base = urllib.parse.urljoin(url, p.base) if p.base is not None else url
        found, missing = [], set()
        origin = urllib.parse.urlsplit(ORIGIN)
        for href in p.hrefs:
            target, _frag = urllib.parse.urldefrag(urllib.parse.urljoin(base, href.strip()))
            parts = urllib.parse.urlsplit(target)
            if (parts.scheme, parts.netloc) != (origin.scheme, origin.netloc):
                stats["external"] += 1
                continue
            path = urllib.parse.unquote(parts.path).lstrip("/")
            if parts.query:
                stats["with_query"] += 1
            full = os.path.join(self.root, path)
            if not path.endswith(PAGE_SUFFIX) or not os.path.isfile(full):
                missing.add(path)
                continue
            found.append(path)
        return found, missing


def bfs(site, entry, max_depth, robots):
    """Breadth-first crawl; returns ({path: depth}, {path: robots flag}, stats)."""
    stats = collections.Counter()
    depth = {entry: 0}
    flag = {entry: "allow"}
    queue = collections.deque([entry])
    while queue:
        rel = queue.popleft()
        if flag[rel] != "allow" or depth[rel] >= max_depth:
            continue
        found, _missing = site.links(rel, stats)
        for t in found:
            if t in depth:
                continue
            depth[t] = depth[rel] + 1
            flag[t] = "allow" if robots.allowed("/" + t) else "disallow"
            queue.append(t)
    return depth, flag, stats


def outside_links(site, depth, flag):
    """Links found on fetched (robots-allowed) pages that lead outside the chosen set.

    Returns (distinct existing pages outside the set, {source depth: occurrences},
    {distinct missing target: set of source depths}, external link count).
    """
    outside, by_depth, missing = set(), collections.Counter(), collections.defaultdict(set)
    stats = collections.Counter()
    for rel in sorted(depth):
        if flag[rel] != "allow":
            continue
        found, miss = site.links(rel, stats)
        for m in miss:
            missing[m].add(depth[rel])
        for t in found:
            if t not in depth:
                outside.add(t)
                by_depth[depth[rel]] += 1
    return outside, dict(sorted(by_depth.items())), dict(sorted(missing.items())), stats["external"]


def all_pages(help_root):
    pages = []
    for dirpath, _dirs, files in os.walk(help_root):
        for name in files:
            if name.endswith(PAGE_SUFFIX):
                pages.append(os.path.relpath(os.path.join(dirpath, name), help_root).replace(os.sep, "/"))
    return sorted(pages)


def page_text(parsed):
    return collapse(collapse("".join(parsed.title_parts)) + " " + "".join(parsed.text_parts))


def histogram(depth, flag, key):
    c = collections.Counter(key(p) for p in depth if flag[p] == "allow")
    return dict(sorted(c.items()))


def write_tar(path, site, members, robots_txt):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = FIXED_MTIME
            info.mode = 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            tar.addfile(info, io.BytesIO(data))
        add("robots.txt", robots_txt)
        for rel in members:
            add(rel, site.read(rel))
    with open(path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as gz:
            gz.write(buf.getvalue())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    default_extract = os.path.join(here, "..", "cache", "libreoffice-help-zh-cn")
    ap.add_argument("--extract", default=default_extract,
                    help="extracted package tree (default: deploy/cache/libreoffice-help-zh-cn)")
    ap.add_argument("--entry", default=DEFAULT_ENTRY, help="entry page, site-relative")
    ap.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help="max link depth D")
    ap.add_argument("--disallow", default=DEFAULT_DISALLOW, help="folder written to robots.txt Disallow ('' for none)")
    ap.add_argument("--out", default=here, help="output folder (default: this folder)")
    ap.add_argument("--explore", action="store_true", help="print statistics only, write nothing")
    args = ap.parse_args()

    help_root = os.path.join(args.extract, HELP_SUBDIR)
    if not os.path.isfile(os.path.join(help_root, args.entry)):
        sys.exit(f"error: entry page {args.entry} not found under {help_root} (run deploy/data/fetch-debian.sh)")
    site = Site(help_root)
    robots = Robots([args.disallow])

    depth, flag, _ = bfs(site, args.entry, args.depth, robots)
    fetched = sorted(p for p in depth if flag[p] == "allow")
    denied = sorted(p for p in depth if flag[p] != "allow")
    by_depth = histogram(depth, flag, lambda p: depth[p])
    by_module = histogram(depth, flag, lambda p: module_of(p) or "(root)")
    print(f"entry={args.entry} D={args.depth} fetched={len(fetched)} disallowed={len(denied)}")
    print(f"depth histogram: {by_depth}")
    print(f"module histogram: {by_module}")
    if denied:
        print(f"disallowed by robots.txt ({args.disallow}): {len(denied)} pages, e.g. {denied[:3]}")

    # Verification: every allowed page must be reached within D, and every link of a
    # page above depth D must stay inside the set (so a depth-D crawl fetches exactly
    # the allowed pages and nothing outside them).
    assert all(0 <= depth[p] <= args.depth for p in depth), "page beyond depth D"
    outside, by_src_depth, missing, external = outside_links(site, depth, flag)
    assert all(d == args.depth for d in by_src_depth), f"page above depth D links outside the set: {by_src_depth}"
    print(f"links from fetched pages to existing pages outside the set: {len(outside)} distinct pages, "
          f"occurrences by source depth {by_src_depth} (a depth-{args.depth} crawl does not follow them)")
    print(f"links to missing files (broken in the package itself): {len(missing)} distinct: "
          + ", ".join(f"{m} (from depth {sorted(d)})" for m, d in missing.items()))
    print(f"links to other hosts (skipped by the same-host rule): {external}")
    if args.explore:
        return

    os.makedirs(args.out, exist_ok=True)
    members = sorted(depth)  # allowed and disallowed pages both ship, robots decides
    robots_txt = robots.text()
    tar_path = os.path.join(args.out, "site.tar.gz")
    write_tar(tar_path, site, members, robots_txt)
    with open(os.path.join(args.out, "site-manifest.tsv"), "w", encoding="utf-8", newline="\n") as f:
        f.write("\t".join(MANIFEST_HEADER) + "\n")
        for rel in members:
            digest = hashlib.sha256(site.read(rel)).hexdigest()
            f.write(f"{rel}\t{digest}\t{module_of(rel)}\t{depth[rel]}\t{flag[rel]}\n")

    # Training corpus: every other page that has a module folder.
    chosen = set(members)
    rest = [p for p in all_pages(help_root) if p not in chosen]
    no_module = [p for p in rest if not module_of(p)]
    rest = [p for p in rest if module_of(p)]
    # A module is "tiny" by its size in the whole package, so that a module is
    # never relabelled just because the demo site took many of its pages.
    counts = collections.Counter(module_of(p) for p in all_pages(help_root) if module_of(p))
    small = {m for m, n in counts.items() if n < MIN_CLASS_PAGES}
    rows, empty = [], 0
    for rel in rest:
        text = page_text(site.parsed(rel))
        if not text:
            empty += 1
            continue
        label = OTHER_LABEL if module_of(rel) in small else module_of(rel)
        rows.append((label, text))
    train_path = os.path.join(args.out, "train.tsv.gz")
    with open(train_path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as gz:
            for label, text in rows:
                assert "\t" not in text and "\n" not in text
                gz.write(f"{label}\t{text}\n".encode("utf-8"))
    classes = dict(sorted(collections.Counter(l for l, _ in rows).items()))
    print(f"train.tsv.gz: {len(rows)} pages, classes {classes}; merged into '{OTHER_LABEL}': {sorted(small)}; "
          f"skipped without module: {no_module}; skipped empty: {empty}")
    print(f"site.tar.gz: {os.path.getsize(tar_path)} bytes, {len(members)} pages + robots.txt")

    lic_src = os.path.join(args.extract, COPYRIGHT)
    if not os.path.isfile(lic_src):
        sys.exit(f"error: the package's copyright file {lic_src} is missing")
    shutil.copyfile(lic_src, os.path.join(args.out, "LICENSE-libreoffice-help.txt"))
    # The copyright file points at Debian's copy of the MPL-2.0 text; ship it too.
    if os.path.isfile(MPL_TEXT):
        shutil.copyfile(MPL_TEXT, os.path.join(args.out, "LICENSE-MPL-2.0.txt"))
    else:
        print(f"warning: {MPL_TEXT} not found; LICENSE-MPL-2.0.txt not refreshed", file=sys.stderr)


if __name__ == "__main__":
    main()
