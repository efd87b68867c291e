//! What morc's tests share, so that each proof is written once:
//!
//! - [`alloc`]: a counting global allocator, for the tests that prove a real-time path
//!   allocates nothing in steady state (and the fuzz tests that bound the largest allocation);
//! - [`overlap`]: a reader run against a writer until their accesses have overlapped, for the
//!   tests of what threads hand each other without a lock;
//! - [`doubles`] (feature `doubles`): components made from closures and a base that records
//!   what the engine did with it.
//!
//! Never linked into morc itself: only test and bench targets depend on this crate.

#![deny(clippy::missing_safety_doc)]
#![warn(missing_docs)]

pub mod alloc;
#[cfg(feature = "doubles")]
pub mod doubles;
pub mod overlap;
