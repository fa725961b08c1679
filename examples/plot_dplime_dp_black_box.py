"""
A DP black box and its DP explanations on the same rows, in one ledger
======================================================================

``DPLimeExplainer``'s guarantee covers the explanation rows when the black
box does not depend on them. One way is a black box trained on other rows
(the README's example). The other, shown here, is a black box that is itself
differentially private with respect to the same rows and spends from the
same ``PrivacyLedger``: a ``DPLocallyLinearClassifier`` trained by DP-SGD on
Adult's training split, explained by ``DPLimeExplainer`` over the same rows.
The explainer is DP for every fixed black box, so the model and the answers
are two DP releases of the rows, composed in the ledger (tightly, with
privacy loss distributions), and the ledger's cap bounds them together.

The script prints the ledger's releases, each estimator's own spend and the
ledger's total: less than the sum of the parts.
"""

import argparse

from skdpx import DPLimeExplainer, DPLocallyLinearClassifier
from skdpx.datasets import encode_adult, load_adult
from skdpx.privacy import PrivacyLedger


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--seed", type=int, default=None,
                        help="reproducible noise (not private); default: secure noise")
    args = parser.parse_args(argv)

    train, test = load_adult(subset="train"), load_adult(subset="test")
    enc, enc_test = encode_adult(train.data), encode_adult(test.data)
    X, y = enc.data, train.target

    ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)  # the budget of Adult's training rows
    black_box = DPLocallyLinearClassifier(epsilon=1.0, delta=1e-5, bounds=enc.bounds,
                                          accountant=ledger, random_state=args.seed).fit(X, y)
    explainer = DPLimeExplainer(black_box, epsilon=1.0, delta=1e-5, epsilon_per_query=0.5,
                                max_iter=100, bounds=enc.bounds, accountant=ledger,
                                random_state=args.seed).fit(X)  # the same rows
    result = explainer.explain(enc_test.data[:3])  # three test applicants (public queries)

    print(f"black box: DPLocallyLinearClassifier, test accuracy "
          f"{black_box.score(enc_test.data, test.target):.4f}")
    print(f"answers: {result.phase.tolist()}")
    print("the ledger's releases:")
    for label, event in ledger.events:
        print(f"  - {label}: {type(event).__name__}")
    own = black_box.epsilon_spent_, explainer.epsilon_spent_
    print(f"epsilon spent at delta {ledger.delta_spent:g}: black box {own[0]:.3f}, explainer "
          f"{own[1]:.3f} (sum {sum(own):.3f}); the ledger's total, composed: "
          f"{ledger.epsilon_spent:.3f} of its cap {ledger.epsilon:g}")


if __name__ == "__main__":
    main()
