"""Opens a morc recording with h5py (an independent HDF5 reader) and prints
what it holds as JSON for the Rust tests to check.

Usage: python3 check_recording.py FILE.h5

Floating-point data is printed as the bit patterns of little-endian f64
(as unsigned integers), so the comparison in Rust is exact.
"""
import json
import sys

import h5py
import numpy as np


def plain(v):
    """An attribute value as JSON."""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    if isinstance(v, np.generic):
        return v.item()
    return v


def dump(path):
    out = {"attrs": {}, "datasets": {}, "groups": {}}
    with h5py.File(path, "r") as f:
        out["attrs"] = {k: plain(v) for k, v in f.attrs.items()}

        def visit(name, obj):
            attrs = {k: plain(v) for k, v in obj.attrs.items()}
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
                if data.dtype.kind == "f":
                    values = data.astype("<f8").view("<u8").ravel().tolist()
                else:
                    values = data.astype("<i8").ravel().tolist()
                out["datasets"][name] = {
                    "shape": list(obj.shape),
                    "dtype": str(obj.dtype),
                    "chunks": list(obj.chunks) if obj.chunks else None,
                    "maxshape": [m if m is not None else -1 for m in obj.maxshape],
                    "compression": obj.compression,
                    "attrs": attrs,
                    "values": values,
                }
            else:
                out["groups"][name] = attrs

        f.visititems(visit)
    return out


if __name__ == "__main__":
    json.dump(dump(sys.argv[1]), sys.stdout)
