"""Where a warning points: the first line outside skdpx and scikit-learn."""

import os
import sys

__all__ = ["_outside_stacklevel"]


def _outside_stacklevel():
    """The stacklevel of the first caller outside skdpx and scikit-learn (the user's line)."""
    import sklearn

    inside = tuple(os.path.dirname(m.__file__) + os.sep for m in (sys.modules["skdpx"], sklearn))
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level
