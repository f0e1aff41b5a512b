# SPDX-License-Identifier: GPL-2.0-or-later
"""Report maths: percentiles, weighted max-min fair shares, Jain's index."""
import math

import pytest

from reqsched_tools import metrics


def test_percentile_matches_linear_interpolation():
    xs = [15, 20, 35, 40, 50]
    assert metrics.percentile(xs, 0) == 15
    assert metrics.percentile(xs, 100) == 50
    assert metrics.percentile(xs, 50) == 35
    assert metrics.percentile(xs, 40) == pytest.approx(29.0)   # pos 1.6: 20 + 0.6 * 15
    assert metrics.percentile([7], 95) == 7


def test_percentile_unsorted_input_and_errors():
    assert metrics.percentile([3, 1, 2], 50) == 2
    with pytest.raises(ValueError):
        metrics.percentile([], 50)
    with pytest.raises(ValueError):
        metrics.percentile([1, 2], 101)


def test_maxmin_backlogged_users_split_by_weight():
    alloc = metrics.weighted_maxmin(7.0, [4, 2, 1], [math.inf] * 3)
    assert alloc == pytest.approx([4.0, 2.0, 1.0])


def test_maxmin_redistributes_what_satisfied_users_leave():
    # user 0 only wants 1 of its 4-of-7 share; the rest goes 2:1 to the others
    alloc = metrics.weighted_maxmin(7.0, [4, 2, 1], [1.0, math.inf, math.inf])
    assert alloc == pytest.approx([1.0, 4.0, 2.0])
    assert sum(alloc) == pytest.approx(7.0)


def test_maxmin_idle_users_get_nothing_and_cascade():
    # an idle user (demand 0) is ignored; a small demand is met; cascade twice
    alloc = metrics.weighted_maxmin(10.0, [1, 1, 1, 1], [0.0, 1.0, 2.5, math.inf])
    assert alloc == pytest.approx([0.0, 1.0, 2.5, 6.5])


def test_maxmin_total_demand_below_capacity():
    alloc = metrics.weighted_maxmin(10.0, [4, 1], [2.0, 3.0])
    assert alloc == pytest.approx([2.0, 3.0])


def test_maxmin_rejects_bad_input():
    with pytest.raises(ValueError):
        metrics.weighted_maxmin(1.0, [1, 2], [1.0])
    with pytest.raises(ValueError):
        metrics.weighted_maxmin(1.0, [-1], [1.0])


def test_jain_index_bounds():
    assert metrics.jain_index([1, 1, 1, 1]) == pytest.approx(1.0)
    assert metrics.jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert metrics.jain_index([2, 1]) == pytest.approx(9 / 10)
    assert metrics.jain_index([]) == 1.0


def test_normalized_jain_is_one_at_exact_weighted_shares():
    # 4:2:1 classes with 2 users each at exactly their weighted shares
    thr = [4, 4, 2, 2, 1, 1]
    w = [4, 4, 2, 2, 1, 1]
    assert metrics.normalized_jain(thr, w, [math.inf] * 6) == pytest.approx(1.0)


def test_normalized_jain_penalises_equal_split_under_weights():
    # everyone got the same although weights are 4:1
    j = metrics.normalized_jain([1, 1], [4, 1], [math.inf, math.inf])
    # fair shares 1.6 and 0.4 -> x = 0.625, 2.5
    assert j == pytest.approx((0.625 + 2.5) ** 2 / (2 * (0.625 ** 2 + 2.5 ** 2)))
    assert j < 0.8


def test_normalized_jain_accounts_for_app_limited_user():
    # user 0 (weight 4) only wanted 1 unit; users 1, 2 split the rest 2:1
    thr = [1.0, 4.0, 2.0]
    j = metrics.normalized_jain(thr, [4, 2, 1], [1.0, math.inf, math.inf])
    assert j == pytest.approx(1.0)
