"""The peer of `morc bench ros`: ROS 2's own Python client (rclpy) on its default RMW.

  sub TOPIC...  subscribes to std_msgs/msg/Int64 on each topic; every message carries the
                CLOCK_MONOTONIC time (ns) it was made at, and the callback keeps how long ago
                that was. When stdin closes, prints {topic: [latency ns, ...]} as one JSON line.
  pub TOPIC HZ  publishes std_msgs/msg/Int64 stamped with CLOCK_MONOTONIC at HZ until stdin
                closes: the plain rclpy publisher morc's latency is compared with.

Both print "ready" once their node is up.
"""

import json
import sys
import threading
import time

import rclpy
from rclpy.node import Node
from std_msgs.msg import Int64


def spin_until_stdin_closes(node):
    closed = threading.Event()

    def wait():
        sys.stdin.read()
        closed.set()

    threading.Thread(target=wait, daemon=True).start()
    print("ready", flush=True)
    while not closed.is_set():
        rclpy.spin_once(node, timeout_sec=0.05)


def subscriber(topics):
    node = Node("morc_bench_subscriber")
    latencies = {topic: [] for topic in topics}
    for topic in topics:
        keep = latencies[topic].append
        node.create_subscription(Int64, topic, lambda m, keep=keep: keep(time.monotonic_ns() - m.data), 10)
    spin_until_stdin_closes(node)
    print(json.dumps(latencies), flush=True)


def publisher(topic, hz):
    node = Node("morc_bench_publisher")
    pub = node.create_publisher(Int64, topic, 10)

    def tick():
        m = Int64()
        m.data = time.monotonic_ns()
        pub.publish(m)

    node.create_timer(1.0 / hz, tick)
    spin_until_stdin_closes(node)


if __name__ == "__main__":
    rclpy.init()
    if sys.argv[1] == "sub":
        subscriber(sys.argv[2:])
    else:
        publisher(sys.argv[2], float(sys.argv[3]))
