#!/usr/bin/env python3
"""The motion planners morc is compared with, run on the cases morc sends.

Reads one JSON object on stdin and writes one on stdout:
  {"topp": [case…], "ptp": [case…], "repeats": R}
- a topp case: {"waypoints": [[q…]…], "grid_points": N, "vlim": [...], "alim": [...],
  optional "torque": {"urdf": path, "tau": [...]}} → toppra 0.6 (TOPP-RA) on the same path: a
  natural cubic spline per joint through the waypoints at the normalised cumulative joint-space
  distance (morc_motion::toppra::spline_path), the same uniform grid, collocation.
  Answer: {"duration": s, "seconds": the compute time of the parameterisation (best of R)}.
- a ptp case: {"start": [...], "goal": [...], "v": [...], "a": [...], "j": [...]} → ruckig,
  rest to rest, with phase synchronisation (a straight line in joint space, as morc's PTP) and
  with time synchronisation (each joint its own profile shape, ending together).
  Answer: {"phase": s, "time": s, "seconds": compute time of one calculation (best of R)}.
The compute times leave out Python's start and the imports; they include building toppra's
path and constraints, as a user of toppra pays them per path.
"""
import json
import sys
import time

import numpy as np


def knots_of(waypoints):
    d = np.linalg.norm(np.diff(waypoints, axis=0), axis=1)
    k = np.concatenate([[0.0], np.cumsum(d)])
    return k / k[-1]


def rnea_of(urdf):
    import pinocchio as pin

    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    return lambda q, v, a: pin.rnea(model, data, np.asarray(q), np.asarray(v), np.asarray(a))


def topp(case, repeats):
    import toppra as ta
    import toppra.algorithm as algo
    import toppra.constraint as constraint

    ta.setup_logging("WARNING")
    waypoints = np.array(case["waypoints"], dtype=float)
    grid = np.linspace(0.0, 1.0, int(case["grid_points"]))
    vlim = np.array(case["vlim"], dtype=float)
    alim = np.array(case["alim"], dtype=float)
    torque = case.get("torque")
    inv_dyn = rnea_of(torque["urdf"]) if torque else None
    best, duration = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        path = ta.SplineInterpolator(knots_of(waypoints), waypoints, bc_type="natural")
        constraints = [
            constraint.JointVelocityConstraint(np.stack([-vlim, vlim], axis=1)),
            constraint.JointAccelerationConstraint(np.stack([-alim, alim], axis=1), discretization_scheme=constraint.DiscretizationType.Collocation),
        ]
        if torque:
            tau = np.array(torque["tau"], dtype=float)
            constraints.append(constraint.JointTorqueConstraint(inv_dyn, np.stack([-tau, tau], axis=1), np.zeros(len(tau)), discretization_scheme=constraint.DiscretizationType.Collocation))
        instance = algo.TOPPRA(constraints, path, gridpoints=grid, solver_wrapper="seidel")
        _, sd, _ = instance.compute_parameterization(0, 0)  # (s̈ per interval, ṡ per grid point, …)
        best = min(best, time.perf_counter() - started)
        if sd is None:
            raise SystemExit(f"toppra found no parameterisation for case {case}")
        # The duration from the profile at the grid points, as morc times it: constant s̈
        # between grid points, so Δt = 2Δs/(ṡ_i + ṡ_i+1).
        duration = float(np.sum(2.0 * np.diff(grid) / (sd[:-1] + sd[1:])))
    return {"duration": duration, "seconds": best}


def ptp(case, repeats):
    from ruckig import InputParameter, Result, Ruckig, Synchronization, Trajectory

    n = len(case["start"])
    answer = {}
    best = float("inf")
    for sync, key in [(Synchronization.Phase, "phase"), (Synchronization.Time, "time")]:
        otg = Ruckig(n)
        inp = InputParameter(n)
        inp.current_position = case["start"]
        inp.current_velocity = [0.0] * n
        inp.current_acceleration = [0.0] * n
        inp.target_position = case["goal"]
        inp.target_velocity = [0.0] * n
        inp.target_acceleration = [0.0] * n
        inp.max_velocity = case["v"]
        inp.max_acceleration = case["a"]
        inp.max_jerk = case["j"]
        inp.synchronization = sync
        trajectory = Trajectory(n)
        for _ in range(repeats):
            started = time.perf_counter()
            result = otg.calculate(inp, trajectory)
            took = time.perf_counter() - started
            if key == "phase":
                best = min(best, took)
        if result not in (Result.Working, Result.Finished):
            raise SystemExit(f"ruckig failed ({result}) on case {case}")
        answer[key] = trajectory.duration
    answer["seconds"] = best
    return answer


def main():
    request = json.load(sys.stdin)
    repeats = int(request.get("repeats", 3))
    out = {
        "topp": [topp(c, repeats) for c in request.get("topp", [])],
        "ptp": [ptp(c, repeats) for c in request.get("ptp", [])],
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
