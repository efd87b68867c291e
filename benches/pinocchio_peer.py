#!/usr/bin/env python3
"""Pinocchio's side of `cargo bench --bench model`.

Reads a JSON request on stdin: {"target_seconds": t, "repeat": r, "robots": [{"label", "urdf",
"ee_frame", "q", "v", "a", "tau"}]}, loads each URDF with Pinocchio, times the same calls as
the Rust bench with `timeit` (thread CPU time) and writes JSON on stdout: nanoseconds per call (median of the
repetitions) and the results of RNEA and ABA so the bench can check both sides ran the same
model. The calls go through Python: nothing is subtracted, so each figure includes the
binding's overhead (about 0.1 µs per call according to the reference README).

Exits with status 3 and a message on stderr when `pinocchio` cannot be imported.
"""

import json
import statistics
import sys
import time
import timeit

try:
    import numpy as np
    import pinocchio as pin
except ImportError as error:  # the bench turns this into "pip install pin"
    print(f"cannot import pinocchio ({error}); install it with: pip install pin", file=sys.stderr)
    sys.exit(3)


def ns_per_call(call, target_seconds, repeat):
    """Median over `repeat` runs of the time per call, in ns, each run lasting ~target_seconds.
    Timed in thread CPU time, as the Rust side is, so that time spent preempted by other
    processes on a shared machine is not counted."""
    timer = timeit.Timer(call, timer=time.thread_time)
    number, elapsed = timer.autorange()  # also warms up
    number = max(1, int(number * target_seconds / max(elapsed, 1e-9)))
    runs = timer.repeat(repeat=repeat, number=number)
    return statistics.median(runs) / number * 1e9


def timed_calls(model, data, q, v, a, tau, ee):
    """The calls the Rust bench times, by the names it expects."""
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    local, world = pin.Convention.LOCAL, pin.Convention.WORLD
    return {
        "rnea": lambda: pin.rnea(model, data, q, v, a),
        "aba_local": lambda: pin.aba(model, data, q, v, tau, local),
        "aba_world": lambda: pin.aba(model, data, q, v, tau, world),
        "crba_local": lambda: pin.crba(model, data, q, local),
        "crba_world": lambda: pin.crba(model, data, q, world),
        "fk_joints": lambda: pin.forwardKinematics(model, data, q),
        "fk_frames": lambda: pin.framesForwardKinematics(model, data, q),
        "frame_jacobian": lambda: pin.computeFrameJacobian(model, data, q, ee, lwa),
    }


def bench_robot(spec, target_seconds, repeat):
    model = pin.buildModelFromUrdf(spec["urdf"])
    data = model.createData()
    if model.nq != model.nv:
        raise SystemExit(f"{spec['label']}: nq {model.nq} != nv {model.nv} (a continuous joint?)")
    q, v, a, tau = (np.array(spec[key], dtype=float) for key in ("q", "v", "a", "tau"))
    ee = model.getFrameId(spec["ee_frame"])
    if ee >= model.nframes:
        raise SystemExit(f"{spec['label']}: no frame '{spec['ee_frame']}'")
    calls = timed_calls(model, data, q, v, a, tau, ee)
    timings = {name: ns_per_call(call, target_seconds, repeat) for name, call in calls.items()}
    # Each algorithm at its faster convention: the figure to beat.
    for name in ("aba", "crba"):
        best = min(("local", "world"), key=lambda c: timings[f"{name}_{c}"])
        timings[name] = timings[f"{name}_{best}"]
        timings[f"{name}_convention"] = best
    return {
        "timings": timings,
        "nframes": model.nframes,
        "tau": pin.rnea(model, data, q, v, a).tolist(),
        "ddq": pin.aba(model, data, q, v, tau).tolist(),
    }


def binding_floor(target_seconds, repeat):
    """The same calls on a model with no joint (nq = 0): what the Python binding alone costs,
    argument conversion included. Reported for scale; nothing is subtracted."""
    model = pin.Model()
    data = model.createData()
    empty = np.zeros(0)
    calls = timed_calls(model, data, empty, empty, empty, empty, 0)
    floor = {name: ns_per_call(call, target_seconds, repeat) for name, call in calls.items()}
    for name in ("aba", "crba"):
        floor[name] = min(floor[f"{name}_local"], floor[f"{name}_world"])
    return floor


def main():
    request = json.load(sys.stdin)
    target, repeat = request.get("target_seconds", 0.02), request.get("repeat", 15)
    result = {
        "pinocchio_version": pin.__version__,
        "python_version": sys.version.split()[0],
        "binding_floor": binding_floor(target, repeat),
        "robots": {spec["label"]: bench_robot(spec, target, repeat) for spec in request["robots"]},
    }
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
