"""Feature templates on hand examples, and the feature index (growth, freezing, min_count)."""

from __future__ import annotations

import numpy as np
import pytest

from cwal import features
from cwal.features import FeatureIndex, get_template, word_shape
from cwal.io import Sentence


def test_word_shape_collapses_character_classes() -> None:
    assert word_shape("McDonald's") == "XxXx'x"
    assert word_shape("1.8") == "d.d"
    assert word_shape("U.S.") == "X.X."
    assert word_shape("") == ""


def test_chunk_template_on_a_hand_example() -> None:
    tokens, pos = ["The", "U.S.", "economy"], ["DT", "NNP", "NN"]
    got = get_template("chunk")(tokens, {"pos": pos})
    assert len(got) == 3
    expected = [
        "b",
        "w-2=<s-1>",
        "w-1=the",
        "w0=u.s.",
        "w+1=economy",
        "w+2=</s+1>",
        "w-2|w-1=<s-1>|the",
        "w-1|w0=the|u.s.",
        "w0|w+1=u.s.|economy",
        "w+1|w+2=economy|</s+1>",
        "sh0=X.X.",
        "sh-1|sh0=Xx|X.X.",
        "sh0|sh+1=X.X.|x",
        "s2=s.",
        "s3=.s.",
        "s4=u.s.",
        "pre3=u.s",
        "p-2=<s-1>",
        "p-1=DT",
        "p0=NNP",
        "p+1=NN",
        "p+2=</s+1>",
        "p-2|p-1=<s-1>|DT",
        "p-1|p0=DT|NNP",
        "p0|p+1=NNP|NN",
        "p+1|p+2=NN|</s+1>",
        "p-2|p-1|p0=<s-1>|DT|NNP",
        "p-1|p0|p+1=DT|NNP|NN",
        "p0|p+1|p+2=NNP|NN|</s+1>",
        "w0|p0=u.s.|NNP",
        "w-1|p0=the|NNP",
        "w+1|p0=economy|NNP",
        "w-1|p-1=the|DT",
        "w+1|p+1=economy|NN",
        "w0|p-1=u.s.|DT",
        "w0|p+1=u.s.|NN",
        "p0|sh0=NNP|X.X.",
        "p0|s3=NNP|.s.",
    ]
    assert sorted(got[1]) == sorted(expected)
    assert "w-2=<s-2>" in got[0] and "p+2=</s+2>" in got[2]
    no_pos = get_template("chunk")(tokens, {})
    assert not any(f.startswith("p") and not f.startswith("pre") for f in no_pos[1])


def test_ner_template_on_a_hand_example() -> None:
    tokens = ["Anna", "visits", "New-York", "2024"]
    got = [set(f) for f in get_template("ner")(tokens, {})]
    assert {"first", "cap&first", "cap", "W0=Anna", "w0=anna", "sh0=Xx"} <= got[0]
    assert "cap&mid" not in got[0]
    new_york = {
        "W0=New-York", "w-1=visits", "w+1=2024", "w-2=anna", "w+2=</s+1>", "cap", "cap&mid",
        "hyphen", "len=8", "pre1=n", "pre4=new-", "suf4=york", "suf1=k", "suf3-1=its",
        "pre3-1=vis", "suf3+1=024", "sh0=Xx-Xx", "sh-1|w0=x|new-york", "w0|sh+1=new-york|d",
        "sh-1|sh0|sh+1=x|Xx-Xx|d", "w-1|w0=visits|new-york",
    }  # fmt: skip
    assert new_york <= got[2]
    assert not {"first", "allcap", "digit"} & got[2]
    assert {"digit", "alldigit", "len=4", "sh0=d"} <= got[3]
    assert not any(f.startswith("p0=") for f in got[2])
    with_pos = get_template("ner")(tokens, {"pos": ["N", "V", "N", "Num"]})
    assert {"p-1=V", "p0=N", "p+1=Num", "p0|sh0=N|Xx-Xx"} <= set(with_pos[2])
    assert get_template("ner")([], {}) == []


def test_unknown_template_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown feature template"):
        get_template("pos")


@pytest.fixture
def plus_template(monkeypatch):
    """Test template: a token ``a+b`` has the features ``a`` and ``b``."""
    monkeypatch.setitem(features.TEMPLATES, "plus", lambda toks, cols: [t.split("+") for t in toks])
    return "plus"


def test_index_grows_then_a_frozen_index_drops_unseen(plus_template) -> None:
    index = FeatureIndex(plus_template)
    enc = index.encode([Sentence(["a+b", "c"]), Sentence(["b+d"])])
    assert index.strings == ["a", "b", "c", "d"]
    assert enc.feat_ids.tolist() == [0, 1, 2, 1, 3]
    assert enc.tok_offsets.tolist() == [0, 2, 3, 5] and enc.sent_offsets.tolist() == [0, 2, 3]
    assert (enc.n_tokens, enc.n_sentences) == (3, 2)
    index.frozen = True
    enc = index.encode([Sentence(["x+a", "y"]), Sentence([])])
    assert enc.feat_ids.tolist() == [0] and enc.tok_offsets.tolist() == [0, 1, 1]
    assert enc.sent_offsets.tolist() == [0, 2, 2] and len(index) == 4
    one = index.encode([Sentence(["q"]), Sentence(["b+c", "d"])]).sentence(1)
    assert one.feat_ids.tolist() == [1, 2, 3] and one.tok_offsets.tolist() == [0, 2, 3]


def test_encode_pruned_keeps_features_seen_min_count_times(plus_template) -> None:
    data = [Sentence(["a+b", "a"]), Sentence(["c+a", "b+e"]), Sentence(["d"])]
    index = FeatureIndex(plus_template)
    enc = index.encode_pruned(data, min_count=2)  # counts: a 3, b 2, c 1, e 1, d 1
    assert index.strings == ["a", "b"] and index.frozen
    assert enc.feat_ids.tolist() == [0, 1, 0, 0, 1]
    assert enc.tok_offsets.tolist() == [0, 2, 3, 4, 5, 5]
    np.testing.assert_array_equal(enc.sent_offsets, [0, 2, 4, 5])
    with pytest.raises(ValueError, match="fresh index"):
        index.encode_pruned(data, 2)
