"""The lexicon of training labels (cwal/features/lexicon.py): entries and places worked by hand,
the jackknife view of the training data, its merge into encoded batches, the ``lexicon`` learner
parameter and model files with and without it."""

from __future__ import annotations

import numpy as np
from model_files import older_file
from reference_features import appended_ids, encoded_rows

from cwal.features import FeatureIndex
from cwal.features.lexicon import Lexicon
from cwal.io import Sentence
from cwal.learners import make


def sent(text: str, tags: str | None = None) -> Sentence:
    tokens = text.split()
    return Sentence(tokens, None if tags is None else tags.split(), {})


def view(lex: Lexicon, sentences: list[Sentence]) -> list[list[str]]:
    """Each token's lexicon strings, spelled out from the slots."""
    found = lex.slots(sentences)
    n = sum(len(s.tokens) for s in sentences)
    return [[f"{k}={names[c[p]]}" for k, c, names in found if c[p] >= 0] for p in range(n)]


def test_entries_and_places_by_hand() -> None:
    train = [
        sent("De Nederlandse Bank zegt", "O B-ORG I-ORG O"),
        sent("in New York City", "O B-LOC I-LOC I-LOC"),
        sent("Bank", "B-ORG"),
    ]
    lex = Lexicon.learn(train)
    assert lex is not None and lex.types == ["LOC", "ORG"]
    assert set(lex.entries) == {("Nederlandse", "Bank"), ("New", "York", "City"), ("Bank",)}
    lex.slots(train)  # the training data's one jackknifed view
    got = view(lex, [sent("de Nederlandse Bank en New York City Bank nederlandse bank")])
    assert got == [
        [], ["lx-ORG=B"], ["lx-ORG=E"], [], ["lx-LOC=B"], ["lx-LOC=I"], ["lx-LOC=E"],
        ["lx-ORG=S"], [], [],
    ]  # fmt: skip


def test_the_longest_entry_gives_the_place_and_types_are_separate() -> None:
    train = [sent("Real Madrid", "B-ORG I-ORG"), sent("Madrid", "B-LOC"), sent("Real", "B-ORG")]
    lex = Lexicon.learn(train)
    lex.slots(train)
    assert view(lex, [sent("Real Madrid Madrid")]) == [
        ["lx-ORG=B"], ["lx-LOC=S", "lx-ORG=E"], ["lx-LOC=S"],
    ]  # fmt: skip


def test_training_tokens_see_only_entries_labeled_in_other_folds() -> None:
    """Ten folds of two sentences: 'Anna' is labeled in fold 0 only, 'Berlin' in folds 0 and 5.
    In the first (jackknifed) view Anna's own fold does not see her; Berlin is seen everywhere;
    afterwards every sentence sees the whole lexicon."""
    train = [sent("x", "O") for _ in range(20)]
    train[0] = sent("Anna in Berlin", "B-PER O B-LOC")
    train[1] = sent("Anna", "O")  # same fold, unlabeled mention
    train[10] = sent("Berlin Anna", "B-LOC O")  # fold 5
    lex = Lexicon.learn(train, folds=10)
    first = view(lex, train)
    tok = {(i, j): p for p, (i, j) in enumerate((i, j) for i, s in enumerate(train)
                                                 for j in range(len(s.tokens)))}  # fmt: skip
    assert first[tok[0, 0]] == [] and first[tok[1, 0]] == []  # Anna: only fold 0's label
    assert first[tok[10, 1]] == ["lx-PER=S"]  # fold 5 sees fold 0's Anna
    assert first[tok[0, 2]] == ["lx-LOC=S"] and first[tok[10, 0]] == ["lx-LOC=S"]
    again = view(lex, train)
    assert again[tok[0, 0]] == ["lx-PER=S"] and again[tok[1, 0]] == ["lx-PER=S"]


def test_no_labeled_spans_no_lexicon() -> None:
    assert Lexicon.learn([sent("a b", "O O"), sent("c")]) is None


def test_encoding_appends_the_lexicon_features_after_each_tokens_own() -> None:
    """Against an independent route: each token's template strings, then its lexicon strings
    (worked out by hand), numbered by first appearance (template strings of the batch first)."""
    train = [sent("Piet Jansen woont hier", "B-PER I-PER O O")]
    lex = Lexicon.learn(train)
    lex.slots(train)
    index = FeatureIndex("ner", lexicon=lex)
    text = [sent("Piet Jansen zag Piet"), sent("Jansen en Piet Jansen")]
    enc = index.encode(text)
    plain = FeatureIndex("ner")
    own = [f for s in text for f in plain.token_features(s)]
    extra = [["lx-PER=B"], ["lx-PER=E"], [], [], [], [], ["lx-PER=B"], ["lx-PER=E"]]
    want, _ = appended_ids(own, extra)
    assert encoded_rows(enc) == want
    assert [f for s in text for f in index.token_features(s)] == [
        a + b for a, b in zip(own, extra, strict=True)
    ]


def _toy(n: int, seed: int = 3) -> list[Sentence]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        name = ["Anna Smit", "Berlijn", "Carla de Vries", "Delft"][int(rng.integers(4))]
        typ = "PER" if name[0] in "AC" else "LOC"
        k = len(name.split())
        tags = " ".join([f"B-{typ}", *[f"I-{typ}"] * (k - 1)])
        out.append(sent(f"Toen zag men {name} .", f"O O O {tags} O"))
    return out


def test_learner_parameter_turns_it_on_and_model_files_keep_it() -> None:
    data = _toy(40)
    on = make("cw", template="ner", lexicon=True).fit(data, epochs=2)
    off = make("cw", template="ner").fit(data, epochs=2)
    assert on.features_.lexicon is not None and off.features_.lexicon is None
    assert any(s.startswith("lx-PER=") for s in on.features_.strings)
    assert not any(s.startswith("lx-") for s in off.features_.strings)
    copy = type(on).from_bytes(on.to_bytes())
    assert copy.params["lexicon"] is True
    assert copy.features_.lexicon.entries.keys() == on.features_.lexicon.entries.keys()
    test = _toy(20, seed=4)
    assert copy.predict(test) == on.predict(test)


def test_a_version_6_model_file_still_loads() -> None:
    """A file of the previous format (no ``lexicon`` parameter, no lexicon arrays) loads with
    the lexicon off and predicts as before."""
    model = make("cw", template="ner").fit(_toy(20), epochs=2)
    data, meta = older_file(model.to_bytes(), 6, "lexicon")
    assert meta["version"] == 7
    old = type(model).from_bytes(data)
    assert old.features_.lexicon is None and old.params["lexicon"] is False
    assert old.predict(_toy(5)) == model.predict(_toy(5))
