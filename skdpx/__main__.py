"""``python -m skdpx demo``: skdpx end to end on the bundled UCI Adult data.

At this stage of the project the demo trains a non-private baseline, shows
the privacy core at work (calibrated releases recorded in a privacy ledger,
composed tightly), makes a DP prediction with its local explanation
(DPLocallyLinearClassifier), explains a black box's decision for one
applicant with DPLimeExplainer, gives a denied applicant a DP counterfactual
(DPCounterfactualGenerator) and a DP multi-step recourse path
(PrivRecourse), and says which explanation methods are available. The black
box is trained on training rows disjoint from the explanation rows that
DPLimeExplainer and DPCounterfactualGenerator protect.
"""

import argparse
import math
import sys

import numpy as np

METHODS = (
    ("DPLocallyLinearClassifier", "interpretable classifier trained with DP-SGD",
     "Harder, Bauer & Park, AAAI 2020"),
    ("DPLimeExplainer", "DP local linear explanations of any black box",
     "Patel, Shokri & Zick, 2020"),
    ("DPCounterfactualGenerator", "counterfactuals from DP class prototypes",
     "Yang et al., 2022"),
    ("PrivRecourse", "DP multi-step recourse paths", "Pentyala et al., ICAIF 2023"),
)


def _rule(title):
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def demo(epsilon=1.0, delta=1e-5, seed=None, out=None):
    """Run the demo and print what it does. Returns a dict of the figures shown.

    ``seed=None`` (the default) draws all the privacy noise from the secure
    generator; a seed makes the run reproducible, and its noise public.
    """
    from sklearn.linear_model import LogisticRegression

    import skdpx
    from skdpx.datasets import encode_adult, load_adult
    from skdpx.locally_linear import DPLocallyLinearClassifier
    from skdpx.privacy import PrivacyLedger, gaussian_mechanism

    out = sys.stdout if out is None else out
    print_ = lambda *a: print(*a, file=out)  # noqa: E731

    print_(f"skdpx {skdpx.__version__}: differentially private model explanations")
    _rule("1. Data: UCI Adult, bundled")
    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc_train, enc_test = encode_adult(train.data), encode_adult(test.data)
    X, y = enc_train.data, train.target
    X_test, y_test = enc_test.data, test.target
    print_(f"train {X.shape[0]:,} rows, test {X_test.shape[0]:,} rows, "
           f"{X.shape[1]} numeric columns (one-hot categories, public min-max bounds)")

    _rule("2. A non-private baseline (for comparison only)")
    baseline = LogisticRegression(max_iter=2000).fit(X, y)
    acc = baseline.score(X_test, y_test)
    print_(f"LogisticRegression test accuracy: {acc:.4f}  (epsilon = inf: no privacy)")

    _rule(f"3. The privacy core: a ledger for Adult's training rows, cap epsilon={epsilon:g}")
    ledger = PrivacyLedger(epsilon=epsilon, delta=delta)
    age = enc_train.columns["age"][0]
    lo, hi = enc_train.raw_bounds[0][age], enc_train.raw_bounds[1][age]
    ages = lo + X[:, age] * (hi - lo)
    # The public bound `hi` makes the sensitivity known: one row changes the
    # sum of age / hi by at most 1 and a count by 1, so the vector
    # (sum of age / hi, count) of one income class has L2 sensitivity sqrt(2).
    sensitivity = math.sqrt(2.0)
    rows = []
    per_release = epsilon / 2
    for i, (label, mask) in enumerate((("<=50K", y == 0), (">50K", y == 1))):
        exact = np.array([ages[mask].sum() / hi, mask.sum()])
        noisy = gaussian_mechanism(
            exact, epsilon=per_release, delta=delta / 2, sensitivity=sensitivity,
            random_state=None if seed is None else seed + i, ledger=ledger,
            label=f"mean age, income {label}",
        )
        rows.append((label, hi * exact[0] / exact[1], hi * noisy[0] / max(noisy[1], 1.0)))
    print_(f"{'income':<8} {'exact mean age':>15} {'DP mean age':>12}")
    for label, exact_mean, dp_mean in rows:
        print_(f"{label:<8} {exact_mean:>15.2f} {dp_mean:>12.2f}")
    print_("ledger:")
    for label, event in ledger.events:
        print_(f"  - {label}: {event}")
    print_(f"epsilon spent, tight composition: {ledger.epsilon_spent:.4f} at delta="
           f"{ledger.delta_spent:g}  (basic composition of the two releases, each "
           f"calibrated for ({per_release:g}, {delta / 2:g}): {2 * per_release:g} at {delta:g})")
    print_(f"epsilon remaining: {ledger.epsilon_remaining:.4f}")
    try:
        gaussian_mechanism(0.0, epsilon=epsilon, delta=delta / 2, sensitivity=sensitivity,
                           ledger=ledger, label="one release too many")
        refused = False
    except Exception as exc:  # BudgetError
        refused = True
        print_(f"a further release at epsilon={epsilon:g} is refused: {type(exc).__name__}")

    _rule("4. DP prediction with a local explanation")
    # A separate model is a separate release of the same rows: it gets its own
    # ledger here, to keep the demo simple.
    llc_ledger = PrivacyLedger(epsilon=epsilon, delta=delta)
    llc = DPLocallyLinearClassifier(
        epsilon=epsilon, delta=delta, bounds=enc_train.bounds,  # public bounds
        classes=[0, 1],  # the public label set, declared (never read from y)
        accountant=llc_ledger, random_state=seed,
    ).fit(X, y)
    # the test split is public here (not the private training rows), so its exact
    # accuracy is no release about them (score() warns that it cannot know that)
    llc_acc = float(np.mean(llc.predict(X_test) == y_test))
    print_(f"DPLocallyLinearClassifier test accuracy: {llc_acc:.4f}  (epsilon={epsilon:g}; "
           f"non-private baseline {acc:.4f})")
    print_("(own ledger for this model; a real deployment would share one ledger across "
           "all releases of the same data)")
    names = train.target_names  # the public labels: "<=50K", ">50K"
    explanation = llc.explain(X_test[:1])  # post-processing of the model: free
    proba = llc.predict_proba(X_test[:1])[0]
    predicted = int(explanation.meta["predicted_class"][0])
    print_(f"first test applicant: predicted {names[predicted]} with probability "
           f"{proba[predicted]:.4f} (true: {names[int(y_test[0])]})")
    values = explanation.values[0]
    top = np.argsort(-np.abs(values))[:5]
    print_(f"local linear map of {names[predicted]}, top 5 features "
           "(score change per unit of the feature scaled to [0, 1]):")
    for j in top:
        print_(f"  {enc_train.feature_names[j]:<36} {values[j]:+.3f}")
    print_(f"the model's privacy cost: epsilon {llc.epsilon_spent_:.4f} at delta "
           f"{llc.delta_spent_:g}; the explanation costs nothing more")

    _rule("5. A DP explanation of a black box's decision")
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import train_test_split

    from skdpx.explain import DPLimeExplainer
    from skdpx.metrics import optimal_explanation

    # The guarantee covers the explanation rows only if the black box does not
    # depend on them: it is trained on other rows (or is DP on the same ledger).
    # The training split is cut in two: the black box's rows and the private
    # explanation rows (the split is public; the rows are not).
    X_model, X_private, y_model, _ = train_test_split(X, y, train_size=10_000, random_state=0)
    black_box = HistGradientBoostingClassifier(random_state=seed).fit(X_model, y_model)
    # the explanation dataset: a third release of training rows, with its own
    # ledger here (shared in a real deployment). Its first release is a DP count of
    # the rows (5% of epsilon: their number is private); one answer takes the rest
    explainer = DPLimeExplainer(
        black_box, epsilon=epsilon, delta=delta, epsilon_per_query=0.95 * epsilon, max_iter=300,
        bounds=enc_train.bounds, accountant=PrivacyLedger(epsilon=epsilon, delta=delta),
        random_state=seed,
    ).fit(X_private)
    query = X_test[:1]
    dp = explainer.explain(query)
    labels = 2 * black_box.predict_proba(X_private)[:, 1] - 1
    exact, _ = optimal_explanation(query, X_private, labels)  # non-private, for comparison only
    exact = exact / 2  # in units of P (the labels are 2 P - 1), as the DP answer
    p_high = black_box.predict_proba(query)[0, 1]
    print_(f"black box: HistGradientBoostingClassifier trained on {len(X_model):,} training rows "
           f"(test accuracy {black_box.score(X_test, y_test):.4f}); explanation data: the other "
           f"{len(X_private):,}, disjoint from them (the explainer protects the explanation "
           "rows, not the black box's; a black box trained on the explanation rows would void "
           "their guarantee)")
    print_(f"first test applicant: P({names[1]}) = {p_high:.4f}")
    print_(f"DP local explanation ({dp.phase[0]}, cost epsilon {dp.epsilon[0]:.4f} at delta "
           f"{delta:g}), top 5 features against the non-private optimum of the same loss:")
    dp_values = dp.values[0]
    lime_top = np.argsort(-np.abs(dp_values))[:5]
    print_(f"  {'feature':<36} {'DP':>7} {'exact':>7}")
    for j in lime_top:
        print_(f"  {enc_train.feature_names[j]:<36} {dp_values[j]:+7.3f} {exact[0, j]:+7.3f}")
    agree = len(set(lime_top) & set(np.argsort(-np.abs(exact[0]))[:5]))
    print_(f"{agree} of the top 5 features agree with the non-private explanation; the "
           f"explainer has spent epsilon {explainer.epsilon_spent_:.4f} of {epsilon:g}")

    _rule("6. A DP counterfactual for a denied applicant")
    from skdpx.counterfactual import DPCounterfactualGenerator

    # a fourth release of the explanation rows (not the black box's), with its own ledger here
    # sex and race are held as the applicant's (their whole one-hot blocks)
    fixed = [j for j, name in enumerate(enc_train.feature_names)
             if name.startswith(("sex=", "race="))]
    dpc = DPCounterfactualGenerator(black_box, epsilon=epsilon, delta=delta,
                                    immutable_features=fixed, bounds=enc_train.bounds,
                                    accountant=PrivacyLedger(epsilon=epsilon, delta=delta),
                                    random_state=seed).fit(X_private)
    # the first of 20 denied applicants with a valid counterfactual (post-processing: free)
    candidates = np.flatnonzero(black_box.predict(X_test) == 0)[:20]
    cf = dpc.explain(X_test[candidates])
    k = int(np.argmax(cf.valid))
    denied = candidates[k]
    change = cf.counterfactuals[k] - X_test[denied]
    print_(f"{int(cf.valid.sum())} of {len(candidates)} denied test applicants get a valid DP "
           f"counterfactual; test applicant {denied}: the black box predicts {names[0]}; DP "
           f"counterfactual ({'valid' if cf.valid[k] else 'not found'}): predicted "
           f"{names[int(cf.predicted_class[k])]}, distance {cf.distance[k]:.3f}")
    if cf.valid[k]:
        print_("largest changes (features scaled to [0, 1]):")
        for j in np.argsort(-np.abs(change))[:5]:
            print_(f"  {enc_train.feature_names[j]:<36} {X_test[denied, j]:.2f} -> "
                   f"{cf.counterfactuals[k, j]:.2f}")
    print_("(sex and race are immutable: every counterfactual keeps the applicant's; each is "
           "re-checked with the black box, and one that does not flip is not returned)")
    print_(f"the generator's privacy cost (autoencoder + class prototypes): epsilon "
           f"{dpc.epsilon_spent_:.4f} at delta {dpc.delta_spent_:g}; every further "
           "counterfactual is free")

    _rule("7. A DP recourse path for a denied applicant")
    from skdpx.recourse import PrivRecourse

    features = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    raw_train = encode_adult(train.data, features=features, scale=False)
    raw_test = encode_adult(test.data, features=features, scale=False).data
    # a fifth release of the same rows, with its own ledger here: a DP logistic
    # regression (half of epsilon) and 200 DP k-means centres (the rest)
    rec = PrivRecourse(n_clusters=200, epsilon=epsilon, delta=delta, model_C=10.0,
                       increasing_features=[0, 1], distance_threshold=0.4, classes=[0, 1],
                       bounds=raw_train.bounds,
                       accountant=PrivacyLedger(epsilon=epsilon, delta=delta),
                       random_state=seed).fit(raw_train.data, y)
    denied_rows = np.flatnonzero(rec.estimator_.predict(raw_test) == 0)
    paths = rec.explain(raw_test[denied_rows[:50]])
    pick = next((i for i in range(len(paths)) if paths.success[i] and len(paths.paths[i]) > 2),
                0)
    path = paths.paths[pick]
    print_(f"test applicant {denied_rows[pick]} (denied by a DP logistic regression at epsilon "
           f"{rec.model_epsilon_:g}); age and education may only go up along the path:")
    print_("  " + "".join(f"{f:>16}" for f in features))
    for step, point in enumerate(path):
        what = ("applicant" if step == 0 else "nearest centre (where the path starts)"
                if step == 1 else "counterfactual" if step == len(path) - 1 else f"step {step}")
        print_("  " + "".join(f"{v:>16,.0f}" for v in point) + f"  {what}")
    print_(f"{int(paths.success[:50].sum())} of the first 50 denied applicants get a path; "
           f"{len(rec.cluster_centers_)} DP centres are the graph's nodes. Privacy cost (model + "
           f"clustering): epsilon {rec.epsilon_spent_:.4f} at delta {rec.delta_spent_:g}; every "
           "path is free")

    _rule("8. Explanation methods")
    available = []
    for name, what, paper in METHODS:
        status = "available" if hasattr(skdpx, name) else "coming"
        available.append(status == "available")
        print_(f"  {name:<27} {status:<10} {what} ({paper})")
    return {
        "baseline_accuracy": acc,
        "epsilon_spent": ledger.epsilon_spent,
        "refused": refused,
        "dp_mean_age": [r[2] for r in rows],
        "llc_accuracy": llc_acc,
        "llc_epsilon_spent": llc.epsilon_spent_,
        "llc_delta_spent": llc.delta_spent_,
        "llc_predicted_class": predicted,
        "llc_top_features": [enc_train.feature_names[j] for j in top],
        "lime_epsilon": float(dp.epsilon[0]),
        "lime_epsilon_spent": explainer.epsilon_spent_,
        "lime_top_agreement": agree,
        "dpc_valid": bool(cf.valid[k]),
        "dpc_epsilon_spent": dpc.epsilon_spent_,
        "recourse_success": bool(paths.success[pick]),
        "recourse_path": path,
        "recourse_epsilon_spent": rec.epsilon_spent_,
        "recourse_model_class_at_end": (rec.estimator_.predict(path[-1:])[0]
                                        if paths.success[pick] else None),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(prog="skdpx", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="run the demo on the bundled Adult data")
    p_demo.add_argument("--epsilon", type=float, default=1.0, help="the ledger's cap")
    p_demo.add_argument("--delta", type=float, default=1e-5)
    p_demo.add_argument("--seed", type=int, default=None,
                        help="reproducible noise (for testing: anyone who knows the seed "
                             "can remove the noise); default: secure noise")
    p_demo.add_argument("--json", metavar="PATH", default=None,
                        help="also write the figures shown to PATH, as JSON")
    args = parser.parse_args(argv)
    if args.command == "demo":
        if not args.epsilon > 0 or not 0 < args.delta < 1:
            parser.error("--epsilon must be > 0 and --delta in (0, 1)")
        figures = demo(epsilon=args.epsilon, delta=args.delta, seed=args.seed)
        if args.json:
            import json

            with open(args.json, "w") as fh:
                json.dump(figures, fh, indent=1, default=_plain)
    return 0


def _plain(value):
    """numpy values as JSON: arrays as lists, scalars as numbers."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


if __name__ == "__main__":
    sys.exit(main())
