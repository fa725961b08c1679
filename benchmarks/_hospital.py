"""The "Hospital" benchmark of Yang et al. (2022): Diabetes 130-US hospitals (UCI).

Data
    UCI Machine Learning Repository, "Diabetes 130-US Hospitals for Years 1999-2008"
    (dataset id 296, https://doi.org/10.24432/C5230J, CC BY 4.0; Clore, Cios, DeShazo & Strack,
    2014; paper: Strack et al., BioMed Research International 2014, 781670). One row per inpatient
    encounter of a diabetic patient (101,766 rows). Read from ``diabetic_data.csv.gz`` in
    ``../shared/data/diabetes130`` (override with ``data_dir`` or ``SKDPX_HOSPITAL_DIR``); see the
    README.md there. Not bundled with skdpx.

Target
    ``readmitted``: 1 if the patient was readmitted at all (``"<30"`` or ``">30"`` days), 0 if
    ``"NO"``. About 46 % positive.

Features (41 columns, all in [0, 1])
    * 8 integer counts, clipped to a fixed range and min-max scaled with it;
    * ``age`` as the ordinal of its 10-year bracket ``[0-10)`` ... ``[90-100)`` (0..9), divided by 9;
    * one-hot ``race``, ``gender``, ``admission_type_id``, ``change``, ``diabetesMed``,
      ``A1Cresult``, ``max_glu_serum`` and ``insulin`` over category lists written below. A missing
      (``?``) or unlisted value is all zeros for that feature.

Bounds are public
    ``bounds`` is (zeros, ones): every range and every category list is a constant of this module,
    taken from the dataset's schema (UCI variable table, ``IDs_mapping.csv``), never computed from
    the rows, so it costs no privacy budget. Values outside a range are clipped to it.
    ``time_in_hospital`` is 1..14 days by the dataset's inclusion criterion; the other count ranges
    (``NUMERIC_RANGES``) are round numbers chosen in advance, not read from the rows (values above
    them are clipped).

Split
    The rows are encounters; a patient may have several. The split is a seeded stratified split of
    the rows, as in the paper, so a patient can be on both sides (the test rows are used as
    queries, not to measure generalisation).
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.utils import Bunch

HOSPITAL_DIR = Path(os.environ.get(
    "SKDPX_HOSPITAL_DIR",
    Path(__file__).resolve().parents[2] / "shared" / "data" / "diabetes130"))
FILENAME = "diabetic_data.csv.gz"

#: Integer columns and their fixed (public) clipping range [low, high]: the
#: documented inclusion rule for time_in_hospital (1 to 14 days), round
#: ranges chosen in advance for the counts (never read from the data).
NUMERIC_RANGES = {
    "time_in_hospital": (1, 14),
    "num_lab_procedures": (0, 150),
    "num_procedures": (0, 10),
    "num_medications": (0, 100),
    "number_outpatient": (0, 50),
    "number_emergency": (0, 100),
    "number_inpatient": (0, 25),
    "number_diagnoses": (0, 20),
}

#: The 10 age brackets of the schema, in order (ordinal 0..9).
AGE_BRACKETS = [f"[{10 * i}-{10 * (i + 1)})" for i in range(10)]

#: Categorical columns and their fixed category list (``?`` = missing -> all zeros).
CATEGORIES = {
    "race": ["Caucasian", "AfricanAmerican", "Hispanic", "Asian", "Other"],
    "gender": ["Female", "Male", "Unknown/Invalid"],
    # IDs_mapping.csv: 1 Emergency, 2 Urgent, 3 Elective, 4 Newborn, 5 Not Available,
    # 6 NULL, 7 Trauma Center, 8 Not Mapped.
    "admission_type_id": ["1", "2", "3", "4", "5", "6", "7", "8"],
    "change": ["No", "Ch"],
    "diabetesMed": ["No", "Yes"],
    "A1Cresult": ["None", "Norm", ">7", ">8"],
    "max_glu_serum": ["None", "Norm", ">200", ">300"],
    "insulin": ["No", "Down", "Steady", "Up"],
}

TARGET = "readmitted"
POSITIVE = ("<30", ">30")

FEATURE_NAMES = (
    list(NUMERIC_RANGES) + ["age"]
    + [f"{col}={cat}" for col, cats in CATEGORIES.items() for cat in cats])

#: Public bounds of every output column.
BOUNDS = (np.zeros(len(FEATURE_NAMES)), np.ones(len(FEATURE_NAMES)))


def _read(path):
    # keep_default_na=False / na_filter=False: the literal "None" of A1Cresult and max_glu_serum
    # ("test not performed") is a category, not NaN. "?" (missing) stays the string "?".
    cols = list(NUMERIC_RANGES) + ["age"] + list(CATEGORIES) + [TARGET]
    return pd.read_csv(path, usecols=cols, dtype=str, keep_default_na=False, na_filter=False)


def _encode(df):
    n = len(df)
    blocks = []
    for col, (lo, hi) in NUMERIC_RANGES.items():
        v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
        v = np.nan_to_num(v, nan=lo)  # not expected (no "?" in these columns): map to low end
        blocks.append(((np.clip(v, lo, hi) - lo) / (hi - lo))[:, None])
    age = pd.Categorical(df["age"], categories=AGE_BRACKETS).codes.astype(np.float64)
    age[age < 0] = 0.0  # unknown bracket (not expected)
    blocks.append((age / (len(AGE_BRACKETS) - 1))[:, None])
    for col, cats in CATEGORIES.items():
        codes = pd.Categorical(df[col].str.strip(), categories=cats).codes  # -1 if unseen / "?"
        onehot = np.zeros((n, len(cats)))
        seen = codes >= 0
        onehot[np.flatnonzero(seen), codes[seen]] = 1.0
        blocks.append(onehot)
    X = np.hstack(blocks)
    y = df[TARGET].isin(POSITIVE).to_numpy().astype(np.int64)
    return X, y


def load_hospital(*, test_size=0.2, random_state=0, data_dir=None):
    """Load the Hospital (Diabetes 130-US) readmission benchmark.

    Returns a :class:`~sklearn.utils.Bunch` with ``data``, ``target`` (training split),
    ``data_test``, ``target_test``, ``feature_names`` and ``bounds`` = (lower, upper) arrays of
    public per-column bounds (all zeros / ones). The split is stratified on the target and seeded
    by ``random_state``.
    """
    path = Path(data_dir if data_dir is not None else HOSPITAL_DIR) / FILENAME
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found; pass data_dir or set SKDPX_HOSPITAL_DIR to the folder of {FILENAME}.")
    X, y = _encode(_read(path))
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, random_state=random_state, stratify=y)
    return Bunch(
        data=X_train, target=y_train, data_test=X_test, target_test=y_test,
        feature_names=list(FEATURE_NAMES), bounds=(BOUNDS[0].copy(), BOUNDS[1].copy()))
