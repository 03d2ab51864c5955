"""The reference implementations tests check figures against (scikit-learn, statsmodels), imported on first call.

Importing scikit-learn and statsmodels at the top of a test module cost every run's collection several seconds of
CPU per process (they pull in scipy and pandas), and most runs select none of those tests. Same names and
signatures as the libraries' own.
"""

from __future__ import annotations

from typing import Any


def accuracy_score(*args: Any, **kwargs: Any) -> Any:
    from sklearn.metrics import accuracy_score

    return accuracy_score(*args, **kwargs)


def auc(*args: Any, **kwargs: Any) -> Any:
    from sklearn.metrics import auc

    return auc(*args, **kwargs)


def brier_score_loss(*args: Any, **kwargs: Any) -> Any:
    from sklearn.metrics import brier_score_loss

    return brier_score_loss(*args, **kwargs)


def calibration_curve(*args: Any, **kwargs: Any) -> Any:
    from sklearn.calibration import calibration_curve

    return calibration_curve(*args, **kwargs)


def cohen_kappa_score(*args: Any, **kwargs: Any) -> Any:
    from sklearn.metrics import cohen_kappa_score

    return cohen_kappa_score(*args, **kwargs)


def confusion_matrix(*args: Any, **kwargs: Any) -> Any:
    from sklearn.metrics import confusion_matrix

    return confusion_matrix(*args, **kwargs)


def multipletests(*args: Any, **kwargs: Any) -> Any:
    """statsmodels' own, without the full garbage collection it runs on every call.

    That ``gc.collect()`` walks the whole heap of the test process: a fifth of a second a call once the suite is
    collected (more after hundreds of tests), nearly all of a Holm check's time; it frees memory and touches no
    figure.
    """
    from unittest import mock

    from statsmodels.stats.multitest import multipletests

    with mock.patch("gc.collect", return_value=0):
        return multipletests(*args, **kwargs)
