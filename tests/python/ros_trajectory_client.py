"""A FollowJointTrajectory action client, as MoveIt's simple controller manager is one, written
with Eclipse Cyclone DDS's Python binding: control_msgs is not on PyPI, so its types are declared
here as ROS 2's IDL gives them (control_msgs 5, Jazzy), and the action is spoken on its DDS topics
as ROS 2 maps it: requests on rq/ACTION/_action/{send_goal,get_result,cancel_goal}Request, replies
on rr/…Reply, feedback and status on rt/ACTION/_action/{feedback,status}. One request is in flight
at a time, so a reply is the answer to the request just sent.

usage: ros_trajectory_client.py ACTION GOAL_JSON [CANCEL_AFTER_S]

GOAL_JSON: {"joint_names": [...], "points": [{"positions": [...], "velocities": [...],
"accelerations": [...], "time_from_start": s}, ...], "path_tolerance": {name: rad},
"goal_tolerance": {name: rad}, "goal_time_tolerance": s, "stamp_offset": s (the header stamp,
from now; absent: 0, start now)}.

Prints "ready" once its writers have matched morc's server, then, as JSON, {"accepted", "status"
(4 succeeded, 5 canceled, 6 aborted), "error_code", "error_string", "cancel_return_code",
"feedback": {"count", "joint_names", "first", "last": {"desired", "actual", "error"}},
"statuses": [status codes seen for the goal, in order]}.
"""
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass, field

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, float64, int8, int32, sequence, uint8, uint16, uint32
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration
from ros_idl import Duration, Header, Quaternion, Time, Transform, Twist, Vector3


@dataclass
class UUID(IdlStruct, typename="unique_identifier_msgs::msg::dds_::UUID_"):
    uuid: array[uint8, 16]


@dataclass
class JointTrajectoryPoint(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectoryPoint_"):
    positions: sequence[float64]
    velocities: sequence[float64]
    accelerations: sequence[float64]
    effort: sequence[float64]
    time_from_start: Duration


@dataclass
class JointTrajectory(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectory_"):
    header: Header
    joint_names: sequence[str]
    points: sequence[JointTrajectoryPoint]


@dataclass
class MultiDOFJointTrajectoryPoint(IdlStruct, typename="trajectory_msgs::msg::dds_::MultiDOFJointTrajectoryPoint_"):
    transforms: sequence[Transform]
    velocities: sequence[Twist]
    accelerations: sequence[Twist]
    time_from_start: Duration


@dataclass
class MultiDOFJointTrajectory(IdlStruct, typename="trajectory_msgs::msg::dds_::MultiDOFJointTrajectory_"):
    header: Header
    joint_names: sequence[str]
    points: sequence[MultiDOFJointTrajectoryPoint]


@dataclass
class JointTolerance(IdlStruct, typename="control_msgs::msg::dds_::JointTolerance_"):
    name: str
    position: float64
    velocity: float64
    acceleration: float64


@dataclass
class JointComponentTolerance(IdlStruct, typename="control_msgs::msg::dds_::JointComponentTolerance_"):
    joint_name: str
    component: uint16
    position: float64
    velocity: float64
    acceleration: float64


@dataclass
class Goal(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_Goal_"):
    trajectory: JointTrajectory
    multi_dof_trajectory: MultiDOFJointTrajectory
    path_tolerance: sequence[JointTolerance]
    component_path_tolerance: sequence[JointComponentTolerance]
    goal_tolerance: sequence[JointTolerance]
    component_goal_tolerance: sequence[JointComponentTolerance]
    goal_time_tolerance: Duration


@dataclass
class Result(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_Result_"):
    error_code: int32
    error_string: str


@dataclass
class Feedback(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_Feedback_"):
    header: Header
    joint_names: sequence[str]
    desired: JointTrajectoryPoint
    actual: JointTrajectoryPoint
    error: JointTrajectoryPoint
    multi_dof_joint_names: sequence[str]
    multi_dof_desired: MultiDOFJointTrajectoryPoint
    multi_dof_actual: MultiDOFJointTrajectoryPoint
    multi_dof_error: MultiDOFJointTrajectoryPoint


@dataclass
class SendGoalRequest(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_SendGoal_Request_"):
    goal_id: UUID
    goal: Goal


@dataclass
class SendGoalResponse(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_SendGoal_Response_"):
    accepted: bool
    stamp: Time


@dataclass
class GetResultRequest(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_GetResult_Request_"):
    goal_id: UUID


@dataclass
class GetResultResponse(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_GetResult_Response_"):
    status: int8
    result: Result


@dataclass
class FeedbackMessage(IdlStruct, typename="control_msgs::action::dds_::FollowJointTrajectory_FeedbackMessage_"):
    goal_id: UUID
    feedback: Feedback


@dataclass
class GoalInfo(IdlStruct, typename="action_msgs::msg::dds_::GoalInfo_"):
    goal_id: UUID
    stamp: Time


@dataclass
class GoalStatus(IdlStruct, typename="action_msgs::msg::dds_::GoalStatus_"):
    goal_info: GoalInfo
    status: int8


@dataclass
class GoalStatusArray(IdlStruct, typename="action_msgs::msg::dds_::GoalStatusArray_"):
    status_list: sequence[GoalStatus]


@dataclass
class CancelGoalRequest(IdlStruct, typename="action_msgs::srv::dds_::CancelGoal_Request_"):
    goal_info: GoalInfo


@dataclass
class CancelGoalResponse(IdlStruct, typename="action_msgs::srv::dds_::CancelGoal_Response_"):
    return_code: int8
    goals_canceling: sequence[GoalInfo]


def dur(s):
    sec = int(s // 1)
    return Duration(sec=sec, nanosec=int(round((s - sec) * 1e9)))


def point(p):
    return JointTrajectoryPoint(positions=p["positions"], velocities=p.get("velocities", []), accelerations=p.get("accelerations", []), effort=[], time_from_start=dur(p["time_from_start"]))


def empty_multi():
    return MultiDOFJointTrajectoryPoint(transforms=[], velocities=[], accelerations=[], time_from_start=Duration(0, 0))


def main(action, spec, cancel_after):
    dp = DomainParticipant(int(os.environ.get("ROS_DOMAIN_ID", "0")))
    base = action.strip("/")
    reliable = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.Volatile, Policy.History.KeepLast(10))
    latched = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.TransientLocal, Policy.History.KeepLast(1))

    def service(name, req_type, resp_type):
        rq = Topic(dp, f"rq/{base}/_action/{name}Request", req_type, qos=reliable)
        rr = Topic(dp, f"rr/{base}/_action/{name}Reply", resp_type, qos=reliable)
        return DataWriter(dp, rq, qos=reliable), DataReader(dp, rr, qos=reliable)

    send_goal = service("send_goal", SendGoalRequest, SendGoalResponse)
    get_result = service("get_result", GetResultRequest, GetResultResponse)
    cancel_goal = service("cancel_goal", CancelGoalRequest, CancelGoalResponse)
    feedback = DataReader(dp, Topic(dp, f"rt/{base}/_action/feedback", FeedbackMessage, qos=reliable), qos=reliable)
    status = DataReader(dp, Topic(dp, f"rt/{base}/_action/status", GoalStatusArray, qos=latched), qos=latched)

    # Wait until morc's server is there (its readers matched ours, and its replies will reach us).
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if all(len(w.get_matched_subscriptions()) > 0 and len(r.get_matched_publications()) > 0 for w, r in (send_goal, get_result, cancel_goal)):
            break
        time.sleep(0.05)
    else:
        print(json.dumps({"error": "morc's FollowJointTrajectory server never appeared"}), flush=True)
        return
    print("ready", flush=True)

    goal_id = UUID(uuid=list(uuid.uuid4().bytes))
    stamp = Time(0, 0)
    if "stamp_offset" in spec:
        ns = time.time_ns() + int(spec["stamp_offset"] * 1e9)
        stamp = Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
    tol = lambda d: [JointTolerance(name=k, position=v, velocity=0.0, acceleration=0.0) for k, v in (d or {}).items()]
    goal = Goal(
        trajectory=JointTrajectory(header=Header(stamp=stamp, frame_id=""), joint_names=spec["joint_names"], points=[point(p) for p in spec["points"]]),
        multi_dof_trajectory=MultiDOFJointTrajectory(header=Header(stamp=Time(0, 0), frame_id=""), joint_names=[], points=[]),
        path_tolerance=tol(spec.get("path_tolerance")),
        component_path_tolerance=[],
        goal_tolerance=tol(spec.get("goal_tolerance")),
        component_goal_tolerance=[],
        goal_time_tolerance=dur(spec.get("goal_time_tolerance", 0.0)),
    )

    def call(pair, request, timeout):
        writer, reader = pair
        writer.write(request)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for reply in reader.take(N=1):
                if hasattr(reply, "accepted") or hasattr(reply, "status") or hasattr(reply, "return_code"):
                    return reply
            collect()
            time.sleep(0.005)
        return None

    fb = {"count": 0, "joint_names": None, "first": None, "last": None}
    statuses = []

    def row(p):
        return {"positions": list(p.positions), "velocities": list(p.velocities), "accelerations": list(p.accelerations), "time_from_start": p.time_from_start.sec + p.time_from_start.nanosec * 1e-9}

    def collect():
        for m in feedback.take(N=100):
            # A writer that went away leaves a sample without data (cyclonedds' InvalidSample).
            if not hasattr(m, "goal_id") or bytes(m.goal_id.uuid) != bytes(goal_id.uuid):
                continue
            f = m.feedback
            entry = {"desired": row(f.desired), "actual": row(f.actual), "error": row(f.error), "stamp": f.header.stamp.sec * 1_000_000_000 + f.header.stamp.nanosec}
            if fb["count"] == 0:
                fb["first"], fb["joint_names"] = entry, list(f.joint_names)
            fb["last"] = entry
            fb["count"] += 1
        for m in status.take(N=100):
            for s in getattr(m, "status_list", []):
                if bytes(s.goal_info.goal_id.uuid) == bytes(goal_id.uuid) and (not statuses or statuses[-1] != s.status):
                    statuses.append(s.status)

    report = {"accepted": None, "status": None, "error_code": None, "error_string": None, "cancel_return_code": None}
    response = call(send_goal, SendGoalRequest(goal_id=goal_id, goal=goal), 30)
    if response is None:
        report["error"] = "no goal response within 30 s"
    else:
        report["accepted"] = bool(response.accepted)
    if report["accepted"]:
        if cancel_after is not None:
            end = time.monotonic() + cancel_after
            while time.monotonic() < end:
                collect()
                time.sleep(0.005)
            cancelled = call(cancel_goal, CancelGoalRequest(goal_info=GoalInfo(goal_id=goal_id, stamp=Time(0, 0))), 30)
            report["cancel_return_code"] = None if cancelled is None else cancelled.return_code
        result = call(get_result, GetResultRequest(goal_id=goal_id), 120)
        if result is None:
            report["error"] = "no result within 120 s"
        else:
            report["status"], report["error_code"], report["error_string"] = result.status, result.result.error_code, result.result.error_string
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            collect()
            time.sleep(0.01)
    report["feedback"] = fb
    report["statuses"] = statuses
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    with open(sys.argv[2]) as f:
        spec = json.load(f)
    main(sys.argv[1], spec, float(sys.argv[3]) if len(sys.argv) > 3 else None)
