#!/usr/bin/env python3
"""Performance history: bench/results/history.csv (one row per run of a query suite, appended
by bench/lib/suite.py) drawn as bench/results/history.png, which bench/RESULTS.md links.

Usage: bench/run report   (or bench/.venv/bin/python bench/report.py [--out PATH])

Two panels per suite family: Basalt's geometric mean in seconds, and its ratio to each peer
(lower is better, 1.0 = as fast as the peer). Debug-build runs (correctness runs) are left out.
"""

import argparse
import csv
import datetime
import os
from collections import defaultdict

HISTORY = os.path.join("bench", "results", "history.csv")
PEERS = ["duckdb", "chdb", "datafusion"]
COLORS = {"basalt": "C0", "duckdb": "C1", "chdb": "C2", "datafusion": "C3"}


def read_history(path):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r.get("build", "release") != "debug"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--history", default=HISTORY)
    ap.add_argument("--out", default=os.path.join("bench", "results", "history.png"))
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_history(args.history)
    by_suite = defaultdict(list)
    for r in rows:
        by_suite[r["suite"]].append(r)
    suites = sorted(by_suite)
    fig, axes = plt.subplots(len(suites), 2, figsize=(12, 3.2 * max(1, len(suites))),
                             squeeze=False)
    for (ax_time, ax_ratio), suite in zip(axes, suites):
        runs = sorted(by_suite[suite], key=lambda r: r["date"])
        dates = [datetime.datetime.fromisoformat(r["date"]) for r in runs]
        ax_time.plot(dates, [float(r["basalt_geomean_s"] or "nan") for r in runs], "o-",
                     color=COLORS["basalt"], label="basalt")
        for p in PEERS:
            vals = [float(r[f"{p}_geomean_s"] or "nan") for r in runs]
            if any(v == v for v in vals):
                ax_time.plot(dates, vals, ".--", alpha=0.6, color=COLORS[p], label=p)
                ax_ratio.plot(dates, [float(r[f"basalt_{p}_ratio"] or "nan") for r in runs],
                              "o-", color=COLORS[p], label=f"basalt/{p}")
        ax_time.set_title(f"{suite}: geometric mean (s)")
        ax_ratio.set_title(f"{suite}: Basalt / peer (lower is better)")
        ax_ratio.axhline(1.0, color="grey", lw=0.8)
        for ax in (ax_time, ax_ratio):
            ax.legend(fontsize=7)
            ax.tick_params(axis="x", labelrotation=30, labelsize=7)
            ax.set_ylim(bottom=0)
    fig.tight_layout()
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out} from {len(rows)} runs of {len(suites)} suites")


if __name__ == "__main__":
    main()
