"""The fast feature templates against a plain reference: the same strings, in the same order, for
every token of real corpora and of synthetic edge cases.

The reference (``tests/reference_features.py``) is the straightforward implementation the fast
one replaced: each feature spelled out per token from the template's definition, with no caches. Models, saved model files
and feature ids depend on the exact strings and their order, so equality is checked on whole
lists, not sets. ``bench/features.py`` times the same reference against the fast templates.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest
from reference_features import REFERENCE, reference_chunk, reference_ner, reference_shape
from shared_data import corpus_path

from cwal import features
from cwal.features import FeatureIndex, chunk_template, get_template, ner_template, word_shape
from cwal.io import Sentence, read_conll


def assert_same(tokens: Sequence[str], columns: dict[str, Sequence[str]]) -> None:
    """Both templates, with and without the POS column, equal the reference exactly."""
    variants = [columns, {}] if "pos" in columns else [columns]
    for cols in variants:
        for name, reference in REFERENCE.items():
            got, want = get_template(name)(tokens, cols), reference(tokens, cols)
            assert got == want, (name, list(tokens), cols)


def test_reference_matches_the_hand_examples() -> None:
    """The reference itself agrees with hand-written features (so it is not just a copy)."""
    assert reference_shape("McDonald's") == "XxXx'x" and reference_shape("U.S.") == "X.X."
    got = reference_ner(["Anna", "visits", "New-York"], {"pos": ["N", "V", "N"]})
    assert got[0][:4] == ["b", "w-2=<s-2>", "w-1=<s-1>", "w0=anna"]
    assert got[0][4:7] == ["w+1=visits", "w+2=new-york", "W0=Anna"]
    assert {"first", "cap&first", "cap", "p-1=<s-1>", "p0|sh0=N|Xx"} <= set(got[0])
    assert {"hyphen", "cap&mid", "pre4=new-", "suf3+1=+1>", "p+1=</s+1>"} <= set(got[2])
    chunk = reference_chunk(["The", "U.S."], {"pos": ["DT", "NNP"]})
    assert chunk[1][:5] == ["b", "w-2=<s-1>", "w-1=the", "w0=u.s.", "w+1=</s+1>"]
    assert chunk[1][-3:] == ["w0|p+1=u.s.|</s+1>", "p0|sh0=NNP|X.X.", "p0|s3=NNP|.s."]


# --- real corpora --------------------------------------------------------------------------------


@pytest.mark.data
@pytest.mark.parametrize(
    ("relative", "template"), [("conll2002/esp.train", "ner"), ("conll2000/train.txt", "chunk")]
)
def test_templates_equal_the_reference_on_real_sentences(relative: str, template: str) -> None:
    """The corpus's own template on its first 2,000 sentences; both templates, with and without
    the POS column, on the first 500 (by then from warm caches)."""
    sentences = []
    for s in read_conll(corpus_path(relative)):
        sentences.append(s)
        if len(sentences) == 2000:
            break
    assert all("pos" in s.columns for s in sentences)
    fast, reference = get_template(template), REFERENCE[template]
    for s in sentences:
        assert fast(s.tokens, s.columns) == reference(s.tokens, s.columns), s.tokens
    for s in sentences[:500]:
        assert_same(s.tokens, s.columns)


# --- synthetic edge cases -----------------------------------------------------------------------

EDGE_TOKENS = [
    "",
    " ",
    "a",
    "A",
    "1",
    "-",
    "--",
    "x-ray",
    "X-Men",
    "USA",
    "U.S.A.",
    "McDonald's",
    "1.8",
    "1,000,000",
    "2024-01-01",
    "3rd",
    "Ñandú",
    "ÑANDÚ",
    "İstanbul",  # lowercases to a longer string
    "ǅemal",  # titlecase: neither upper nor lower
    "Straße",
    "ΣΟΦΊΑ",
    "①②",  # isdigit, not isdecimal
    "x²",
    "٣٤٥",  # Arabic-Indic digits
    "日本語",
    "emoji🙂",
    "tab\there",
    "new\nline",
    "a|b",
    "a=b",
    "|",
    "=",
    "|=|",
    "w0=x",
    "<s-1>",
    "<s-2>",
    "</s+1>",
    "</s+2>",
    "<S-1>",
    "b",
    "first",
    "cap",
    "x" * 300,
    "Supercalifragilisticexpialidocious" * 10,
    "ab",
    "abc",
    "abcd",
    "abcde",
]
EDGE_TAGS = ["NN", "<s-1>", "</s+1>", "a|b", "=", "", "NNP", "Fc", "ñ"]


@pytest.mark.parametrize(
    "tokens",
    [
        [],
        ["one"],
        ["One"],
        ["1"],
        [""],
        ["<s-1>", "</s+1>"],
        ["</s+2>", "<s-2>", "<s-1>"],
        ["a", "a", "a", "a", "a", "a"],
        EDGE_TOKENS,
        list(reversed(EDGE_TOKENS)),
    ],
)
def test_templates_equal_the_reference_on_edge_cases(tokens: list[str]) -> None:
    assert_same(tokens, {})
    for shift in range(3):
        pos = [EDGE_TAGS[(i + shift) % len(EDGE_TAGS)] for i in range(len(tokens))]
        assert_same(tokens, {"pos": pos})
    for word in tokens:
        assert word_shape(word) == reference_shape(word)


def test_every_edge_token_alone_and_in_every_position() -> None:
    for word in EDGE_TOKENS:
        for tokens in ([word], [word, "x"], ["X", word], ["x", "y", word, "Z", "9"]):
            assert_same(tokens, {"pos": ["T"] * len(tokens)})


def test_random_sentences_equal_the_reference() -> None:
    """Random words over an alphabet of tricky characters, with and without tags."""
    rng = random.Random(7)
    alphabet = "aAzZñÑßİǅ09٣²①-.,'|=<>/s+ \t日🙂"
    tags = ["NN", "VB", "<s-1>", "|", "DT", "x=y"]
    for _ in range(400):
        n = rng.randint(0, 12)
        tokens = ["".join(rng.choices(alphabet, k=rng.randint(0, 7))) for _ in range(n)]
        assert_same(tokens, {"pos": [rng.choice(tags) for _ in range(n)]})


def test_a_pos_column_longer_than_the_sentence_is_read_as_before() -> None:
    """Surplus tags are right context of the last tokens, as in the plain implementation."""
    tokens, pos = ["a", "B"], ["N", "V", "X", "Y"]
    for name, reference in REFERENCE.items():
        assert get_template(name)(tokens, {"pos": pos}) == reference(tokens, {"pos": pos})


def test_a_pos_column_shorter_than_the_sentence_is_an_error() -> None:
    for template in (chunk_template, ner_template):
        with pytest.raises(ValueError, match="pos column has 1 tags for 2 tokens"):
            template(["a", "b"], {"pos": ["N"]})


def test_the_word_caches_are_bounded_and_stay_exact_after_eviction() -> None:
    """More distinct words than the caches hold: the oldest are dropped, results stay exact."""
    caches = [features._ner_word, features._chunk_word]
    assert all(c.cache_info().maxsize == features._CACHE_MAX for c in caches)
    rng = random.Random(3)
    words = [f"W{i}x{rng.randint(0, 9)}" for i in range(features._CACHE_MAX + 500)]
    sentences = [words[i : i + 20] for i in range(0, len(words), 20)]
    for tokens in sentences:
        get_template("ner")(tokens, {"pos": ["N"] * len(tokens)})
        get_template("chunk")(tokens, {"pos": ["N"] * len(tokens)})
    assert all(c.cache_info().currsize <= features._CACHE_MAX for c in caches)
    for tokens in sentences[:3] + sentences[-3:]:  # evicted words and cached ones
        assert_same(tokens, {"pos": ["N"] * len(tokens)})


def test_encoding_gives_the_reference_feature_ids() -> None:
    """A FeatureIndex built on the fast template numbers features as the reference order does."""
    sents = [
        Sentence(["Anna", "visits", "New-York", "2024"], columns={"pos": ["N", "V", "N", "Z"]}),
        Sentence(["anna", "visits"], columns={"pos": ["N", "V"]}),
    ]
    for name, reference in REFERENCE.items():
        index = FeatureIndex(name)
        index.encode(sents)
        order: dict[str, int] = {}
        for s in sents:
            for tok in reference(s.tokens, s.columns):
                for f in tok:
                    order.setdefault(f, len(order))
        assert index.strings == list(order)


# --- batch encoding (cwal/features/_batch.py) against the string route --------------------------


def _string_route(template: str, strings: Sequence[str] = ()) -> FeatureIndex:
    """An index that encodes token by token through the template's strings (the batch encoder
    only serves the built-in template functions themselves)."""
    index = FeatureIndex(template, strings)
    fn = get_template(template)
    index._fn = lambda tokens, columns: fn(tokens, columns)
    return index


def assert_batch_equals_strings(sents: list[Sentence], held: list[Sentence]) -> None:
    """Same strings, ids and offsets: growing, frozen (unseen dropped), and with a cut-off."""
    for name in REFERENCE:
        fast, slow = FeatureIndex(name), _string_route(name)
        a, b = fast.encode(sents), slow.encode(sents)
        assert fast.strings == slow.strings, name
        for x, y in ((a, b), (fast.encode(held, grow=False), slow.encode(held, grow=False))):
            assert x.feat_ids.tolist() == y.feat_ids.tolist(), name
            assert x.tok_offsets.tolist() == y.tok_offsets.tolist(), name
            assert x.sent_offsets.tolist() == y.sent_offsets.tolist(), name
        fast, slow = FeatureIndex(name), _string_route(name)
        a, b = fast.encode_pruned(sents, 2), slow.encode_pruned(sents, 2)
        assert fast.strings == slow.strings, name
        assert a.feat_ids.tolist() == b.feat_ids.tolist(), name
        assert a.tok_offsets.tolist() == b.tok_offsets.tolist(), name


def test_batch_encoding_equals_the_string_route_on_edge_cases() -> None:
    """Tricky words (``|`` inside words makes joined features collide), pads as words, empty
    sentences, with and without a POS column, and a batch mixing both (the string route)."""
    rng = random.Random(11)
    words = EDGE_TOKENS + ["a|b", "a", "b|c", "c", "<s-1>", "a|b|c"]
    for with_pos in (True, False):
        sents = []
        for _ in range(150):
            tokens = [rng.choice(words) for _ in range(rng.randint(0, 9))]
            cols = {"pos": [rng.choice(EDGE_TAGS) for _ in tokens]} if with_pos else {}
            sents.append(Sentence(tokens, columns=cols))
        assert_batch_equals_strings(sents[:100], sents[100:])
    mixed = [Sentence(["a", "b"], columns={"pos": ["N", "V"]}), Sentence(["a|b", "c"])]
    assert_batch_equals_strings(mixed * 2, mixed)


@pytest.mark.data
def test_batch_encoding_equals_the_string_route_on_real_sentences() -> None:
    sentences = []
    for relative in ("conll2002/esp.train", "conll2000/train.txt"):
        for k, s in enumerate(read_conll(corpus_path(relative))):
            sentences.append(s)
            if k == 1500:
                break
    assert_batch_equals_strings(sentences[::2], sentences[1::2])


def test_batch_codes_number_keys_by_first_appearance() -> None:
    """``_codes`` (numpy only) gives pandas.factorize's codes: first appearance order."""
    import pandas as pd

    from cwal.features._batch import _codes

    rng = np.random.default_rng(5)
    for size, high in ((0, 3), (1, 3), (50, 4), (5000, 700), (3000, 1 << 60)):
        key = rng.integers(0, high, size, dtype=np.int64)
        assert np.array_equal(_codes(key), pd.factorize(key)[0]), (size, high)
    assert _codes(np.array([7, 3, 7, 9, 3], dtype=np.int64)).tolist() == [0, 1, 0, 2, 1]
