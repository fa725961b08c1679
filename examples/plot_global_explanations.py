"""
======================================================================
Global explanations of a black box on Adult, all on one privacy ledger
======================================================================

Which features drive this model, and how? A model-risk team asks that
first, and the usual answers read private rows and release exact averages
over them: scikit-learn's partial dependence averages the model's output
over a dataset, and a global SHAP or LIME summary averages many local
explanations computed on one. Here every release about the private rows
goes through the privacy core and is paid from one
:class:`~skdpx.privacy.PrivacyLedger`:

* a DP partial dependence (:func:`skdpx.inspection.partial_dependence`,
  drawn by :class:`~skdpx.inspection.PartialDependenceDisplay` with the
  noise's error bands): how the model's output moves with one feature;
* DP local explanations of 50 applicants
  (:class:`~skdpx.DPLimeExplainer`), summarised into a global view
  (:meth:`FeatureAttribution.global_importance
  <skdpx.FeatureAttribution.global_importance>`, the mean absolute
  attribution per column with its uncertainty) and a beeswarm plot
  (:meth:`FeatureAttribution.plot_beeswarm
  <skdpx.FeatureAttribution.plot_beeswarm>`). The summaries are
  post-processing of the released answers: they cost nothing more;
* a DP permutation importance (:func:`skdpx.inspection.permutation_importance`):
  how much the model's accuracy on the private rows drops when a feature is
  replaced by draws from its DP marginal;
* SHAP values with a DP background (:class:`~skdpx.DPShapExplainer`): a
  released weighted summary of the private rows, after which every SHAP
  value is free.
"""

# %%
# The black box and the private rows
# ----------------------------------
# The guarantee covers the private rows only if the black box does not depend
# on them, so the gradient-boosting model is trained on Adult's bundled test
# file, and the private rows are 16,000 rows of its training file. The bounds
# and categories come from :func:`~skdpx.datasets.adult_schema` (public
# sources, never the rows). The 50 applicants explained are further rows of
# the test file: public queries, not private rows.
import warnings

import matplotlib.pyplot as plt
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OrdinalEncoder

from skdpx import DPLimeExplainer, DPShapExplainer
from skdpx.datasets import adult_schema, load_adult
from skdpx.exceptions import PrivacyLeakWarning
from skdpx.inspection import PartialDependenceDisplay, permutation_importance
from skdpx.privacy import PrivacyLedger

# The seeds make this page reproducible, but a seeded release is not private
# (whoever knows the seed can remove the noise): skdpx warns about it, and only
# that warning is silenced here. Leave random_state=None for a real release.
warnings.filterwarnings("ignore", message="random_state=", category=PrivacyLeakWarning)

schema = adult_schema()
X_train, y_train = load_adult(subset="train", return_X_y=True, as_frame=True)
X_test, y_test = load_adult(subset="test", return_X_y=True, as_frame=True)
X_private = X_train[schema.features].iloc[:16_000]  # the protected rows
y_private = y_train.iloc[:16_000]  # their labels (for the permutation importance)
X_model, y_model = X_test[schema.features], y_test

categorical = list(schema.categories)
black_box = make_pipeline(
    make_column_transformer(
        (OrdinalEncoder(categories=[schema.categories[c] for c in categorical],
                        handle_unknown="use_encoded_value", unknown_value=-1), categorical),
        remainder="passthrough"),
    HistGradientBoostingClassifier(max_iter=50, categorical_features=list(range(len(categorical))),
                                   random_state=0)).fit(X_model, y_model)
queries = X_model.sample(50, random_state=1)  # public applicants to explain

# %%
# One budget for everything
# -------------------------
# The ledger holds the private rows' budget: every release below spends from
# it, composed tightly (privacy loss distributions), and one that would pass
# the cap is refused before the rows are read.
ledger = PrivacyLedger(epsilon=4.0, delta=2e-5)

# %%
# DP partial dependence, with error bands
# ---------------------------------------
# Two features, one release each at epsilon 0.25 (the grid from the
# declared bounds and levels). The band is the noise's 90% interval: it
# says how far the noise may have moved each point, not how the model would
# behave on other rows.
display = PartialDependenceDisplay.from_estimator(
    black_box, X_private, ["age", "education"], epsilon=0.25, delta=1e-6,
    bounds=schema.bounds, categories=schema.categories, grid_resolution=8,
    accountant=ledger, random_state=0)
display.figure_.set_size_inches(10, 4.2)
plt.setp(display.axes_.ravel()[1].get_xticklabels(), rotation=45, ha="right")
display.figure_.suptitle("DP partial dependence of P(>50K), epsilon 0.25 each, 90% noise bands")
display.figure_.tight_layout()
print(f"after the partial dependence: epsilon {ledger.epsilon_spent:.2f} spent")

# %%
# DP local explanations of 50 applicants
# --------------------------------------
# :class:`~skdpx.DPLimeExplainer` answers each query with a DP local linear
# model (strategy ``"basic"``: each answer carries ``std``, its noise's
# standard deviation). Each answer is calibrated for ``epsilon_per_query``;
# the ledger composes the 50 of them.
explainer = DPLimeExplainer(
    black_box, epsilon=2.5, delta=5e-6, epsilon_per_query=0.25, max_iter=100,
    bounds=schema.bounds, categories=schema.categories, accountant=ledger,
    random_state=0).fit(X_private)
local = explainer.explain(queries)
print(f"{len(local)} answers, phases {sorted(set(local.phase))}; "
      f"epsilon {ledger.epsilon_spent:.2f} spent in all")

# %%
# The global view: mean absolute attribution per column, with its uncertainty
# ---------------------------------------------------------------------------
# ``global_importance`` averages the absolute attributions per original
# column (scaled by each column's public range; a categorical column is the
# spread of its levels' values). The noise biases that mean upwards, so the
# table gives, next to it, the level the noise alone would give
# (``noise_level``), what the noise supports (``supported``: the mean
# stands above ``noise_floor``), a folded-normal ``debiased`` mean and two
# intervals: ``rows_low``-``rows_high`` for these 50 applicants (noise
# only), ``low``-``high`` for the population the applicants were drawn from
# (sampling and noise).
#
# In this run (epsilon 0.25 per answer, 16,000 rows) four columns stand above
# their noise floor: education-num, marital-status, age and hours-per-week.
# Ranked by the raw mean, as an exact summary would be, the categorical
# columns would come first (occupation second, native-country fifth): a
# spread over many levels is large from noise alone (41 levels for
# native-country). Against their noise floors most of them are flagged, and
# native-country ranks last.
summary = local.global_importance()
print(summary.to_frame()[["importance", "noise_level", "debiased", "low", "high",
                          "supported"]].round(3))

fig, ax = plt.subplots(figsize=(7, 4.5))
summary.plot(ax=ax)
fig.tight_layout()

# %%
# The beeswarm: every applicant's attribution
# -------------------------------------------
# One dot per applicant, one line per column, ordered by the global view's
# ranking (by what the noise supports). A numeric column's dots are coloured
# by the applicant's value of it; a categorical column's spreads are grey.
# Dots within their own noise floor are faded; the shaded band is the median
# applicant's floor.
ax = local.plot_beeswarm(queries, top_k=10)
ax.figure.set_size_inches(8, 6)
ax.figure.tight_layout()

# %%
# DP permutation importance
# -------------------------
# The drop in accuracy on the private rows when one column of every row is
# replaced by a draw from that column's DP marginal (not a permutation of the
# private rows: one added row would move every other row's replacement). One
# Gaussian release at epsilon 0.5 of the baseline and the replaced scores'
# sums over a DP row count; ``noise_std`` is the score release's noise in
# each mean (the error bars: a lower bound, since the DP marginal's own noise
# also moves the importances), ``importances_std`` the spread over repeats.
result = permutation_importance(
    black_box, X_private, y_private, n_repeats=3, epsilon=0.5, delta=5e-6,
    bounds=schema.bounds, categories=schema.categories, accountant=ledger, random_state=0)
order = result.importances_mean.argsort()
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.barh([result.feature_names[i] for i in order], result.importances_mean[order],
        xerr=1.645 * result.noise_std[order], color="tab:blue", alpha=0.8)
ax.set_xlabel("drop in accuracy (90% interval of the score release's noise)")
ax.set_title("DP permutation importance, epsilon 0.5")
fig.tight_layout()

# %%
# SHAP values with a DP background
# --------------------------------
# :class:`~skdpx.DPShapExplainer` releases a weighted DP summary of the
# private rows (20 DP clusters' counts and per-column histograms, epsilon
# 0.5, and records drawn from them) and computes Kernel SHAP values over the
# original columns against it; every SHAP value after that is
# post-processing: 10 applicants explained for nothing more. Their ``std``
# is the background noise's effect (its coverage on Adult: see
# :ref:`shap`). The same global view summarises them.
shap_explainer = DPShapExplainer(
    black_box, n_background=20, epsilon=0.5, delta=5e-6, bounds=schema.bounds,
    categories=schema.categories, accountant=ledger, random_state=0).fit(X_private)
shap_values = shap_explainer.explain(queries.dropna().iloc[:10])
print(shap_values.global_importance().to_frame()[["importance", "noise_level",
                                                   "supported"]].round(3))
ax = shap_values.plot_beeswarm(queries.dropna().iloc[:10], top_k=10)
ax.figure.set_size_inches(8, 6)
ax.figure.tight_layout()

# %%
# What was spent
# --------------
# Two partial dependences, 50 local answers, a permutation importance and a
# SHAP background, all about the same 16,000 rows, composed on one ledger.
# The global views, the beeswarms and the SHAP values were free.
print(f"total: epsilon {ledger.epsilon_spent:.3f} of {ledger.epsilon:g}, "
      f"delta {ledger.delta_spent:.2g}, in {len(ledger.events)} recorded releases")
plt.show()
