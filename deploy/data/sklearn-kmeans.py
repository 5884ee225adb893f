#!/usr/bin/env python3
"""scikit-learn KMeans peer of harvest's K-means (packer::cluster::bench).

Reads the attribute vectors harvest wrote (a float32 .npy matrix, one row per page), runs
sklearn.cluster.KMeans with the same k / n_init / max_iter / tol / seed (k-means++ init, Lloyd),
and prints one JSON line: {"inertia", "seconds", "n_iter", "k", "n", "sklearn"}.
"seconds" times fit() only (not loading). inertia = sum of squared distances to the closest centre.

Requires: scikit-learn==1.9.1 (tested), numpy; use the venv at deploy/cache/venv:
    python3 -m venv deploy/cache/venv && deploy/cache/venv/bin/pip install scikit-learn==1.9.1
Usage: sklearn-kmeans.py VECTORS.npy K N_INIT MAX_ITER TOL SEED
"""
import json
import sys
import time

import numpy as np
import sklearn
from sklearn.cluster import KMeans


def main() -> int:
    if len(sys.argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    path, k, n_init, max_iter, tol, seed = sys.argv[1:]
    x = np.load(path)
    model = KMeans(
        n_clusters=int(k),
        n_init=int(n_init),
        max_iter=int(max_iter),
        tol=float(tol),
        random_state=int(seed),
        algorithm="lloyd",
    )
    start = time.perf_counter()
    model.fit(x)
    seconds = time.perf_counter() - start
    print(json.dumps({
        "inertia": float(model.inertia_),
        "seconds": seconds,
        "n_iter": int(model.n_iter_),
        "k": int(k),
        "n": int(x.shape[0]),
        "sklearn": sklearn.__version__,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
