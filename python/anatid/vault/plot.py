"""`anatid eval run --plot`: Recall@k per query class for each retrieval mode.

matplotlib is imported only here, and only when a chart is asked for: it is not
a dependency of anatid (pip install matplotlib, or the bench extra).
"""
from __future__ import annotations

from pathlib import Path


def plot_eval(scores, k: int, out) -> Path:
    """Grouped bars from `scores`: objects or dicts with mode, query_class and recall."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install matplotlib (or the bench extra)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    get = (lambda s, n: s[n]) if scores and isinstance(scores[0], dict) else getattr
    classes = list(dict.fromkeys(get(s, "query_class") for s in scores))
    modes = list(dict.fromkeys(get(s, "mode") for s in scores))
    value = {(get(s, "mode"), get(s, "query_class")): get(s, "recall") for s in scores}
    width = 0.8 / max(len(modes), 1)
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(classes) * max(len(modes), 1) / 2), 4))
    for i, mode in enumerate(modes):
        xs = [c + (i - (len(modes) - 1) / 2) * width for c in range(len(classes))]
        ax.bar(xs, [value.get((mode, c), 0.0) for c in classes], width, label=mode)
    ax.set_xticks(range(len(classes)), classes)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"Recall@{k}")
    ax.set_title(f"Recall@{k} per query class and retrieval mode", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    return out
