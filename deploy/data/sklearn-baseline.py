#!/usr/bin/env python3
"""Peer figures for the harvest classifier: scikit-learn TfidfVectorizer + LinearSVC on the
same corpora (fetched by fetch-corpora.sh), same split and same weighting options as
classifier::TrainOptions::default() (sublinear tf, smooth idf, l2, min_df 1, max_df 0.95,
C 1.0, squared hinge, dual). Chinese is tokenized with jieba (HMM on).

Pinned peer versions: scikit-learn==1.9.1 jieba==0.42.1 (numpy 2.4.6, scipy 1.17.1 came with
them). One command sets up the environment (from the repository root):
    python3 -m venv deploy/cache/venv && deploy/cache/venv/bin/pip install scikit-learn==1.9.1 jieba==0.42.1

Usage:
    deploy/cache/venv/bin/python deploy/data/sklearn-baseline.py [CACHE_DIR] [--json]
With --json it prints one JSON line per corpus: corpus, sklearn (version), accuracy, macro_f1,
train_s (vectorizer fit + LinearSVC fit), predict_s (transform + predict of the test documents),
train_docs, test_docs, features. `harvest model bench` (classifier::bench::run) runs this
script (embedded in the binary, fed on stdin) beside its own figures.
"""
import json
import os
import sys
import time

import sklearn

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import accuracy_score, f1_score
from sklearn.svm import LinearSVC

# run as a file, or fed on stdin (`python - CACHE_DIR --json`) by `harvest model bench`
HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else os.getcwd()
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
JSON = "--json" in sys.argv[1:]
CACHE = ARGS[0] if ARGS else os.path.join(HERE, "..", "cache")
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
    t = time.time()
    pred = clf.predict(vec.transform(test[0]))
    predicted = time.time() - t
    acc = accuracy_score(test[1], pred)
    f1 = f1_score(test[1], pred, average="macro")
    if JSON:
        print(json.dumps({"corpus": name, "sklearn": sklearn.__version__, "accuracy": acc,
                          "macro_f1": f1, "train_s": trained, "predict_s": predicted,
                          "train_docs": len(train[1]), "test_docs": len(test[1]),
                          "features": len(vec.vocabulary_)}), flush=True)
    else:
        print(f"{name}: sklearn accuracy {acc:.4f} macro-F1 {f1:.4f} "
              f"features {len(vec.vocabulary_)} train docs {len(train[1])} "
              f"test docs {len(test[1])} train {trained:.2f}s predict {predicted:.2f}s")


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
