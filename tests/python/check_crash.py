"""Reads recordings that a kill -9 cut short, each with the standard reader
of its format (h5py for .h5, Foxglove's `mcap` library for .mcap, by its
documented route `make_reader(f).iter_messages()`, its ROS 2 messages decoded
as morc_mcap.py does), and prints for each
what it found as one JSON list, for tests/record_crash.rs to judge.

usage: check_crash.py FILE...

Per file: "error" (the reader's complaint, if it failed), "rows" (samples
per signal), "samples" (what the file says it holds, HDF5), "complete",
"last_time", "sample_period", "write_error" (why a recording stopped early, or empty),
and "problems": every broken invariant found
(a dataset shorter than its count, time not sample_period apart, values not
finite or out of range).
"""
import json
import os
import sys

import numpy as np


def check_times(times, period, problems, what):
    if len(times) == 0:
        return
    want = np.arange(len(times)) * period
    if not np.allclose(times, want, rtol=0, atol=period * 1e-6):
        i = int(np.argmax(np.abs(times - want) > period * 1e-6))
        problems.append(f"{what}: sample {i} at t = {times[i]!r}, expected {want[i]!r}")


def check_values(name, values, problems):
    if not np.all(np.isfinite(values)):
        problems.append(f"{name}: values that are not finite (garbage)")
    elif name == "ref.y" and values.size and np.max(np.abs(values)) > 0.2 + 1e-9:
        problems.append(f"{name}: |value| {np.max(np.abs(values))} beyond the sine's amplitude 0.2 (garbage)")


def h5(path):
    import h5py

    out = {"problems": []}
    with h5py.File(path, "r") as f:
        period = float(f.attrs["sample_period"])
        out["sample_period"] = period
        out["samples"] = int(f.attrs["samples"])
        out["complete"] = int(f.attrs["complete"])
        out["write_error"] = str(f.attrs.get("write_error", ""))
        rows = {}
        for name, ds in f.items():
            if not isinstance(ds, h5py.Dataset):
                continue
            data = ds[()]  # the whole dataset: raises if a chunk is broken
            rows[name] = len(data)
            if name == "time":
                check_times(data, period, out["problems"], "time")
                out["last_time"] = float(data[-1]) if len(data) else None
            else:
                check_values(name, data, out["problems"])
        out["rows"] = rows
        for name, n in rows.items():
            if n < out["samples"]:
                out["problems"].append(f"{name} holds {n} samples, the file says {out['samples']}")
    return out


def mcap(path):
    from mcap.reader import make_reader

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from morc_mcap import Decoder, signals_of, value

    out = {"problems": []}
    channels = {}
    decoder = Decoder()
    with open(path, "rb") as f:
        reader = make_reader(f)
        for schema, channel, message in reader.iter_messages():
            names = signals_of(channel)
            if not names:
                continue
            body = decoder.decode(schema, message.data)
            for name in names:
                c = channels.setdefault(name, {"seq": [], "time": [], "value": [], "period": float(channel.metadata["sample_period"])})
                c["seq"].append(message.sequence)
                c["time"].append(body.time)
                c["value"].append(value(body, channel, name))
    with open(path, "rb") as f:
        meta = {m.name: dict(m.metadata) for m in make_reader(f).iter_metadata()}
    out["complete"] = int(meta.get("morc.end", {}).get("complete", "0"))
    out["write_error"] = meta.get("morc.end", {}).get("write_error", "")
    if "morc.end" in meta:
        out["samples"] = int(meta["morc.end"]["samples"])
    out["sample_period"] = float(meta["morc"]["sample_period"])
    out["rows"] = {k: len(c["seq"]) for k, c in channels.items()}
    last = None
    for name, c in channels.items():
        if c["seq"] != list(range(len(c["seq"]))):
            out["problems"].append(f"{name}: sequence numbers not 0, 1, 2, …")
        times = np.array(c["time"], dtype=float)
        check_times(times, c["period"], out["problems"], name)
        check_values(name, np.array(c["value"], dtype=float), out["problems"])
        if len(times):
            last = float(times[-1]) if last is None else min(last, float(times[-1]))
    out["last_time"] = last
    return out


def main():
    results = []
    for path in sys.argv[1:]:
        try:
            r = mcap(path) if path.endswith(".mcap") else h5(path)
        except Exception as e:  # the reader's complaint is the finding
            r = {"error": f"{type(e).__name__}: {e}"}
        r["path"] = path
        results.append(r)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
