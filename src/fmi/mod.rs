//! FMI: FMUs as morc components (import), and morc's blocks as FMUs (export).

pub mod export;
