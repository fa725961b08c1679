"""
=====================================================
Membership inference against recourse, with canaries
=====================================================

A recourse method publishes the points its paths go through. When those
points are computed from private rows without noise, they can give the rows
away: an attacker who checks whether a released node sits on top of a
person's record learns whether that person was in the data. This example
plants canaries (records unlike any other) in Adult's rows, fits
:class:`~skdpx.PrivRecourse` with and without differential privacy, and
attacks it with :func:`~skdpx.attacks.membership_inference`. See
:ref:`attacks` for the attacks, the figures and the benchmark over
every method (``benchmarks/attacks.py``).
"""

# %%
# Private rows, a black box, and canaries
# ---------------------------------------
# The black box is trained on rows disjoint from the private ones (PrivRecourse's
# guarantee is about its own fit rows). Each canary has every numeric feature at
# an end of its public range and a random level of every categorical feature:
# nobody in the data looks like it. Each joins the private rows by a fair coin,
# which is what makes the attack's epsilon lower bound valid on one fit.
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier

from skdpx import PrivRecourse
from skdpx.attacks import membership_inference
from skdpx.datasets import encode_adult, load_adult
from skdpx.exceptions import PrivacyLeakWarning, UncappedBudgetWarning

# The seeds make this page reproducible, but a seeded release is not private
# (whoever knows the seed can remove the noise): skdpx warns about it, and that
# warning is silenced here. So is the warning that each fit below has a fresh,
# uncapped ledger: the three fits are alternative releases of the same rows,
# made to compare epsilons in an audit, not releases to publish together
# (together they would cost their composition).
warnings.filterwarnings("ignore", message="random_state=", category=PrivacyLeakWarning)
warnings.filterwarnings("ignore", category=UncappedBudgetWarning)

rng = np.random.RandomState(0)
train = load_adult(subset="train")
encoded = encode_adult(train.data)
X, y = encoded.data, np.asarray(train.target)  # public bounds [0, 1]
perm = rng.permutation(len(X))
private, model_rows = perm[:1000], perm[1000:3000]
black_box = RandomForestClassifier(n_estimators=100, min_samples_leaf=2, random_state=0)
black_box.fit(X[model_rows], y[model_rows])

columns = list(encoded.columns.values())
numeric = [c[0] for c in columns if len(c) == 1]
blocks = [c for c in columns if len(c) > 1]
n_canaries = 200
canaries = np.zeros((n_canaries, X.shape[1]))
canaries[:, numeric] = rng.randint(2, size=(n_canaries, len(numeric)))
for block in blocks:
    canaries[np.arange(n_canaries), np.asarray(block)[rng.randint(len(block), size=n_canaries)]] = 1
canary_labels = rng.randint(2, size=n_canaries)
member = rng.uniform(size=n_canaries) < 0.5
X_fit = np.vstack([X[private], canaries[member]])
y_fit = np.r_[y[private], canary_labels[member]]
print(f"{len(X_fit)} private rows, of which {member.sum()} canaries; "
      f"{(~member).sum()} canaries left out")

# %%
# The attack
# ----------
# ``signal="recourse_distance"`` scores a candidate by how close it is to the
# nearest released recourse node (PrivRecourse's ``cluster_centers_``): close
# means "member". The same code at ``epsilon=np.inf`` is the non-private
# counterpart.
results = {}
for epsilon in (np.inf, 4.0, 1.0):
    recourse = PrivRecourse(black_box, epsilon=epsilon, bounds=(0, 1), random_state=0)
    recourse.fit(X_fit, y_fit)
    results[epsilon] = membership_inference(
        recourse, canaries[member], canary_labels[member],
        canaries[~member], canary_labels[~member], signal="recourse_distance")

table = pd.DataFrame({
    "epsilon": [str(e) for e in results],
    "AUC": [r.auc for r in results.values()],
    "TPR at 1% FPR": [r.tpr_at_fpr(0.01) for r in results.values()],
    "epsilon lower bound": [r.epsilon_lower_bound(delta=1e-5) for r in results.values()],
}).round(3)
print(table.to_string(index=False))

# %%
# Without noise, the centres sit on the canaries that were in the data: the
# attack finds many of them with no false positive at all, and its lower bound
# on epsilon is well above 0, so no small epsilon could be claimed for that
# release. With DP, the centres are noisy sums over many rows and too few to
# spend one on an outlier: the attack is back to a coin, and its lower bound
# stays below the epsilon claimed. (The bound can never exceed
# ``max_epsilon_lower_bound()``, about 2.6 with 200 canaries: they cannot
# refute a claim larger than that.)
fig, ax = plt.subplots(figsize=(5, 5))
for epsilon, result in results.items():
    result.plot(ax=ax, label=f"epsilon={epsilon:g} (AUC {result.auc:.2f})")
ax.set_title("Membership of canaries from recourse nodes")
plt.show()
