"""ros2_control's side of the topic_based_ros2_control convention, as its TopicBasedSystem plugin
speaks it, written with Eclipse Cyclone DDS's Python binding (an RMW other than rclpy's Fast DDS):
sensor_msgs/msg/JointState commands on rt/robot_joint_commands (reliable, keep last 1, as the
plugin's rclcpp::QoS(1)), the robot's states read from rt/robot_joint_states (best effort, as its
SensorDataQoS). The types are ROS 2's IDL's (ros_idl.py).

usage: ros2_control_peer.py ramp DEGREES SECONDS   waits for the robot's first state, then sends
           every joint from there DEGREES further over SECONDS, at 100 Hz as a controller's update
           does, its joints in reverse order (a message names them; order is the sender's);
           then stops sending (the plugin sends nothing while the state matches) and watches 1 s.
       ros2_control_peer.py zeros                  waits for the first state, sends one command of
           zeros (what the plugin sends first without use_initial_states_as_initial_commands),
           then watches 1 s.

Prints "ready" once its endpoints exist, then as JSON: {"names", "first" (positions of the first
state), "target" (the last command, in the state's order), "last" (positions of the last state),
"states" (count), "max_lag" (the largest distance, rad, between a state and the command sent
10 ms before it, while commands were sent)}.
"""
import json
import math
import os
import sys
import time

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration
from ros_idl import Header, JointState, Time


def now():
    t = time.time()
    return Time(sec=int(t), nanosec=int((t % 1) * 1e9))


def main(mode, args):
    dp = DomainParticipant(int(os.environ.get("ROS_DOMAIN_ID", "0")))
    commands = DataWriter(dp, Topic(dp, "rt/robot_joint_commands", JointState),
                          qos=Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.Volatile, Policy.History.KeepLast(1)))
    states = DataReader(dp, Topic(dp, "rt/robot_joint_states", JointState),
                        qos=Qos(Policy.Reliability.BestEffort, Policy.Durability.Volatile, Policy.History.KeepLast(5)))
    print("ready", flush=True)

    seen = []  # (time, positions) of every state taken

    def take():
        for s in states.take(N=100):
            if isinstance(s, JointState):
                seen.append((time.monotonic(), list(s.position), list(s.name)))

    deadline = time.monotonic() + 60
    while not seen:
        if time.monotonic() > deadline:
            print(json.dumps({"error": "no state on rt/robot_joint_states in 60 s"}), flush=True)
            return
        take()
        time.sleep(0.005)
    names, first = seen[0][2], seen[0][1]
    # Let the writer match morc's subscription before the first command (the plugin's would
    # have long before its controller starts).
    while commands.get_matched_subscriptions() == [] and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)

    sent = []  # (time, positions in the state's order)

    def send(positions):
        order = list(reversed(range(len(names))))
        commands.write(JointState(header=Header(stamp=now(), frame_id=""), name=[names[j] for j in order], position=[positions[j] for j in order], velocity=[], effort=[]))
        sent.append((time.monotonic(), list(positions)))

    if mode == "zeros":
        send([0.0] * len(names))
    else:
        degrees, seconds = float(args[0]), float(args[1])
        steps = int(round(seconds * 100))
        start = time.monotonic()
        for k in range(steps + 1):
            s = k / steps
            blend = (1 - math.cos(math.pi * s)) / 2  # rest to rest
            send([q + math.radians(degrees) * blend for q in first])
            take()
            next_at = start + (k + 1) * 0.01
            time.sleep(max(0.0, next_at - time.monotonic()))
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        take()
        time.sleep(0.005)

    max_lag = 0.0
    for t, positions, _ in seen:
        before = [p for (ts, p) in sent if ts <= t - 0.01]
        if before and t <= sent[-1][0]:
            max_lag = max(max_lag, max(abs(a - b) for a, b in zip(positions, before[-1])))
    report = {"names": names, "first": first, "target": sent[-1][1] if sent else None, "last": seen[-1][1], "states": len(seen), "max_lag": max_lag}
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
