"""Imports are all or nothing, refuse duplicates, report progress and reject malformed files."""

from __future__ import annotations

import codecs
import gzip
import json
from pathlib import Path

import pytest

from cwal.errors import CorpusError
from db.imports import add_files, import_bytes, import_file
from db.repository import (
    DuplicateImportError,
    InvalidValueError,
    count_sentences,
    create_project,
    current_annotations,
    list_import_batches,
    list_sentences,
    update_project_settings,
)

VALID_CONLL = "v1 DT B-NP\nv2 NN I-NP\n\nv3 VBZ B-VP\n\n"  # 5 lines: two sentences
VALID_JSONL = '{"tokens": ["v1", "v2"], "tags": ["B-NP", "I-NP"]}\n'  # 1 line

# (case, file name, content, line of the defect). Each file starts with valid sentences so that a
# partial import (chunk_size=1 flushes them before the defect is read) would show.
MALFORMED: list[tuple[str, str, bytes, int]] = [
    ("wrong column count", "a.conll", (VALID_CONLL + "x DT B-NP\ny NN\n").encode(), 7),
    ("wrong column count, tab-separated", "a.conll", (VALID_CONLL + "x\tDT\n").encode(), 6),
    ("empty token (line starts with a tab)", "a.conll", (VALID_CONLL + "\tDT O\n").encode(), 6),
    ("empty token in JSONL", "a.jsonl", (VALID_JSONL + '{"tokens": ["a", ""]}\n').encode(), 2),
    ("tag outside the tag set", "a.conll", (VALID_CONLL + "x DT B-XX\n").encode(), 6),
    ("I- without B- under strict IOB2", "a.conll", (VALID_CONLL + "x DT O\ny NN I-NP\n").encode(), 7),
    ("I- without B- in JSONL", "a.jsonl", (VALID_JSONL + '{"tokens":["a"],"tags":["I-NP"]}\n').encode(), 2),
    ("invalid UTF-8 in JSONL", "a.jsonl", VALID_JSONL.encode() + b'{"tokens": ["caf\xe9"]}\n', 2),
    ("UTF-16 with its BOM", "a.conll", (VALID_CONLL).encode("utf-16"), 1),
    ("UTF-8 BOM inside the file", "a.conll", (VALID_CONLL + "\ufeffx DT B-NP\n").encode(), 6),
    ("NUL byte in a line", "a.conll", VALID_CONLL.encode() + b"x\x00 DT B-NP\n", 6),
    ("binary file (PNG)", "a.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", 1),
    ("binary file (gzip)", "a.conll", gzip.compress(VALID_CONLL.encode()), 1),
    ("empty file", "a.conll", b"", 1),
    ("only blank lines", "a.conll", b"\n\n\n", 3),
    ("10 MB single line", "a.conll", VALID_CONLL.encode() + b"x" * (10 << 20) + b"\n", 6),
    ("bad JSON", "a.jsonl", (VALID_JSONL + '{"tokens": ["a"\n').encode(), 2),
    ("JSON array instead of object", "a.jsonl", (VALID_JSONL + '["a", "b"]\n').encode(), 2),
    ("tokens not strings", "a.jsonl", (VALID_JSONL + '{"tokens": [1, 2]}\n').encode(), 2),
    ("tags/tokens length mismatch", "a.jsonl", (VALID_JSONL + '{"tokens":["a"],"tags":["O","O"]}\n').encode(), 2),
    ("missing tokens key", "a.jsonl", (VALID_JSONL + '{"words": ["a"]}\n').encode(), 2),
]  # fmt: skip


def test_malformed_corpus_has_enough_cases():
    assert len({case for case, *_ in MALFORMED}) >= 15


@pytest.mark.parametrize(
    ("case", "name", "content", "line"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_malformed_file_is_rejected_with_its_line_and_changes_nothing(
    engine, project, corpus, snapshot, tmp_path: Path, case, name, content, line
):
    import_file(engine, project, corpus(4))  # earlier data that must survive untouched
    before = snapshot(engine)
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(CorpusError) as info:
        import_file(engine, project, path, chunk_size=1)
    assert info.value.line == line, str(info.value)
    assert info.value.path == str(path)
    assert snapshot(engine) == before
    # the refused bytes are not remembered as imported either
    with pytest.raises(CorpusError):
        import_bytes(engine, project, content, name, chunk_size=1)
    assert snapshot(engine) == before


def test_conll_import_stores_tokens_columns_gold_and_lines(engine, project, tmp_path: Path):
    path = tmp_path / "train.conll"
    path.write_text("-DOCSTART- -X- O\n\nHe PRP B-NP\nruns VBZ B-VP\n\n\nIt PRP B-NP\n\n")
    result = import_file(engine, project, path, split="eval")
    assert (result.n_sentences, result.n_tokens, result.format) == (2, 3, "conll")
    stored = list_sentences(engine, project)
    assert [s.tokens for s in stored] == [["He", "runs"], ["It"]]
    assert [s.gold_tags for s in stored] == [["B-NP", "B-VP"], ["B-NP"]]
    assert [s.columns for s in stored] == [{"pos": ["PRP", "VBZ"]}, {"pos": ["PRP"]}]
    assert [s.line for s in stored] == [3, 7]
    assert [(s.document, s.position, s.split) for s in stored] == [
        ("train.conll", 0, "eval"),
        ("train.conll", 1, "eval"),
    ]
    assert count_sentences(engine, project, "pool") == 0
    assert stored[0].to_sentence().pos == ["PRP", "VBZ"]


def test_jsonl_and_text_imports(engine, project, tmp_path: Path):
    jl = tmp_path / "x.jsonl"
    jl.write_text(json.dumps({"tokens": ["a", "b"], "pos": ["X", "Y"], "id": 7}) + "\n")
    txt = tmp_path / "x.txt"
    txt.write_text("one two three\n\nfour\n")
    assert import_file(engine, project, jl).format == "jsonl"
    assert import_file(engine, project, txt).format == "text"
    stored = list_sentences(engine, project)
    assert [s.tokens for s in stored] == [["a", "b"], ["one", "two", "three"], ["four"]]
    assert stored[0].columns == {"pos": ["X", "Y"]} and stored[0].meta == {"id": 7}
    assert all(s.gold_tags is None for s in stored)


def test_latin1_conll_is_decoded(engine, project, tmp_path: Path):
    path = tmp_path / "es.conll"
    path.write_bytes("Espa\u00f1a NP B-NP\n\n".encode("latin-1"))
    import_file(engine, project, path)
    assert list_sentences(engine, project)[0].tokens == ["Espa\u00f1a"]


def test_utf8_bom_at_start_is_dropped_not_stored(engine, project, tmp_path: Path):
    path = tmp_path / "bom.conll"
    path.write_bytes(codecs.BOM_UTF8 + b"Hi UH B-NP\n\n")
    import_file(engine, project, path)
    assert list_sentences(engine, project)[0].tokens == ["Hi"]


def test_second_import_of_same_content_is_refused(engine, project, corpus, snapshot, tmp_path):
    path = corpus(3)
    first = import_file(engine, project, path)
    before = snapshot(engine)
    copy = tmp_path / "renamed.conll"
    copy.write_bytes(path.read_bytes())
    for again in (path, copy):
        with pytest.raises(DuplicateImportError) as info:
            import_file(engine, project, again)
        assert info.value.batch_id == first.batch_id
    with pytest.raises(DuplicateImportError):
        import_bytes(engine, project, path.read_bytes(), "upload.conll")
    assert snapshot(engine) == before
    other = create_project(engine, "other")
    assert import_file(engine, other, path).n_sentences == 3  # another project may have it
    assert [b.content_hash for b in list_import_batches(engine, project)] == [first.content_hash]


def test_progress_reports_until_the_end(engine, project, corpus):
    seen = []
    import_file(engine, project, corpus(1000), progress=seen.append, chunk_size=100, batch_ms=0)
    assert [p.sentences for p in seen] == list(range(100, 1001, 100))
    assert all(a.line < b.line for a, b in zip(seen, seen[1:], strict=False))
    assert seen[-1].fraction == pytest.approx(1.0, abs=0.01)
    assert 0.05 < seen[0].fraction < 0.15


def test_raising_from_progress_cancels_the_import(engine, project, corpus, snapshot):
    before = snapshot(engine)

    def cancel(progress):
        if progress.sentences >= 200:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_file(engine, project, corpus(1000), progress=cancel, chunk_size=100)
    assert snapshot(engine) == before


def test_add_files_is_all_or_nothing(engine, project, corpus, snapshot, tmp_path):
    good = corpus(5, "good.conll")
    bad = tmp_path / "bad.conll"
    bad.write_text("x DT B-NP\ny NN\n")
    before = snapshot(engine)
    with pytest.raises(CorpusError) as info:
        add_files(engine, project, [good, bad])
    assert info.value.line == 2
    assert snapshot(engine) == before
    results = add_files(engine, project, [good, corpus(2, "more.conll", start=100)])
    assert [r.n_sentences for r in results] == [5, 2]
    assert count_sentences(engine, project) == 7


def test_tags_can_be_imported_as_annotations(engine, project, people, corpus):
    with pytest.raises(InvalidValueError):
        import_file(engine, project, corpus(2), tags_as="annotations")
    result = import_file(
        engine, project, corpus(4), tags_as="annotations", annotator_id=people["lea"]
    )
    assert result.n_annotations == 4
    current = current_annotations(engine, project)
    assert [c.tags for c in current] == [["B-NP", "I-NP", "B-VP"]] * 4
    assert {c.annotator for c in current} == {"lea"}
    assert all(s.gold_tags is None for s in list_sentences(engine, project))


def test_lenient_scheme_repairs_tags_on_import(engine, project, tmp_path):
    update_project_settings(engine, project, {"strict_scheme": False})
    path = tmp_path / "loose.conll"
    path.write_text("a DT O\nb NN I-NP\n\n")
    import_file(engine, project, path)
    assert list_sentences(engine, project)[0].gold_tags == ["O", "B-NP"]


@pytest.mark.data
@pytest.mark.slow
def test_real_corpus_imports_completely(engine, shared_data):
    path = shared_data / "conll2000" / "test.txt"
    if not path.exists():
        pytest.skip(f"{path} not found")
    project = create_project(engine, "conll2000", {"tagset": None})
    result = import_file(engine, project, path)
    n_blocks = sum(1 for block in path.read_text().split("\n\n") if block.strip())
    assert result.n_sentences == n_blocks
    assert result.n_tokens == sum(1 for line in path.read_text().splitlines() if line.strip())


def test_document_context_is_the_neighbouring_sentences_of_the_same_document(engine, project):
    """Two raw-text documents, one upload each: a sentence's context is the sentences
    just before and after it in its own document, never the other document's."""
    from db.repository import document_context, sentence_ids

    import_bytes(engine, project, b"Ana vive en Lima. Luis trabaja en Quito. Eva lee.\n", "a.txt")
    import_bytes(engine, project, b"Otro texto aqui. Y otro mas.\n", "b.txt")
    first, middle, last, other, _ = sentence_ids(engine, project)
    assert document_context(engine, middle) == (
        [["Ana", "vive", "en", "Lima", "."]],
        [["Eva", "lee", "."]],
    )
    assert document_context(engine, first) == ([], [["Luis", "trabaja", "en", "Quito", "."]])
    assert document_context(engine, last)[1] == []
    assert document_context(engine, other) == ([], [["Y", "otro", "mas", "."]])


def test_repeated_sentences_are_counted_with_their_lines_and_can_be_skipped(engine, project):
    # sentences start at lines 1, 4, 6 (= line 1), 9 (= line 4), 11 (= line 1) and 14
    conll = ("a DT B-NP\nb NN I-NP\n\nc VBZ B-VP\n\na DT B-NP\nb NN I-NP\n\nc VBZ B-VP\n\n"
             "a DT B-NP\nb NN I-NP\n\nd NN B-NP\n")  # fmt: skip
    kept = import_bytes(engine, project, conll.encode(), "kept.conll")
    assert (kept.n_sentences, kept.repeated, kept.repeated_lines) == (6, 3, (6, 9, 11))
    assert not kept.repeats_skipped
    other = create_project(engine, "skips", {"scheme": "IOB2"})
    skipped = import_bytes(engine, other, conll.encode(), "skipped.conll", skip_repeats=True)
    assert (skipped.n_sentences, skipped.repeated, skipped.repeated_lines) == (3, 3, (6, 9, 11))
    assert skipped.repeats_skipped
    assert [s.tokens for s in list_sentences(engine, other)] == [["a", "b"], ["c"], ["d"]]
    assert [s.line for s in list_sentences(engine, other)] == [1, 4, 14]
