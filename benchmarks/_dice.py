"""DiCE's model-agnostic "random" counterfactuals as a benchmark baseline.

Not part of skdpx: needs the ``bench`` extra (dice-ml, pandas). Every feature
is treated as continuous, with the permitted range of DiCE's default: the
min/max of the training data.

Quirks of dice-ml (0.12) this wrapper works around:

* DiCE infers the decimal precision of a float feature from the ``str`` of
  the column's modes (all values, when they are distinct): about 10 decimals
  for continuous data (stored as float32), and an IndexError for values
  printed like ``5e-05``. The precision sets the sampling grid and the step
  of the post-hoc sparsity linear search (one model call per step, up to
  10,000 per feature), which at 1e-10 per step achieves nothing. It is passed
  explicitly here: 0 for integer-valued features, else the decimals needed
  to resolve about a thousandth of the feature's range (fewer if the data
  has fewer).
* With a ``random_seed``, DiCE re-seeds numpy before sampling each feature, so
  every feature is sampled from the same uniform draws (all changed features
  of a candidate sit at the same relative position in their range). Here
  DiCE gets no seed; the global ``numpy``/``random`` generators are seeded
  per query instead (and restored afterwards).
* ``desired_class`` is an index into ``predict_proba``'s columns and must be a
  Python ``int`` (``numpy.int64`` is rejected); labels are mapped here.
  "opposite" only works for binary models.
* DiCE prints (``print``, ``tqdm``) and raises ``UserConfigValidationException``
  when it finds no counterfactual; both are silenced / turned into NaN rows.
"""

import contextlib
import io
import logging
import random
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

__all__ = ["dice_random"]

_OUTCOME = "__dice_outcome__"


class _ModelAdapter:
    """Hands DiCE's DataFrames to the model as it was fitted (array or named frame)."""

    def __init__(self, model, feature_names):
        self.model = model
        self.classes_ = model.classes_
        self._names = getattr(model, "feature_names_in_", None)
        self._columns = list(feature_names)

    def _input(self, X):
        X = X[self._columns] if isinstance(X, pd.DataFrame) else X
        values = np.asarray(X, dtype=float)
        if self._names is not None:
            return pd.DataFrame(values, columns=self._names)
        return values

    def predict_proba(self, X):
        return self.model.predict_proba(self._input(X))

    def predict(self, X):
        return self.model.predict(self._input(X))


def _precisions(X, max_decimals=12):
    """Decimals per feature: exact for data with few decimals, else ~range / 1000."""
    data_p = np.full(X.shape[1], max_decimals)
    todo = np.arange(X.shape[1])
    for p in range(max_decimals):
        scaled = X[:, todo] * 10.0**p
        exact = np.all(np.abs(scaled - np.round(scaled)) <= 1e-6, axis=0)
        data_p[todo[exact]] = p
        todo = todo[~exact]
        if todo.size == 0:
            break
    span = np.ptp(X, axis=0)
    range_p = np.ceil(3 - np.log10(np.where(span > 0, span, 1.0)))
    range_p = np.where(span > 0, np.clip(range_p, 0, max_decimals), 0)
    return np.minimum(data_p, range_p).astype(int)


def _target_index(desired_class, classes):
    if isinstance(desired_class, str) and desired_class == "opposite":
        if len(classes) != 2:
            raise ValueError(
                f'desired_class="opposite" needs a binary model; this one has {len(classes)} classes.')
        return "opposite"
    if isinstance(desired_class, (bool, np.bool_)):
        raise ValueError("desired_class must be 'opposite' or a class label, not a bool.")
    hits = np.flatnonzero(np.asarray(classes) == desired_class)
    if hits.size != 1:
        raise ValueError(f"desired_class {desired_class!r} is not one of the model's classes "
                         f"{np.asarray(classes).tolist()}.")
    return int(hits[0])


def _closest(candidates, query):
    candidates = candidates[np.all(np.isfinite(candidates), axis=1)]
    if candidates.shape[0] == 0:
        return np.full(query.shape, np.nan)
    return candidates[np.argmin(np.linalg.norm(candidates - query, axis=1))]


def _nothing_found(exc):
    """DiCE's way of saying that it found no counterfactual for the query."""
    return type(exc).__name__ == "UserConfigValidationException" and "No counterfactuals found" in str(exc)


@contextlib.contextmanager
def _quiet():
    logger = logging.getLogger()
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


def dice_random(model, X_train, y_train, queries, desired_class, *, feature_names=None,
                random_state=0, total_cfs=1, **dice_kwargs):
    """One DiCE "random" counterfactual per query, and the time DiCE took per query.

    Parameters
    ----------
    model : fitted scikit-learn classifier
        The black box; DiCE uses its ``predict_proba`` (and ``classes_``).
    X_train : array-like of shape (n, d)
        Numeric training data: DiCE's permitted range (per-feature min/max),
        precision and post-hoc sparsity statistics come from it.
    y_train : array-like of shape (n,)
        The training labels (DiCE's data interface needs an outcome column).
    queries : array-like of shape (q, d)
    desired_class : "opposite" or a class label of ``model``
        "opposite" (binary models only) asks for the other class of each
        query's prediction; a label (an element of ``model.classes_``, e.g. an
        int) asks for that class for every query.
    feature_names : list of str, default=None
        Column names for DiCE; ``model.feature_names_in_`` if the model was
        fitted on a DataFrame, else ``x0, x1, ...``.
    random_state : int, RandomState or None, default=0
        Seeds the per-query sampling (reproducible); None leaves DiCE to the
        global generators, unseeded.
    total_cfs : int, default=1
        Counterfactuals DiCE generates per query; the one closest (L2) to the
        query is returned.
    **dice_kwargs
        Passed to ``generate_counterfactuals`` (e.g. ``sample_size``,
        ``posthoc_sparsity_param``, ``posthoc_sparsity_algorithm``).

    Returns
    -------
    counterfactuals : ndarray of shape (q, d)
        A row of NaN where DiCE found no counterfactual or raised (if it
        raises on every query, and not only because it found nothing, the
        first error is re-raised as a RuntimeError: e.g. a bad keyword).
    seconds_per_query : float
        Mean wall-clock time of DiCE's ``generate_counterfactuals`` per query
        (the one-off set-up of the explainer is not counted).
    """
    import dice_ml

    X_train = np.asarray(X_train, dtype=float)
    queries = np.atleast_2d(np.asarray(queries, dtype=float))
    y_train = np.asarray(y_train)
    if X_train.ndim != 2 or X_train.shape[0] == 0:
        raise ValueError(f"X_train must be a non-empty 2-D array; got shape {X_train.shape}.")
    if not np.all(np.isfinite(X_train)):
        raise ValueError("X_train must be finite.")
    if y_train.shape != (X_train.shape[0],):
        raise ValueError(f"y_train must have shape ({X_train.shape[0]},); got {y_train.shape}.")
    d = X_train.shape[1]
    if queries.ndim != 2 or queries.shape[1] != d:
        raise ValueError(f"queries must have shape (q, {d}); got {queries.shape}.")
    if not np.all(np.isfinite(queries)):
        raise ValueError("queries must be finite.")
    if isinstance(total_cfs, (bool, np.bool_)) or not isinstance(total_cfs, (int, np.integer)) \
            or total_cfs < 1:
        raise ValueError(f"total_cfs must be a positive int; got {total_cfs!r}.")
    if not hasattr(model, "predict_proba") or not hasattr(model, "classes_"):
        raise ValueError("model must be a fitted classifier with predict_proba and classes_.")
    if feature_names is None:
        names = getattr(model, "feature_names_in_", None)
        feature_names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(d)]
    feature_names = [str(c) for c in feature_names]
    if len(feature_names) != d or len(set(feature_names)) != d or _OUTCOME in feature_names:
        raise ValueError(f"feature_names must be {d} distinct names.")
    target = _target_index(desired_class, model.classes_)

    n_queries = queries.shape[0]
    out = np.full((n_queries, d), np.nan)
    if n_queries == 0:
        return out, float("nan")

    frame = pd.DataFrame(X_train, columns=feature_names)
    # DiCE's outcome column: class indices (it is not used by the random method)
    frame[_OUTCOME] = np.searchsorted(np.sort(np.unique(y_train)), y_train)
    precision = dict(zip(feature_names, _precisions(X_train).tolist()))
    query_frames = pd.DataFrame(queries, columns=feature_names)

    seeded = random_state is not None
    seeds = check_random_state(random_state).randint(2**31 - 1, size=n_queries) if seeded else None
    np_state, py_state = np.random.get_state(), random.getstate()
    times = np.empty(n_queries)
    errors = []
    try:
        with _quiet():
            data = dice_ml.Data(dataframe=frame, continuous_features=feature_names,
                                outcome_name=_OUTCOME, continuous_features_precision=precision)
            explainer = dice_ml.Dice(
                data, dice_ml.Model(model=_ModelAdapter(model, feature_names), backend="sklearn"),
                method="random")
            for i in range(n_queries):
                if seeded:
                    np.random.seed(seeds[i])
                    random.seed(int(seeds[i]))
                start = time.perf_counter()
                try:
                    result = explainer.generate_counterfactuals(
                        query_frames.iloc[i:i + 1], total_CFs=int(total_cfs), desired_class=target,
                        verbose=False, **dice_kwargs)
                except Exception as exc:  # noqa: BLE001 - DiCE raises when it finds nothing
                    result = None
                    if not _nothing_found(exc):
                        errors.append(exc)
                times[i] = time.perf_counter() - start
                if result is None:
                    continue
                example = result.cf_examples_list[0]
                cfs = example.final_cfs_df_sparse
                if cfs is None:
                    cfs = example.final_cfs_df
                if cfs is not None and len(cfs) > 0:
                    out[i] = _closest(cfs[feature_names].to_numpy(dtype=float), queries[i])
    finally:
        if seeded:
            np.random.set_state(np_state)
            random.setstate(py_state)
    if errors and np.isnan(out).all():
        raise RuntimeError(f"DiCE failed on every query; first error: {errors[0]!r}") from errors[0]
    return out, float(times.mean())
