"""The gallery's order: the ledger first, then one example per method, then tuning and attacks.

sphinx-gallery takes this class by name (``"gallery_order.ExampleOrder"`` in conf.py), so
the configuration stays picklable. An example not listed goes last, by file name.
"""

ORDER = [
    "plot_privacy_ledger.py",
    "plot_locally_linear_digits.py",
    "plot_dplime_adult.py",
    "plot_dplime_dp_black_box.py",
    "plot_global_explanations.py",
    "plot_counterfactuals_digits.py",
    "plot_recourse_adult.py",
    "plot_private_search.py",
    "plot_membership_attack.py",
]


class ExampleOrder:
    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        name = str(filename).rsplit("/", 1)[-1]
        return (ORDER.index(name), "") if name in ORDER else (len(ORDER), name)

    def __repr__(self):
        return "ExampleOrder"
