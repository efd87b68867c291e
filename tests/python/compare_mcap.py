"""Reads an MCAP recording with Foxglove's `mcap` library (ROS 2 messages decoded
with rosbags' type system from the file's schemas, see morc_mcap.py) and the HDF5
recording of the same run with h5py, and compares them: the same signals,
sample for sample, time and values exactly. Prints what it compared as JSON;
exits 1 with the first difference.

usage: compare_mcap.py RUN.mcap RUN.h5
"""
import calendar
import datetime
import json
import os
import sys

import h5py
import numpy as np
from mcap.reader import make_reader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from morc_mcap import Decoder, signals_of, value  # noqa: E402


def read_mcap(path):
    topics, meta = {}, {}
    decoder = Decoder()
    with open(path, "rb") as f:
        reader = make_reader(f)
        for m in reader.iter_metadata():
            meta[m.name] = dict(m.metadata)
        start = start_ns(meta["morc"]["utc_start"])
        for schema, channel, message in reader.iter_messages():
            names = signals_of(channel)
            if not names:
                continue
            assert channel.message_encoding == "cdr", channel.message_encoding
            assert schema.encoding == "ros2msg", schema.encoding
            assert channel.topic.startswith("/morc/"), channel.topic
            body = decoder.decode(schema, message.data)
            # Log time and stamp are the run's start (UTC) plus the sample's time, in ns.
            assert abs(message.log_time - (start + round(body.time * 1e9))) <= 1, (message.log_time, body.time)
            assert body.stamp.sec * 10**9 + body.stamp.nanosec == message.log_time
            for name in names:
                t = topics.setdefault(name, {"time": [], "value": [], "meta": {"unit": channel.metadata.get(f"{name}.unit", "")}})
                t["time"].append(body.time)
                t["value"].append(value(body, channel, name))
    return topics, meta


def start_ns(utc):
    """ns since the Unix epoch of "2026-05-01T12:34:56.789Z"."""
    when = datetime.datetime.strptime(utc, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return int(calendar.timegm(when.timetuple())) * 10**9 + when.microsecond * 1000


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def main():
    mcap_path, h5_path = sys.argv[1], sys.argv[2]
    topics, meta = read_mcap(mcap_path)
    with h5py.File(h5_path, "r") as h5:
        time = h5["time"][:]
        names = sorted(k for k in h5.keys() if isinstance(h5[k], h5py.Dataset) and k != "time")
        if sorted(topics) != names:
            fail(f"signals differ: mcap {sorted(topics)}, hdf5 {names}")
        for name in names:
            t = topics[name]
            if not np.array_equal(np.array(t["time"]), time):
                fail(f"{name}: times differ")
            want = h5[name][:]
            got = np.array(t["value"], dtype=want.dtype)
            if got.shape != want.shape:
                fail(f"{name}: shape {got.shape} in mcap, {want.shape} in hdf5")
            if not np.array_equal(got, want):
                i = int(np.argwhere(got != want)[0][0])
                fail(f"{name}: sample {i} differs: mcap {got[i]}, hdf5 {want[i]}")
            if t["meta"].get("unit", "") != h5[name].attrs.get("unit", ""):
                fail(f"{name}: unit differs")
        head = meta.get("morc", {})
        for key in ("assembly", "robot", "base_period", "sample_period"):
            a, b = head.get(key), h5.attrs[key]
            same = float(a) == float(b) if isinstance(b, (float, np.floating)) else a == str(b)
            if not same:
                fail(f"attribute {key}: mcap {a!r}, hdf5 {b!r}")
        print(json.dumps({
            "signals": names,
            "samples": int(len(time)),
            "last": {n: np.asarray(h5[n][-1]).tolist() for n in names},
            "end": meta.get("morc.end", {}),
            "timing": sorted(k[len("timing/"):] for k in meta if k.startswith("timing/")),
            "components": sorted(k[len("assembly/"):] for k in meta if k.startswith("assembly/")),
        }))


main()
