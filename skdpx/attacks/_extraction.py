"""Model extraction from counterfactual explanations.

An attacker who may query a black box ``f`` and its counterfactual explainer
trains a surrogate ``f'`` on what the queries return and is scored by the
fidelity of ``f'`` to ``f``. The counterfactuals lie close to the decision
boundary, so they are the training points that teach a surrogate most
(Aivodji et al., 2020); DualCF (Wang et al., 2022) adds the counterfactual
of each counterfactual, on the query's side of the boundary, so that the
surrogate's boundary is not pulled towards the counterfactual class. Queries
labelled by ``f`` alone and random points in the public bounds are the
baselines.

Evaluation only: the randomness here (the draw of the queries and of the
random points, the surrogate seeds) is the attacker's, not a privacy
mechanism, and nothing of this module is released by an estimator.
"""

import inspect
import math
import warnings
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_array, check_random_state

from ..results._base import _dump_json, _import_optional, _jsonable, _load_json, _new_axes

__all__ = ["ExtractionResult", "model_extraction"]

STRATEGIES = ("queries", "counterfactuals", "dualcf", "random")
_USES_POOL = {"queries", "counterfactuals", "dualcf"}
_USES_EXPLAINER = {"counterfactuals", "dualcf"}


def default_surrogate():
    """The default surrogate: standardisation then an MLPClassifier with one
    hidden layer of 64 ReLU units, trained by L-BFGS (at most 300 iterations:
    full batch, fast on the few thousand rows of a transfer set)."""
    return make_pipeline(StandardScaler(),
                         MLPClassifier(hidden_layer_sizes=(64,), solver="lbfgs", max_iter=300))


class _Constant:
    """The surrogate of a training set with one class: always that class."""

    def __init__(self, label):
        self.label = label

    def predict(self, X):
        return np.full(len(X), self.label)


def _seeded(surrogate, seed):
    """A clone of ``surrogate`` with every ``*random_state`` parameter set to ``seed``."""
    model = clone(surrogate)
    keys = [k for k in model.get_params(deep=True) if k.split("__")[-1] == "random_state"]
    if keys:
        model.set_params(**{k: seed for k in keys})
    return model


def _fit_surrogate(surrogate, X, y, seed):
    classes = np.unique(y)
    if classes.size == 1:
        return _Constant(classes[0])
    model = _seeded(surrogate, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


def _points(result, name, n_rows, n_features):
    """The counterfactual points of an explainer's answer, as floats."""
    if not hasattr(result, "counterfactuals"):
        raise ValueError(f"the explainer's explain() returned a {type(result).__name__} without "
                         "a `counterfactuals` field (a CounterfactualSet or RecoursePaths is "
                         "expected)")
    cf = np.asarray(result.counterfactuals, dtype=float)
    if cf.shape != (n_rows, n_features):
        raise ValueError(f"the explainer returned {name} of shape {cf.shape}, expected "
                         f"{(n_rows, n_features)} (one per row explained)")
    return cf


def _new_points(cf, origin):
    """Rows of ``cf`` that are finite and differ from their origin row (a
    recourse method returns the query itself when it already has the
    favourable class: no new point)."""
    finite = np.isfinite(cf).all(axis=1)
    same = np.all(np.isclose(np.where(finite[:, None], cf, 0.0), origin), axis=1)
    return finite & ~same


def _accepts_desired_class(explainer):
    try:
        params = inspect.signature(explainer.explain).parameters
    except (TypeError, ValueError):
        return False
    return "desired_class" in params


def _check_n_queries(n_queries):
    if isinstance(n_queries, Integral) and not isinstance(n_queries, bool):
        n_queries = (n_queries,)
    try:
        sizes = list(n_queries)
    except TypeError:
        raise ValueError(f"n_queries must be a positive int or a list of them, got "
                         f"{n_queries!r}") from None
    if not sizes or any(isinstance(n, bool) or not isinstance(n, Integral) or n < 1
                        for n in sizes):
        raise ValueError(f"n_queries must be a positive int or a non-empty list of them, "
                         f"got {n_queries!r}")
    return tuple(sorted({int(n) for n in sizes}))


def _check_strategies(strategies):
    if isinstance(strategies, str):
        strategies = (strategies,)
    strategies = tuple(strategies)
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise ValueError(f"unknown strategy {unknown[0] if unknown else None!r}: choose among "
                         f"{list(STRATEGIES)}")
    if len(set(strategies)) != len(strategies):
        raise ValueError(f"strategies are repeated: {list(strategies)}")
    return strategies


def _check_bounds(bounds, n_features):
    try:
        lower, upper = bounds
        lower = np.broadcast_to(np.asarray(lower, dtype=float), (n_features,)).copy()
        upper = np.broadcast_to(np.asarray(upper, dtype=float), (n_features,)).copy()
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be a (lower, upper) pair of scalars or arrays of "
                         f"{n_features} values") from None
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()) or np.any(lower > upper):
        raise ValueError("bounds must be finite with lower <= upper for every feature")
    return lower, upper


def model_extraction(explainer, black_box, X_pool, X_test, *, y_test=None,
                     n_queries=(100, 250, 500, 1000), strategies=STRATEGIES, surrogate=None,
                     n_surrogates=1, bounds=None, return_surrogates=False, random_state=0):
    """Fidelity of a surrogate extracted with counterfactuals, against the number of queries.

    The attacker draws its queries at random from its own pool of rows, asks
    the black box for their classes and the explainer for their
    counterfactuals, and trains a surrogate on what it got. The surrogate's
    fidelity, its agreement with the black box on test rows, measures what
    the explanations gave away about the model. The query sets are nested
    (the first 100 of the 250, ...) and the same for every strategy.

    Parameters
    ----------
    explainer : fitted counterfactual explainer or None
        Anything whose ``explain(X)`` returns an object with a
        ``counterfactuals`` array, one row per query, NaN where none was
        found: a :class:`~skdpx.counterfactual.DPCounterfactualGenerator`
        (a :class:`~skdpx.CounterfactualSet`), a
        :class:`~skdpx.recourse.PrivRecourse` (a
        :class:`~skdpx.RecoursePaths`: the end points), or a wrapper of
        DiCE or FACE. Its default target is used for the counterfactuals
        ("opposite" for a binary DPC, the favourable class for recourse).
        None is allowed when no strategy needs it ("queries", "random").
    black_box : fitted classifier
        The model under attack; only its ``predict`` is used (the attacker
        can query it, as in the papers).
    X_pool : array-like of shape (n_pool, n_features)
        The attacker's rows, the queries are drawn from them: rows neither
        the black box nor the explainer was fitted on. Numeric, in the
        input space of the black box and the explainer.
    X_test : array-like of shape (n_test, n_features)
        Rows on which the fidelity is measured.
    y_test : array-like of shape (n_test,), default=None
        True labels of ``X_test``: if given, the surrogate's accuracy is
        reported too (fidelity stays the primary figure).
    n_queries : int or sequence of int, default=(100, 250, 500, 1000)
        The numbers of queries; each at most ``len(X_pool)`` when a strategy
        draws from the pool.
    strategies : sequence of str, default=("queries", "counterfactuals", "dualcf", "random")
        The surrogate's training set for ``n`` queries:

        - "queries": the ``n`` queries labelled by the black box (baseline);
        - "counterfactuals" (Aivodji et al., 2020): the queries plus their
          counterfactuals, each labelled by the black box; a missing (NaN)
          counterfactual, or one equal to its query, is dropped;
        - "dualcf" (Wang et al., 2022): the same plus, for each
          counterfactual, its own counterfactual towards the class the black
          box gives the query (``explain(cf, desired_class=...)`` when the
          explainer takes a ``desired_class``, else its default target: a
          one-way recourse method then adds nothing, see
          ``n_explainer_calls`` and ``n_train``);
        - "random": ``n`` points drawn uniformly in ``bounds``, labelled by
          the black box (baseline).
    surrogate : classifier, default=None
        Cloned and fitted for every cell; every ``random_state`` parameter
        it has (including those of pipeline steps) is set per seed. None
        means standardisation then ``MLPClassifier(hidden_layer_sizes=(64,),
        solver="lbfgs", max_iter=300)``. A training set with a single class gives a
        surrogate that always predicts it.
    n_surrogates : int, default=1
        Surrogate seeds per cell; the fidelity is their mean (its standard
        deviation is reported too).
    bounds : (lower, upper), default=None
        The public bounds of the features, where "random" draws; None uses
        the explainer's ``bounds_``. Needed only by "random".
    return_surrogates : bool, default=False
        Keep the fitted surrogates (the first seed's, per strategy and number
        of queries) in ``ExtractionResult.surrogates``, e.g. to attack the
        data through them (:func:`attribute_inference`).
    random_state : int, RandomState instance or None, default=0
        The attacker's randomness: the queries, the random points and the
        surrogate seeds.

    Returns
    -------
    ExtractionResult
        One record per (strategy, number of queries): the fidelity, the
        accuracy if ``y_test`` was given, the rows the surrogate was trained
        on, and the rows the attacker sent to the explainer and to the black
        box (the calls the explainer makes to the black box itself are not
        counted).

    References
    ----------
    .. [1] U. Aivodji, A. Bolot and S. Gambs, "Model extraction from
       counterfactual explanations", arXiv:2009.01884, 2020.
    .. [2] Y. Wang, H. Qian and C. Miao, "DualCF: Efficient Model Extraction
       Attack from Counterfactual Explanations", ACM FAccT 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdpx.attacks import model_extraction
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-1, 1, size=(600, 2))
    >>> f = LogisticRegression().fit(X[:200], X[:200, 0] > 0)
    >>> res = model_extraction(None, f, X[200:400], X[400:], n_queries=(20, 100),
    ...                        strategies=("queries", "random"), bounds=(-1, 1))
    >>> res.to_frame()[["strategy", "n_queries", "fidelity"]].shape
    (4, 3)
    """
    strategies = _check_strategies(strategies)
    sizes = _check_n_queries(n_queries)
    if isinstance(n_surrogates, bool) or not isinstance(n_surrogates, Integral) \
            or n_surrogates < 1:
        raise ValueError(f"n_surrogates must be a positive int, got {n_surrogates!r}")
    X_pool = check_array(X_pool, dtype=float, input_name="X_pool")
    X_test = check_array(X_test, dtype=float, input_name="X_test")
    d = X_pool.shape[1]
    if X_test.shape[1] != d:
        raise ValueError(f"X_test has {X_test.shape[1]} features, X_pool has {d}")
    n_max = sizes[-1]
    if _USES_POOL & set(strategies) and n_max > len(X_pool):
        raise ValueError(f"n_queries {n_max} is larger than the attacker's pool "
                         f"({len(X_pool)} rows)")
    if _USES_EXPLAINER & set(strategies) and not hasattr(explainer, "explain"):
        raise ValueError("the strategies 'counterfactuals' and 'dualcf' need an explainer "
                         "with an explain(X) method")
    if not hasattr(black_box, "predict"):
        raise ValueError("black_box must have a predict method")
    if "random" in strategies:
        if bounds is None:
            bounds = getattr(explainer, "bounds_", None)
        if bounds is None:
            raise ValueError("the 'random' strategy needs public bounds: pass bounds=(lower, "
                             "upper) (the explainer has no bounds_)")
        lower, upper = _check_bounds(bounds, d)
    if y_test is not None:
        y_test = np.asarray(y_test)
        if y_test.shape != (len(X_test),):
            raise ValueError(f"y_test must have one label per row of X_test ({len(X_test)}), "
                             f"got shape {y_test.shape}")
    if surrogate is None:
        surrogate = default_surrogate()
    elif not (hasattr(surrogate, "fit") and hasattr(surrogate, "predict")
              and hasattr(surrogate, "get_params")):
        raise TypeError("surrogate must be a scikit-learn classifier (fit, predict, "
                        f"get_params) or None, got {type(surrogate).__name__}.")

    # independent streams: the queries do not depend on which strategies are asked
    seeds = check_random_state(random_state).randint(np.iinfo(np.int32).max, size=3)
    order = check_random_state(seeds[0]).permutation(len(X_pool))[:n_max]
    surrogate_seeds = check_random_state(seeds[2]).randint(np.iinfo(np.int32).max,
                                                            size=n_surrogates)
    truth = black_box.predict(X_test)

    # every training point, labelled once; prefix masks give the nested sets
    sets = {}  # strategy -> list of (points, labels, query index of each point)
    queries = X_pool[order]
    index = np.arange(n_max)
    if _USES_POOL & set(strategies):
        sets["queries"] = [(queries, black_box.predict(queries), index)]
    if _USES_EXPLAINER & set(strategies):
        cf = _points(explainer.explain(queries), "counterfactuals", n_max, d)
        ok = _new_points(cf, queries)
        cf_part = (cf[ok], black_box.predict(cf[ok]) if ok.any() else np.empty(0), index[ok])
        sets["counterfactuals"] = sets["queries"] + [cf_part]
        if "dualcf" in strategies:
            dual = [cf_part]
            if ok.any():
                towards = sets["queries"][0][1][ok]  # the black box's class of each query
                answer = (explainer.explain(cf[ok], desired_class=towards)
                          if _accepts_desired_class(explainer) else explainer.explain(cf[ok]))
                ccf = _points(answer, "counterfactuals of counterfactuals", int(ok.sum()), d)
                ok2 = _new_points(ccf, cf[ok])
                dual.append((ccf[ok2], black_box.predict(ccf[ok2]) if ok2.any() else
                             np.empty(0), index[ok][ok2]))
            sets["dualcf"] = sets["queries"] + dual
    if "random" in strategies:
        points = check_random_state(seeds[1]).uniform(lower, upper, size=(n_max, d))
        sets["random"] = [(points, black_box.predict(points), index)]

    records, surrogates = [], {}
    for strategy in strategies:
        parts = sets[strategy]
        for n in sizes:
            kept = [(p[i < n], lab[i < n]) for p, lab, i in parts]
            X_train = np.vstack([p for p, _ in kept])
            y_train = np.concatenate([lab for _, lab in kept])
            fid, acc = [], []
            for k, seed in enumerate(surrogate_seeds):
                model = _fit_surrogate(surrogate, X_train, y_train, int(seed))
                pred = model.predict(X_test)
                fid.append(np.mean(pred == truth))
                if y_test is not None:
                    acc.append(np.mean(pred == y_test))
                if return_surrogates and k == 0:
                    surrogates[(strategy, n)] = model
            explained = 0
            if strategy in _USES_EXPLAINER:
                explained = n + (len(kept[1][0]) if strategy == "dualcf" else 0)
            records.append({
                "strategy": strategy, "n_queries": n,
                "fidelity": float(np.mean(fid)), "fidelity_std": float(np.std(fid)),
                "accuracy": float(np.mean(acc)) if acc else math.nan,
                "n_train": len(X_train),
                "n_explainer_calls": explained,
                "n_black_box_calls": len(X_train),
            })
    meta = {"n_surrogates": int(n_surrogates), "n_test": len(X_test), "n_pool": len(X_pool),
            "surrogate": repr(surrogate), "explainer": type(explainer).__name__,
            "black_box": type(black_box).__name__}
    return ExtractionResult(records, meta=meta, surrogates=surrogates)


class ExtractionResult:
    """Surrogate fidelity per strategy and number of queries (:func:`model_extraction`).

    Parameters
    ----------
    records : list of dict
        One per (strategy, number of queries), with the keys ``strategy``,
        ``n_queries``, ``fidelity`` (agreement of the surrogate with the
        black box on the test rows, mean over the surrogate seeds),
        ``fidelity_std``, ``accuracy`` (on true labels, NaN if none were
        given), ``n_train`` (the surrogate's training rows),
        ``n_explainer_calls`` (rows sent to the explainer) and
        ``n_black_box_calls`` (rows the black box labelled for the attacker).
    meta : dict, default=None
    surrogates : dict, default=None
        ``{(strategy, n_queries): fitted surrogate}`` when
        ``return_surrogates=True`` (not serialised).
    """

    _FIELDS = ("strategy", "n_queries", "fidelity", "fidelity_std", "accuracy", "n_train",
               "n_explainer_calls", "n_black_box_calls")

    def __init__(self, records, *, meta=None, surrogates=None):
        rows = []
        for r in records:
            missing = [k for k in self._FIELDS if k not in r]
            if missing:
                raise ValueError(f"a record lacks {missing}")
            row = {k: r[k] for k in self._FIELDS}
            for k in ("fidelity", "fidelity_std", "accuracy"):
                row[k] = math.nan if row[k] is None else float(row[k])
            for k in ("n_queries", "n_train", "n_explainer_calls", "n_black_box_calls"):
                row[k] = int(row[k])
            row["strategy"] = str(row["strategy"])
            rows.append(row)
        self.records = rows
        self.meta = dict(meta or {})
        self.surrogates = dict(surrogates or {})

    @property
    def strategies(self):
        """The strategies, in the order run."""
        return tuple(dict.fromkeys(r["strategy"] for r in self.records))

    @property
    def n_queries(self):
        """The numbers of queries, ascending."""
        return tuple(sorted({r["n_queries"] for r in self.records}))

    def fidelity(self, strategy):
        """The fidelity of ``strategy`` at each of :attr:`n_queries` (NaN if not run)."""
        if strategy not in self.strategies:
            raise ValueError(f"strategy {strategy!r} was not run: {list(self.strategies)}")
        found = {r["n_queries"]: r["fidelity"] for r in self.records if r["strategy"] == strategy}
        return np.array([found.get(n, math.nan) for n in self.n_queries])

    def surrogate(self, strategy, n_queries=None):
        """The fitted surrogate of ``strategy`` (the largest number of queries by default)."""
        if not self.surrogates:
            raise ValueError("no surrogates kept: run model_extraction(..., "
                             "return_surrogates=True)")
        n = self.n_queries[-1] if n_queries is None else n_queries
        if (strategy, n) not in self.surrogates:
            raise ValueError(f"no surrogate for strategy {strategy!r} and {n} queries")
        return self.surrogates[(strategy, n)]

    def __len__(self):
        return len(self.records)

    def __repr__(self):
        return (f"ExtractionResult(strategies={list(self.strategies)}, "
                f"n_queries={list(self.n_queries)})")

    def __eq__(self, other):
        if not isinstance(other, ExtractionResult):
            return NotImplemented
        return _jsonable(self.records) == _jsonable(other.records) and \
            _jsonable(self.meta) == _jsonable(other.meta)

    def to_frame(self):
        """A pandas DataFrame, one row per record; ``meta`` in ``attrs``."""
        pd = _import_optional("pandas", "to_frame()", "test")
        frame = pd.DataFrame(self.records, columns=list(self._FIELDS))
        frame.attrs.update(self.meta)
        return frame

    def table(self, values="fidelity"):
        """A pandas DataFrame of one field, number of queries x strategy.

        Parameters
        ----------
        values : str, default="fidelity"
            A record field: "fidelity", "fidelity_std", "accuracy",
            "n_train", "n_explainer_calls" or "n_black_box_calls".
        """
        if values not in self._FIELDS[2:]:
            raise ValueError(f"values must be one of {list(self._FIELDS[2:])}, got {values!r}")
        frame = self.to_frame().pivot(index="n_queries", columns="strategy", values=values)
        return frame[list(self.strategies)]

    def to_json(self, path=None, **kwargs):
        """JSON text (NaN as null), also written to ``path`` if given; the
        surrogates are not included."""
        return _dump_json({"type": type(self).__name__, "records": _jsonable(self.records),
                           "meta": _jsonable(self.meta)}, path, **kwargs)

    @classmethod
    def from_json(cls, s):
        """Rebuild from :meth:`to_json`'s text (or the path of a file holding it)."""
        payload = _load_json(s, cls)
        return cls(payload["records"], meta=payload.get("meta"))

    def plot(self, ax=None):
        """Fidelity against the number of queries, one line per strategy
        (error bars: the standard deviation over surrogate seeds).

        Needs matplotlib (the ``plot`` extra). Returns the Axes.
        """
        ax = _new_axes(ax)
        for strategy in self.strategies:
            rows = sorted((r for r in self.records if r["strategy"] == strategy),
                          key=lambda r: r["n_queries"])
            ax.errorbar([r["n_queries"] for r in rows], [r["fidelity"] for r in rows],
                        yerr=[r["fidelity_std"] for r in rows], marker="o", capsize=3,
                        label=strategy)
        ax.set_xscale("log")
        ax.set_xlabel("number of queries")
        ax.set_ylabel("fidelity to the black box")
        ax.legend()
        return ax
