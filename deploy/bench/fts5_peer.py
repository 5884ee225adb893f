"""The SQLite FTS5 peer of `harvest bench text` (Python's standard sqlite3).

Input (argv[1], JSON from the benchmark): `texts` (TSV: an article's headline tokens and
text tokens, each joined by spaces, one line per article), `pages` (TSV: article line,
source, unix time, topic; one line per page), `db` (the database file to build), the
`queries` (`fts5`: a MATCH expression), the `combined` filters (source, topic, from, to),
the stats `year` ([from, to) unix seconds), `warmups`, `runs`, `limit`.

Builds a contentless FTS5 table (headline, text) with each page's words under its rowid and
a table of the pages' source, time and topic, indexed; then times every question as
harvest's run does. Prints one JSON object.
"""

import json
import os
import sqlite3
import sys
import time


def percentile(samples, p):
    s = sorted(samples)
    if not s:
        return 0.0
    rank = max(1, min(len(s), int(-(-p * len(s) // 1))))
    return s[rank - 1]


def timed(fn, warmups, runs):
    n = 0
    for _ in range(warmups):
        n = fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - t)
    return times, n


def main():
    cfg = json.load(open(sys.argv[1]))
    texts = []
    with open(cfg["texts"], encoding="utf-8") as f:
        for line in f:
            title, _, body = line.rstrip("\n").partition("\t")
            texts.append((title, body))
    db = cfg["db"]
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute(
        "CREATE VIRTUAL TABLE fts USING fts5(title, body, content='', "
        "tokenize='unicode61 remove_diacritics 0')"
    )
    con.execute(
        "CREATE TABLE pages (id INTEGER PRIMARY KEY, source TEXT, time INTEGER, topic TEXT)"
    )
    started = time.perf_counter()
    batch_fts, batch_pages = [], []
    pages = 0

    def flush():
        con.executemany("INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)", batch_fts)
        con.executemany("INSERT INTO pages VALUES (?, ?, ?, ?)", batch_pages)
        con.commit()
        batch_fts.clear()
        batch_pages.clear()

    with open(cfg["pages"], encoding="utf-8") as f:
        for line in f:
            article, source, t, topic = line.rstrip("\n").split("\t")
            pages += 1
            title, body = texts[int(article)]
            batch_fts.append((pages, title, body))
            batch_pages.append((pages, source, int(t), topic))
            if len(batch_fts) >= 25_000:
                flush()
    flush()
    con.execute("CREATE INDEX pages_time ON pages(time)")
    con.execute("CREATE INDEX pages_source_time ON pages(source, time)")
    con.execute("CREATE INDEX pages_topic_time ON pages(topic, time)")
    con.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    con.commit()
    build = time.perf_counter() - started
    size = sum(
        os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s)
    )

    c = cfg["combined"]
    y0, y1 = cfg["year"]
    limit = cfg["limit"]
    out = {
        "sqlite_version": sqlite3.sqlite_version,
        "pages": pages,
        "build_pages_per_s": pages / max(build, 1e-9),
        "bytes": size,
    }
    sides = {k: ([], []) for k in ("alone", "relevance", "combined", "stats")}
    for q in cfg["queries"]:
        m = q["fts5"]

        def alone():
            return len(
                con.execute(
                    "SELECT p.id FROM fts JOIN pages p ON p.id = fts.rowid "
                    "WHERE fts MATCH ? ORDER BY p.time DESC LIMIT ?",
                    (m, limit),
                ).fetchall()
            )

        def relevance():
            return len(
                con.execute(
                    "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?",
                    (m, limit),
                ).fetchall()
            )

        def combined():
            return len(
                con.execute(
                    "SELECT p.id FROM fts JOIN pages p ON p.id = fts.rowid "
                    "WHERE fts MATCH ? AND p.source = ? AND p.topic = ? "
                    "AND p.time >= ? AND p.time < ? ORDER BY p.time DESC LIMIT ?",
                    (m, c["source"], c["topic"], c["from"], c["to"], limit),
                ).fetchall()
            )

        def stats():
            rows = con.execute(
                "SELECT date(p.time, 'unixepoch') AS day, count(*) FROM fts "
                "JOIN pages p ON p.id = fts.rowid WHERE fts MATCH ? "
                "AND p.time >= ? AND p.time < ? GROUP BY day",
                (m, y0, y1),
            ).fetchall()
            return sum(n for _, n in rows)

        for key, fn, count_sql, params in (
            ("alone", alone, "SELECT count(*) FROM fts WHERE fts MATCH ?", (m,)),
            ("relevance", relevance, None, None),
            (
                "combined",
                combined,
                "SELECT count(*) FROM fts JOIN pages p ON p.id = fts.rowid WHERE fts MATCH ? "
                "AND p.source = ? AND p.topic = ? AND p.time >= ? AND p.time < ?",
                (m, c["source"], c["topic"], c["from"], c["to"]),
            ),
            ("stats", stats, None, None),
        ):
            times, n = timed(fn, cfg["warmups"], cfg["runs"])
            sides[key][0].extend(times)
            if count_sql:
                n = con.execute(count_sql, params).fetchone()[0]
            sides[key][1].append(n)
    for key, (times, found) in sides.items():
        out[f"{key}_p50_ms"] = percentile(times, 0.5) * 1e3
        out[f"{key}_p99_ms"] = percentile(times, 0.99) * 1e3
        out[f"{key}_found"] = found
    print(json.dumps(out))


if __name__ == "__main__":
    main()
