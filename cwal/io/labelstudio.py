"""Label Studio JSON (https://labelstud.io/guide/export#Label-Studio-JSON-format-of-annotated-tasks).

A file is a JSON array of tasks (or one task): ``{"data": {"text": ...}, "annotations": [{"result":
[{"value": {"start", "end", "text", "labels": [TYPE]}, "from_name", "to_name", "type": "labels"}]}],
"predictions": [...]}``. The labels are those of the task's last annotation that was not
cancelled; a task without one is unlabeled (predictions are a model's guesses, not labels). The
JSON-MIN export (``{"text", "label": [{"start", "end", "labels"}]}``) reads too. The text is
tokenized by syntok, cut at every span boundary.

Written tasks hold the sentence's text and, in ``data.offsets``, its tokens (Label Studio shows
only ``text``; reading the file back keeps the tokens); tags go to ``annotations``, or, when the sentence has a
per-token ``confidence`` column (model output), to ``predictions`` with a ``score`` per span (its
tokens' lowest confidence) and per task (the mean), ready to pre-annotate a Label Studio project.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from cwal.io.conll import TagRules, tagged_reader
from cwal.io.sentence import Sentence
from cwal.io.source import MAX_LINE, PathLike, Source, iter_lines, open_text
from cwal.io.spanjsonl import labeled_sentence
from cwal.io.spans import CONFIDENCE, OFFSETS, TEXT, char_spans, layout

FROM_NAME, TO_NAME = "label", "text"


def _text_of(task: dict) -> str | None:
    data = task.get("data")
    if isinstance(data, dict):
        if isinstance(data.get("text"), str):
            return data["text"]
        return next((v for v in data.values() if isinstance(v, str)), None)
    return task.get("text") if isinstance(task.get("text"), str) else None


def _results(task: dict) -> list[dict] | None:
    """The result list that holds the task's labels, or None when it has none."""
    done = [
        a
        for a in task.get("annotations") or task.get("completions") or []
        if isinstance(a, dict) and not a.get("was_cancelled")
    ]
    if done:
        return [r for r in done[-1].get("result") or [] if isinstance(r, dict)]
    if isinstance(task.get("label"), list):  # JSON-MIN
        return [{"value": item, "type": "labels"} for item in task["label"]]
    return None


@tagged_reader
def read_labelstudio(
    source: Source, rules: TagRules, scheme: str | None, encoding: str, max_line: int
) -> Iterator[Sentence]:
    """Stream the tasks of a Label Studio export as sentences; errors name the task's line."""
    for line, task in json_tasks(source, encoding, max_line):
        text = _text_of(task)
        if text is None:
            raise source.error(line, 'a task without text (expected "data": {"text": ...})')
        results = _results(task)
        spans = None
        if results is not None:
            spans = []
            for k, r in enumerate(results):
                value = r.get("value") or {}
                labels = value.get("labels") or value.get("hypertextlabels")
                if r.get("type") not in (None, "labels", "hypertextlabels") or not labels:
                    continue
                start, end = value.get("start"), value.get("end")
                if not (isinstance(start, int) and isinstance(end, int)):
                    raise source.error(line, f"result {k} needs integer start and end offsets")
                spans.append((start, end, str(labels[0])))
        data = task.get("data") if isinstance(task.get("data"), dict) else {}
        meta = {k: v for k, v in data.items() if k not in ("text", OFFSETS)}
        meta.update({k: v for k, v in task.items() if k in ("id", "meta")})
        pieces = _pieces(text, data.get(OFFSETS))
        yield labeled_sentence(source, line, text, pieces, spans, meta, scheme or "IOB2", rules)


def _pieces(text: str, offsets: Any) -> list[tuple[str, int, int]] | None:
    """The tokens cwal wrote into ``data.offsets``, when they still fit the text."""
    if not isinstance(offsets, list) or not offsets:
        return None
    ok = all(
        isinstance(o, list) and len(o) == 2 and all(isinstance(x, int) for x in o) for o in offsets
    )
    if not ok or any(not 0 <= s < e <= len(text) for s, e in offsets):
        return None
    return [(text[s:e], s, e) for s, e in offsets]


def json_tasks(
    source: Source, encoding: str = "utf-8", max_line: int = MAX_LINE
) -> Iterator[tuple[int, dict]]:
    """``(line, task)`` for each object of a JSON array (or the one top-level object)."""
    lines = [text for _, text in iter_lines(source, encoding, max_line)]
    text = "\n".join(lines)
    decoder = json.JSONDecoder()
    pos = _skip(text, 0)
    try:
        if text.startswith("{", pos):
            obj, _ = decoder.raw_decode(text, pos)
            yield text.count("\n", 0, pos) + 1, obj
            return
        if not text.startswith("[", pos):
            raise source.error(text.count("\n", 0, pos) + 1, "expected a JSON array of tasks")
        pos = _skip(text, pos + 1)
        line, last = 1, 0
        while not text.startswith("]", pos):
            line += text.count("\n", last, pos)
            last = pos
            obj, pos = decoder.raw_decode(text, pos)
            if not isinstance(obj, dict):
                raise source.error(line, f"a task must be a JSON object, not {type(obj).__name__}")
            yield line, obj
            pos = _skip(text, pos)
            if text.startswith(",", pos):
                pos = _skip(text, pos + 1)
            elif not text.startswith("]", pos):
                raise source.error(text.count("\n", 0, pos) + 1, "expected ',' or ']'")
    except json.JSONDecodeError as exc:
        raise source.error(exc.lineno, f"bad JSON: {exc.msg} at column {exc.colno}") from None


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def labelstudio_task(sent: Sentence, index: int, scheme: str | None = None) -> dict[str, Any]:
    """The Label Studio task of one sentence."""
    text, offsets = layout(sent)
    conf = sent.columns.get(CONFIDENCE)
    data = {"text": text, **{k: v for k, v in sent.meta.items() if k not in (TEXT, OFFSETS)}}
    data[OFFSETS] = [list(o) for o in offsets]  # cwal's tokens, read back by read_labelstudio
    task: dict[str, Any] = {"id": index + 1, "data": data}
    if sent.tags is None:
        return task
    result = []
    for n, (s, e, label, a, b) in enumerate(char_spans(sent, scheme)):
        item: dict[str, Any] = {
            "id": f"s{index + 1}-{n + 1}",
            "from_name": FROM_NAME,
            "to_name": TO_NAME,
            "type": "labels",
            "value": {"start": s, "end": e, "text": text[s:e], "labels": [label]},
        }
        if conf is not None:
            item["score"] = min(float(c) for c in conf[a:b])
        result.append(item)
    if conf is None:
        task["annotations"] = [{"result": result}]
    else:
        score = sum(float(c) for c in conf) / len(conf)
        task["predictions"] = [{"model_version": "cwal", "score": score, "result": result}]
    return task


def write_labelstudio(
    sentences: Iterable[Sentence], dest: PathLike | TextIO, scheme: str | None = None
) -> int:
    """Write a JSON array of tasks, one per sentence, streamed; returns the number written."""
    return write_json_array(sentences, dest, lambda s, k: labelstudio_task(s, k, scheme))


def write_json_array(
    sentences: Iterable[Sentence],
    dest: PathLike | TextIO,
    make: Callable[[Sentence, int], dict[str, Any]],
) -> int:
    """Write ``make(sentence, index)`` of each sentence as one element of a JSON array, one
    element a line, streamed; returns the number written."""
    count = 0
    with open_text(dest) as out:
        out.write("[")
        for sent in sentences:
            out.write(",\n" if count else "\n")
            out.write(json.dumps(make(sent, count), ensure_ascii=False))
            count += 1
        out.write("\n]\n")
    return count
