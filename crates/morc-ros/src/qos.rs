//! The QoS profiles ROS 2 defines (rmw's `qos_profile_*`), by the names morc's options use.

use ros2_client::qos::{Durability, History, Reliability, WhenFull};
use ros2_client::QosProfile;

/// What a reliable publisher on the bridge does when a peer's window is full: it never waits
/// (the bridge serves every topic), the message is dropped and counted.
const NEVER_WAIT: Reliability = Reliability::Reliable { when_full: WhenFull::Fail };

/// ROS 2's default profile (`rmw_qos_profile_default`): reliable, volatile, keep last 10.
pub const fn default_profile() -> QosProfile {
    QosProfile::publisher_default().reliability(NEVER_WAIT).durability(Durability::Volatile).history(History::KeepLast { depth: 10 })
}

/// ROS 2's sensor data profile (`rmw_qos_profile_sensor_data`): best effort, volatile, keep last 5.
pub const fn sensor_data() -> QosProfile {
    QosProfile::publisher_default().reliability_best_effort().durability(Durability::Volatile).history(History::KeepLast { depth: 5 })
}

/// A latched topic (`/robot_description`, `/tf_static`): reliable, transient local, keep last
/// 1, so a subscriber that joins later gets the last message.
pub const fn transient_local() -> QosProfile {
    QosProfile::publisher_default().reliability(NEVER_WAIT).durability(Durability::TransientLocal).history(History::KeepLast { depth: 1 })
}

/// The names [`by_name`] knows.
pub const NAMES: &[&str] = &["default", "sensor_data", "transient_local"];

/// The profile named `name` ("default", "sensor_data", "transient_local").
pub fn by_name(name: &str) -> Result<QosProfile, String> {
    match name {
        "default" => Ok(default_profile()),
        "sensor_data" => Ok(sensor_data()),
        "transient_local" => Ok(transient_local()),
        other => Err(morc_kernel::names::unknown("QoS profile", other, "for a ROS 2 topic", NAMES)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_ros_2s() {
        assert_eq!(default_profile().history, History::KeepLast { depth: 10 });
        assert!(matches!(default_profile().reliability, Reliability::Reliable { .. }));
        assert_eq!(sensor_data().reliability, Reliability::BestEffort);
        assert_eq!(transient_local().durability, Durability::TransientLocal);
        assert!(by_name("sensor-data").unwrap_err().contains("sensor_data"));
    }
}
