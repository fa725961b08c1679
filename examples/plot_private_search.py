"""
=======================================================
Tuning a DP classifier privately, and its epsilon curve
=======================================================

scikit-learn's ``GridSearchCV`` over a differentially private (DP) model
records every fit, but its validation scores and the choice made from them
are exact releases of the private rows. This example tunes
:class:`~skdpx.DPLocallyLinearClassifier` on the Adult census data with
:class:`~skdpx.model_selection.DPGridSearchCV`, whose search (fits, DP
scores, private selection, refit) fits in one budget, then draws a
privacy-utility curve with
:func:`~skdpx.model_selection.privacy_utility_curve`, whose every point is
paid for. See ``doc/model_selection.rst`` for why and how.
"""

# %%
# The private rows and their ledger
# ---------------------------------
# Adult's training file plays the private dataset: one ledger holds its whole
# budget. The test file is used only at the end, to report test accuracy (and,
# once, as public validation rows: a public sample of the same population).
import warnings

import matplotlib.pyplot as plt
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from skdpx import DPLocallyLinearClassifier
from skdpx.datasets import encode_adult, load_adult
from skdpx.model_selection import DPGridSearchCV, price_search, privacy_utility_curve
from skdpx.privacy import PrivacyLedger

train, test = load_adult(subset="train"), load_adult(subset="test")
X, X_test = encode_adult(train.data).data, encode_adult(test.data).data  # public bounds [0, 1]
y, y_test = train.target, test.target
ledger = PrivacyLedger(epsilon=12.0, delta=1e-5)
clf = DPLocallyLinearClassifier(bounds=(0, 1), classes=[0, 1], batch_size=None, epochs=40,
                                accountant=ledger)
grid = {"learning_rate": [0.3, 1.0, 3.0], "n_maps": [1, 2]}

# %%
# What plain GridSearchCV would cost
# ----------------------------------
# Six candidates, five folds, each fit at epsilon 1, plus the refit: 31 fits.
# ``price_search`` composes them before anything runs: each fit's own DP count
# of its rows (the number of rows is private), then the rest of the fit at its
# cap, since it is planned from that count. Their scores and the choice are
# not in the price: they are exact, not DP at any epsilon.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # price_search warns that the scores are exact
    price = price_search(GridSearchCV(clone(clf).set_params(epsilon=1.0), grid, cv=5), X, y)
print(f"GridSearchCV: {price.n_fits} fits, epsilon={price.epsilon:.2f} at "
      f"delta={price.delta:.2g} for the fits alone")

# %%
# A private grid search at a total epsilon of 2
# ---------------------------------------------
# ``price`` splits the budget before anything is read: a DP count of the rows
# (the number of rows is private: ``fit`` releases it first and plans from it;
# ``price`` plans at a count we give, Adult's published size), each run's fit,
# its DP score, the selection by random stopping and the refit. The number of
# runs is random (often small): a mean of twice the grid's size makes it
# likelier that the best candidate is tried, for little more cost per run.
search = DPGridSearchCV(clf, grid, n_iter=12, epsilon=2.0, delta=1e-5, accountant=ledger)
plan = search.price(X, y, n_rows=32_561)
print(f"planned: epsilon={plan.epsilon:.3f} in all; each run's fit at epsilon "
      f"{plan.candidate_epsilon:.3f}, about {plan.mean_runs:g} runs on average; the refit "
      f"at epsilon {plan.refit_epsilon:g}")
search.fit(X, y)
print(f"selected {search.best_params_}; DP validation accuracy "
      f"{search.best_score_:.3f}; test accuracy {(search.predict(X_test) == y_test).mean():.3f}")
print(f"ledger: epsilon={ledger.epsilon_spent:.3f} spent in {len(ledger)} entries "
      "(the search's row count, then the rest of the search)")

# %%
# The privacy-utility curve
# -------------------------
# The selected candidate, fitted at seven epsilons. Without public rows each
# point is fitted on a private training part and gets a DP score on a private
# holdout (drawn by the privacy core); the sweep releases one DP count of the
# rows and gives each point's fit 95% of its epsilon, as a fit at that epsilon
# spends after its own count; the whole sweep is priced and checked
# against the ledger before the first fit. With public validation rows (here
# Adult's test file stands in for a public sample) the scores are exact and
# free: only the fits are charged.
best = clone(clf).set_params(**search.best_params_)
epsilons = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0]
dp_curve = privacy_utility_curve(best, X, y, epsilons=epsilons, accountant=ledger)
public_curve = privacy_utility_curve(best, X, y, epsilons=epsilons, X_val=X_test,
                                     y_val=y_test, scoring="accuracy", accountant=ledger)
print(dp_curve.to_frame().round(4).to_string(index=False))
print(f"DP holdout sweep: epsilon={dp_curve.total_epsilon:.2f} at delta={dp_curve.total_delta:g}")
print(public_curve.to_frame().round(4).to_string(index=False))
print(f"public validation sweep: epsilon={public_curve.total_epsilon:.2f} at "
      f"delta={public_curve.total_delta:g}")

fig, ax = plt.subplots(figsize=(6.4, 4.2))
dp_curve.plot(ax=ax, label=f"DP scores on a private holdout (sweep: epsilon="
                           f"{dp_curve.total_epsilon:.2f})")
public_curve.plot(ax=ax, label=f"exact scores on public rows (sweep: epsilon="
                               f"{public_curve.total_epsilon:.2f})")
ax.set_title(f"DPLocallyLinearClassifier on Adult; ledger: epsilon="
             f"{ledger.epsilon_spent:.2f} spent in all", fontsize="medium")
ax.set_ylabel("accuracy")
fig.tight_layout()
plt.show()

# %%
# Every point, and the search, is in the ledger
for label, _ in ledger.events:
    print(label)
print(f"total: epsilon={ledger.epsilon_spent:.2f} at delta={ledger.delta_spent:g}")
