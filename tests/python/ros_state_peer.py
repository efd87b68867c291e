"""A ROS 2 peer of morc's robot state, with ROS 2's own Python client (rclpy on Fast DDS, from
PyPI): subscribes to /morc/state (std_msgs/msg/String, transient local and reliable, as a latched
topic's subscribers ask) and /joint_states (sensor_msgs/msg/JointState). Prints "ready" once
subscribed; ends after TIMEOUT_S, or 1 s after a state of FINAL_STATES came after "stopping", and
prints as JSON {"states": [{"state", "speed"}...]}: each state as it arrived, with the largest
joint speed (rad/s, |velocity|) among the joint states received since the state before.

usage: ros_state_peer.py TIMEOUT_S FINAL_STATES (comma-separated, e.g. idle,holding)
"""
import json
import sys
import time

import rclpy
from rclpy.qos import QoSProfile, DurabilityPolicy, ReliabilityPolicy, HistoryPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String


def main(timeout, finals):
    rclpy.init()
    node = rclpy.create_node("morc_state_peer")
    states = []
    speed = {"max": 0.0}
    done = {"at": None}

    def on_joint_state(m):
        speed["max"] = max([speed["max"]] + [abs(v) for v in m.velocity])

    def on_state(m):
        # The speeds seen while the previous state held go with it.
        if states:
            states[-1]["speed"] = max(states[-1]["speed"], speed["max"])
        speed["max"] = 0.0
        states.append({"state": m.data, "speed": 0.0})
        if m.data in finals and any(s["state"] == "stopping" for s in states):
            done["at"] = done["at"] or time.monotonic()

    node.create_subscription(JointState, "/joint_states", on_joint_state, 100)
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
    node.create_subscription(String, "/morc/state", on_state, latched)
    print("ready", flush=True)
    end = time.monotonic() + timeout
    while time.monotonic() < end and (done["at"] is None or time.monotonic() - done["at"] < 1.0):
        rclpy.spin_once(node, timeout_sec=0.02)
    if states:
        states[-1]["speed"] = max(states[-1]["speed"], speed["max"])
    print(json.dumps({"states": states}), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main(float(sys.argv[1]), set(sys.argv[2].split(",")))
