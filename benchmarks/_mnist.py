"""MNIST from ../shared/data/mnist (benchmark data, not bundled with skdpx)."""

import gzip
import os
from pathlib import Path

import numpy as np

MNIST_DIR = Path(os.environ.get(
    "SKDPX_MNIST_DIR", Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist"))

#: Public pixel bounds.
BOUNDS = (0.0, 255.0)


def _idx(name):
    with gzip.open(MNIST_DIR / name, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load_mnist():
    """(X_train, y_train, X_test, y_test): images flattened to 784 float pixels in [0, 255]."""
    if not MNIST_DIR.is_dir():
        raise FileNotFoundError(
            f"MNIST not found in {MNIST_DIR}; set SKDPX_MNIST_DIR to the folder of the IDX .gz files.")
    X_train = _idx("train-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float64)
    X_test = _idx("t10k-images-idx3-ubyte.gz").reshape(-1, 784).astype(np.float64)
    return X_train, _idx("train-labels-idx1-ubyte.gz"), X_test, _idx("t10k-labels-idx1-ubyte.gz")
