"""Plot the growth curve of a compare.py result: ``<plot venv python> bench/plot_growth.py RESULT.json OUT.png``.

Runs in its own venv (matplotlib is not a memstone dependency); compare.py calls it after a run.
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

STYLES = ["-", "--", ":", "-."]
MARKS = ["o", "s", "^", "x"]


def what_ran(command: str) -> str:
    if " ; " in command:  # compare.py --render merged several result files
        return "merged result files: commands in docs/benchmarks.md"
    return command.split("&&")[-1].strip()


def main() -> None:
    with open(sys.argv[1]) as fh:
        result = json.load(fh)
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for row, (wkey, skey, what) in enumerate(
        (("write_ms", "search_ms", "wall"), ("write_cpu_ms", "search_cpu_ms", "CPU"))
    ):
        a, b = axes[row]
        for si, (name, r) in enumerate(result["systems"].items()):
            growth = [g for g in r.get("speed", {}).get("growth", []) if wkey in g]
            if not growth:
                continue
            color = f"C{si}"  # one colour per system, one line style per mode
            a.plot([g["n"] for g in growth], [g[wkey] for g in growth], marker="o", color=color, label=name)
            for mi, mode in enumerate(r.get("modes") or sorted({m for g in growth for m in g.get(skey, {})})):
                pts = [(g["n"], g[skey][mode]) for g in growth if mode in g.get(skey, {})]
                if pts:
                    b.plot(
                        [p[0] for p in pts],
                        [p[1] for p in pts],
                        color=color,
                        linestyle=STYLES[mi % 4],
                        marker=MARKS[mi % 4],
                        label=f"{name} {mode}",
                    )
        a.set_title(f"single write p50 ({what} ms)")
        b.set_title(f"search p50, k=10 ({what} ms)")
    for ax in axes.flat:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("notes in the store")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    m = result["machine"]
    fig.suptitle(f"growth: {m['cores']} cores, {m['cpu']} — {what_ran(result['command'])}", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
