//! The model a robot has now, changed at runtime when a tool or payload changes: the new model
//! is built off the real-time path (in Lua), published here, and picked up by the real-time
//! users (simulated plant, feed-forward) at their next step without blocking or allocating.
//! The same slot carries the simulated operator's hand script to the simulated plant.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use morc_model::Model;

/// The published model of one robot and its version; shared by every copy of the robot.
pub type LiveModel = Published<Model>;

/// A value published off the real-time path and picked up by real-time users at their next
/// step (see the module doc), with its version.
#[derive(Debug)]
pub struct Published<T> {
    version: AtomicU64,
    current: Mutex<Arc<T>>,
    /// Values replaced while a real-time user may still hold them: freed by a later publish
    /// once nobody does, so that a real-time thread never frees one.
    retired: Mutex<Vec<Arc<T>>>,
}

impl<T> Published<T> {
    /// Starts with `model` as version 0.
    pub fn new(model: Arc<T>) -> Published<T> {
        Published { version: AtomicU64::new(0), current: Mutex::new(model), retired: Mutex::new(Vec::new()) }
    }

    /// Makes `model` the current value (not real-time: locks and allocates).
    pub fn publish(&self, model: Arc<T>) {
        let old = std::mem::replace(&mut *self.current.lock().unwrap_or_else(|e| e.into_inner()), model);
        let mut retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        retired.retain(|m| Arc::strong_count(m) > 1);
        retired.push(old);
        self.version.fetch_add(1, Ordering::Release);
    }

    /// The value published last (locks: not for the real-time path, see [`LiveModel::refresh`]).
    pub fn current(&self) -> Arc<T> {
        self.current.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Swaps `cached` for the current value if a newer one was published since `seen`
    /// (real-time safe: an atomic load, then at most a try_lock and a reference count).
    pub fn refresh(&self, cached: &mut Arc<T>, seen: &mut u64) -> bool {
        let version = self.version.load(Ordering::Acquire);
        if version == *seen {
            return false;
        }
        match self.current.try_lock() {
            Ok(current) => {
                // The replaced Arc stays alive in `retired`, so dropping it here frees nothing.
                *cached = current.clone();
                *seen = version;
                true
            }
            Err(_) => false,
        }
    }
}
