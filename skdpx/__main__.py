"""``python -m skdpx demo``: skdpx end to end on the bundled UCI Adult data.

The demo follows the project's own advice: the public schema (bounds and
categorical levels) and the label set are declared, never read from the
rows; one privacy ledger, under one neighbouring relation, records every
release about Adult's private rows (DP mean ages, a DP locally linear
classifier and its local explanation, a DPLimeExplainer explanation of a
black box's decision shown with its noise, a DP counterfactual and a DP
recourse path shown in original units), each section spending a declared
part of the cap (``--epsilon``, the whole demo's budget), and a release over
the cap is refused. The black box is trained without privacy on other rows
of the training split (the model-development rows), which the ledger does
not cover. Unseeded, the demo prints no warning.
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


def _rule(title, out=None):
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)), file=out)


def demo(epsilon=5.0, delta=1e-5, seed=None, out=None):
    """Run the demo and print what it does. Returns a dict of the figures shown.

    ``epsilon`` and ``delta`` are the whole demo's budget: the cap of the one
    privacy ledger that records every release about Adult's private rows.
    Each of the five DP sections is given a fifth of ``epsilon`` (each
    calibrated for it alone, at ``delta``); the ledger composes them tightly.
    ``seed=None`` (the default) draws all the privacy noise from the secure
    generator; a seed makes the run reproducible, and its noise public.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    import skdpx
    from skdpx.datasets import adult_schema, encode_adult, load_adult
    from skdpx.locally_linear import DPLocallyLinearClassifier
    from skdpx.preprocessing import PublicSchemaEncoder
    from skdpx.privacy import PrivacyLedger, gaussian_mechanism

    out = sys.stdout if out is None else out
    print_ = lambda *a: print(*a, file=out)  # noqa: E731

    print_(f"skdpx {skdpx.__version__}: differentially private model explanations")
    _rule("1. Data: UCI Adult, bundled, with its public schema", out)
    schema = adult_schema()  # public bounds and levels: declared, never read from the rows
    train = load_adult(subset="train", as_frame=True)
    test = load_adult(subset="test", as_frame=True)
    table, table_test = train.data[schema.features], test.data[schema.features]
    enc_train = encode_adult(table)  # one-hot levels, numeric columns scaled with public bounds
    X_all, y_all = enc_train.data, train.target
    X_test, y_test = encode_adult(table_test).data, test.target
    names = train.target_names  # the public labels: "<=50K", ">50K"
    # the training split is cut in two (the cut is public; the rows are not): the
    # bank's model-development rows, on which the black box is trained without
    # privacy, and the private rows, which every DP release below reads and one
    # ledger protects
    i_model, i_private = train_test_split(np.arange(len(y_all)), train_size=10_000,
                                          random_state=0)
    X, y = X_all[i_private], y_all[i_private]
    print_(f"train {len(y_all):,} rows: {len(i_private):,} private rows (every DP release "
           f"below reads them; one ledger holds their budget) and {len(i_model):,} "
           f"model-development rows (the black box's, non-private); test {len(y_test):,} "
           "rows (public queries)")
    print_(f"public schema (adult_schema): bounds of {len(schema.bounds)} numeric columns, "
           f"levels of {len(schema.categories)} categorical ones; encoded: "
           f"{X.shape[1]} columns in [0, 1]")

    _rule("2. A non-private baseline (for comparison only)", out)
    baseline = LogisticRegression(max_iter=2000).fit(X, y)
    acc = baseline.score(X_test, y_test)
    print_(f"LogisticRegression on the private rows, test accuracy: {acc:.4f}  "
           "(epsilon = inf: no privacy, outside the ledger)")

    share = epsilon / 5
    _rule(f"3. One ledger for the private rows: cap epsilon={epsilon:g} at delta={delta:g}", out)
    ledger = PrivacyLedger(epsilon=epsilon, delta=delta)
    print_(f"neighbouring relation: {ledger.relation} (one row added or removed; every "
           "estimator below calibrates under the ledger's, and the ledger refuses a spend "
           "under another)")
    print_(f"five DP sections, each given epsilon={share:g} (a fifth of the cap) at delta="
           f"{delta:g}: the mean ages, the locally linear model, the LIME explainer, the "
           "counterfactual generator and the recourse graph. Basic composition would sum "
           f"them to {5 * share:g}; the ledger composes them tightly (section 8)")
    age = enc_train.columns["age"][0]
    lo, hi = enc_train.raw_bounds[0][age], enc_train.raw_bounds[1][age]
    ages = lo + X[:, age] * (hi - lo)
    # The public bound `hi` makes the sensitivity known: one row changes the
    # sum of age / hi by at most 1 and a count by 1, so the vector
    # (sum of age / hi, count) of one income class has L2 sensitivity sqrt(2).
    sensitivity = math.sqrt(2.0)
    rows = []
    per_release = share / 2
    for i, (label, mask) in enumerate((("<=50K", y == 0), (">50K", y == 1))):
        exact = np.array([ages[mask].sum() / hi, mask.sum()])
        noisy = gaussian_mechanism(
            exact, epsilon=per_release, delta=delta / 2, sensitivity=sensitivity,
            random_state=None if seed is None else seed + i, ledger=ledger,
            label=f"mean age, income {label}",
        )
        rows.append((label, hi * exact[0] / exact[1], hi * noisy[0] / max(noisy[1], 1.0)))
    print_(f"DP mean ages: two Gaussian releases, each at ({per_release:g}, {delta / 2:g})")
    print_(f"{'income':<8} {'exact mean age':>15} {'DP mean age':>12}")
    for label, exact_mean, dp_mean in rows:
        print_(f"{label:<8} {exact_mean:>15.2f} {dp_mean:>12.2f}")

    _rule("4. DP prediction with a local explanation", out)
    llc = DPLocallyLinearClassifier(
        epsilon=share, delta=delta, bounds=enc_train.bounds,  # public bounds
        classes=[0, 1],  # the public label set, declared (never read from y)
        accountant=ledger, random_state=seed,
    ).fit(X, y)
    # the test split is public here (not the private training rows), so its exact
    # accuracy is no release about them (score() warns that it cannot know that)
    llc_acc = float(np.mean(llc.predict(X_test) == y_test))
    print_(f"DPLocallyLinearClassifier test accuracy: {llc_acc:.4f}  (epsilon={share:g}, "
           f"in the shared ledger; non-private baseline {acc:.4f})")
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
    print_("no error bars: these weights end DP-SGD on a non-convex loss, and no sound bound "
           "on their noise follows from public facts (doc/results.rst); they are noisy, "
           "not exact")
    print_(f"the model's privacy cost: epsilon {llc.epsilon_spent_:.4f} at delta "
           f"{llc.delta_spent_:g}; the explanation costs nothing more")

    _rule("5. A DP explanation of a black box's decision", out)
    from skdpx.explain import DPLimeExplainer
    from skdpx.metrics import optimal_explanation

    # The guarantee covers the private rows only if the black box does not depend
    # on them: it is trained on the model-development rows. It takes raw records:
    # the public schema's encoder (the columns encode_adult gives), then the model
    black_box = make_pipeline(
        PublicSchemaEncoder(bounds=schema.bounds, categories=schema.categories),
        HistGradientBoostingClassifier(random_state=seed),
    ).fit(table.iloc[i_model], y_all[i_model])
    model = black_box[-1]  # the black box on the encoded features
    # a third release of the private rows, in the shared ledger. Its first release is
    # a DP count of the rows (5% of its epsilon: their number is private); one answer
    # takes the rest
    explainer = DPLimeExplainer(
        model, epsilon=share, delta=delta, epsilon_per_query=0.95 * share,
        target_class=1,  # explains P(>50K), one of the black box's public classes_
        bounds=enc_train.bounds, accountant=ledger, random_state=seed,
    ).fit(X)
    query = X_test[:1]
    dp = explainer.explain(query)
    labels = 2 * model.predict_proba(X)[:, 1] - 1
    exact, _ = optimal_explanation(query, X, labels)  # non-private, for comparison only
    exact = exact / 2  # in units of P (the labels are 2 P - 1), as the DP answer
    p_high = model.predict_proba(query)[0, 1]
    print_(f"black box: the public encoder and a HistGradientBoostingClassifier, trained "
           f"without privacy on the {len(i_model):,} model-development rows (test accuracy "
           f"{black_box.score(table_test, y_test):.4f}): not in the ledger, and not covered "
           f"by it. The explainer protects the {len(i_private):,} private rows, disjoint from "
           "them (a black box trained on the private rows would void their guarantee)")
    print_(f"first test applicant: P({names[1]}) = {p_high:.4f}")
    dp_values, std = dp.values[0], dp.std[0]
    floor, above = dp.noise_floor()[0], dp.distinguishable()[0]
    # ranked by what the noise supports: how far each value stands above its
    # noise floor (2 std), as FeatureAttribution.plot ranks
    margin = np.abs(dp_values) - floor
    lime_top = np.argsort(-margin)[:5]
    print_(f"DP local explanation ({dp.phase[0]}, cost epsilon {dp.epsilon[0]:.4f} at delta "
           f"{delta:g}), value ± std of its privacy noise (propagated along its released path), "
           "top 5 by margin above the noise floor (2 std), against the non-private optimum "
           "of the same loss:")
    print_(f"  {'feature':<36} {'DP ± std':>16} {'exact':>7}  above the noise floor?")
    for j in lime_top:
        print_(f"  {enc_train.feature_names[j]:<36} {dp_values[j]:+7.3f} ± {std[j]:<6.3f} "
               f"{exact[0, j]:+7.3f}  {'yes' if above[j] else 'no: within the noise'}")
    n_above = int(above.sum())
    print_(f"{n_above} of {len(dp_values)} values stand above their noise floor "
           f"({2 * float(np.nanmax(std)):.3f}); the others are not distinguishable from "
           "the noise")
    agree = len(set(lime_top) & set(np.argsort(-np.abs(exact[0]))[:5]))
    print_(f"{agree} of the top 5 features agree with the non-private explanation; the "
           f"explainer has spent epsilon {explainer.epsilon_spent_:.4f} of its {share:g}")

    _rule("6. A DP counterfactual for a denied applicant", out)
    from skdpx.counterfactual import DPCounterfactualGenerator

    # a fourth release of the private rows, in the shared ledger. Fitted on the raw
    # records with the public schema: it searches in the encoded space, gives the
    # black box records of the kind it was trained on, and maps the result back to
    # the original columns. sex and race are held as the applicant's
    dpc = DPCounterfactualGenerator(
        black_box, epsilon=share, delta=delta, immutable_features=["sex", "race"],
        bounds=schema.bounds, categories=schema.categories, classes=[0, 1],
        accountant=ledger, random_state=seed,
    ).fit(table.iloc[i_private])
    # the first of 20 denied applicants with a valid counterfactual (post-processing: free)
    candidates = np.flatnonzero(black_box.predict(table_test) == 0)[:20]
    cf = dpc.explain(table_test.iloc[candidates])
    k = int(np.argmax(cf.valid))
    denied = candidates[k]
    print_(f"{int(cf.valid.sum())} of {len(candidates)} denied test applicants get a valid DP "
           f"counterfactual; test applicant {denied}: the black box predicts {names[0]}; DP "
           f"counterfactual ({'valid' if cf.valid[k] else 'not found'}): predicted "
           f"{names[int(cf.predicted_class[k])]}")
    dpc_changes = cf.changes(k)
    if cf.valid[k]:
        print_("what it changes, in original units (CounterfactualSet.changes()):")
        _print_changes(print_, dpc_changes)
    print_("(sex and race are immutable: every counterfactual keeps the applicant's; each is "
           "re-checked with the black box, and one that does not flip is not returned)")
    print_(f"the generator's privacy cost (autoencoder + class prototypes): epsilon "
           f"{dpc.epsilon_spent_:.4f} at delta {dpc.delta_spent_:g}; every further "
           "counterfactual is free")

    _rule("7. A DP recourse path for a denied applicant", out)
    from skdpx.recourse import PrivRecourse

    features = ["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
    # a fifth release of the private rows, in the shared ledger: a DP logistic
    # regression (half of its epsilon) and 200 DP k-means centres (the rest),
    # fitted on the five numeric columns with their public bounds
    rec = PrivRecourse(n_clusters=200, epsilon=share, delta=delta, model_C=10.0,
                       increasing_features=["age", "education-num"], distance_threshold=0.4,
                       classes=[0, 1], bounds={f: schema.bounds[f] for f in features},
                       accountant=ledger, random_state=seed).fit(table[features].iloc[i_private], y)
    rec_test = table_test[features]
    denied_rows = np.flatnonzero(rec.estimator_.predict(rec_test) == 0)
    paths = rec.explain(rec_test.iloc[denied_rows[:50]])
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
    rec_changes = paths.changes(pick)
    if paths.success[pick]:
        print_("what the end point changes (RecoursePaths.changes()):")
        _print_changes(print_, rec_changes)
    print_(f"{int(paths.success[:50].sum())} of the first 50 denied applicants get a path; "
           f"{len(rec.cluster_centers_)} DP centres are the graph's nodes. Privacy cost (model + "
           f"clustering): epsilon {rec.epsilon_spent_:.4f} at delta {rec.delta_spent_:g}; every "
           "path is free")

    _rule("8. The ledger: every release about the private rows", out)
    for label, event in ledger.events:
        print_(f"  - {label}: {type(event).__name__}")
    sections = {
        "mean ages": share,  # two Gaussian releases at half of it each
        "DPLocallyLinearClassifier": llc.epsilon_spent_,
        "DPLimeExplainer": explainer.epsilon_spent_,
        "DPCounterfactualGenerator": dpc.epsilon_spent_,
        "PrivRecourse": rec.epsilon_spent_,
    }
    print_("each section's spend, alone: " + ", ".join(f"{name} {eps:.4f}"
                                                       for name, eps in sections.items()))
    print_(f"epsilon spent, tight composition: {ledger.epsilon_spent:.4f} at delta="
           f"{ledger.delta_spent:g} (basic composition: {sum(sections.values()):.4f}); "
           f"remaining {ledger.epsilon_remaining:.4f} of {epsilon:g}")
    print_("not in the ledger: the baseline (a non-private model of the private rows, for "
           "comparison only: no DP release, no guarantee), the black box (non-private, on the "
           "model-development rows) and the test split (public queries)")
    try:  # running the demo's releases again on the same rows would need the whole cap again
        gaussian_mechanism(0.0, epsilon=epsilon, delta=delta / 2, sensitivity=sensitivity,
                           ledger=ledger, label="one release too many")
        refused = False
    except Exception as exc:  # BudgetError
        refused = True
        print_(f"a further release at epsilon={epsilon:g} (what a second run of this demo on "
               f"the same rows would need) is refused: {type(exc).__name__}")

    _rule("9. Explanation methods", out)
    available = []
    for name, what, paper in METHODS:
        status = "available" if hasattr(skdpx, name) else "coming"
        available.append(status == "available")
        print_(f"  {name:<27} {status:<10} {what} ({paper})")
    return {
        "baseline_accuracy": acc,
        "epsilon_cap": epsilon,
        "epsilon_share": share,
        "epsilon_spent": ledger.epsilon_spent,
        "delta_spent": ledger.delta_spent,
        "ledger_relation": ledger.relation,
        "ledger_labels": [label for label, _ in ledger.events],
        "section_epsilon_spent": sections,
        "shared_ledger": all(est.accountant is ledger for est in (llc, explainer, dpc, rec)),
        "refused": refused,
        "exact_mean_age": [r[1] for r in rows],
        "dp_mean_age": [r[2] for r in rows],
        "llc_accuracy": llc_acc,
        "llc_epsilon_spent": llc.epsilon_spent_,
        "llc_delta_spent": llc.delta_spent_,
        "llc_predicted_class": predicted,
        "llc_top_features": [enc_train.feature_names[j] for j in top],
        "llc_std": explanation.std,
        "lime_epsilon": float(dp.epsilon[0]),
        "lime_epsilon_spent": explainer.epsilon_spent_,
        "lime_top_agreement": agree,
        "lime_top_features": [enc_train.feature_names[j] for j in lime_top],
        "lime_top_values": dp_values[lime_top],
        "lime_top_std": std[lime_top],
        "lime_top_distinguishable": above[lime_top],
        "lime_n_distinguishable": n_above,
        "dpc_valid": bool(cf.valid[k]),
        "dpc_epsilon_spent": dpc.epsilon_spent_,
        "dpc_changes": _change_records(dpc_changes),
        "recourse_success": bool(paths.success[pick]),
        "recourse_path": path,
        "recourse_changes": _change_records(rec_changes),
        "recourse_epsilon_spent": rec.epsilon_spent_,
        "recourse_model_class_at_end": (
            rec.estimator_.predict(paths.counterfactual_records.iloc[[pick]])[0]
            if paths.success[pick] else None),
    }


def _print_changes(print_, changes):
    """The rows of a ``changes()`` table: ``feature: from -> to (change)``."""
    for feature, before, after, change in zip(changes["feature"], changes["from"],
                                              changes["to"], changes["change"]):
        delta = "" if not np.isfinite(change) else f"  ({change:+,.0f})"
        print_(f"  {feature:<16} {_show(before):>20} -> {_show(after)}{delta}")


def _show(value):
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):,.0f}"
    return str(value)


def _change_records(changes):
    """A changes() table as JSON-able records (one dict per changed column)."""
    return [{"feature": str(f), "from": _plain_cell(a), "to": _plain_cell(b),
             "change": None if not np.isfinite(c) else float(c)}
            for f, a, b, c in zip(changes["feature"], changes["from"], changes["to"],
                                  changes["change"])]


def _plain_cell(value):
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="skdpx", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="run the demo on the bundled Adult data")
    p_demo.add_argument("--epsilon", type=float, default=5.0,
                        help="the whole demo's budget: the cap of the one ledger of the "
                             "private rows; each of the five DP sections gets a fifth")
    p_demo.add_argument("--delta", type=float, default=1e-5,
                        help="the delta of the cap; each section is calibrated at it")
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
