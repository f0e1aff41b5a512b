# SPDX-License-Identifier: GPL-2.0-or-later
"""Report maths: percentiles, weighted max-min fair shares, Jain's index."""
from __future__ import annotations

import math
from typing import Iterable, Sequence


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile (numpy's default 'linear'); p in [0, 100].

    Raises ValueError on an empty sequence or p outside [0, 100].
    """
    if not values:
        raise ValueError("percentile of an empty sequence")
    if not 0.0 <= p <= 100.0:
        raise ValueError(f"percentile {p} outside [0, 100]")
    xs = sorted(values)
    pos = (len(xs) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def mean(values: Iterable[float]) -> float:
    xs = list(values)
    if not xs:
        raise ValueError("mean of an empty sequence")
    return sum(xs) / len(xs)


def weighted_maxmin(capacity: float, weights: Sequence[float],
                    demands: Sequence[float]) -> list[float]:
    """Weighted max-min fair allocation of capacity (water filling).

    User i gets min(demand_i, share) where shares are proportional to weight_i
    among the users that are not satisfied; what satisfied users leave is
    redistributed. demands may be math.inf (backlogged). Users with weight 0
    or demand 0 get 0. The result sums to min(capacity, sum(demands)).
    """
    n = len(weights)
    if len(demands) != n:
        raise ValueError("weights and demands differ in length")
    if capacity < 0 or any(w < 0 for w in weights) or any(d < 0 for d in demands):
        raise ValueError("capacity, weights and demands must be >= 0")
    alloc = [0.0] * n
    open_ = {i for i in range(n) if weights[i] > 0 and demands[i] > 0}
    left = capacity
    while open_ and left > 1e-12 * max(1.0, capacity):
        wsum = sum(weights[i] for i in open_)
        level = left / wsum                      # capacity per unit of weight
        satisfied = {i for i in open_ if demands[i] - alloc[i] <= level * weights[i]}
        if not satisfied:
            for i in open_:
                alloc[i] += level * weights[i]
            break
        for i in satisfied:
            left -= demands[i] - alloc[i]
            alloc[i] = demands[i]
        open_ -= satisfied
    return alloc


def jain_index(xs: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1.0 for an empty or all-zero set."""
    n = len(xs)
    if n == 0:
        return 1.0
    sq = sum(x * x for x in xs)
    if sq == 0:
        return 1.0
    return sum(xs) ** 2 / (n * sq)


def normalized_jain(throughputs: Sequence[float], weights: Sequence[float],
                    demands: Sequence[float]) -> float:
    """Jain's index over x_u = throughput_u / fair_share_u, where the fair shares
    are the weighted max-min shares of the measured total among these (active)
    users. Users whose fair share is 0 are left out."""
    total = sum(throughputs)
    fair = weighted_maxmin(total, weights, demands)
    xs = [t / f for t, f in zip(throughputs, fair) if f > 0]
    return jain_index(xs)
