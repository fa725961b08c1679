"""scikit-learn's common checks over every estimator, with the per-class table."""

import pytest
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from ._estimators import TEST_TABLE, estimator_classes, make_estimator
from skdpx.utils.discovery import all_estimators

ESTIMATORS = [make_estimator(cls) for cls in estimator_classes()]


def test_every_estimator_has_test_parameters():
    missing = [name for name, cls in all_estimators() if cls not in TEST_TABLE]
    assert not missing, f"add these estimators to tests/_estimators.py: {missing}"


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_check_param_validation(estimator):
    check_param_validation(type(estimator).__name__, estimator)
