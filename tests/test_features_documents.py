"""Document-level features: documents from -DOCSTART- (or blocks of sentences), the features of a
word's other occurrences against hand-worked documents, their merge into encoded batches, the
``documents`` learner parameter, and model files of the previous format still loading."""

from __future__ import annotations

import numpy as np
from model_files import older_file
from reference_features import appended_ids, encoded_rows

from cwal.features import FeatureIndex
from cwal.features import documents as D
from cwal.io import Sentence
from cwal.io.conll import read_conll
from cwal.learners import make


def sent(text: str, doc: object = None) -> Sentence:
    tokens = text.split()
    return Sentence(tokens, ["O"] * len(tokens), {}, {} if doc is None else {"document": doc})


def test_the_conll_reader_numbers_documents_from_the_first_docstart(tmp_path) -> None:
    path = tmp_path / "d.conll"
    path.write_text("a O\n\nb O\n-DOCSTART- O\n\nc O\n\nd O\n-DOCSTART- O\ne O\n\n")
    got = [(s.tokens[0], s.meta.get("document")) for s in read_conll(path)]
    assert got == [("a", None), ("b", None), ("c", 0), ("d", 0), ("e", 1)]


def test_documents_are_runs_of_one_mark_else_blocks() -> None:
    marked = [sent("x", 0), sent("x", 0), sent("x", 1), sent("x", 0)]
    assert D.groups(marked) == [range(0, 2), range(2, 3), range(3, 4)]
    plain = [sent("x") for _ in range(7)]
    assert D.groups(plain, block=3) == [range(0, 3), range(3, 6), range(6, 7)]
    mixed = [sent("x"), sent("x"), sent("x", 5), sent("x")]
    assert D.groups(mixed, block=3) == [range(0, 2), range(2, 3), range(3, 4)]
    assert D.groups([]) == []


def test_features_of_the_other_occurrences_by_hand() -> None:
    doc = [
        sent("Smith met Mr. Smith Jones in Paris .", 0),
        sent("In Paris , smith said : PARIS is fine .", 0),
        sent("Smith left .", 1),  # another document: sees none of the above
    ]
    f = D.features(doc)
    # sentence 1, "Smith" at the start: elsewhere capitalised mid-sentence (C, "Mr. Smith Jones")
    # and lower case ("smith said"); it is inside the run "Mr. Smith Jones" there; the first
    # mid-sentence capitalised occurrence is after "mr."
    assert f[0][0] == ["dcase=CL", "dcase|own=CL|C1", "dseq=I", "dprev=mr."]
    # "Smith" in "Mr. Smith Jones" is that first occurrence itself: no dprev; the sentence-initial
    # "Smith" is no run (sentence case), so no dseq either
    assert f[0][3] == ["dcase=L", "dcase|own=L|C"]
    # "Paris": elsewhere capitalised mid-sentence ("In Paris") and all caps ("PARIS"), alone both
    # times; the first such occurrence is this one
    assert f[0][6] == ["dcase=CU", "dcase|own=CU|C", "dseq=S"]
    assert f[1][1] == ["dcase=CU", "dcase|own=CU|C", "dseq=S", "dprev=in"]
    # "In" starts a sentence (no run with "Paris"); "in" is lower case in sentence 1
    assert f[1][0] == ["dcase=L", "dcase|own=L|C1"]
    # "met" occurs once; "." has no letter; "Mr." is capitalised alone (before the run)
    assert f[0][1] == ["dcase=0", "dcase|own=0|L"] and f[0][7] == []
    assert f[2][0] == ["dcase=0", "dcase|own=0|C1"]
    assert f[2][1] == ["dcase=0", "dcase|own=0|L"]


def test_an_occurrence_only_at_sentence_starts_reads_dash() -> None:
    f = D.features([sent("The cat", 0), sent("The dog", 0)])
    assert f[0][0] == ["dcase=-", "dcase|own=-|C1"] == f[1][0]


# --- an independent route: the features token by token over dictionaries ----------------------
def _ref_case(word: str) -> str:
    if word.isupper() and len(word) > 1:
        return "U"
    if word[:1].isupper():
        return "C"
    if word[:1].islower():
        return "L"
    return "O"


def _runs(cases: list[str]) -> list[str]:
    """The place of each token in runs of capitalised (``C``/``U``) tokens, ``""`` outside (a
    sentence's first word is in none: sentence case makes it capitalised anyway)."""
    out = [""] * len(cases)
    i, n = 1, len(cases)
    while i < n:
        if cases[i] not in ("C", "U"):
            i += 1
            continue
        j = i
        while j + 1 < n and cases[j + 1] in ("C", "U"):
            j += 1
        if i == j:
            out[i] = "S"
        else:
            out[i], out[j] = "B", "E"
            for k in range(i + 1, j):
                out[k] = "I"
        i = j + 1
    return out


def reference(sentences: list[Sentence], block: int = D.BLOCK) -> list[list[list[str]]]:
    """The document features token by token with dictionaries: the independent route."""
    out: list[list[list[str]]] = []
    for doc in D.groups(sentences, block):
        out += _document([sentences[i].tokens for i in doc])
    return out


def _document(sents: list[list[str]]) -> list[list[list[str]]]:
    lowered = [[w.lower() for w in s] for s in sents]
    cases = [[_ref_case(w) for w in s] for s in sents]
    places = [_runs(c) for c in cases]
    # per word: count of each way of writing it (C/L/U mid-sentence, "-" at a start) and of each
    # run place; the first capitalised mid-sentence occurrence's (sentence, token) and previous word
    ways: dict[str, dict[str, int]] = {}
    seqs: dict[str, dict[str, int]] = {}
    first: dict[str, tuple[int, int, str]] = {}
    for b, (lw_s, c_s, p_s) in enumerate(zip(lowered, cases, places, strict=True)):
        for i, (lw, c, p) in enumerate(zip(lw_s, c_s, p_s, strict=True)):
            way = "-" if i == 0 else c
            d = ways.setdefault(lw, {})
            d[way] = d.get(way, 0) + 1
            if p:
                d = seqs.setdefault(lw, {})
                d[p] = d.get(p, 0) + 1
            if i > 0 and c in ("C", "U") and lw not in first:
                first[lw] = (b, i, lw_s[i - 1])
    out: list[list[list[str]]] = []
    for b, (lw_s, c_s, p_s) in enumerate(zip(lowered, cases, places, strict=True)):
        feats: list[list[str]] = []
        for i, (lw, c, p) in enumerate(zip(lw_s, c_s, p_s, strict=True)):
            if c == "O":
                feats.append([])
                continue
            own = "-" if i == 0 else c
            d = ways[lw]
            seen = "".join(w for w in "CLU" if d.get(w, 0) - (own == w) > 0)
            if not seen:
                seen = "-" if d.get("-", 0) - (own == "-") > 0 else "0"
            f = [f"dcase={seen}", f"dcase|own={seen}|{c}{'1' if i == 0 else ''}"]
            s = seqs.get(lw)
            if s:
                others = "".join(q for q in "SBIE" if s.get(q, 0) - (p == q) > 0)
                if others:
                    f.append(f"dseq={others}")
            at = first.get(lw)
            if at is not None and (at[0], at[1]) != (b, i):
                f.append(f"dprev={at[2]}")
            feats.append(f)
        out.append(feats)
    return out


def test_the_array_route_equals_the_token_by_token_route_on_random_text() -> None:
    rng = np.random.default_rng(11)
    vocab = ["Anna", "anna", "ANNA", "Paris", "paris", "the", "The", "x", "Van", "van", "1.5",
             "-", "De", "de", "IBM", "Mr.", "Bank", "bank", "E", "é", "Émile"]  # fmt: skip
    for trial in range(40):
        sents = []
        for b in range(int(rng.integers(1, 12))):
            n = int(rng.integers(1, 9))
            doc = None if trial % 4 == 0 else int(b // rng.integers(1, 4))
            toks = [vocab[i] for i in rng.integers(0, len(vocab), n)]
            sents.append(Sentence(toks, None, {}, {} if doc is None else {"document": doc}))
        block = int(rng.integers(1, 5))
        assert D.features(sents, block) == reference(sents, block), trial


def test_encoding_appends_the_document_features_after_each_tokens_own() -> None:
    """Against an independent route: every token's template strings plus its document strings,
    numbered by first appearance over the batch (template strings of the whole batch first)."""
    sents = [sent("Smith met Jones in Paris", 0), sent("smith and JONES left Paris", 0)]
    sents += [sent("Paris is big", 1)]
    for template in ("ner", "chunk"):
        index = FeatureIndex(template, documents=True)
        enc = index.encode(sents)
        plain = FeatureIndex(template)
        own = [f for s in sents for f in plain.token_features(s)]
        extra = [t for doc in D.features(sents) for t in doc]
        want, strings = appended_ids(own, extra)
        assert encoded_rows(enc) == want and index.strings == strings
        ids = {f: i for i, f in enumerate(strings)}
        # frozen: strings the index lacks are dropped token by token, the rest keep their ids
        index.frozen = True
        other = [sent("Jones met Smith", 2), sent("jones and smith", 2)]
        enc2 = index.encode(other)
        own2 = [f for s in other for f in plain.token_features(s)]
        extra2 = [t for doc in D.features(other) for t in doc]
        for p, (a, b) in enumerate(zip(own2, extra2, strict=True)):
            want_p = [ids[f] for f in a + b if f in ids]
            assert enc2.feat_ids[enc2.tok_offsets[p] : enc2.tok_offsets[p + 1]].tolist() == want_p


def _toy(n: int) -> list[Sentence]:
    rng = np.random.default_rng(3)
    out = []
    for d in range(n):
        for _ in range(4):
            name = ["Anna", "Berlin", "Carla", "Dirk"][int(rng.integers(4))]
            start = ["The", "A", "Then"][int(rng.integers(3))]
            out.append(Sentence([start, "man", "saw", name, "."], ["O", "O", "O", "B-X", "O"],
                                {}, {"document": d}))  # fmt: skip
    return out


def test_learner_parameter_turns_them_on_and_model_files_keep_it() -> None:
    data = _toy(10)
    on = make("cw", template="ner", documents=True).fit(data, epochs=2)
    off = make("cw", template="ner").fit(data, epochs=2)
    assert any(s.startswith("dcase=") for s in on.features_.strings)
    assert not any(s.startswith("dcase=") for s in off.features_.strings)
    copy = type(on).from_bytes(on.to_bytes())
    assert copy.features_.documents and copy.params["documents"] is True
    assert copy.predict(data) == on.predict(data)


def test_a_version_4_model_file_still_loads() -> None:
    """A file of the previous format (no ``documents`` parameter) loads with document features
    off and predicts as before."""
    model = make("arow", template="ner").fit(_toy(5), epochs=2)
    data, meta = older_file(model.to_bytes(), 4, "documents")
    assert meta["version"] >= 5  # the current writer (format 6: float32 mean and covariance)
    old = type(model).from_bytes(data)
    assert not old.features_.documents and old.params["documents"] is False
    assert old.predict(_toy(5)) == model.predict(_toy(5))


def test_every_learner_accepts_the_tuned_defaults_of_every_template() -> None:
    """The ner defaults turn document features on; a learner with its own batch fit
    (maxent-l1) gets neither them nor clusters, and every learner can be made with them."""
    from cwal.learners import LEARNERS, recommended

    for template in ("chunk", "ner"):
        for name in LEARNERS:
            params = recommended(template, name)
            model = make(name, template=template, **params)
            want = template == "ner" and name != "maxent-l1"
            assert model.params.get("documents", False) is want, (template, name)
            assert model.features_.documents is want
