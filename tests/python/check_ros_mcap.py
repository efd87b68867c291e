"""Reads a morc MCAP recording as ROS 2 tools do, with rosbags' AnyReader (which
takes a bare .mcap file and registers the message types from its ros2msg
schemas), and checks it against what morc's own reader gives (the same
recording converted to HDF5 by `morc rec convert`, read with h5py):

- the component channel /morc/robot holds robot.q sample for sample;
- /joint_states: the URDF's moving joints by name, positions equal to robot.q
  at the same time, velocities and efforts one per joint;
- /tf: one transform per URDF joint, parent link to child link, forming the
  URDF's tree; each is the joint's origin moved by its position (rotation
  about its axis, travel along it) as the URDF says;
- stamps: header stamps equal the log times, the run's utc_start + its time.

Prints what it found as JSON; exits 1 with the first problem.

usage: check_ros_mcap.py RUN.mcap RUN_AS_READ_BY_MORC.h5
"""
import json
import math
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import h5py
import numpy as np
from rosbags.highlevel import AnyReader


def fail(msg):
    print(msg, file=sys.stderr)
    sys.exit(1)


def rpy_matrix(roll, pitch, yaw):
    cr, sr, cp, sp, cy, sy = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw), math.sin(yaw)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], [-sp, cp * sr, cp * cr]])


def axis_angle(axis, angle):
    x, y, z = np.asarray(axis) / np.linalg.norm(axis)
    c, s, v = math.cos(angle), math.sin(angle), 1 - math.cos(angle)
    return np.array([[c + x * x * v, x * y * v - z * s, x * z * v + y * s], [y * x * v + z * s, c + y * y * v, y * z * v - x * s], [z * x * v - y * s, z * y * v + x * s, c + z * z * v]])


def quat_matrix(q):
    x, y, z, w = q.x, q.y, q.z, q.w
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def floats(text, default="0 0 0"):
    return [float(v) for v in (text or default).split()]


def main():
    mcap_path, h5_path = Path(sys.argv[1]), sys.argv[2]
    msgs = {}
    with AnyReader([mcap_path]) as reader:
        topics = {c.topic: c.msgtype for c in reader.connections}
        for connection, timestamp, rawdata in reader.messages(connections=reader.connections):
            msgs.setdefault(connection.topic, []).append((timestamp, reader.deserialize(rawdata, connection.msgtype)))
    for topic, ty in [("/joint_states", "sensor_msgs/msg/JointState"), ("/tf", "tf2_msgs/msg/TFMessage"), ("/robot_description", "std_msgs/msg/String"), ("/morc/robot", None)]:
        if topic not in topics or (ty and topics[topic] != ty):
            fail(f"no {topic} of type {ty}: {topics}")
    with h5py.File(h5_path, "r") as h5:
        time, q_morc = h5["time"][:], h5["robot.q"][:]
        start = None
        utc = h5.attrs["utc_start"]
        utc = utc.decode() if isinstance(utc, bytes) else str(utc)
    import calendar
    import datetime

    when = datetime.datetime.strptime(utc, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    start = calendar.timegm(when.timetuple()) * 10**9 + when.microsecond * 1000

    def stamp_ns(s):
        return s.sec * 10**9 + s.nanosec

    # The component channel: robot.q sample for sample, stamped at utc_start + time.
    robot = msgs["/morc/robot"]
    if len(robot) != len(time):
        fail(f"/morc/robot holds {len(robot)} messages, morc's reader {len(time)} rows")
    q_by_time = {}
    for i, (ts, m) in enumerate(robot):
        if m.time != time[i] or not np.array_equal(np.asarray(m.q), q_morc[i]):
            fail(f"/morc/robot message {i} differs from morc's reader: {m.time} {m.q} vs {time[i]} {q_morc[i]}")
        if ts != stamp_ns(m.stamp) or abs(ts - (start + round(m.time * 1e9))) > 1:
            fail(f"/morc/robot message {i}: log time {ts}, stamp {stamp_ns(m.stamp)}, utc_start + time {start + m.time * 1e9}")
        q_by_time[ts] = np.asarray(m.q)

    urdf = ET.fromstring(msgs["/robot_description"][0][1].data)
    joints = urdf.findall("joint")
    moving = [j for j in joints if j.get("type") != "fixed"]
    edges = sorted((j.find("parent").get("link"), j.find("child").get("link")) for j in joints)

    states = msgs["/joint_states"]
    names = list(states[0][1].name)
    if names != [j.get("name") for j in moving]:
        fail(f"/joint_states names {names}, the URDF's moving joints {[j.get('name') for j in moving]}")
    for ts, m in states:
        if stamp_ns(m.header.stamp) != ts:
            fail(f"/joint_states stamp {stamp_ns(m.header.stamp)} at log time {ts}")
        if ts not in q_by_time or not np.array_equal(np.asarray(m.position), q_by_time[ts]):
            fail(f"/joint_states at {ts}: {m.position}, robot.q {q_by_time.get(ts)}")
        if len(m.velocity) != len(names) or len(m.effort) != len(names):
            fail(f"/joint_states at {ts}: {len(m.velocity)} velocities, {len(m.effort)} efforts for {len(names)} joints")

    tf = msgs["/tf"]
    worst = 0.0
    for ts, m in tf:
        got = sorted((t.header.frame_id, t.child_frame_id) for t in m.transforms)
        if got != edges:
            fail(f"/tf at {ts} has {got}, the URDF's joints {edges}")
        q = dict(zip(names, q_by_time[ts]))
        by_child = {t.child_frame_id: t for t in m.transforms}
        for j in joints:
            o = j.find("origin")
            r = rpy_matrix(*floats(o.get("rpy") if o is not None else None))
            p = np.array(floats(o.get("xyz") if o is not None else None))
            if j.get("type") in ("revolute", "continuous"):
                r = r @ axis_angle(floats(j.find("axis").get("xyz")), q[j.get("name")])
            elif j.get("type") == "prismatic":
                p = p + r @ (np.asarray(floats(j.find("axis").get("xyz"))) * q[j.get("name")])
            t = by_child[j.find("child").get("link")]
            if stamp_ns(t.header.stamp) != ts:
                fail(f"/tf {t.child_frame_id} stamp {stamp_ns(t.header.stamp)} at log time {ts}")
            tr = t.transform.translation
            worst = max(worst, float(np.max(np.abs(np.array([tr.x, tr.y, tr.z]) - p))), float(np.max(np.abs(quat_matrix(t.transform.rotation) - r))))
    if worst > 1e-6:
        fail(f"/tf differs from the URDF's kinematics by {worst}")
    print(json.dumps({
        "topics": topics,
        "samples": len(robot),
        "joint_states": len(states),
        "tf": len(tf),
        "joints": names,
        "edges": len(edges),
        "max_tf_error": worst,
    }))


main()
