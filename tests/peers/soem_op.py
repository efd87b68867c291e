"""SOEM (through pysoem) drives morc's simulated segment over a veth pair: scan, map,
every device to OP, process data with the working counter SOEM expects.

usage: soem_op.py IFACE EXPECTED_DEVICES DI_POSITION DI_EXPECTED DO_POSITION DO_VALUE
Prints one JSON line with what it saw; exits non-zero with a message on any mismatch.
"""
import json
import sys
import time

import pysoem

iface, n_expected, di_pos, di_expected, do_pos, do_value = sys.argv[1], *map(int, sys.argv[2:7])
m = pysoem.Master()
m.open(iface)
try:
    n = m.config_init()
    if n != n_expected:
        sys.exit(f"SOEM found {n} devices, expected {n_expected}")
    devices = [{"name": s.name, "vendor": s.man, "product": s.id, "revision": s.rev} for s in m.slaves]
    io_map = m.config_map()
    if m.state_check(pysoem.SAFEOP_STATE, 500_000) != pysoem.SAFEOP_STATE:
        m.read_state()
        sys.exit("not all in SAFEOP: " + ", ".join(f"{i} {s.name} state {s.state:#x} AL {s.al_status:#x}" for i, s in enumerate(m.slaves)))
    expected_wkc = m.expected_wkc
    m.slaves[do_pos].output = bytes([do_value])
    m.send_processdata()
    m.receive_processdata(20_000)
    m.state = pysoem.OP_STATE
    m.write_state()
    for _ in range(200):
        m.send_processdata()
        m.receive_processdata(20_000)
        if m.state_check(pysoem.OP_STATE, 5_000) == pysoem.OP_STATE:
            break
    else:
        m.read_state()
        sys.exit("not all in OP: " + ", ".join(f"{i} {s.name} state {s.state:#x} AL {s.al_status:#x}" for i, s in enumerate(m.slaves)))
    wkcs = []
    for _ in range(100):
        m.send_processdata()
        wkcs.append(m.receive_processdata(20_000))
        time.sleep(0.001)
    bad = [w for w in wkcs if w != expected_wkc]
    if bad:
        sys.exit(f"working counters {sorted(set(bad))} in {len(bad)} of 100 cycles, expected {expected_wkc}")
    di = m.slaves[di_pos].input[0]
    if di != di_expected:
        sys.exit(f"digital inputs read {di:#x}, expected {di_expected:#x}")
    print(json.dumps({"devices": devices, "io_map": io_map, "expected_wkc": expected_wkc, "di": di}))
finally:
    # Left in OP on purpose: the test checks the outputs on the segment side.
    m.close()
