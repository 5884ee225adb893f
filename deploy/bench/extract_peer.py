#!/usr/bin/env python3
"""The peer of `harvest bench extract`: trafilatura's title, publish date, author, site
name and main text of the same pages, in the same run.

Reads a JSON list of {"path": FILE, "url": URL} on stdin, prints a JSON list of
{"title", "date", "author", "sitename", "text", "seconds"} in the same order on stdout (the
text is the main text bare_extraction gives apart from the comments). The date is asked
with its time of day ("%Y-%m-%d %H:%M"; htmldate gives 00:00 when the page has none),
original (publish, not update) date, extensive search on. Pages are read as UTF-8 with
replacement, the same text harvest extracts from.

Set up by deploy/data/setup-peers.sh (trafilatura==2.3.1, lxml_html_clean).
"""
import json
import sys
import time

import trafilatura

PARAMS = {"extensive_search": True, "original_date": True, "outputformat": "%Y-%m-%d %H:%M"}


def main():
    pages = json.load(sys.stdin)
    out = []
    for page in pages:
        with open(page["path"], "rb") as f:
            html = f.read().decode("utf-8", errors="replace")
        start = time.perf_counter()
        try:
            doc = trafilatura.bare_extraction(
                html, url=page["url"], with_metadata=True, date_extraction_params=PARAMS
            )
        except Exception as e:  # a crash is a missing answer, said on stderr
            print(f"extract_peer: {page['path']}: {e}", file=sys.stderr)
            doc = None
        seconds = time.perf_counter() - start
        d = doc.as_dict() if doc is not None and hasattr(doc, "as_dict") else (doc or {})
        out.append(
            {
                "title": d.get("title"),
                "date": d.get("date"),
                "author": d.get("author"),
                "sitename": d.get("sitename"),
                "text": d.get("text"),
                "seconds": seconds,
            }
        )
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
