"""
=====================================================================
DP local explanations of a black box on Adult, next to the exact ones
=====================================================================

LIME-style explanations fit a local linear model around a query, weighting
a dataset of rows by their closeness to it. When those rows are private, the
explanation leaks them. :class:`~skdpx.DPLimeExplainer` answers each query
with a differentially private local model instead: noisy gradient steps on
the local loss, each answer paid from a budget. The answers are DP with
respect to the *explanation rows*, the dataset given to ``fit``.

This example explains a random forest's decisions for three Adult applicants
and sets each DP explanation next to the exact, non-private optimum of the
same local loss.
"""

# %%
# The black box and the private explanation rows
# ----------------------------------------------
# The guarantee covers the explanation rows only if the black box does not
# depend on them. So the random forest is trained on half of Adult's bundled
# test file, and the explanation rows are the 32,561 rows of the training
# file: disjoint. The three applicants explained (the queries) come from the
# other half of the test file: public queries, not private rows.
# ``encode_adult`` one-hot encodes the categories and scales every numeric
# column to [0, 1] by public bounds from the dataset's schema, not from the
# data.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import RandomForestClassifier

from skdpx import DPLimeExplainer
from skdpx.datasets import encode_adult, load_adult
from skdpx.exceptions import PrivacyLeakWarning
from skdpx.metrics import optimal_explanation
from skdpx.privacy import PrivacyLedger

# The seeds make this page reproducible, but a seeded release is not private
# (whoever knows the seed can remove the noise): skdpx warns about it, and only
# that warning is silenced here. Leave random_state=None for a real release.
warnings.filterwarnings("ignore", message="random_state=", category=PrivacyLeakWarning)

train, test = load_adult(subset="train"), load_adult(subset="test")
enc, enc_test = encode_adult(train.data), encode_adult(test.data)
X = enc.data  # the private explanation rows
half = len(enc_test.data) // 2
black_box = RandomForestClassifier(n_estimators=200, n_jobs=2, random_state=0)
black_box.fit(enc_test.data[half:], test.target[half:])  # disjoint from X
queries = enc_test.data[:3]  # from the half the black box did not see
print(f"{len(X)} private explanation rows, {X.shape[1]} encoded features; "
      f"black box trained on {len(enc_test.data) - half} other rows")

# %%
# Three DP answers from one budget
# --------------------------------
# The explanation rows get a budget of (epsilon=3, delta=1e-6), held by a
# :class:`~skdpx.privacy.PrivacyLedger`. Each answer is calibrated for
# epsilon 1 (``epsilon_per_query``) and takes 300 noisy gradient steps. The
# ledger composes the three answers tightly (with privacy loss
# distributions): each answer alone is (1, delta)-DP, and together they cost
# less than 3 x 1, the basic composition's sum.
ledger = PrivacyLedger(epsilon=3.0, delta=1e-6)
explainer = DPLimeExplainer(black_box, epsilon=3.0, delta=1e-6, epsilon_per_query=1.0,
                            max_iter=300, bounds=enc.bounds, accountant=ledger,
                            random_state=0)
dp = explainer.fit(X).explain(queries)
print("epsilon of each answer alone:", np.round(dp.epsilon, 3).tolist())
print(f"ledger: epsilon={ledger.epsilon_spent:.3f} of {ledger.epsilon:g} spent at "
      f"delta={ledger.delta_spent:g}")

# %%
# The exact explanations, for comparison only
# -------------------------------------------
# :func:`~skdpx.metrics.optimal_explanation` solves the same local loss
# exactly. It reads the private rows with no noise, so it is not something to
# publish: it is here to show how far the DP answers are from what they
# estimate. The labels are 2 P(>50K) - 1, so the exact weights are halved to
# be in units of P(>50K), as the DP answers are.
labels = 2 * black_box.predict_proba(X)[:, 1] - 1
exact, _ = optimal_explanation(queries, X, labels)
exact = exact / 2

# %%
# The figure
# ----------
# Each panel is one applicant: the 10 features with the largest exact
# weights, a weight being the change in P(>50K) per unit of the feature
# scaled to [0, 1] (for a one-hot column: being in that category). Grey:
# exact, non-private; blue: DP. In this run, at epsilon 1 per answer on
# 32,561 rows, the DP weights have the exact weights' signs and are close to
# their sizes; with fewer rows or a smaller epsilon the noise grows.
names = np.array(enc.feature_names)
fig, axes = plt.subplots(1, len(queries), figsize=(14, 4.2), sharex=True)
for ax, z, dp_row, exact_row, eps in zip(axes, queries, dp.values, exact, dp.epsilon):
    top = np.argsort(-np.abs(exact_row))[:10][::-1]
    rows = np.arange(len(top))
    ax.barh(rows + 0.2, exact_row[top], height=0.4, color="0.6", label="exact (non-private)")
    ax.barh(rows - 0.2, dp_row[top], height=0.4, color="tab:blue", label="DP")
    ax.set_yticks(rows, names[top], fontsize=7)
    ax.axvline(0, color="k", linewidth=0.5)
    p = black_box.predict_proba(z[None])[0, 1]
    ax.set_title(f"P(>50K) = {p:.2f}; answer at epsilon {eps:.2f}", fontsize=8)
axes[-1].legend(fontsize=7, loc="lower left")
fig.suptitle(f"DPLimeExplainer on Adult: three answers, epsilon "
             f"{explainer.epsilon_spent_:.2f} in all (delta 1e-6)")
fig.tight_layout()
plt.show()
