"""The live-training lab (notebook 06) at work: how many training steps a second, and how long
one of its frames takes (``STEPS_PER_FRAME`` steps of the course's backward pass and Adam, then
the redraw of the loss curve).

The model is tiny (16 numbers per token), so a step is mostly Python, not matrix products: the
browser estimate is the no-BLAS time times the WebAssembly factor, as for every lab. Target: a
frame within two frames at 60 Hz (33.3 ms), so that a running lab redraws at least 30 times a
second and answers a click on "stop" within a frame or two.

    python -m benchmarks.training [--quick]     # one JSON line, for benchmarks.browser_estimate
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

os.environ.setdefault("MPLBACKEND", "Agg")

FRAME_TARGET_MS = 33.3
STEPS = 60                 # steps timed per placement (a fifth of a run)


def steps_per_second(placement: str, steps: int) -> float:
    """Training steps a second of a fresh run with ``placement`` ("pre" or "post"), after 3 steps
    of warming up (the first step allocates the optimiser's state)."""
    from lib.train import LiveTraining

    run = LiveTraining(placement=placement)
    run.advance(3)
    began = time.perf_counter()
    run.advance(steps)
    return steps / (time.perf_counter() - began)


def frame_ms(frames: int) -> list:
    """The time of each of ``frames`` frames of the lab as it runs (steps, then the redraw), ms."""
    from labs.block_at_work.live_training import LiveTrainingLab

    lab = LiveTrainingLab()
    lab.frame()
    times = []
    for _ in range(frames):
        began = time.perf_counter()
        lab.frame()
        times.append((time.perf_counter() - began) * 1000)
    return times


def measure(quick: bool = False) -> dict:
    """{"steps_per_second": {"pre", "post"}, "frame_median_ms", "frame_p95_ms", "steps_per_frame"}."""
    from labs.block_at_work.live_training import STEPS_PER_FRAME

    steps = STEPS // 3 if quick else STEPS
    rates = {placement: max(steps_per_second(placement, steps) for _ in range(1 if quick else 3))
             for placement in ("pre", "post")}
    frames = frame_ms(10 if quick else 40)
    return {"steps_per_second": {k: round(v, 1) for k, v in rates.items()}, "steps_per_frame": STEPS_PER_FRAME,
            "frame_median_ms": round(statistics.median(frames), 2),
            "frame_p95_ms": round(statistics.quantiles(frames, n=20)[-1], 2)}


def judge(by_python: dict, factor: float | None) -> dict:
    """The no-BLAS measurement as the browser would see it: steps a second divided by ``factor``,
    frames multiplied by it, and whether the frame meets :data:`FRAME_TARGET_MS`."""
    noblas = by_python["noblas"]
    if not factor:
        return {"factor": None, "meets_target": None}
    frame = noblas["frame_median_ms"] * factor
    return {"factor": factor, "steps_per_second": {k: round(v / factor, 1) for k, v in noblas["steps_per_second"].items()},
            "frame_median_ms": round(frame, 1), "frame_p95_ms": round(noblas["frame_p95_ms"] * factor, 1),
            "target_ms": FRAME_TARGET_MS, "meets_target": frame <= FRAME_TARGET_MS}


if __name__ == "__main__":
    print(json.dumps(measure(quick="--quick" in sys.argv[1:])))
