"""ROS 2 peers of morc's ros.publish and ros.subscribe components, written with ROS 2's own Python
client (rclpy, on Fast DDS, from PyPI: no ROS install). Prints "ready" once its publishers and
subscriptions exist; prints a JSON report as its last line when it ends.

usage: ros_pubsub_peer.py MODE TIMEOUT_S

modes:
  talk    publishes, 20 times a second until TIMEOUT_S: /cmd_vel geometry_msgs/msg/Twist (linear 0.1 0.2
          0.3, angular 0.4 0.5 0.6); /joints sensor_msgs/msg/JointState, every other message naming
          j3 j1 j2 (positions 3 1 2, velocities 30 10 20, no efforts) and in between one naming only j1
          j2 (which a subscriber of j1 j2 j3 must drop); /traj trajectory_msgs/msg/JointTrajectory
          (joints j2 j1 j3, one point at positions 2 1 3 and 1.5 s). Report: {"sent": n}.
  listen  subscribes to /value std_msgs/msg/Float64 (default QoS) and /wrench
          geometry_msgs/msg/WrenchStamped (sensor data QoS); once 20 of each came, publishes /ack
          std_msgs/msg/Bool true 20 times a second; ends 1.5 s after the last message, or at
          TIMEOUT_S. Report: {"value": [data...], "wrench": [[stamp_ns, frame_id, fx, fy, fz, tx, ty, tz]...]}.
  echo    while the last /enable std_msgs/msg/Bool said true, publishes /level std_msgs/msg/Float64 42.0
          100 times a second, until TIMEOUT_S. Report: {"sent": n, "enables": count of /enable messages}.
"""
import json
import sys
import time

import rclpy
from rclpy.qos import qos_profile_sensor_data
from geometry_msgs.msg import Twist, WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint


def talk(node, timeout):
    cmd = node.create_publisher(Twist, "/cmd_vel", 10)
    joints = node.create_publisher(JointState, "/joints", 10)
    traj = node.create_publisher(JointTrajectory, "/traj", 10)
    print("ready", flush=True)
    sent = 0
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        t = Twist()
        t.linear.x, t.linear.y, t.linear.z = 0.1, 0.2, 0.3
        t.angular.x, t.angular.y, t.angular.z = 0.4, 0.5, 0.6
        cmd.publish(t)
        js = JointState()
        js.header.stamp = node.get_clock().now().to_msg()
        if sent % 2 == 0:
            js.name = ["j3", "j1", "j2"]
            js.position = [3.0, 1.0, 2.0]
            js.velocity = [30.0, 10.0, 20.0]
        else:
            js.name = ["j1", "j2"]
            js.position = [1.0, 2.0]
        joints.publish(js)
        jt = JointTrajectory()
        jt.joint_names = ["j2", "j1", "j3"]
        point = JointTrajectoryPoint()
        point.positions = [2.0, 1.0, 3.0]
        point.time_from_start.sec, point.time_from_start.nanosec = 1, 500_000_000
        jt.points = [point]
        traj.publish(jt)
        sent += 1
        rclpy.spin_once(node, timeout_sec=0.05)
    return {"sent": sent}


def listen(node, timeout):
    values, wrenches = [], []
    last = {"t": None}

    def on_value(m):
        values.append(m.data)
        last["t"] = time.monotonic()

    def on_wrench(m):
        stamp = m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
        f, tq = m.wrench.force, m.wrench.torque
        wrenches.append([stamp, m.header.frame_id, f.x, f.y, f.z, tq.x, tq.y, tq.z])
        last["t"] = time.monotonic()

    node.create_subscription(Float64, "/value", on_value, 10)
    node.create_subscription(WrenchStamped, "/wrench", on_wrench, qos_profile_sensor_data)
    ack = node.create_publisher(Bool, "/ack", 10)
    print("ready", flush=True)
    end = time.monotonic() + timeout
    next_ack = 0.0
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.01)
        now = time.monotonic()
        if len(values) >= 20 and len(wrenches) >= 20 and now >= next_ack:
            ack.publish(Bool(data=True))
            next_ack = now + 0.05
        if last["t"] is not None and now - last["t"] > 1.5:
            break
    return {"value": values, "wrench": wrenches}


def echo(node, timeout):
    state = {"on": False, "enables": 0}

    def on_enable(m):
        state["on"] = m.data
        state["enables"] += 1

    node.create_subscription(Bool, "/enable", on_enable, 10)
    level = node.create_publisher(Float64, "/level", 10)
    print("ready", flush=True)
    sent = 0
    end = time.monotonic() + timeout
    next_send = 0.0
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.002)
        now = time.monotonic()
        if state["on"] and now >= next_send:
            level.publish(Float64(data=42.0))
            sent += 1
            next_send = now + 0.01
    return {"sent": sent, "enables": state["enables"]}


def main(mode, timeout):
    rclpy.init()
    node = rclpy.create_node("morc_pubsub_peer_" + mode)
    report = {"talk": talk, "listen": listen, "echo": echo}[mode](node, timeout)
    print(json.dumps(report), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
