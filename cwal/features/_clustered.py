"""Word-cluster features (cwal/features/clusters.py) added to a template: the cluster of the word
at offsets -1, 0, +1 at every level, and the bigrams of the second level (64 clusters by default)
around the token; slots placed after the template's word slots (before its bag and POS)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cwal.features._batch import BatchSpec, W
from cwal.features.clusters import WordClusters

Template = Callable[[Sequence[str], dict[str, Sequence[str]]], list[list[str]]]

CLUSTER_OFFSETS = (-1, 0, 1)


def _cluster_slots(clusters: WordClusters, first_field: int) -> list:
    slots: list = []
    for level, size in enumerate(clusters.sizes):
        f = first_field + level
        slots += [(f"c{size}[{o:+d}]", (W(o, f),)) for o in CLUSTER_OFFSETS]
    if len(clusters.sizes) > 1:
        f, size = first_field + 1, clusters.sizes[1]
        slots += [(f"c{size}[-1|0]", (W(-1, f), W(0, f))), (f"c{size}[0|+1]", (W(0, f), W(1, f)))]
    return slots


def with_clusters(
    spec: BatchSpec, base: Template, clusters: WordClusters
) -> tuple[BatchSpec, Template]:
    """A template's batch spec and string function with the cluster features of ``clusters``."""
    n_fields = len(spec.pads[0])
    base_entry, of = spec.entry, clusters.of

    def entry(word: str) -> tuple:
        return (*base_entry(word), *of(word))

    pads = [(*p, *(p[0],) * len(clusters.sizes)) for p in spec.pads]
    slots = _cluster_slots(clusters, n_fields)
    at = len(spec.words)
    out = BatchSpec(entry, pads, [*spec.words, *slots], spec.bag, spec.pos)

    def template(tokens: Sequence[str], columns: dict[str, Sequence[str]]) -> list[list[str]]:
        feats = base(tokens, columns)
        ents = [*pads[:2], *map(entry, tokens), *pads[2:]]
        for i, f in enumerate(feats):
            f[at:at] = [
                prefix + "=" + "|".join(ents[i + 2 + o][field] for _, o, field in deps)
                for prefix, deps in slots
            ]
        return feats

    return out, template
