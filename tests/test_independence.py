"""A DP black box on the explanation data: its spend and the explainer's compose in one ledger.

DPLimeExplainer's guarantee covers the explanation rows when the black box
does not depend on them. The documented alternative to a black box trained
on other rows is a DP black box trained on the same rows and accounted in
the same PrivacyLedger: the explainer is DP for every fixed black box, so
the two releases compose (doc/dplime.rst, "Black-box independence").
"""

import numpy as np
import pytest

from skdpx import DPLimeExplainer, DPLocallyLinearClassifier
from skdpx.privacy import ComposedDpEvent, PrivacyLedger, compute_epsilon

pytestmark = pytest.mark.filterwarnings("ignore::skdpx.exceptions.PrivacyLeakWarning")

DELTA = 1e-5


@pytest.fixture(scope="module")
def rows():
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(2000, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    return X, y


def _fit_both(X, y, ledger, *, explainer_epsilon=1.0):
    # full batches (sample rate 1): Gaussian events, composed exactly and fast
    clf = DPLocallyLinearClassifier(epsilon=1.0, delta=DELTA, batch_size=None, epochs=20,
                                    learning_rate=1.0, bounds=(0, 1), accountant=ledger,
                                    random_state=0).fit(X, y)
    explainer = DPLimeExplainer(clf, epsilon=explainer_epsilon, delta=DELTA,
                                epsilon_per_query=0.5, max_iter=20, bounds=(0, 1),
                                accountant=ledger, random_state=0).fit(X)
    return clf, explainer


def test_a_dp_black_box_and_its_explainer_compose_in_one_ledger(rows):
    X, y = rows
    ledger = PrivacyLedger(epsilon=3.0, delta=DELTA)  # the budget of X's rows
    clf, explainer = _fit_both(X, y, ledger)
    result = explainer.explain(X[:2])
    assert (result.phase == "interactive").all()
    # the shared ledger holds both estimators' spends, and nothing else
    own = [event for _, event in clf.ledger_.events + explainer.ledger_.events]
    assert len(ledger) == len(own) and len(clf.ledger_.events) and len(explainer.ledger_.events)
    # its total is their tight composition: below the sum of the parts
    composed = compute_epsilon(ComposedDpEvent(own), DELTA)
    assert ledger.epsilon_spent == pytest.approx(composed, rel=1e-9)
    parts = (clf.epsilon_spent_, explainer.epsilon_spent_)
    assert max(parts) < ledger.epsilon_spent < sum(parts)


def test_the_shared_cap_stops_the_explainer_its_own_cap_would_not(rows):
    X, y = rows
    ledger = PrivacyLedger(epsilon=1.3, delta=DELTA)
    clf, explainer = _fit_both(X, y, ledger, explainer_epsilon=5.0)
    # one query at a time: each answer is checked against what the ones before spent
    phases = [explainer.explain(x[None]).phase[0] for x in X[:6]]
    # the classifier's spend leaves room for a few answers only: the rest go
    # non-interactive (free), although the explainer's own cap had room for them
    assert phases.count("interactive") >= 1 and phases[-1] == "noninteractive"
    assert explainer.epsilon_spent_ < 2.0
    assert ledger.epsilon_spent <= 1.3 * (1 + 1e-9)
