"""A peer of morc's /tf and /tf_static written with Eclipse Cyclone DDS's Python binding, with the
ROS 2 types declared here as ROS 2's IDL gives them (tf2_msgs is not on PyPI): reads the DDS
topics rt/tf (reliable, volatile) and rt/tf_static (reliable, transient local) of type
tf2_msgs::msg::dds_::TFMessage_, as a ROS 2 node on Cyclone DDS would. Prints "ready", then after
TIMEOUT_S or 1 s after the last /tf message, as JSON: {"tf": {"count", "last": [[parent, child,
[x, y, z], [qx, qy, qz, qw]]...]}, "tf_static": [...same...]}.

usage: ros_tf_peer.py TIMEOUT_S   (the domain is ROS_DOMAIN_ID's)
"""
import json
import os
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Qos, Policy
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import float64, int32, sequence, uint32
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration
from ros_idl import Header, Quaternion, Time, Transform, Vector3


@dataclass
class TransformStamped(IdlStruct, typename="geometry_msgs::msg::dds_::TransformStamped_"):
    header: Header
    child_frame_id: str
    transform: Transform


@dataclass
class TFMessage(IdlStruct, typename="tf2_msgs::msg::dds_::TFMessage_"):
    transforms: sequence[TransformStamped]


def rows(msg):
    return [[t.header.frame_id, t.child_frame_id,
             [t.transform.translation.x, t.transform.translation.y, t.transform.translation.z],
             [t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z, t.transform.rotation.w]]
            for t in msg.transforms]


def main(timeout):
    dp = DomainParticipant(int(os.environ.get("ROS_DOMAIN_ID", "0")))
    reliable = Policy.Reliability.Reliable(duration(seconds=1))
    tf = DataReader(dp, Topic(dp, "rt/tf", TFMessage), qos=Qos(reliable, Policy.Durability.Volatile, Policy.History.KeepLast(100)))
    static = DataReader(dp, Topic(dp, "rt/tf_static", TFMessage), qos=Qos(reliable, Policy.Durability.TransientLocal, Policy.History.KeepLast(1)))
    print("ready", flush=True)
    out = {"tf": {"count": 0, "last": None}, "tf_static": None}
    end = time.monotonic() + timeout
    last_seen = None
    while time.monotonic() < end:
        # take() also hands over the instance's state changes (a writer gone) as InvalidSample.
        for m in tf.take(N=100):
            if not isinstance(m, TFMessage):
                continue
            out["tf"]["count"] += 1
            out["tf"]["last"] = rows(m)
            last_seen = time.monotonic()
        for m in static.take(N=10):
            if not isinstance(m, TFMessage):
                continue
            out["tf_static"] = rows(m)
        if last_seen is not None and time.monotonic() - last_seen > 1.0 and out["tf_static"] is not None:
            break
        time.sleep(0.01)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]))
