"""What one chart of benchmark/charts.py shows: the records it reads, and the choice of at
most MAX_SERIES series a chart so that each carries one message.

Variants of one engine ("ladybug: ..." x 6) fold to their fastest; a longer group splits by
the first part of its labels (a record's label is the JSON path naming it, parts joined by
" · "), the records with one-part labels (the engines) staying together. The results files
keep every record; the charts choose.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

@dataclass
class Latency:
    source: Path
    engine: str
    workload: str
    scale: float | None
    p50: float                    # milliseconds
    p95: float
    p99: float | None = None
    samples: list[float] = field(default_factory=list)


@dataclass
class Rate:
    source: Path
    label: str
    per_s: float



MAX_SERIES = 5


def _family(engine: str) -> str | None:
    """"ladybug" for "ladybug: hop 0 + SHORTEST 1..2, 2 thread(s)": variants of one engine."""
    head, sep, _ = engine.partition(":")
    return head.strip() if sep and head.strip() else None


def fold_variants(group: list[Latency]) -> list[Latency]:
    """Several variants of one engine ("ladybug: ..." x 6) become its fastest by p50, labelled
    as the best of them: the chart compares engines, the results file keeps every variant."""
    by_family: dict[str, list[Latency]] = defaultdict(list)
    for r in group:
        fam = _family(r.engine)
        if fam is not None:
            by_family[fam].append(r)
    out = []
    for r in group:
        fam = _family(r.engine)
        rows = by_family.get(fam, []) if fam is not None else []
        if len(rows) < 2:
            out.append(r)
        elif r is min(rows, key=lambda x: x.p50):
            best = r.engine.partition(":")[2].strip()
            out.append(Latency(r.source, f"{fam}, fastest of {len(rows)} variants: {best}", r.workload, r.scale,
                               r.p50, r.p95, r.p99, r.samples))
    return out


def split_messages(group: list[Latency]) -> list[tuple[str | None, list[Latency]]]:
    """At most MAX_SERIES rows a chart: a longer group splits by the first part of its labels
    ("ids · before", "ids · after a write" apart from "verb recall_2hop · before"), the records
    with one-part labels (the engines) staying together; each part is one message."""
    group = fold_variants(group)
    if len(group) <= MAX_SERIES:
        return [(None, group)]
    parts: dict[str | None, list[Latency]] = defaultdict(list)
    for r in group:
        head, sep, rest = r.engine.partition(" · ")
        if sep:
            parts[head].append(Latency(r.source, rest, r.workload, r.scale, r.p50, r.p95, r.p99, r.samples))
        else:
            parts[None].append(r)
    out = []
    for head, rows in sorted(parts.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")):
        for start in range(0, len(rows), MAX_SERIES):     # still too many: consecutive slices
            out.append((head, rows[start:start + MAX_SERIES]))
    return out


def split_rates(rates: list[Rate]) -> list[tuple[str | None, list[Rate]]]:
    """At most MAX_SERIES rows a chart, split by the first part of the labels as latencies are."""
    if len(rates) <= MAX_SERIES:
        return [(None, rates)]
    parts: dict[str | None, list[Rate]] = defaultdict(list)
    for r in rates:
        head, sep, rest = r.label.partition(" / ")
        parts[head if sep else None].append(Rate(r.source, rest, r.per_s) if sep else r)
    out = []
    for head, rows in sorted(parts.items(), key=lambda kv: (kv[0] is not None, kv[0] or "")):
        for start in range(0, len(rows), MAX_SERIES):
            out.append((head, rows[start:start + MAX_SERIES]))
    return out


def scaling_series(group: list[Latency]) -> dict[str, list[Latency]]:
    """engine -> its records by corpus size, for the engines run at two sizes or more; variants
    of one engine fold to the fastest at each size."""
    by_scale: dict[float, list[Latency]] = defaultdict(list)
    for r in group:
        if " · " not in r.engine:          # a part of a longer story (journal states), not an engine
            by_scale[r.scale].append(r)
    series: dict[str, list[Latency]] = defaultdict(list)
    for rows in by_scale.values():
        families: dict[str, list[Latency]] = defaultdict(list)
        for r in rows:
            families[_family(r.engine) or r.engine].append(r)
        for fam, members in families.items():
            best = min(members, key=lambda r: r.p50)
            series[f"{fam} (fastest of its {len(members)} variants at each size)" if len(members) > 1
                   else best.engine].append(best)
    return {e: sorted(rows, key=lambda r: r.scale) for e, rows in sorted(series.items())
            if len({r.scale for r in rows}) >= 2}
