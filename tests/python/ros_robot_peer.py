"""A ROS 2 peer of morc's robot topics, written with ROS 2's own Python client (rclpy, on Fast DDS,
from PyPI: no ROS install): subscribes to /joint_states (sensor_msgs/msg/JointState, the default
profile) and /robot_description (std_msgs/msg/String, transient local, as robot_state_publisher's
subscribers ask), and looks at the ROS graph for morc's node. Prints "ready" once subscribed, then
after TIMEOUT_S or once a /joint_states message has come and then none for 1 s, prints as JSON:
{"nodes": [[name, namespace]...], "topics": {name: [types]}, "joint_states": {"count", "name",
"first", "last", "stamps": [first, last] (ns)}, "description": URDF or null}.

usage: ros_robot_peer.py TIMEOUT_S
"""
import json
import sys
import time

import rclpy
from rclpy.qos import QoSProfile, DurabilityPolicy, ReliabilityPolicy, HistoryPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String


def main(timeout):
    rclpy.init()
    node = rclpy.create_node("morc_test_peer")
    states = {"count": 0, "name": None, "first": None, "last": None, "stamps": [None, None]}
    description = {"data": None}
    last_seen = {"t": None}

    def on_state(m):
        stamp = m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
        if states["count"] == 0:
            states["name"] = list(m.name)
            states["first"] = {"position": list(m.position), "velocity": list(m.velocity), "effort": list(m.effort)}
            states["stamps"][0] = stamp
        states["last"] = {"position": list(m.position), "velocity": list(m.velocity), "effort": list(m.effort)}
        states["stamps"][1] = stamp
        states["count"] += 1
        last_seen["t"] = time.monotonic()

    def on_description(m):
        description["data"] = m.data

    node.create_subscription(JointState, "/joint_states", on_state, 10)
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
    node.create_subscription(String, "/robot_description", on_description, latched)
    print("ready", flush=True)
    end = time.monotonic() + timeout
    nodes, topics = [], {}
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
        # The graph as ros2 node list / ros2 topic list see it, until morc is in it.
        if states["count"] and not any(n[0] == "morc" for n in nodes):
            nodes = [list(n) for n in node.get_node_names_and_namespaces()]
            topics = {name: types for name, types in node.get_topic_names_and_types()}
        if last_seen["t"] is not None and time.monotonic() - last_seen["t"] > 1.0:
            break
    print(json.dumps({"nodes": nodes, "topics": topics, "joint_states": states, "description": description["data"]}), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main(float(sys.argv[1]))
