//! The bridge: the thread that owns morc's ROS 2 participant and node. Nothing on the real-time
//! path talks DDS: stepping threads hand rows to the bridge through preallocated lock-free rings
//! (outlets), and the bridge hands what subscriptions receive back through slots (inlets). The
//! bridge looks at every outlet and inlet each [`POLL_PERIOD`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, Sender};
use ros2_client::{Context, ContextOptions, Node, NodeName, NodeOptions, ParameterValue};

/// How often the bridge publishes what outlets queued and takes what subscriptions received:
/// half of it is the mean delay a row waits on its way out (`morc bench ros`: at 500 µs a
/// tick reached an rclpy subscriber 830 µs later at the median, at 100 µs 460 µs).
pub const POLL_PERIOD: Duration = Duration::from_micros(100);
/// How long the bridge sleeps when it holds no endpoint to poll (commands still wake it at once).
const IDLE_WAIT: Duration = Duration::from_millis(50);

/// How long the participant outlives the node, for the news that the node left to go out.
const LEAVE_GRACE: Duration = Duration::from_millis(250);

/// How long [`Bridge::add`] waits for the bridge to make an endpoint.
const ADD_TIMEOUT: Duration = Duration::from_secs(10);

/// Something the bridge publishes: it drains what the real-time side queued.
pub trait Outlet: Send {
    /// Publishes what was queued since the last call; returns how many messages went out.
    fn drain(&mut self) -> u64;
    /// Messages dropped so far: rows the real-time side found the queue full for, and messages
    /// a peer's full window refused.
    fn dropped(&self) -> u64;
}

/// Something the bridge subscribes to: it takes what arrived and hands it to the real-time side.
pub trait Inlet: Send {
    /// Takes what arrived since the last call; returns how many messages.
    fn poll(&mut self) -> u64;
}

/// What a job made on the bridge's node.
pub enum Endpoint {
    /// Drained every poll.
    Outlet(Box<dyn Outlet>),
    /// Polled every poll.
    Inlet(Box<dyn Inlet>),
    /// Polled every poll as both (an action server, a node with inputs and outputs).
    Both(Box<dyn Outlet>, Box<dyn Inlet>),
    /// Kept until removed (a latched publisher that only sent once).
    Keep(Box<dyn Send>),
}

/// Makes an endpoint on the bridge's node (it runs on the bridge's thread).
pub type Job = Box<dyn FnOnce(&mut Node) -> Result<Endpoint, String> + Send>;

/// An endpoint's number, to remove it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndpointId(u64);

enum Command {
    Add(Job, Sender<Result<EndpointId, String>>),
    Run(Box<dyn FnOnce(&mut Node) + Send>),
    /// Removes the endpoint; answers on the sender, if any, once it is gone.
    Remove(EndpointId, Option<Sender<()>>),
    Stop,
}

/// What the bridge has done, over its life.
#[derive(Debug, Default)]
pub struct BridgeCounts {
    /// Messages published.
    pub published: AtomicU64,
    /// Messages received.
    pub received: AtomicU64,
    /// Messages dropped: rows the real-time side found a queue full for, messages a peer's full
    /// window refused.
    pub dropped: AtomicU64,
}

/// A running bridge: its thread, its node's name and domain.
pub struct Bridge {
    commands: Sender<Command>,
    thread: Option<JoinHandle<()>>,
    /// The node's fully qualified name, e.g. "/morc".
    pub node_name: String,
    /// The DDS domain (ROS_DOMAIN_ID).
    pub domain_id: u16,
    /// Counts, shared with the thread.
    pub counts: Arc<BridgeCounts>,
}

/// Where and as whom the bridge joins ROS 2.
#[derive(Clone, Debug)]
pub struct BridgeOptions {
    /// The DDS domain, 0 to 232 (ROS_DOMAIN_ID).
    pub domain_id: u16,
    /// The node's namespace ("/" for none).
    pub namespace: String,
    /// The node's name.
    pub name: String,
    /// ROS 2 parameters the node declares beside `use_sim_time` (none: only that one).
    pub parameters: Option<NodeParameters>,
}

/// Checks or applies a parameter change: `Err(reason)` refuses it, and the reason goes back
/// to whoever asked (`ros2 param set` prints it).
pub type ParameterHook = Arc<dyn Fn(&str, &ParameterValue) -> Result<(), String> + Send + Sync>;

/// The ROS 2 parameters of the bridge's node: declared with their values when it starts, set
/// through its `set_parameters` service (what `ros2 param set` calls). ros2-client runs the
/// hooks on its spinner's thread: `check` first (a type or a rule), then `apply`, and stores
/// the value only when both said yes.
#[derive(Clone)]
pub struct NodeParameters {
    /// Names and first values. The hooks are called for them too when the node starts.
    pub declared: Vec<(String, ParameterValue)>,
    /// Says whether a value may be set.
    pub check: ParameterHook,
    /// Puts a value in effect.
    pub apply: ParameterHook,
}

impl std::fmt::Debug for NodeParameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeParameters").field("declared", &self.declared).finish_non_exhaustive()
    }
}

impl Bridge {
    /// Joins ROS 2: starts the bridge's thread, which makes the participant and the node.
    pub fn start(options: &BridgeOptions) -> Result<Bridge, String> {
        let node_name = NodeName::new(&options.namespace, &options.name).map_err(|e| format!("ROS 2 node name '{}' in namespace '{}': {e}", options.name, options.namespace))?;
        let fully_qualified = node_name.fully_qualified_name();
        let (commands, inbox) = bounded::<Command>(64);
        let (ready_tx, ready_rx) = bounded::<Result<(), String>>(1);
        let counts = Arc::new(BridgeCounts::default());
        let domain_id = options.domain_id;
        let thread_counts = counts.clone();
        let mut node_options = NodeOptions::new().enable_rosout(true);
        if let Some(p) = &options.parameters {
            for (name, value) in &p.declared {
                node_options = node_options.declare_parameter(name, value.clone());
            }
            let (check, apply) = (p.check.clone(), p.apply.clone());
            node_options = node_options
                .parameter_validator(Box::new(move |n: &str, v: &ParameterValue| check(n, v)))
                .parameter_set_action(Box::new(move |n: &str, v: &ParameterValue| apply(n, v)));
        }
        let thread = std::thread::Builder::new()
            .name("ros-bridge".into())
            .spawn(move || {
                let node = Context::with_options(ContextOptions::new().domain_id(domain_id))
                    .map_err(|e| format!("cannot join ROS 2 domain {domain_id}: {e:?}"))
                    .and_then(|context| context.new_node(node_name, node_options).map(|node| (context, node)).map_err(|e| format!("cannot make the ROS 2 node: {e:?}")));
                let (context, mut node) = match node {
                    Ok(n) => n,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                // ros2-client's background tasks (parameter services, the graph): on a thread of
                // their own, ending when the node is dropped.
                match node.spinner() {
                    Ok(spinner) => {
                        let _ = std::thread::Builder::new().name("ros-spin".into()).spawn(move || {
                            let _ = futures::executor::block_on(spinner.spin());
                        });
                    }
                    Err(e) => log::warn!("ROS 2: no spinner for the node: {e:?}"),
                }
                let _ = ready_tx.send(Ok(()));
                run(node, inbox, &thread_counts);
                // The node is gone: the participant stays a moment, so that the graph hears of
                // it (ros2 node list forgets the node now, not when the participant's lease ends).
                std::thread::sleep(LEAVE_GRACE);
                drop(context);
            })
            .map_err(|e| format!("cannot start the ROS 2 bridge's thread: {e}"))?;
        match ready_rx.recv_timeout(ADD_TIMEOUT) {
            Ok(Ok(())) => Ok(Bridge { commands, thread: Some(thread), node_name: fully_qualified, domain_id, counts }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err(format!("the ROS 2 participant did not start within {} s", ADD_TIMEOUT.as_secs())),
        }
    }

    /// Runs `job` on the bridge's node and keeps what it made until [`Bridge::remove`].
    pub fn add(&self, job: Job) -> Result<EndpointId, String> {
        let (reply, answer) = bounded(1);
        self.commands.send(Command::Add(job, reply)).map_err(|_| "the ROS 2 bridge has stopped".to_string())?;
        answer.recv_timeout(ADD_TIMEOUT).map_err(|_| "the ROS 2 bridge did not answer".to_string())?
    }

    /// Runs `f` on the bridge's node (a question about the graph, say) and returns its answer.
    pub fn with_node<R: Send + 'static>(&self, f: impl FnOnce(&mut Node) -> R + Send + 'static) -> Result<R, String> {
        let (reply, answer) = bounded(1);
        let job = move |node: &mut Node| {
            let _ = reply.send(f(node));
        };
        self.commands.send(Command::Run(Box::new(job))).map_err(|_| "the ROS 2 bridge has stopped".to_string())?;
        answer.recv_timeout(ADD_TIMEOUT).map_err(|_| "the ROS 2 bridge did not answer".to_string())
    }

    /// Removes an endpoint (its publishers and subscriptions leave the graph); returns at once.
    pub fn remove(&self, id: EndpointId) {
        let _ = self.commands.send(Command::Remove(id, None));
    }

    /// Removes an endpoint and waits until the bridge has published what its outlet still held
    /// and dropped it: its counts are final then, and an endpoint added after it on the same topic
    /// never meets it. Gives up after the time [`Bridge::add`] waits, saying so.
    pub fn remove_and_wait(&self, id: EndpointId) -> Result<(), String> {
        let (reply, answer) = bounded(1);
        self.commands.send(Command::Remove(id, Some(reply))).map_err(|_| "the ROS 2 bridge has stopped".to_string())?;
        answer.recv_timeout(ADD_TIMEOUT).map_err(|_| format!("the ROS 2 bridge did not remove an endpoint within {} s", ADD_TIMEOUT.as_secs()))
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The bridge's loop: commands, then every outlet and inlet, every [`POLL_PERIOD`].
fn run(mut node: Node, inbox: Receiver<Command>, counts: &BridgeCounts) {
    let mut endpoints: Vec<(EndpointId, Endpoint)> = Vec::new();
    let mut next_id = 0;
    let mut dropped_by_removed = 0;
    loop {
        let polled = endpoints.iter().any(|(_, e)| !matches!(e, Endpoint::Keep(_)));
        match inbox.recv_timeout(if polled { POLL_PERIOD } else { IDLE_WAIT }) {
            Ok(Command::Add(job, reply)) => {
                next_id += 1;
                let id = EndpointId(next_id);
                let made = job(&mut node).map(|e| {
                    endpoints.push((id, e));
                    id
                });
                let _ = reply.send(made);
            }
            Ok(Command::Run(f)) => f(&mut node),
            Ok(Command::Remove(id, reply)) => {
                if let Some(at) = endpoints.iter().position(|(i, _)| *i == id) {
                    let (_, mut e) = endpoints.remove(at);
                    // What was queued before the endpoint went still goes out.
                    let (published, dropped) = settle(&mut e);
                    counts.published.fetch_add(published, Ordering::Relaxed);
                    dropped_by_removed += dropped;
                    drop(e);
                }
                if let Some(reply) = reply {
                    let _ = reply.send(());
                }
            }
            Ok(Command::Stop) | Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
        }
        for (_, e) in endpoints.iter_mut() {
            match e {
                Endpoint::Outlet(o) => {
                    counts.published.fetch_add(o.drain(), Ordering::Relaxed);
                }
                Endpoint::Inlet(i) => {
                    counts.received.fetch_add(i.poll(), Ordering::Relaxed);
                }
                Endpoint::Both(o, i) => {
                    counts.received.fetch_add(i.poll(), Ordering::Relaxed);
                    counts.published.fetch_add(o.drain(), Ordering::Relaxed);
                }
                Endpoint::Keep(_) => {}
            }
        }
        let live: u64 = endpoints
            .iter()
            .map(|(_, e)| match e {
                Endpoint::Outlet(o) | Endpoint::Both(o, _) => o.dropped(),
                _ => 0,
            })
            .sum();
        counts.dropped.store(dropped_by_removed + live, Ordering::Relaxed);
    }
    for (_, mut e) in endpoints.drain(..) {
        let (published, _) = settle(&mut e);
        counts.published.fetch_add(published, Ordering::Relaxed);
    }
}

/// Publishes what an endpoint still holds; (published, dropped).
fn settle(e: &mut Endpoint) -> (u64, u64) {
    match e {
        Endpoint::Outlet(o) | Endpoint::Both(o, _) => (o.drain(), o.dropped()),
        _ => (0, 0),
    }
}
