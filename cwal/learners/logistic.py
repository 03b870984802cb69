"""Logistic online updates for sequences: C-SPV, L-SPV and MEC (the logistic paper §2;
algorithms.md §2, last paragraph). The update rules live in ``_logistic`` (numba).

Each sentence updates ``w += sum_j alpha_j (Phi(x, y_0) - Phi(x, y_j))`` against its ``k`` best
wrong labelings (k-best Viterbi under the current weights, gold excluded; default k = 5), with the
alpha_j found by ``steps`` projected gradient steps on a soft-max objective over gold and those
competitors; the cost c(y_j) is the Hamming distance to gold. ``c`` is the paper's trade-off gamma
and ``prior`` is ``gaussian`` (gamma-weighted squares of alpha) or ``laplacian`` (absolute values).
Averaging, prediction and model files are the shared ones of ``SequenceLearner``.

[ours] ``metric="arow"`` takes the inner products of the update in AROW's diagonal covariance S
(``M[j, k] = Delta_j' S Delta_k``, ``dw = sum_j alpha_j S Delta_j``; the paper's objective is
written over inner products only, so this is the same update under another kernel) and then
shrinks S as AROW does along every Delta_j with alpha_j > 0 (``r``, ``projection``,
``init_variance`` as AROW's). Features seen in many updates get small variances and so small
steps, the per-feature annealing that plain first-order updates lack. ``metric="identity"`` is
the paper's update (S never changes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from cwal.features import Encoded
from cwal.learners import _logistic as LK
from cwal.learners._kernels import PROJ_KL, PROJ_L2
from cwal.learners.base import SequenceLearner

PRIORS = {"gaussian": LK.GAUSSIAN, "laplacian": LK.LAPLACIAN}
METRICS = {"identity": LK.IDENTITY, "arow": LK.AROW_METRIC}
DEFAULT_K = 5
DEFAULT_STEPS = 10


class LogisticLearner(SequenceLearner):
    """A ``SequenceLearner`` whose update is a logistic (soft-max) step over the N best labelings.

    ``c`` is gamma (> 0; larger = smaller steps), ``k`` the number N of competing labelings,
    ``prior`` ``gaussian`` or ``laplacian``, ``steps`` the projected gradient steps per update.
    ``mistake_driven`` skips sentences Viterbi already labels right (off by default: the soft-max
    loss is never exactly 0, so right but unsure predictions still update). ``metric`` is
    ``identity`` (the paper's update) or ``arow`` (inner products in AROW's diagonal covariance,
    which the update then shrinks with AROW's ``r``; see the module docstring).

    [ours] gamma is the shared ``c`` parameter (so ``--set c=...`` tunes it as for PA and AROW);
    ``projection`` and ``init_variance`` act only with ``metric="arow"``; CW's ``eta`` and
    ``form`` are accepted and ignored, as for the perceptron and PA.
    """

    rule: ClassVar[int] = LK.C_SPV
    # Scores are log-odds of the soft-max the update fits, so the N-best soft-max confidence
    # (cwal.confidence, "nbest-softmax") uses them unscaled.
    softmax_scale: ClassVar[float] = 1.0

    def __init__(
        self,
        labels: Sequence[str] = (),
        template: str = "chunk",
        *,
        prior: str = "gaussian",
        steps: int = DEFAULT_STEPS,
        metric: str = "identity",
        r: float = 1.0,
        **params: Any,
    ) -> None:
        if prior not in PRIORS:
            raise ValueError(f"prior must be one of {sorted(PRIORS)}, not {prior!r}")
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {sorted(METRICS)}, not {metric!r}")
        if int(steps) < 1:
            raise ValueError(f"steps must be at least 1, not {steps}")
        if not float(r) > 0:
            raise ValueError(f"r must be positive, not {r}")
        params.pop("algorithm", None)
        params.setdefault("k", DEFAULT_K)
        # the base class validates the shared parameters; its own kernel is never called
        super().__init__(labels, template, algorithm="perceptron", **params)
        self.params.update(
            algorithm=self.name, prior=prior, steps=int(steps), metric=metric, r=float(r)
        )
        # with the AROW metric the covariance is a real one (KD-PC, precision-weighted shards)
        self.has_covariance = metric == "arow"

    def _epoch(self, order: np.ndarray, enc: Encoded, gold: np.ndarray) -> tuple[float, int]:
        """The logistic epoch kernel (``_logistic.logistic_epoch``) in place of the base one."""
        p = self.params
        return LK.logistic_epoch(
            order, enc.feat_ids, enc.tok_offsets, enc.sent_offsets, gold,
            self.W_, self.A_, self.SW_, self.SA_, self.UW_, self.UA_, self.count_,
            self.rule, PRIORS[p["prior"]], p["c"], p["k"], p["steps"], p["mistake_driven"],
            METRICS[p["metric"]], p["r"], PROJ_L2 if p["projection"] == "l2" else PROJ_KL,
        )  # fmt: skip


class CSPV(LogisticLearner):
    """C-SPV: scaled prior variance with the prior weight of competitor j ``gamma / c(y_j)``
    (costlier competitors get a looser prior, so a larger alpha)."""

    name = "c-spv"
    rule = LK.C_SPV


class LSPV(LogisticLearner):
    """L-SPV: prior weight ``gamma / (max(0, f_j - f_0) + c(y_j))``, the loss (score error plus
    cost) of competitor j: high-scoring costly competitors get the most freedom."""

    name = "l-spv"
    rule = LK.L_SPV


class MEC(LogisticLearner):
    """MEC: minimum expected cost, ``log(1 + E[c]) + gamma sum_j alpha_j^2`` under the soft-max
    over gold and the competitors (``gamma sum_j |alpha_j|`` with the Laplacian prior)."""

    name = "mec"
    rule = LK.MEC
