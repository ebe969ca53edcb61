"""Timing loops. Sides alternate (A B A B ...: call by call, stream by stream, burst by burst),
in rounds that swap which side goes first; every call is timed on its own.

A result keeps every sample, the median of each round (for the min/max range) and the median
over all samples. Absolute times are context; the comparisons (difference and ratio of the
medians, measured in the same rounds) are the result, each difference with a 95 % confidence
interval: how far sampling alone can move it.
"""

from __future__ import annotations

import asyncio
import gc
import math
import statistics
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Call = Callable[[], Any]
AsyncCall = Callable[[], Awaitable[Any]]
#: A stream opener returns an iterator of text deltas (None for events that carry no text).
Stream = Callable[[], Iterable[str | None]]
AsyncStream = Callable[[], Any]  # -> AsyncIterator[str | None]


@dataclass
class Series:
    """Samples (in microseconds, or another unit named by the caller) from interleaved rounds."""

    samples: list[float] = field(default_factory=list)
    rounds: list[float] = field(default_factory=list)  # median of each round

    def add_round(self, values: list[float]) -> None:
        self.samples.extend(values)
        self.rounds.append(statistics.median(values))

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def summary(self) -> dict[str, float]:
        return {
            "median": self.median,
            "min": min(self.rounds),
            "max": max(self.rounds),
            "n": float(len(self.samples)),
        }


def median_interval(samples: Sequence[float], z: float = 1.96) -> tuple[float, float]:
    """A distribution-free confidence interval of the median (95 % for ``z`` 1.96): the order
    statistics at ranks n/2 -+ z·√n/2, which need no assumption about the shape of the samples."""
    ordered = sorted(samples)
    n = len(ordered)
    spread = z * math.sqrt(n) / 2
    return ordered[max(math.floor(n / 2 - spread), 0)], ordered[min(math.ceil(n / 2 + spread), n - 1)]


def _median_and_margins(samples: Sequence[float]) -> tuple[float, float, float]:
    """The median, and its distances down and up to the ends of its 95 % interval."""
    median = statistics.median(samples)
    low, high = median_interval(samples)
    return median, median - low, high - median


def difference_interval(core: Sequence[float], bare: Sequence[float]) -> tuple[float, float]:
    """A 95 % confidence interval of median(core) - median(bare): each median's interval, the
    two sides' distances combined as independent errors (in quadrature)."""
    core_median, core_down, core_up = _median_and_margins(core)
    bare_median, bare_down, bare_up = _median_and_margins(bare)
    difference = core_median - bare_median
    return difference - math.hypot(core_down, bare_up), difference + math.hypot(core_up, bare_down)


def ratio_interval(core: Sequence[float], bare: Sequence[float]) -> tuple[float, float]:
    """A 95 % confidence interval of median(core) / median(bare): the two medians' relative
    distances to their intervals' ends, combined in quadrature (positive samples)."""
    core_median, core_down, core_up = _median_and_margins(core)
    bare_median, bare_down, bare_up = _median_and_margins(bare)
    ratio = core_median / bare_median
    below = math.hypot(core_down / core_median, bare_up / bare_median)
    above = math.hypot(core_up / core_median, bare_down / bare_median)
    return ratio * (1 - below), ratio * (1 + above)


def compare(core: Series, bare: Series) -> dict[str, Any]:
    """Core against bare: medians, per-round ranges, the difference (with its 95 % confidence
    interval) and the ratio."""
    diffs = [c - b for c, b in zip(core.rounds, bare.rounds, strict=True)]
    ratios = [c / b for c, b in zip(core.rounds, bare.rounds, strict=True) if b]
    low, high = difference_interval(core.samples, bare.samples)
    ratio_low, ratio_high = (
        ratio_interval(core.samples, bare.samples) if bare.median > 0 < core.median else (math.nan, math.nan)
    )
    return {
        "core": core.summary(),
        "bare": bare.summary(),
        "overhead": {
            "median": core.median - bare.median,
            "min": min(diffs),
            "max": max(diffs),
            "ci95_low": low,
            "ci95_high": high,
        },
        "ratio": {
            "median": core.median / bare.median if bare.median else float("nan"),
            "ci95_low": ratio_low,
            "ci95_high": ratio_high,
            "min": min(ratios) if ratios else float("nan"),
            "max": max(ratios) if ratios else float("nan"),
        },
    }


def _settle() -> None:
    gc.collect()


def _order(names: list[str], round_no: int) -> list[str]:
    """The sides in call order for a round: A B in even rounds, B A in odd ones."""
    return names if round_no % 2 == 0 else names[::-1]


def calls(sides: Mapping[str, Call], *, warmup: int, rounds: int, per_round: int) -> dict[str, Series]:
    """Sync calls, alternating sides call by call (A B A B ...), ``per_round`` calls per side and
    round; every call is timed on its own."""
    for call in sides.values():
        for _ in range(warmup):
            call()
    names = list(sides)
    out = {name: Series() for name in names}
    clock = time.perf_counter_ns
    for round_no in range(rounds):
        _settle()
        order = [(name, sides[name]) for name in _order(names, round_no)]
        values: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(per_round):
            for name, call in order:
                start = clock()
                call()
                values[name].append((clock() - start) / 1000)
        for name in names:
            out[name].add_round(values[name])
    return out


async def acalls(sides: Mapping[str, AsyncCall], *, warmup: int, rounds: int, per_round: int) -> dict[str, Series]:
    """Async calls, awaited one at a time on the running loop, alternating sides call by call."""
    for call in sides.values():
        for _ in range(warmup):
            await call()
    names = list(sides)
    out = {name: Series() for name in names}
    clock = time.perf_counter_ns
    for round_no in range(rounds):
        _settle()
        order = [(name, sides[name]) for name in _order(names, round_no)]
        values: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(per_round):
            for name, call in order:
                start = clock()
                await call()
                values[name].append((clock() - start) / 1000)
        for name in names:
            out[name].add_round(values[name])
    return out


@dataclass
class StreamSeries:
    first: Series = field(default_factory=Series)  # µs from the call to the first text delta
    total: Series = field(default_factory=Series)  # µs from the call to the end of the stream
    per_delta: Series = field(default_factory=Series)  # µs per delta after the first one
    deltas: int = 0

    def add_round(self, runs: list[tuple[float, float, float, int]]) -> None:
        self.first.add_round([r[0] for r in runs])
        self.total.add_round([r[1] for r in runs])
        self.per_delta.add_round([r[2] for r in runs])
        self.deltas = runs[-1][3]


def _one_stream(open_stream: Stream) -> tuple[float, float, float, int]:
    clock = time.perf_counter_ns
    start = clock()
    first = 0
    count = 0
    for text in open_stream():
        if text:
            count += 1
            if count == 1:
                first = clock()
    end = clock()
    return (first - start) / 1000, (end - start) / 1000, (end - first) / 1000 / max(count - 1, 1), count


async def _one_astream(open_stream: AsyncStream) -> tuple[float, float, float, int]:
    clock = time.perf_counter_ns
    start = clock()
    first = 0
    count = 0
    async for text in open_stream():
        if text:
            count += 1
            if count == 1:
                first = clock()
    end = clock()
    return (first - start) / 1000, (end - start) / 1000, (end - first) / 1000 / max(count - 1, 1), count


def streams(sides: Mapping[str, Stream], *, warmup: int, rounds: int, per_round: int) -> dict[str, StreamSeries]:
    """Whole streams, alternating sides stream by stream."""
    for open_stream in sides.values():
        for _ in range(warmup):
            _one_stream(open_stream)
    names = list(sides)
    out = {name: StreamSeries() for name in names}
    for round_no in range(rounds):
        _settle()
        runs: dict[str, list[tuple[float, float, float, int]]] = {name: [] for name in names}
        for _ in range(per_round):
            for name in _order(names, round_no):
                runs[name].append(_one_stream(sides[name]))
        for name in names:
            out[name].add_round(runs[name])
    return out


async def astreams(
    sides: Mapping[str, AsyncStream], *, warmup: int, rounds: int, per_round: int
) -> dict[str, StreamSeries]:
    for open_stream in sides.values():
        for _ in range(warmup):
            await _one_astream(open_stream)
    names = list(sides)
    out = {name: StreamSeries() for name in names}
    for round_no in range(rounds):
        _settle()
        runs: dict[str, list[tuple[float, float, float, int]]] = {name: [] for name in names}
        for _ in range(per_round):
            for name in _order(names, round_no):
                runs[name].append(await _one_astream(sides[name]))
        for name in names:
            out[name].add_round(runs[name])
    return out


async def _burst(call: AsyncCall, total: int, in_flight: int) -> float:
    """``total`` requests with exactly ``in_flight`` outstanding; returns requests per second."""
    remaining = iter(range(total))

    async def worker() -> None:
        for _ in remaining:
            await call()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return total / (time.perf_counter() - start)


async def throughput(
    sides: Mapping[str, AsyncCall], *, total: int, in_flight: int, rounds: int, warmup: int
) -> dict[str, Series]:
    """Requests per second for ``total`` async requests at ``in_flight`` concurrency: one burst
    per side and round, sides alternating burst by burst."""
    for call in sides.values():
        await _burst(call, warmup, min(in_flight, max(warmup, 1)))
    names = list(sides)
    out = {name: Series() for name in names}
    for round_no in range(rounds):
        for name in _order(names, round_no):
            _settle()
            out[name].add_round([await _burst(sides[name], total, in_flight)])
    return out


def drain(iterator: Iterator[Any]) -> None:
    for _ in iterator:
        pass
