#!/usr/bin/env python3
"""A month of daily crawl runs for `deploy/bench/compact.sh` (issue 42 item 4).

Writes DAYS WARC files (one gzip member per record, as harvest and wget write them) into
OUT: day-DD.warc.gz holds the PAGES news pages published and fetched on that day of
YEAR-MONTH, each a `response` record of an HTML article (title, publish time in
`article:published_time`, ~2 KB of text from a fixed vocabulary, and an inline base64
picture of ~PICTURE bytes, random so that it does not compress: real pages carry
images and scripts), and the pages of the REVISIT_DAYS days before fetched again
unchanged (harvest stores them as revisit records in their own days' packs, as a daily
crawl revisiting recent articles does). Each file is imported by its own `harvest import` process, as a
daily run writes with its own writer. Seeded: the same arguments give the same files.
Standard library only.
"""

import argparse
import base64
import gzip
import io
import random
import uuid

WORDS = (
    "government market election minister economy police court health school city "
    "report budget trade energy climate water housing transport border festival "
    "football league weather storm harvest bank price tax vote council river "
    "hospital museum airport factory village union strike summit treaty army"
).split()


def record(headers, block):
    head = "WARC/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    head += f"Content-Length: {len(block)}\r\n\r\n"
    raw = head.encode() + block + b"\r\n\r\n"
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as g:
        g.write(raw)
    return buf.getvalue()


def page(rng, year, month, day, n, picture):
    words = [rng.choice(WORDS) for _ in range(300)]
    title = " ".join(words[:6]).capitalize()
    paras = "".join(
        f"<p>{' '.join(words[i:i + 50])}.</p>" for i in range(0, len(words), 50)
    )
    blob = base64.b64encode(rng.randbytes(picture)).decode()
    published = f"{year:04d}-{month:02d}-{day:02d}T{8 + n % 12:02d}:{n % 60:02d}:00+00:00"
    html = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{title}</title>"
        f'<meta property="article:published_time" content="{published}">'
        f"</head><body><article><h1>{title}</h1>{paras}"
        f'<img alt="photo" src="data:image/jpeg;base64,{blob}">'
        "</article></body></html>"
    ).encode()
    http = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
        + f"Content-Length: {len(html)}\r\n\r\n".encode()
        + html
    )
    return published, http


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--year", type=int, default=2024)
    ap.add_argument("--month", type=int, default=5)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--pages", type=int, default=250)
    ap.add_argument("--picture", type=int, default=18000)
    ap.add_argument("--revisit-days", type=int, default=3)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    pages = {}  # day -> [(url, http)]
    for day in range(1, a.days + 1):
        pages[day] = []
        for n in range(a.pages):
            published, http = page(rng, a.year, a.month, day, n, a.picture)
            url = f"http://news.example/{a.year}/{a.month:02d}/{day:02d}/story-{n}.html"
            pages[day].append((url, http))
        pages.pop(day - a.revisit_days - 1, None)
        with open(f"{a.out}/day-{day:02d}.warc.gz", "wb") as f:
            for back in range(a.revisit_days, -1, -1):
                for n, (url, http) in enumerate(pages.get(day - back, [])):
                    date = f"{a.year:04d}-{a.month:02d}-{day:02d}T{20 - back:02d}:{n % 60:02d}:{n // 60:02d}Z"
                    f.write(
                        record(
                            [
                                ("WARC-Type", "response"),
                                ("WARC-Record-ID", f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128))}>"),
                                ("WARC-Date", date),
                                ("WARC-Target-URI", url),
                                ("Content-Type", "application/http; msgtype=response"),
                            ],
                            http,
                        )
                    )


if __name__ == "__main__":
    main()
