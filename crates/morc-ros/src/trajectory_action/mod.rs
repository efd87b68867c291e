//! MoveIt drives morc: a `control_msgs/action/FollowJointTrajectory` action server, what MoveIt's
//! simple controller manager (and `ros2 action send_goal`) calls a robot's controller through.
//!
//! The server's DDS side lives on the bridge ([`ActionEndpoint`]): it answers the action's
//! services (send_goal, cancel_goal, get_result) and publishes its feedback and status topics.
//! The program's side ([`TrajectoryServer`]) takes goals one at a time, accepts or rejects each
//! after checking it, runs the accepted one as a morc motion and finishes it with a result. While
//! a goal runs, a [`feedback`] tap on the run hands the reference and the measurement to the
//! bridge through a preallocated ring, and a cancel request stops the run through the engine's
//! canceller: the robot holds.
//!
//! One goal runs at a time: a goal that comes while another runs is rejected (cancel the running
//! one first), as is one that comes while the program is not taking goals and four wait already.

pub mod feedback;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, Sender};
use morc_kernel::Canceller;
use morc_record::ring::RingConsumer;
use morc_ros_msgs::builtin_interfaces::Time as RosTime;
use morc_ros_msgs::control_msgs::{FollowJointTrajectoryFeedback, FollowJointTrajectoryGoal, FollowJointTrajectoryResult};
use morc_ros_msgs::std_msgs::Header;
use morc_ros_msgs::trajectory_msgs::JointTrajectoryPoint;
use ros2_client::action::{ActionServer, ActionServerQosPolicies, GetResultRequest, GetResultResponse, SendGoalRequest, SendGoalResponse};
use ros2_client::action_msgs::{CancelGoalRequest, CancelGoalResponse, CancelGoalResponseEnum, GoalId, GoalInfo, GoalStatus, GoalStatusArray, GoalStatusEnum};
use ros2_client::{ActionTypeName, Message, RmwRequestId, ServiceMapping};
use serde::{Deserialize, Serialize};

use crate::bridge::{Bridge, Endpoint, EndpointId, Inlet, Outlet};
use crate::{qos, stamp_at, stamp_now, topic_name};

/// Where ros2_control's joint_trajectory_controller serves it, and so where MoveIt's
/// `moveit_controllers.yaml` looks by default.
pub const DEFAULT_ACTION: &str = "/joint_trajectory_controller/follow_joint_trajectory";

/// Goals that may wait for the program to take them.
const WAITING_GOALS: usize = 4;

/// Finished goals whose results a client can still ask for.
const KEPT_RESULTS: usize = 16;

/// A goal's 16-byte UUID, as `unique_identifier_msgs/UUID` carries it.
pub type GoalUuid = [u8; 16];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
struct Goal(FollowJointTrajectoryGoal);
impl Message for Goal {}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
struct ActionResult(FollowJointTrajectoryResult);
impl Message for ActionResult {}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
struct Feedback(FollowJointTrajectoryFeedback);
impl Message for Feedback {}

/// A goal the program takes: its id, what it asks, and when it came (ns since the Unix epoch).
#[derive(Clone, Debug)]
pub struct ReceivedGoal {
    /// The goal's UUID.
    pub id: GoalUuid,
    /// What it asks.
    pub goal: FollowJointTrajectoryGoal,
    /// When the server received it (ns since the Unix epoch, UTC).
    pub received: u64,
}

/// How a goal ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalEnd {
    /// It ran to the end within its tolerances.
    Succeeded,
    /// It stopped: a tolerance, a fault, an interruption.
    Aborted,
    /// A client cancelled it; the robot holds.
    Canceled,
}

impl GoalEnd {
    fn status(self) -> GoalStatusEnum {
        match self {
            GoalEnd::Succeeded => GoalStatusEnum::Succeeded,
            GoalEnd::Aborted => GoalStatusEnum::Aborted,
            GoalEnd::Canceled => GoalStatusEnum::Canceled,
        }
    }
}

enum Decision {
    Accept(GoalUuid),
    Reject(GoalUuid),
    Finish(GoalUuid, GoalEnd, FollowJointTrajectoryResult),
}

/// What the program, the run and the bridge share about the goal that runs.
pub struct ExecutingGoal {
    /// The goal's UUID.
    pub id: GoalUuid,
    cancel_requested: AtomicBool,
    canceller: Mutex<Option<Canceller>>,
    feedback: Mutex<Option<FeedbackSource>>,
}

/// The rows a [`feedback::FeedbackTap`] pushes: run time, then q_ref, qd_ref, qdd_ref, q, qd.
struct FeedbackSource {
    consumer: RingConsumer,
    epoch: u64,
}

impl ExecutingGoal {
    /// Whether a client asked to cancel it.
    pub fn cancel_requested(&self) -> bool {
        self.cancel_requested.load(Ordering::SeqCst)
    }

    /// The run that executes it: a cancel request stops that run (the robot holds).
    pub fn set_canceller(&self, canceller: Canceller) {
        if self.cancel_requested() {
            canceller.cancel();
        }
        *self.canceller.lock().unwrap_or_else(|p| p.into_inner()) = Some(canceller);
    }

    fn request_cancel(&self) {
        self.cancel_requested.store(true, Ordering::SeqCst);
        if let Some(c) = self.canceller.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            c.cancel();
        }
    }

    fn set_feedback(&self, consumer: RingConsumer, epoch: u64) {
        *self.feedback.lock().unwrap_or_else(|p| p.into_inner()) = Some(FeedbackSource { consumer, epoch });
    }
}

/// The program's side of the action server.
pub struct TrajectoryServer {
    /// The action's name, e.g. "/joint_trajectory_controller/follow_joint_trajectory".
    pub action: String,
    goals: Receiver<ReceivedGoal>,
    decisions: Sender<Decision>,
    executing: Arc<Mutex<Option<Arc<ExecutingGoal>>>>,
    endpoint: Option<(Arc<Bridge>, EndpointId)>,
}

impl TrajectoryServer {
    /// Serves `action` on the bridge for a robot whose joints are `joints` (their names go in the
    /// feedback). Fails when morc is not on ROS 2 or the name is not a ROS 2 name.
    pub fn start(action: &str, joints: Vec<String>) -> Result<TrajectoryServer, String> {
        let bridge = crate::bridge().ok_or("morc is not on ROS 2: run `morc --ros …` or call morc.ros.start() first")?;
        let name = topic_name(action)?;
        let (goal_tx, goals) = bounded(WAITING_GOALS);
        let (decisions, decision_rx) = bounded(64);
        let executing: Arc<Mutex<Option<Arc<ExecutingGoal>>>> = Arc::default();
        let shared = executing.clone();
        let id = bridge.add(Box::new(move |node| {
            let service = qos::default_profile().durability(ros2_client::qos::Durability::Volatile);
            let policies = ActionServerQosPolicies {
                goal_service: service.clone(),
                result_service: service.clone(),
                cancel_service: service,
                feedback_publisher: qos::default_profile(),
                // ROS 2 action clients ask for the status transient local, keep last 1.
                status_publisher: qos::transient_local(),
            };
            let server = node
                .create_action_server::<Goal, ActionResult, Feedback>(ServiceMapping::Enhanced, &name, &ActionTypeName::new("control_msgs", "FollowJointTrajectory"), policies)
                .map_err(|e| format!("ROS 2 action server {name:?}: {e:?}"))?;
            let endpoint = Arc::new(Mutex::new(ActionEndpoint {
                server,
                joints,
                goals: goal_tx,
                decisions: decision_rx,
                executing: shared,
                records: Vec::new(),
                statuses_changed: true,
                batch: Vec::new(),
                refused: 0,
            }));
            Ok(Endpoint::Both(Box::new(EndpointSide(endpoint.clone())), Box::new(EndpointSide(endpoint))))
        }))?;
        Ok(TrajectoryServer { action: action.to_string(), goals, decisions, executing, endpoint: Some((bridge, id)) })
    }

    /// The next goal a client sent, waiting at most `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<ReceivedGoal> {
        self.goals.recv_timeout(timeout).ok()
    }

    /// Accepts goal `id`: it is executing from now, until [`TrajectoryServer::finish`].
    pub fn accept(&self, id: GoalUuid) -> Arc<ExecutingGoal> {
        let goal = Arc::new(ExecutingGoal { id, cancel_requested: AtomicBool::new(false), canceller: Mutex::new(None), feedback: Mutex::new(None) });
        *self.executing.lock().unwrap_or_else(|p| p.into_inner()) = Some(goal.clone());
        let _ = self.decisions.send(Decision::Accept(id));
        goal
    }

    /// Rejects goal `id` (its client's goal response says so; the reason goes in the log).
    pub fn reject(&self, id: GoalUuid, reason: &str) {
        log::warn!("FollowJointTrajectory goal {} rejected: {reason}", uuid_text(&id));
        let _ = self.decisions.send(Decision::Reject(id));
    }

    /// Ends goal `id` with `end` and its result.
    pub fn finish(&self, id: GoalUuid, end: GoalEnd, error_code: i32, error_string: String) {
        let mut executing = self.executing.lock().unwrap_or_else(|p| p.into_inner());
        if executing.as_ref().is_some_and(|g| g.id == id) {
            *executing = None;
        }
        let _ = self.decisions.send(Decision::Finish(id, end, FollowJointTrajectoryResult { error_code, error_string }));
    }

    /// The goal that runs now, if any.
    pub fn executing(&self) -> Option<Arc<ExecutingGoal>> {
        self.executing.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for TrajectoryServer {
    fn drop(&mut self) {
        if let Some(goal) = self.executing() {
            self.finish(goal.id, GoalEnd::Aborted, morc_ros_msgs::control_msgs::follow_joint_trajectory::INVALID_GOAL, "the trajectory server stopped".into());
        }
        if let Some((bridge, id)) = self.endpoint.take() {
            bridge.remove(id);
        }
    }
}

/// A goal as the endpoint keeps it.
struct GoalRecord {
    id: GoalId,
    uuid: GoalUuid,
    status: GoalStatusEnum,
    accepted: ros2_client::builtin_interfaces::Time,
    /// The send_goal request still to answer.
    request: Option<RmwRequestId>,
    result: Option<FollowJointTrajectoryResult>,
    /// get_result requests waiting for the result.
    result_requests: Vec<RmwRequestId>,
}

impl GoalRecord {
    fn terminal(&self) -> bool {
        matches!(self.status, GoalStatusEnum::Succeeded | GoalStatusEnum::Aborted | GoalStatusEnum::Canceled)
    }
}

/// The bridge's side: the action's services and topics.
struct ActionEndpoint {
    server: ActionServer<Goal, ActionResult, Feedback>,
    joints: Vec<String>,
    goals: Sender<ReceivedGoal>,
    decisions: Receiver<Decision>,
    executing: Arc<Mutex<Option<Arc<ExecutingGoal>>>>,
    records: Vec<GoalRecord>,
    statuses_changed: bool,
    batch: Vec<f64>,
    refused: u64,
}

/// The endpoint as the bridge holds it: once as an inlet (requests) and once as an outlet
/// (answers, feedback, statuses).
struct EndpointSide(Arc<Mutex<ActionEndpoint>>);

impl Inlet for EndpointSide {
    fn poll(&mut self) -> u64 {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take_requests()
    }
}

impl Outlet for EndpointSide {
    fn drain(&mut self) -> u64 {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).answer()
    }

    fn dropped(&self) -> u64 {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).refused
    }
}

fn uuid_of(id: &GoalId) -> GoalUuid {
    *id.uuid.as_bytes()
}

fn uuid_text(id: &GoalUuid) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

/// CancelGoalRequest's goal_info, read through its encoding (ros2-client keeps the field private).
#[derive(Deserialize)]
struct CancelFields {
    goal_id: GoalUuid,
    stamp: RosTime,
}

impl ActionEndpoint {
    /// New goals, cancel and result requests; returns how many came.
    fn take_requests(&mut self) -> u64 {
        let mut came = 0;
        while let Ok(Some((request, SendGoalRequest { goal_id, goal }))) = self.server.receive_goal() {
            came += 1;
            let uuid = uuid_of(&goal_id);
            let busy = self.executing.lock().unwrap_or_else(|p| p.into_inner()).is_some();
            let received = ReceivedGoal { id: uuid, goal: goal.0, received: stamp_now() };
            if busy || self.goals.try_send(received).is_err() {
                log::warn!("FollowJointTrajectory goal {} rejected: {}", uuid_text(&uuid), if busy { "a trajectory is running (cancel it first)" } else { "the program is not taking goals" });
                let _ = self.server.send_goal_response(request, SendGoalResponse { accepted: false, stamp: ros2_client::builtin_interfaces::Time::now() });
                continue;
            }
            self.records.push(GoalRecord {
                id: goal_id,
                uuid,
                status: GoalStatusEnum::Unknown,
                accepted: ros2_client::builtin_interfaces::Time::ZERO,
                request: Some(request),
                result: None,
                result_requests: Vec::new(),
            });
        }
        while let Ok(Some((request, cancel))) = self.server.receive_cancel_request() {
            came += 1;
            self.cancel(request, &cancel);
        }
        while let Ok(Some((request, GetResultRequest { goal_id }))) = self.server.receive_result_request() {
            came += 1;
            let uuid = uuid_of(&goal_id);
            match self.records.iter_mut().find(|r| r.uuid == uuid) {
                Some(r) if r.result.is_some() => {
                    let response = GetResultResponse { status: r.status, result: ActionResult(r.result.clone().unwrap_or_default()) };
                    let _ = self.server.send_result(request, response);
                }
                Some(r) => r.result_requests.push(request),
                None => {
                    let _ = self.server.send_result(request, GetResultResponse { status: GoalStatusEnum::Unknown, result: ActionResult::default() });
                }
            }
        }
        came
    }

    /// Answers a cancel request by the action's rules: a zero id and stamp cancel every goal, a
    /// zero id those accepted at or before the stamp, an id that goal (and those before the stamp).
    fn cancel(&mut self, request: RmwRequestId, cancel: &CancelGoalRequest) {
        let Ok(fields) = morc_ros_msgs::from_cdr::<CancelFields>(&morc_ros_msgs::to_cdr(cancel)) else {
            let _ = self.server.send_cancel_response(request, CancelGoalResponse { return_code: CancelGoalResponseEnum::Rejected, goals_canceling: Vec::new() });
            return;
        };
        let (all, before) = (fields.goal_id == [0; 16], fields.stamp.as_nanos());
        let executing = self.executing.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut canceling = Vec::new();
        let mut terminal = false;
        for r in &mut self.records {
            let stamp = r.accepted.to_nanos().max(0) as u64;
            let chosen = (all && before == 0) || r.uuid == fields.goal_id || (before != 0 && stamp != 0 && stamp <= before);
            if !chosen {
                continue;
            }
            if r.terminal() {
                terminal = true;
                continue;
            }
            if r.status == GoalStatusEnum::Executing || r.status == GoalStatusEnum::Accepted {
                r.status = GoalStatusEnum::Canceling;
                self.statuses_changed = true;
                canceling.push(GoalInfo { goal_id: r.id, stamp: r.accepted });
                if let Some(goal) = executing.as_ref().filter(|g| g.id == r.uuid) {
                    goal.request_cancel();
                }
            } else if r.status == GoalStatusEnum::Canceling {
                canceling.push(GoalInfo { goal_id: r.id, stamp: r.accepted });
            }
        }
        let return_code = if !canceling.is_empty() {
            CancelGoalResponseEnum::None
        } else if terminal {
            CancelGoalResponseEnum::GoalTerminated
        } else {
            CancelGoalResponseEnum::UnknownGoal
        };
        let _ = self.server.send_cancel_response(request, CancelGoalResponse { return_code, goals_canceling: canceling });
    }

    /// The program's decisions, the feedback of the goal that runs, and the statuses when they
    /// changed; returns how many messages went out.
    fn answer(&mut self) -> u64 {
        let mut sent = 0;
        while let Ok(decision) = self.decisions.try_recv() {
            sent += self.decide(decision);
        }
        sent += self.send_feedback();
        if self.statuses_changed {
            self.statuses_changed = false;
            let status_list = self
                .records
                .iter()
                .filter(|r| r.status != GoalStatusEnum::Unknown)
                .map(|r| GoalStatus { goal_info: GoalInfo { goal_id: r.id, stamp: r.accepted }, status: r.status })
                .collect();
            match self.server.send_goal_statuses(GoalStatusArray { status_list }) {
                Ok(()) => sent += 1,
                Err(_) => self.refused += 1,
            }
        }
        sent
    }

    fn decide(&mut self, decision: Decision) -> u64 {
        let (uuid, accepted) = match &decision {
            Decision::Accept(id) => (*id, true),
            Decision::Reject(id) => (*id, false),
            Decision::Finish(id, end, result) => {
                let Some(r) = self.records.iter_mut().find(|r| r.uuid == *id) else { return 0 };
                r.status = end.status();
                r.result = Some(result.clone());
                self.statuses_changed = true;
                let mut sent = 0;
                for request in std::mem::take(&mut r.result_requests) {
                    if self.server.send_result(request, GetResultResponse { status: r.status, result: ActionResult(result.clone()) }).is_ok() {
                        sent += 1;
                    }
                }
                // Results stay for clients that ask later, the oldest finished go first.
                while self.records.iter().filter(|r| r.terminal()).count() > KEPT_RESULTS {
                    let oldest = self.records.iter().position(GoalRecord::terminal).expect("counted");
                    self.records.remove(oldest);
                }
                return sent;
            }
        };
        let Some(at) = self.records.iter().position(|r| r.uuid == uuid) else { return 0 };
        let now = ros2_client::builtin_interfaces::Time::now();
        let request = self.records[at].request.take();
        if let Some(request) = request {
            let _ = self.server.send_goal_response(request, SendGoalResponse { accepted, stamp: now });
        }
        if accepted {
            let r = &mut self.records[at];
            r.accepted = now;
            r.status = GoalStatusEnum::Executing;
            self.statuses_changed = true;
        } else {
            self.records.remove(at);
        }
        1
    }

    /// Feedback of the goal that runs: one message per row its tap pushed.
    fn send_feedback(&mut self) -> u64 {
        let Some(goal) = self.executing.lock().unwrap_or_else(|p| p.into_inner()).clone() else { return 0 };
        let Some(record) = self.records.iter().find(|r| r.uuid == goal.id) else { return 0 };
        let goal_id = record.id;
        let mut source = goal.feedback.lock().unwrap_or_else(|p| p.into_inner());
        let Some(source) = source.as_mut() else { return 0 };
        self.batch.clear();
        let width = source.consumer.width();
        source.consumer.pop_into(&mut self.batch, usize::MAX);
        let n = self.joints.len();
        let mut sent = 0;
        for row in self.batch.chunks_exact(width) {
            let part = |k: usize| row[1 + k * n..1 + (k + 1) * n].to_vec();
            let (q_ref, qd_ref, qdd_ref, q, qd) = (part(0), part(1), part(2), part(3), part(4));
            let since_start = morc_ros_msgs::builtin_interfaces::Duration::from_secs_f64(row[0]);
            let error = JointTrajectoryPoint {
                positions: q_ref.iter().zip(&q).map(|(a, b)| a - b).collect(),
                velocities: qd_ref.iter().zip(&qd).map(|(a, b)| a - b).collect(),
                time_from_start: since_start,
                ..Default::default()
            };
            let feedback = FollowJointTrajectoryFeedback {
                header: Header { stamp: RosTime::from_nanos(stamp_at(source.epoch, row[0])), frame_id: String::new() },
                joint_names: self.joints.clone(),
                desired: JointTrajectoryPoint { positions: q_ref, velocities: qd_ref, accelerations: qdd_ref, effort: Vec::new(), time_from_start: since_start },
                actual: JointTrajectoryPoint { positions: q, velocities: qd, time_from_start: since_start, ..Default::default() },
                error,
                ..Default::default()
            };
            match self.server.send_feedback(goal_id, Feedback(feedback)) {
                Ok(()) => sent += 1,
                Err(_) => self.refused += 1,
            }
        }
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_request_reads_through_its_encoding() {
        let id = ros2_client::action_msgs::GoalId::new_random();
        // CancelGoalRequest has no public constructor: make one from its encoding, as a client sends it.
        #[derive(Serialize)]
        struct Mirror {
            goal_id: GoalUuid,
            stamp: RosTime,
        }
        let bytes = morc_ros_msgs::to_cdr(&Mirror { goal_id: uuid_of(&id), stamp: RosTime { sec: 3, nanosec: 4 } });
        let request: CancelGoalRequest = morc_ros_msgs::from_cdr(&bytes).unwrap();
        let fields: CancelFields = morc_ros_msgs::from_cdr(&morc_ros_msgs::to_cdr(&request)).unwrap();
        assert_eq!(fields.goal_id, uuid_of(&id));
        assert_eq!(fields.stamp, RosTime { sec: 3, nanosec: 4 });
    }
}
