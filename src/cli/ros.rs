//! `morc ros …`: morc's tools on ROS 2. `morc ros fmu MODEL.fmu` runs an FMU as a ROS 2 node
//! (crates/morc-ros/src/fmu_node.rs does the work; here: the arguments, signals, exit codes).

use std::path::PathBuf;

use clap::Subcommand;
use morc_kernel::ClockKind;
use morc_ros::fmu_node::{self, FmuNodeError, FmuNodeOptions};

use super::exit;

#[derive(Subcommand, Debug)]
pub enum RosCommand {
    /// Run an FMU as a ROS 2 node, as fmi_adapter does (FMI 2 and 3, co-simulation and model
    /// exchange): each input subscribed and each output published on a topic named after the
    /// variable (std_msgs/msg/Float64 for Reals, Int32 or Int64 for Integers, Bool for Booleans),
    /// its parameters as ROS 2 parameters (`ros2 param set`; fixed ones at start only). Runs until
    /// Ctrl-C or --duration.
    Fmu(FmuArgs),
}

#[derive(clap::Args, Debug)]
pub struct FmuArgs {
    /// The FMU file.
    pub file: PathBuf,
    /// The FMU's communication step in s (ROS 2 parameter step_size) [default: the FMU's default experiment's, else 0.001].
    #[arg(long, value_name = "S")]
    pub step_size: Option<f64>,
    /// How often the outputs are published, in s (ROS 2 parameter update_period, may change while running).
    #[arg(long, value_name = "S", default_value_t = fmu_node::DEFAULT_UPDATE_PERIOD)]
    pub update_period: f64,
    /// A parameter or start value before the FMU starts (repeatable), by its FMU or ROS 2 name; also interface=me (model exchange), me_solver=euler|rk4, me_substeps=N.
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// The node's name [default: the model's name, made a ROS 2 name].
    #[arg(long, value_name = "NODE")]
    pub name: Option<String>,
    /// The node's namespace; topics are in it.
    #[arg(long, value_name = "NS", default_value = "/")]
    pub namespace: String,
    /// "wall" (the FMU keeps pace with the wall clock; the default) or "virtual" (as fast as it steps and its outputs go out).
    #[arg(long, value_name = "wall|virtual")]
    pub clock: Option<String>,
    /// End after this much of the FMU's time, in s [default: run until Ctrl-C].
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
}

/// `morc ros …`; `clock`: a --clock given before the subcommand.
pub fn main(command: &RosCommand, clock: Option<&str>, quiet: bool) -> i32 {
    match command {
        RosCommand::Fmu(args) => fmu_main(args, clock, quiet),
    }
}

fn fmu_main(args: &FmuArgs, clock: Option<&str>, quiet: bool) -> i32 {
    let usage = |e: String| {
        eprintln!("morc ros fmu: {e}");
        exit::USAGE
    };
    let clock = match args.clock.as_deref().or(clock).map(str::parse::<ClockKind>).transpose() {
        Ok(c) => c.unwrap_or(ClockKind::Wall),
        Err(e) => return usage(format!("--clock: {e}")),
    };
    let domain_id = match morc_ros::domain_from_env() {
        Ok(d) => d,
        Err(e) => return usage(e),
    };
    let options = FmuNodeOptions {
        path: args.file.clone(),
        step_size: args.step_size,
        update_period: args.update_period,
        params: args.params.clone(),
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        domain_id,
        clock,
        duration: args.duration,
    };
    let node = match fmu_node::FmuNode::open(&options) {
        Ok(n) => n,
        Err(FmuNodeError::Usage(e)) => return usage(e),
        Err(FmuNodeError::Fault(e)) => {
            eprintln!("morc ros fmu: {e}");
            return exit::FAULT;
        }
    };
    if !quiet {
        for line in node.describe() {
            eprintln!("  {line}");
        }
    }
    if let Err(e) = super::interrupt::install_stop_flag() {
        eprintln!("morc ros fmu: {e}");
    }
    let mut say = |line: &str| {
        if !quiet {
            eprintln!("morc ros fmu: {line}");
        }
    };
    match node.run(&super::interrupt::stop_signal, &mut say) {
        Ok(s) => {
            let how = match (s.stopped_by, &s.ended) {
                (Some(signal), _) => format!("stopped by signal {signal}"),
                (None, Some(said)) => said.clone(),
                (None, None) => "done".to_string(),
            };
            let lag = if clock == ClockKind::Wall { format!(", at most {:.3} s behind the wall clock", s.max_lag) } else { String::new() };
            eprintln!(
                "morc ros fmu: {how}: {} steps to t = {} s{lag}; {} messages published, {} received, {} dropped, {} parameter changes; the FMU is freed and {} has left ROS 2",
                s.steps, s.time, s.published, s.received, s.dropped, s.parameters_set, s.node
            );
            s.stopped_by.map_or(exit::OK, |signal| 128 + signal)
        }
        Err(FmuNodeError::Usage(e)) => usage(e),
        Err(FmuNodeError::Fault(e)) => {
            eprintln!("morc ros fmu: {e}");
            exit::FAULT
        }
    }
}
