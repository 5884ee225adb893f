#!/usr/bin/env python3
"""Prints the before/after figures of a `harvest compact --json` report (stdin)."""
import json
import sys


def line(s):
    return "{:>6} packs {:8.1f} MB  median {:9.1f} KB  p10 {:9.1f} KB  in packs >= 64 MiB {:5.1f}%".format(
        s["packs"], s["bytes"] / 1e6, s["median_bytes"] / 1e3, s["p10_bytes"] / 1e3,
        100 * s["large_share"])


r = json.load(sys.stdin)
label = sys.argv[1]
print("{:<20} before {}".format(label, line(r["before"])))
print("{:<20} after  {}".format("", line(r["after"])))
rows = r["rows"]
print("{:<20} {} packs merged into {}; rows moved: {} pages, {} captures, {} digests, {} images".format(
    "", r["merged"], r["written"], rows["pages"], rows["captures"], rows["digests"], rows["images"]))
