"""The robot's URDF (/robot_description, as the live view serves it) against its frames on /tf,
as tests/live_view.rs runs it: reads live_client.py's output on stdin, parses the URDF with
xml.etree, computes its forward kinematics at the joint positions of a /joint_states message
(joint origins, then each joint's rotation about its axis or travel along it) and compares every
link's pose with the /tf transform of the same name and time.

Prints {"links", "frames", "compared", "max_translation_error", "max_rotation_error", "joints",
"visuals"} as JSON; exits non-zero when the URDF is not a well-formed robot.
"""
import json
import math
import sys
import xml.etree.ElementTree as ET


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(4)) for j in range(4)] for i in range(4)]


def transform(r, t):
    return [r[0] + [t[0]], r[1] + [t[1]], r[2] + [t[2]], [0.0, 0.0, 0.0, 1.0]]


def rpy_matrix(roll, pitch, yaw):
    # URDF: fixed axes x, y, z: R = Rz(yaw) Ry(pitch) Rx(roll).
    cr, sr, cp, sp, cy, sy = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw), math.sin(yaw)
    return [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr]]


def axis_angle(axis, angle):
    n = math.sqrt(sum(a * a for a in axis))
    x, y, z = (a / n for a in axis)
    c, s, v = math.cos(angle), math.sin(angle), 1 - math.cos(angle)
    return [[c + x * x * v, x * y * v - z * s, x * z * v + y * s],
            [y * x * v + z * s, c + y * y * v, y * z * v - x * s],
            [z * x * v - y * s, z * y * v + x * s, c + z * z * v]]


def quat_matrix(q):
    x, y, z, w = q["x"], q["y"], q["z"], q["w"]
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def floats(text, default="0 0 0"):
    return [float(v) for v in (text or default).split()]


got = json.load(sys.stdin)
urdf = got["messages"]["/robot_description"][-1]["data"]
robot = ET.fromstring(urdf)
if robot.tag != "robot":
    raise SystemExit(f"the description's root is <{robot.tag}>, not <robot>")
links = [l.get("name") for l in robot.findall("link")]
joints = robot.findall("joint")
children = {j.find("child").get("link") for j in joints}
roots = [l for l in links if l not in children]
if len(roots) != 1:
    raise SystemExit(f"the URDF is not one tree: roots {roots}")

# The /tf message of the same stamp and run time as a /joint_states message (the same tap row
# sends both): the stamp is the wall clock's (the message's log time and its transforms'
# timestamp), the run time is "time".
tf = got["messages"]["/tf"][-1]
tf_stamp = got["stamps"]["/tf"][-1]
ts = tf["transforms"][0]["timestamp"]
if ts["sec"] * 1_000_000_000 + ts["nsec"] != tf_stamp:
    raise SystemExit(f"/tf: timestamp {ts} is not its log time {tf_stamp}")
same = [m for m, s in zip(got["messages"]["/joint_states"], got["stamps"]["/joint_states"]) if s == tf_stamp]
if not same or same[0]["time"] != tf["time"]:
    raise SystemExit(f"no /joint_states stamped {tf_stamp} at run time {tf['time']}")
js = same[0]
t = js["time"]
q = dict(zip(js["name"], js["position"]))

pose = {roots[0]: transform([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], [0.0, 0.0, 0.0])}
while len(pose) < len(links):
    before = len(pose)
    for j in joints:
        parent, child = j.find("parent").get("link"), j.find("child").get("link")
        if parent not in pose or child in pose:
            continue
        origin = j.find("origin")
        xyz = floats(origin.get("xyz") if origin is not None else None)
        rpy = floats(origin.get("rpy") if origin is not None else None)
        at = matmul(pose[parent], transform(rpy_matrix(*rpy), xyz))
        kind = j.get("type")
        if kind != "fixed":
            axis = floats(j.find("axis").get("xyz"), "1 0 0")
            x = q[j.get("name")]
            if kind == "prismatic":
                motion = transform([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]], [a * x for a in axis])
            else:
                motion = transform(axis_angle(axis, x), [0.0, 0.0, 0.0])
            at = matmul(at, motion)
        pose[child] = at
    if len(pose) == before:
        raise SystemExit(f"links not reached from {roots[0]}: {sorted(set(links) - set(pose))}")

frames = {f["child_frame_id"]: f for f in tf["transforms"]}
max_t = max_r = 0.0
for name, m in pose.items():
    f = frames.get(name)
    if f is None:
        continue
    tr = f["translation"]
    max_t = max(max_t, math.dist([m[0][3], m[1][3], m[2][3]], [tr["x"], tr["y"], tr["z"]]))
    r = quat_matrix(f["rotation"])
    max_r = max(max_r, max(abs(m[i][k] - r[i][k]) for i in range(3) for k in range(3)))
print(json.dumps({
    "links": sorted(links),
    "frames": sorted(frames),
    "compared": sum(1 for n in pose if n in frames),
    "max_translation_error": max_t,
    "max_rotation_error": max_r,
    "joints": sorted(j.get("name") for j in joints if j.get("type") != "fixed"),
    "state_joints": sorted(js["name"]),
    "visuals": len(robot.findall("link/visual")),
    "time": t,
}))
