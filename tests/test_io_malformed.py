"""Every malformed input raises CorpusError naming the file, the exact 1-based line and the problem.

The fixtures in tests/fixtures/malformed are hand-written; the line numbers below were read off
them by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cwal.errors import CorpusError
from cwal.io import read_conll, read_corpus, read_corpus_bytes, read_jsonl, read_text

BAD = Path(__file__).resolve().parent / "fixtures" / "malformed"


def _error(reader, *args, **kw) -> CorpusError:
    with pytest.raises(CorpusError) as info:
        list(reader(*args, **kw))
    return info.value


def _assert_at(err: CorpusError, path: Path | str, line: int, words: str) -> None:
    assert err.line == line
    assert str(err).startswith(f"{path}:{line}: ")
    assert words in err.problem


@pytest.mark.parametrize(
    ("name", "kw", "line", "words"),
    [
        ("wrong_columns.conll", {}, 5, "expected 3 columns (as on line 1), found 2"),
        ("bad_utf8.conll", {"encoding": "utf-8"}, 3, "invalid utf-8 bytes b'\\xef'"),
        ("empty_token.tsv", {}, 4, "empty token"),
        ("tag_outside.conll", {"tagset": {"O", "B-ORG", "B-MISC"}}, 6, "'B-XYZ' is not in"),
        ("iob2_invalid.conll", {"scheme": "IOB2"}, 8, "'I-ADJP' is invalid under IOB2"),
        ("binary.conll", {}, 2, "binary content"),
        ("empty.conll", {}, 1, "empty file"),
        ("docstart_only.conll", {}, 2, "no sentences"),
    ],
)
def test_malformed_conll(name: str, kw: dict, line: int, words: str) -> None:
    _assert_at(_error(read_conll, BAD / name, **kw), BAD / name, line, words)


@pytest.mark.parametrize(
    ("name", "line", "words"),
    [
        ("bad_json.jsonl", 2, "bad JSON"),
        ("length_mismatch.jsonl", 3, 'length mismatch: "tags" has 1 items, "tokens" has 2'),
        ("tokens_not_strings.jsonl", 2, "item 1 is int 3"),
    ],
)
def test_malformed_jsonl(name: str, line: int, words: str) -> None:
    _assert_at(_error(read_jsonl, BAD / name), BAD / name, line, words)


def test_good_rows_before_the_bad_one_are_yielded_first() -> None:
    reader = read_conll(BAD / "wrong_columns.conll")
    assert next(reader).tokens == ["He", "reckons"]
    with pytest.raises(CorpusError):
        next(reader)


def test_strict_scheme_passes_valid_files_and_lenient_scheme_repairs() -> None:
    assert len(list(read_conll(BAD / "tag_outside.conll", scheme="IOB2"))) == 2
    fixed = list(read_conll(BAD / "iob2_invalid.conll", scheme="IOB2", strict=False))
    assert fixed[1].tags == ["B-NP", "I-NP", "B-VP", "O", "B-ADJP"]


def test_invalid_utf8_falls_back_to_latin1_by_default() -> None:
    sents = list(read_conll(BAD / "bad_utf8.conll"))
    # decided per file: the valid UTF-8 'é' of line 1 is read as latin-1 too
    assert sents[0].tokens == ["CafÃ©"]
    assert sents[1].tokens == ["na\u00efve", "bar"]


def test_bom_is_accepted_and_stripped() -> None:
    (sent,) = read_conll(BAD / "bom.conll")
    assert sent.tokens == ["He", "said"] and sent.line == 1


def test_very_long_single_line(tmp_path: Path) -> None:
    path = tmp_path / "long.conll"
    path.write_bytes(b"a DT O\nb NN O\n" + b"x" * (1 << 20) + b" NN O\n\n")
    _assert_at(_error(read_conll, path), path, 3, "line too long")
    small = tmp_path / "small.txt"
    small.write_bytes(b"one two\n" + b"y" * 101 + b"\n")
    _assert_at(_error(read_text, small, max_line=100), small, 2, "line too long")


def test_empty_value_between_two_tabs(tmp_path: Path) -> None:
    path = tmp_path / "x.tsv"
    path.write_bytes(b"a\tDT\tO\nb\t\tO\n")
    _assert_at(_error(read_conll, path), path, 2, "empty value in column 2")


def test_invisible_token(tmp_path: Path) -> None:
    path = tmp_path / "x.conll"
    path.write_text("a DT O\n\u200b NN O\n", encoding="utf-8")
    _assert_at(_error(read_conll, path), path, 2, "empty token")


def test_column_roles_must_match_the_file() -> None:
    path = BAD / "bom.conll"
    _assert_at(_error(read_conll, path, "word,pos,chunk,tag"), path, 1, "names 4 roles")
    with pytest.raises(ValueError, match="exactly one column must be 'word'"):
        read_conll(path, ["pos", "tag"])


def test_utf16_and_gzip_are_named(tmp_path: Path) -> None:
    utf16 = tmp_path / "u16.conll"
    utf16.write_bytes("a DT O\n".encode("utf-16"))
    _assert_at(_error(read_conll, utf16), utf16, 1, "UTF-16")
    _assert_at(_error(read_corpus_bytes, b"\x1f\x8b\x08\x00", "up.conll"), "up.conll", 1, "gzip")


def test_jsonl_other_problems(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    cases = [
        (b'{"tokens": ["a"]}\n["a"]\n', 2, "found an array"),
        (b'{"tags": ["O"]}\n', 1, 'missing key "tokens"'),
        (b'\n{"tokens": "a b"}\n', 2, '"tokens" must be a list of strings, found str'),
        (b'{"tokens": []}\n', 1, '"tokens" is empty'),
        (b'{"tokens": ["a", ""]}\n', 1, "empty token '' at position 1"),
        (b'{"tokens": ["a"], "tags": [1]}\n', 1, '"tags" must be a list of strings'),
        (b'{"tokens": ["\xc3\xa9"]}\n{"tokens": ["\xe9"]}\n', 2, "invalid utf-8 bytes"),
        (b"\n\n", 2, "no sentences"),
    ]
    for data, line, words in cases:
        path.write_bytes(data)
        _assert_at(_error(read_jsonl, path), path, line, words)


def test_jsonl_tag_checks_name_the_line_and_position(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(
        b'{"tokens": ["a"], "tags": ["B-X"]}\n{"tokens": ["b", "c"], "tags": ["O", "I-X"]}\n'
    )
    err = _error(read_jsonl, path, scheme="IOB2")
    _assert_at(err, path, 2, "'I-X' at position 1 is invalid under IOB2")
    _assert_at(_error(read_jsonl, path, tagset={"O", "B-X"}), path, 2, "'I-X' at position 1")


def test_bytes_errors_use_the_upload_name() -> None:
    data = (BAD / "wrong_columns.conll").read_bytes()
    _assert_at(_error(read_corpus_bytes, data, "upload.conll"), "upload.conll", 5, "columns")
    _assert_at(_error(read_corpus, BAD / "bad_json.jsonl"), BAD / "bad_json.jsonl", 2, "JSON")


def test_malformed_tag_under_a_scheme(tmp_path: Path) -> None:
    path = tmp_path / "x.conll"
    path.write_bytes(b"a DT B-NP\nb NN NP\n")
    for strict in (True, False):
        err = _error(read_conll, path, scheme="IOB2", strict=strict)
        _assert_at(err, path, 2, "malformed tag 'NP'")
