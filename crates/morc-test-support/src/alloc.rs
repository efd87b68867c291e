//! A global allocator that counts, for tests. A test binary installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: morc_test_support::alloc::CountingAllocator = morc_test_support::alloc::CountingAllocator;
//! ```
//!
//! and then counts in one of three ways:
//! - [`allocations_during`]: what this thread allocates while a closure runs (a count of the
//!   thread's own, so tests running in parallel on other threads do not disturb it);
//! - [`watch_this_thread`] + [`watched_allocations`]: a thread (e.g. the engine's stepping
//!   thread, armed from inside a component) counts into a total any thread can read;
//! - [`count_all_threads`] + [`all_thread_allocations`]: every thread counts (for one test alone
//!   in its binary, when the path under test runs on threads it does not control).
//!
//! It also keeps the largest single allocation ([`largest_allocation`]), so a size taken from
//! outside input and allocated up front shows even when the allocation itself succeeds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The counting allocator: [`System`] underneath, with counters beside it.
pub struct CountingAllocator;

static ALL_THREADS: AtomicBool = AtomicBool::new(false);
static ALL_THREAD_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static WATCHED_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Const-initialised, no destructor: reading them allocates nothing and never re-enters.
    static WATCHED: Cell<bool> = const { Cell::new(false) };
    static THIS_THREAD: Cell<u64> = const { Cell::new(0) };
}

fn count(size: usize) {
    LARGEST.fetch_max(size, Ordering::Relaxed);
    if ALL_THREADS.load(Ordering::Relaxed) {
        ALL_THREAD_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
    // try_with: a thread being torn down (its thread-locals gone) still allocates safely.
    let _ = THIS_THREAD.try_with(|c| c.set(c.get() + 1));
    if WATCHED.try_with(Cell::get).unwrap_or(false) {
        WATCHED_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method passes its arguments unchanged to `System`, which meets GlobalAlloc's contract; the
// bookkeeping reads and writes const-initialised thread-local Cells (no lazy init, no destructor) and relaxed
// atomics, so it neither allocates (no re-entry) nor panics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: `layout` has a non-zero size (the caller's GlobalAlloc::alloc contract); passed unchanged to System.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator, that is by System, with `layout` (the caller's contract).
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: `ptr` came from System with `layout` and `new_size` is valid for it (the caller's contract); passed unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations (and reallocations) this thread makes while `f` runs.
pub fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = THIS_THREAD.with(Cell::get);
    f();
    THIS_THREAD.with(Cell::get) - before
}

/// Every allocation this thread has made so far (compare two readings).
pub fn this_thread_allocations() -> u64 {
    THIS_THREAD.with(Cell::get)
}

/// Starts (`true`) or stops counting this thread's allocations into [`watched_allocations`].
pub fn watch_this_thread(on: bool) {
    WATCHED.with(|w| w.set(on));
}

/// Allocations made by watched threads since the binary started (or [`reset_watched_allocations`]).
pub fn watched_allocations() -> u64 {
    WATCHED_ALLOCATIONS.load(Ordering::SeqCst)
}

/// Sets [`watched_allocations`] back to 0.
pub fn reset_watched_allocations() {
    WATCHED_ALLOCATIONS.store(0, Ordering::SeqCst);
}

/// Starts (`true`) or stops counting the allocations of every thread into [`all_thread_allocations`].
pub fn count_all_threads(on: bool) {
    ALL_THREADS.store(on, Ordering::SeqCst);
}

/// Whether every thread's allocations are being counted.
pub fn counting_all_threads() -> bool {
    ALL_THREADS.load(Ordering::SeqCst)
}

/// Allocations counted while [`count_all_threads`] was on, since the last reset.
pub fn all_thread_allocations() -> u64 {
    ALL_THREAD_ALLOCATIONS.load(Ordering::SeqCst)
}

/// Sets [`all_thread_allocations`] back to 0.
pub fn reset_all_thread_allocations() {
    ALL_THREAD_ALLOCATIONS.store(0, Ordering::SeqCst);
}

/// The largest single allocation (or reallocation's new size) since the last reset, in bytes.
pub fn largest_allocation() -> usize {
    LARGEST.load(Ordering::Relaxed)
}

/// Sets [`largest_allocation`] back to 0.
pub fn reset_largest_allocation() {
    LARGEST.store(0, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[global_allocator]
    static GLOBAL: CountingAllocator = CountingAllocator;

    #[test]
    fn counts_this_threads_allocations_and_the_largest() {
        assert_eq!(allocations_during(|| {}), 0);
        reset_largest_allocation();
        let n = allocations_during(|| drop(std::hint::black_box(vec![0u8; 12345])));
        assert_eq!(n, 1);
        assert!(largest_allocation() >= 12345);
    }

    #[test]
    fn watched_threads_count_into_a_total_others_read() {
        let before = watched_allocations();
        std::thread::spawn(|| {
            watch_this_thread(true);
            drop(std::hint::black_box(Box::new(1u64)));
            watch_this_thread(false);
        })
        .join()
        .unwrap();
        assert!(watched_allocations() > before);
    }
}
