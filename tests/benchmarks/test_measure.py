"""The statistics the benchmark reports: medians, ranges and the 95 % interval of a difference."""

from __future__ import annotations

import random
import statistics

from benchmarks.measure import Series, compare, difference_interval, median_interval, ratio_interval
from benchmarks.report import _target
from hypothesis import given, strategies as st

samples = st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False), min_size=1, max_size=300)


@given(samples)
def test_the_median_lies_in_its_interval_and_the_interval_in_the_samples(values: list[float]) -> None:
    low, high = median_interval(values)
    assert min(values) <= low <= statistics.median(values) <= high <= max(values)


def test_the_median_interval_is_the_order_statistics_around_the_middle() -> None:
    values = list(range(100))  # n = 100: ranks 50 ∓ 1.96·10/2 = 40.2 and 59.8
    assert median_interval(values) == (40, 60)
    assert median_interval(list(range(10_000))) == (4902, 5098)


@given(samples, samples)
def test_the_difference_lies_in_its_interval(core: list[float], bare: list[float]) -> None:
    low, high = difference_interval(core, bare)
    assert low <= statistics.median(core) - statistics.median(bare) <= high


def test_the_interval_narrows_with_more_samples_and_covers_the_true_difference() -> None:
    rng = random.Random(7)

    def draw(n: int, shift: float) -> list[float]:
        return [1000 + shift + rng.gauss(0, 100) for _ in range(n)]

    small = difference_interval(draw(1_000, 25), draw(1_000, 0))
    large = difference_interval(draw(16_000, 25), draw(16_000, 0))
    assert large[1] - large[0] < (small[1] - small[0]) / 3  # width ∝ 1/√n
    assert small[0] < 25 < small[1] and large[0] < 25 < large[1]
    assert 8 < small[1] - small[0] < 30  # ±1.96·1.25·100·√(2/1000) ≈ ±11


@given(samples.map(lambda v: [x + 1 for x in v]), samples.map(lambda v: [x + 1 for x in v]))
def test_the_ratio_lies_in_its_interval(core: list[float], bare: list[float]) -> None:
    low, high = ratio_interval(core, bare)
    assert low <= statistics.median(core) / statistics.median(bare) * (1 + 1e-12) and (
        statistics.median(core) / statistics.median(bare) <= high * (1 + 1e-12)
    )


def test_the_ratio_interval_covers_the_true_ratio() -> None:
    rng = random.Random(3)
    core = [700 + rng.gauss(0, 30) for _ in range(15)]
    bare = [735 + rng.gauss(0, 30) for _ in range(15)]
    low, high = ratio_interval(core, bare)
    assert low < 700 / 735 < high and high - low < 0.2


def test_compare_reports_the_interval_of_the_overhead() -> None:
    core, bare = Series(), Series()
    core.add_round([10.0, 11.0, 12.0, 13.0])
    bare.add_round([1.0, 2.0, 3.0, 4.0])
    overhead = compare(core, bare)["overhead"]
    assert overhead["median"] == 9.0
    assert overhead["ci95_low"] <= 9.0 <= overhead["ci95_high"]
    ratio = compare(core, bare)["ratio"]
    assert ratio["ci95_low"] <= ratio["median"] == 11.5 / 2.5 <= ratio["ci95_high"]


def test_a_target_says_whether_sampling_alone_could_change_its_verdict() -> None:
    assert _target("t", 26.0, 30.0, "µs", interval=(23.0, 29.0))["clear"] is True
    assert _target("t", 28.0, 30.0, "µs", interval=(25.0, 31.0)) == {
        "name": "t",
        "value": 28.0,
        "limit": 30.0,
        "unit": "µs",
        "at_least": False,
        "met": True,
        "interval": [25.0, 31.0],
        "clear": False,
    }
    assert _target("t", 31.0, 30.0, "µs", interval=(29.0, 33.0))["clear"] is False
    assert _target("t", 34.0, 30.0, "µs", interval=(31.0, 37.0))["clear"] is True
    assert _target("t", 0.97, 0.95, "x", at_least=True, interval=(0.96, 0.98))["clear"] is True
    assert _target("t", 0.5, 0.95, "x", at_least=True)["clear"] is None
