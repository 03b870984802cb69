"""Chunk precision, recall and F1 computed the way conlleval computes them.

The chunk start/end rules are those of conlleval.pl (CoNLL-2000, Tjong Kim Sang) with the
BIOES extension that later versions of the script and seqeval's default mode use:

* a tag is split at its first ``-`` into a prefix and a type (``"B-NP"`` -> ``("B", "NP")``,
  ``"O"`` -> ``("O", "")``);
* a chunk ends after ``E``, ``S``, ``[`` or ``]``; after ``B``/``I`` when ``B``, ``S`` or ``O``
  follows; and after any prefix but ``O``/``.`` when the type changes;
* a chunk starts at ``B``, ``S``, ``[`` or ``]``; at ``I``/``E`` after ``O``, ``E`` or ``S``
  (so ``I-`` after ``O`` opens a chunk, IOB1 style); and at any prefix but ``O``/``.`` whose
  type differs from the previous token's.

Every sentence is closed by a boundary token tagged ``O``, as conlleval does at blank lines.
A chunk is correct when gold and prediction start it at the same token with the same type and
end it at the same token with the same type (conlleval's ``inCorrect`` state machine).
Zero denominators give 0.0, never NaN.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas loads only where a table is made (not on the training path)
    import pandas as pd


_CLOSING = frozenset({"E", "S", "[", "]"})
_OPEN_BEFORE_INSIDE = frozenset({"E", "S", "O"})
_ALWAYS_START = frozenset({"B", "S", "[", "]"})
_OUTSIDE = frozenset({"O", "."})


@dataclass(frozen=True)
class Report:
    """Chunk scores of one evaluation; fractions in [0, 1] (format_report prints percentages).

    ``per_type`` maps a chunk type to ``precision, recall, f1, support`` (gold chunks),
    ``predicted`` and ``correct``; ``counts`` holds ``tokens, correct_tokens, gold_chunks,
    predicted_chunks, correct_chunks``.
    """

    precision: float
    recall: float
    f1: float
    token_accuracy: float
    per_type: dict[str, dict[str, float]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def split_tag(tag: str) -> tuple[str, str]:
    """Split a tag into (prefix, type) at its first hyphen; a tag without one has type ``""``."""
    prefix, _, kind = tag.partition("-")
    return prefix, kind


def end_of_chunk(prev_tag: str, tag: str, prev_type: str, kind: str) -> bool:
    """True when a chunk ended between the previous token and this one (conlleval rules)."""
    if prev_tag in _CLOSING:
        return True
    if prev_tag in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev_tag not in _OUTSIDE and prev_type != kind


def start_of_chunk(prev_tag: str, tag: str, prev_type: str, kind: str) -> bool:
    """True when a chunk starts at this token (conlleval rules)."""
    if tag in _ALWAYS_START:
        return True
    if tag in ("I", "E") and prev_tag in _OPEN_BEFORE_INSIDE:
        return True
    return tag not in _OUTSIDE and prev_type != kind


def _tokens(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]
) -> Iterator[tuple[str, str, bool]]:
    """Yield (gold tag, predicted tag, is_real_token), an ``O`` boundary after each sentence."""
    if len(gold) != len(pred):
        raise ValueError(f"gold has {len(gold)} sentences but pred has {len(pred)}")
    for i, (g_sent, p_sent) in enumerate(zip(gold, pred, strict=True)):
        if isinstance(g_sent, str) or isinstance(p_sent, str):
            raise ValueError("gold and pred must be lists of sentences (lists of tags)")
        if len(g_sent) != len(p_sent):
            raise ValueError(
                f"sentence {i}: gold has {len(g_sent)} tags but pred has {len(p_sent)}"
            )
        for g, p in zip(g_sent, p_sent, strict=True):
            yield g, p, True
        yield "O", "O", False


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else 0.0


def _f1(precision: float, recall: float) -> float:
    return _ratio(2 * precision * recall, precision + recall)


def chunk_f1(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> Report:
    """Score predicted tag sequences against gold ones at the chunk level, as conlleval does.

    ``gold`` and ``pred`` are lists of sentences, each a list of tags of equal length.
    Raises ValueError when the sentence counts or a sentence's lengths differ.
    """
    found_gold: Counter[str] = Counter()
    found_pred: Counter[str] = Counter()
    correct_chunks: Counter[str] = Counter()
    tokens = correct_tokens = 0
    in_correct = False
    last_g, last_g_type, last_p, last_p_type = "O", "", "O", ""
    for g_full, p_full, real in _tokens(gold, pred):
        g, g_type = split_tag(g_full)
        p, p_type = split_tag(p_full)
        end_g = end_of_chunk(last_g, g, last_g_type, g_type)
        end_p = end_of_chunk(last_p, p, last_p_type, p_type)
        start_g = start_of_chunk(last_g, g, last_g_type, g_type)
        start_p = start_of_chunk(last_p, p, last_p_type, p_type)
        if in_correct:
            if end_g and end_p and last_g_type == last_p_type:
                in_correct = False
                correct_chunks[last_g_type] += 1
            elif end_g != end_p or g_type != p_type:
                in_correct = False
        if start_g and start_p and g_type == p_type:
            in_correct = True
        if start_g:
            found_gold[g_type] += 1
        if start_p:
            found_pred[p_type] += 1
        if real:
            tokens += 1
            correct_tokens += (g, g_type) == (p, p_type)
        last_g, last_g_type, last_p, last_p_type = g, g_type, p, p_type
    # Every sentence ends with a boundary token, which closes any open correct chunk, so
    # in_correct is always False here (conlleval's final check is kept implicit).

    per_type: dict[str, dict[str, float]] = {}
    for kind in sorted(set(found_gold) | set(found_pred)):
        p_k = _ratio(correct_chunks[kind], found_pred[kind])
        r_k = _ratio(correct_chunks[kind], found_gold[kind])
        per_type[kind] = {
            "precision": p_k,
            "recall": r_k,
            "f1": _f1(p_k, r_k),
            "support": found_gold[kind],
            "predicted": found_pred[kind],
            "correct": correct_chunks[kind],
        }
    n_gold, n_pred = sum(found_gold.values()), sum(found_pred.values())
    n_correct = sum(correct_chunks.values())
    precision, recall = _ratio(n_correct, n_pred), _ratio(n_correct, n_gold)
    return Report(
        precision=precision,
        recall=recall,
        f1=_f1(precision, recall),
        token_accuracy=_ratio(correct_tokens, tokens),
        per_type=per_type,
        counts={
            "tokens": tokens,
            "correct_tokens": correct_tokens,
            "gold_chunks": n_gold,
            "predicted_chunks": n_pred,
            "correct_chunks": n_correct,
        },
    )


REPORT_COLUMNS = ["precision", "recall", "f1", "support", "predicted", "correct"]


def report_table(report: Report, overall: bool = True) -> pd.DataFrame:
    """One row per chunk type (index ``type``, sorted), plus an ``overall`` row when asked.

    Columns: precision, recall, f1 (fractions), support (gold chunks), predicted, correct.
    """
    rows = [{"type": kind, **scores} for kind, scores in report.per_type.items()]
    if overall:
        rows.append(
            {
                "type": "overall",
                "precision": report.precision,
                "recall": report.recall,
                "f1": report.f1,
                "support": report.counts.get("gold_chunks", 0),
                "predicted": report.counts.get("predicted_chunks", 0),
                "correct": report.counts.get("correct_chunks", 0),
            }
        )
    import pandas as pd

    table = pd.DataFrame(rows, columns=["type", *REPORT_COLUMNS]).set_index("type")
    return table.astype({"support": "int64", "predicted": "int64", "correct": "int64"})


def format_report(report: Report) -> str:
    """The report as conlleval prints it: a summary line, overall scores, one line per type."""
    c = report.counts
    lines = [
        f"processed {c.get('tokens', 0)} tokens with {c.get('gold_chunks', 0)} phrases; "
        f"found: {c.get('predicted_chunks', 0)} phrases; correct: {c.get('correct_chunks', 0)}.",
        f"accuracy: {100 * report.token_accuracy:6.2f}%; "
        f"precision: {100 * report.precision:6.2f}%; "
        f"recall: {100 * report.recall:6.2f}%; "
        f"FB1: {100 * report.f1:6.2f}",
    ]
    for kind, s in report.per_type.items():
        lines.append(
            f"{kind:>17}: precision: {100 * s['precision']:6.2f}%; "
            f"recall: {100 * s['recall']:6.2f}%; "
            f"FB1: {100 * s['f1']:6.2f}  {int(s['predicted'])}"
        )
    return "\n".join(lines) + "\n"
