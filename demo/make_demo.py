"""Generate the built-in demo corpus: invented news sentences with PER / ORG / LOC / MISC entities.

Every name is made up here from syllables, every sentence from the templates below; nothing is
copied from a research corpus. The output is deterministic (fixed seed), so re-running the script
reproduces the two JSONL files byte for byte:

    python demo/make_demo.py            # writes demo/ner_pool.jsonl and demo/ner_eval.jsonl
    python demo/make_demo.py --check    # exits 1 when a committed file differs

``ner_pool.jsonl``: ``{"tokens": [...]}`` per line, unlabeled sentences to annotate.
``ner_eval.jsonl``: ``{"tokens": [...], "tags": [...]}`` with gold IOB2 tags, the evaluation split
that gives the model's charts something to show after a few labels.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
POOL_FILE, EVAL_FILE = HERE / "ner_pool.jsonl", HERE / "ner_eval.jsonl"
TYPES = ("PER", "ORG", "LOC", "MISC")
SEED = 20240611
N_POOL, N_EVAL = 320, 100

ONSETS = ["Br", "C", "D", "F", "G", "H", "K", "L", "M", "N", "Ost", "P", "R", "S", "T", "V", "Z"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ei", "ou"]
CODAS = ["l", "n", "r", "nd", "rk", "lt", "m", "v", "th"]
ENDINGS = ["berg", "holt", "ley", "mont", "ric", "sby", "vik", "wick", "ora", "ane"]
FIRST = [
    "Alba", "Bren", "Calix", "Dorit", "Elvar", "Fenna", "Gisli", "Hanne", "Ilo", "Joren",
    "Kaia", "Lune", "Mirek", "Nessa", "Orin", "Pella", "Quill", "Rosk", "Sefa", "Tavi",
]  # fmt: skip
TITLES = ["Mr", "Ms", "Dr", "Judge", "Minister", "Coach"]
ORG_SUFFIX = ["Group", "Holdings", "Bank", "Motors", "Labs", "Foods", "Airways", "Press"]
CLUB_SUFFIX = ["United", "Rovers", "Athletic", "City"]
INSTITUTIONS = ["University of", "Bank of", "Museum of", "Port Authority of"]
PLACE_SUFFIX = ["", "", " Bay", " Falls", " Heights"]
EVENTS = ["Cup", "Festival", "Open", "Summit", "Games"]
PRODUCTS = ["X2", "Pro", "Nova", "Mini"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
NUMBERS = ["two", "three", "five", "12", "40", "150", "2,000"]
ORDINALS = ["second", "third", "fourth", "fifth"]


def demonym(place: str) -> str:
    """An adjective for an invented place: Zorvik -> Zorvikian, Hulora -> Hulorian."""
    return (place[:-1] if place[-1] in "aeiouy" else place) + "ian"


class Namer:
    """Invented names: persons, organisations, locations and miscellaneous (events, demonyms)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.places = sorted({self._word() + rng.choice(ENDINGS) for _ in range(40)})
        self.surnames = sorted({self._word() + rng.choice(ENDINGS[:6]) for _ in range(60)})

    def _word(self) -> str:
        r = self.rng
        return r.choice(ONSETS) + r.choice(VOWELS) + r.choice(CODAS)

    def per(self) -> list[str]:
        r = self.rng
        kind = r.random()
        if kind < 0.5:
            return [r.choice(FIRST), r.choice(self.surnames)]
        if kind < 0.8:
            return [r.choice(self.surnames)]
        return [r.choice(FIRST)]

    def loc(self) -> list[str]:
        return (self.rng.choice(self.places) + self.rng.choice(PLACE_SUFFIX)).split()

    def org(self) -> list[str]:
        r = self.rng
        kind = r.random()
        if kind < 0.45:
            return [r.choice(self.surnames), r.choice(ORG_SUFFIX)]
        if kind < 0.7:
            return [r.choice(self.places), r.choice(CLUB_SUFFIX)]
        if kind < 0.85:
            return [*r.choice(INSTITUTIONS).split(), r.choice(self.places)]
        return ["".join(r.sample("BCDFKLMNPRSTV", 3))]

    def club(self) -> list[str]:
        return [self.rng.choice(self.places), self.rng.choice(CLUB_SUFFIX)]

    def misc(self) -> list[str]:
        r = self.rng
        kind = r.random()
        if kind < 0.4:
            return [r.choice(self.places), r.choice(EVENTS)]
        if kind < 0.7:
            return [demonym(r.choice(self.places))]
        return [r.choice(self.surnames), r.choice(PRODUCTS)]


TEMPLATES = [
    "{PER} , the chief executive of {ORG} , said on {DAY} that the company would open an office in {LOC} .",
    "{ORG} shares rose {NUM} percent in {LOC} after {PER} announced the deal .",
    "Police in {LOC} said {PER} had been questioned about the fire .",
    "{PER} scored twice as {CLUB} beat {CLUB} 3 - 1 in the {MISC} .",
    "The {MISC} will be held in {LOC} next year , organisers said .",
    "{PER} told reporters in {LOC} that talks with {ORG} had stalled .",
    "Flights between {LOC} and {LOC} were cancelled on {DAY} because of fog .",
    "{ORG} hired {PER} to lead its new research centre near {LOC} .",
    "The {MISC} delegation arrived in {LOC} on {DAY} for two days of talks .",
    "{PER} , a {MISC} writer , won the prize for a novel set in {LOC} .",
    "Analysts at {ORG} expect prices to fall by {NUM} percent .",
    "{PER} and {PER} will meet in {LOC} to sign the agreement .",
    "Heavy rain flooded roads north of {LOC} , said {PER} of the {ORG} .",
    "{ORG} recalled {NUM} thousand units of the {MISC} after complaints .",
    "On {DAY} , {PER} resigned from the board of {ORG} .",
    "Fans of {CLUB} gathered in central {LOC} to celebrate the title .",
    "The mayor of {LOC} , {PER} , opened the new bridge on {DAY} .",
    "{MISC} farmers protested outside the offices of {ORG} in {LOC} .",
    "{PER} said the {MISC} had drawn {NUM} thousand visitors this year .",
    "A spokesman for {ORG} declined to comment .",
    "{PER} was born in {LOC} and studied at the {ORG} .",
    "Train services to {LOC} resumed after {NUM} hours , {ORG} said .",
    "{ORG} agreed to buy {ORG} for an undisclosed sum .",
    "The court in {LOC} fined {ORG} for breaking safety rules .",
    "{TITLE} {PER} will visit {LOC} and {LOC} later this month .",
    "{PER} finished third at the {MISC} behind {PER} .",
    "Prices in {LOC} rose for the {ORD} month in a row .",
    "It was the first time since {NUM} that {ORG} had lost at home .",
    "The new {MISC} goes on sale in {LOC} on {DAY} .",
    "Residents of {LOC} said the water supply was cut for {NUM} days .",
    "{TITLE} {PER} said {ORG} must publish its accounts .",
    "The weather stayed dry across the region on {DAY} .",
]  # fmt: skip


def fill(template: str, namer: Namer, rng: random.Random) -> tuple[list[str], list[str]]:
    """Tokens and IOB2 tags of one sentence made from ``template``."""
    tokens: list[str] = []
    tags: list[str] = []
    makers = {"PER": namer.per, "ORG": namer.org, "LOC": namer.loc, "MISC": namer.misc}
    types = {"CLUB": "ORG"}
    makers["CLUB"] = namer.club
    plain = {"DAY": DAYS, "NUM": NUMBERS, "ORD": ORDINALS, "TITLE": TITLES}
    for word in template.split():
        slot = word[1:-1] if word.startswith("{") and word.endswith("}") else None
        if slot in makers:
            name = makers[slot]()
            tokens.extend(name)
            kind = types.get(slot, slot)
            tags.extend([f"B-{kind}"] + [f"I-{kind}"] * (len(name) - 1))
        elif slot in plain:
            tokens.append(rng.choice(plain[slot]))
            tags.append("O")
        else:
            tokens.append(word)
            tags.append("O")
    return tokens, tags


def generate(seed: int = SEED) -> tuple[list[dict], list[dict]]:
    """The demo records: ``N_POOL`` unlabeled pool sentences and ``N_EVAL`` gold eval ones."""
    rng = random.Random(seed)
    namer = Namer(rng)
    pool: list[dict] = []
    gold: list[dict] = []
    seen: set[tuple[str, ...]] = set()
    while len(pool) + len(gold) < N_POOL + N_EVAL:
        tokens, tags = fill(rng.choice(TEMPLATES), namer, rng)
        if tuple(tokens) in seen:
            continue
        seen.add(tuple(tokens))
        if len(pool) < N_POOL:
            pool.append({"tokens": tokens})
        else:
            gold.append({"tokens": tokens, "tags": tags})
    return pool, gold


def sentences(n: int, seed: int = SEED + 1) -> list[list[str]]:
    """``n`` more invented sentences (tokens only, repeats allowed): large pools for benchmarks."""
    rng = random.Random(seed)
    namer = Namer(rng)
    return [fill(rng.choice(TEMPLATES), namer, rng)[0] for _ in range(n)]


def render(records: list[dict]) -> str:
    """The JSONL text of ``records``."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file")
    args = parser.parse_args(argv)
    pool, gold = generate()
    outputs = {POOL_FILE: render(pool), EVAL_FILE: render(gold)}
    if args.check:
        stale = [
            p.name for p, text in outputs.items() if not p.exists() or p.read_text("utf-8") != text
        ]
        print(f"differ from the generator's output: {', '.join(stale)}" if stale else "up to date")
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    print(f"wrote {N_POOL} pool sentences to {POOL_FILE.name}, {N_EVAL} gold to {EVAL_FILE.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
