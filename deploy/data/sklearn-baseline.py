#!/usr/bin/env python3
"""Peer figures for the harvest classifier: scikit-learn TfidfVectorizer + LinearSVC on the
same corpora (fetched by fetch-corpora.sh), same split and same weighting options as
classifier::TrainOptions::default() (sublinear tf, smooth idf, l2, min_df 1, max_df 0.95,
C 1.0, squared hinge, dual). Chinese is tokenized with jieba (HMM on).

Usage (needs: pip install scikit-learn==1.9.1 jieba==0.42.1):
    python3 deploy/data/sklearn-baseline.py [CACHE_DIR]
Compare with: cargo test -p classifier --release -- --nocapture
"""
import os
import sys
import time

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import accuracy_score, f1_score
from sklearn.svm import LinearSVC

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "cache")
TAB_HEADER_LINES = 3


def read_tab(path):
    """Orange .tab: 3 header lines, blank line, then label<TAB>text."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")[TAB_HEADER_LINES:]
    rows = [l.split("\t", 1) for l in lines if l.strip()]
    return [r[1] for r in rows], [r[0].strip() for r in rows]


def fnv1a(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def read_thucnews_split(path, train_percent=80):
    """The #train80 / #test20 split of classifier::corpus (FNV-1a of the line, mod 100)."""
    train, test = ([], []), ([], [])
    with open(path, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            line = line.rstrip("\r")
            if not line.strip():
                continue
            label, text = line.split("\t", 1)
            side = train if fnv1a(line.encode("utf-8")) % 100 < train_percent else test
            side[0].append(text)
            side[1].append(label.strip())
    return train, test


def run(name, train, test, tokenizer=None):
    t = time.time()
    vec = TfidfVectorizer(sublinear_tf=True, min_df=1, max_df=0.95, tokenizer=tokenizer,
                          token_pattern=None if tokenizer else r"(?u)\b\w\w+\b",
                          lowercase=True)
    x_train = vec.fit_transform(train[0])
    clf = LinearSVC(C=1.0, loss="squared_hinge", dual=True, tol=0.1, max_iter=1000)
    clf.fit(x_train, train[1])
    trained = time.time() - t
    pred = clf.predict(vec.transform(test[0]))
    print(f"{name}: sklearn accuracy {accuracy_score(test[1], pred):.4f} "
          f"macro-F1 {f1_score(test[1], pred, average='macro'):.4f} "
          f"features {len(vec.vocabulary_)} train docs {len(train[1])} test docs {len(test[1])} "
          f"train {trained:.2f}s")


def main():
    for name in ["20newsgroups", "reuters-r8"]:
        run(name, read_tab(os.path.join(CACHE, f"{name}-train.tab")),
            read_tab(os.path.join(CACHE, f"{name}-test.tab")))
    import jieba
    jieba.setLogLevel(60)
    train, test = read_thucnews_split(os.path.join(CACHE, "thucnews_train_1w.txt"))
    run("thucnews", train, test,
        tokenizer=lambda s: [w for w in jieba.lcut(s, HMM=True) if w.strip()])


if __name__ == "__main__":
    main()
