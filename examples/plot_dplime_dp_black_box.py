"""
======================================================================
A DP black box and its DP explanations on the same rows, in one ledger
======================================================================

:class:`~skdpx.DPLimeExplainer`'s guarantee covers the explanation rows when
the black box does not depend on them. One way is a black box trained on
other rows (:ref:`sphx_glr_auto_examples_plot_dplime_adult.py`). The
other, shown here, is a black box that is itself differentially private
with respect to the same rows, and spends from the same :class:`~skdpx.privacy.PrivacyLedger`: a
:class:`~skdpx.DPLocallyLinearClassifier` trained by DP-SGD on Adult's
training file, explained by ``DPLimeExplainer`` over the same rows.

The explainer is DP for every fixed black box, so the model and the answers
are two DP releases about the same rows. The ledger composes them (tightly,
with privacy loss distributions) and its cap bounds them together.
"""

# %%
# One budget for Adult's training rows
# ------------------------------------
# The ledger's cap, (epsilon=2, delta=1e-5), is everything that may ever be
# learned about these 32,561 rows: every estimator that reads them is given
# this ledger as its ``accountant`` and records its spend there before it
# reads them. An estimator whose spend would pass the cap raises
# ``BudgetError`` before it reads anything.
import warnings

import matplotlib.pyplot as plt
from sklearn.metrics import accuracy_score

from skdpx import DPLimeExplainer, DPLocallyLinearClassifier
from skdpx.datasets import encode_adult, load_adult
from skdpx.exceptions import PrivacyLeakWarning
from skdpx.privacy import PrivacyLedger

# The seeds make this page reproducible, but a seeded release is not private
# (whoever knows the seed can remove the noise): skdpx warns about it, and only
# that warning is silenced here. Leave random_state=None for a real release.
warnings.filterwarnings("ignore", message="random_state=", category=PrivacyLeakWarning)

train, test = load_adult(subset="train"), load_adult(subset="test")
enc, enc_test = encode_adult(train.data), encode_adult(test.data)
X, y = enc.data, train.target
ledger = PrivacyLedger(epsilon=2.0, delta=1e-5)

# %%
# The DP black box: epsilon 1
# ---------------------------
# DP-SGD with the default settings (20 epochs), at (epsilon=1, delta=1e-5).
# Its test accuracy is measured on Adult's test file (public here).
black_box = DPLocallyLinearClassifier(epsilon=1.0, delta=1e-5, bounds=enc.bounds,
                                      classes=[0, 1], accountant=ledger, random_state=0)
black_box.fit(X, y)
print(f"black box: test accuracy "
      f"{accuracy_score(test.target, black_box.predict(enc_test.data)):.4f}; "
      f"ledger: epsilon={ledger.epsilon_spent:.3f} spent")

# %%
# DP explanations over the same rows: epsilon 1 at most
# -----------------------------------------------------
# The explainer may spend epsilon 1 in all, 0.5 per answer (100 noisy
# gradient steps each). It explains three test applicants: public queries.
# Each answer's ``phase`` says how it was made: "interactive" is computed
# from the private rows and paid for; a query the explainer's budget can no
# longer pay for gets a free "noninteractive" answer from the past ones, and
# a query asked again is "reused", also free.
explainer = DPLimeExplainer(black_box, epsilon=1.0, delta=1e-5, epsilon_per_query=0.5,
                            max_iter=100, bounds=enc.bounds, accountant=ledger,
                            random_state=0)
explainer.fit(X)  # the same rows the black box was trained on
result = explainer.explain(enc_test.data[:3])
print(f"answers (phase of each): {result.phase.tolist()}")

# %%
# What the ledger holds
# ---------------------
# Two releases, each with its own spend. Composed, they cost less than the
# sum of the two: privacy loss distributions compose more tightly than adding
# epsilons. The total is what the guarantee says about these rows: the
# model and the three explanations together are (epsilon, delta)-DP with the
# figures printed last.
for label, event in ledger.events:
    print(f"- {label}: {type(event).__name__}")
own = black_box.epsilon_spent_, explainer.epsilon_spent_
print(f"epsilon at delta {ledger.delta_spent:g}: black box {own[0]:.3f}, explainer "
      f"{own[1]:.3f} (sum {sum(own):.3f}); composed in the ledger: "
      f"{ledger.epsilon_spent:.3f} of its cap {ledger.epsilon:g}")

fig, ax = plt.subplots(figsize=(5.5, 2.8))
bars = {"black box": own[0], "explainer": own[1], "sum": sum(own),
        "ledger (composed)": ledger.epsilon_spent}
ax.barh(list(bars), list(bars.values()),
        color=["tab:blue", "tab:orange", "0.6", "tab:green"])
ax.axvline(ledger.epsilon, color="k", linestyle="--", linewidth=1, label="the ledger's cap")
ax.set_xlim(0, 1.1 * ledger.epsilon)
ax.invert_yaxis()
ax.set_xlabel(f"epsilon at delta = {ledger.delta_spent:g}")
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()
