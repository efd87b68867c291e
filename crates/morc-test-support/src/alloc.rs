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
//! Whichever way it counts, a test proves "allocates nothing" with a positive control: the
//! counted section also makes one [`control_allocation`], and [`assert_allocated_nothing`] wants
//! exactly that one counted (0 would mean the counter was not counting there: not this binary's
//! `#[global_allocator]`, or armed on another thread) and prints the count. [`allocates_nothing`]
//! does all of it for a closure on this thread.
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

/// Makes exactly one allocation (and frees it): the positive control a counted section makes
/// beside the code under test, so that the count shows the counter counts there.
pub fn control_allocation() {
    drop(std::hint::black_box(Box::new(std::hint::black_box(0u64))));
}

/// The proof that a counted section allocated nothing beside its one [`control_allocation`]:
/// `counted` is what the counter saw over the section, which must be exactly 1. Prints the
/// count; panics naming `what` if the code under test allocated, or if the counter missed the
/// control (then it was not counting where the section ran, and a 0 would have proved nothing).
pub fn assert_allocated_nothing(what: &str, counted: u64) {
    assert_allocated_no_more(what, counted, 0);
}

/// As [`assert_allocated_nothing`], for a section whose harness allocates `baseline` times by
/// itself (measured on an empty run of the same call): `counted` must be `baseline + 1`.
pub fn assert_allocated_no_more(what: &str, counted: u64, baseline: u64) {
    assert!(
        counted > baseline,
        "{what}: the counter saw {counted} allocations, not even its control allocation (baseline {baseline}): it was not counting where the section ran (is CountingAllocator this binary's #[global_allocator], and the count armed on the thread that runs the section?)"
    );
    let allocated = counted - baseline - 1;
    println!("{what}: {allocated} allocations (the counter saw its control allocation{})", if baseline > 0 { format!(" beside a baseline of {baseline}") } else { String::new() });
    assert_eq!(allocated, 0, "{what}: {allocated} allocations");
}

/// Runs `f` on this thread with a [`control_allocation`] and proves, as
/// [`assert_allocated_nothing`], that `f` allocated nothing.
pub fn allocates_nothing(what: &str, f: impl FnOnce()) {
    let counted = allocations_during(|| {
        control_allocation();
        f();
    });
    assert_allocated_nothing(what, counted);
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
    fn the_control_allocation_is_one_allocation_and_is_what_the_proof_wants() {
        assert_eq!(allocations_during(control_allocation), 1);
        allocates_nothing("nothing", || {});
        assert_allocated_no_more("a harness that allocates twice", 3, 2);
    }

    #[test]
    #[should_panic(expected = "not even its control allocation")]
    fn a_counter_that_saw_nothing_proves_nothing() {
        assert_allocated_nothing("a section counted elsewhere", 0);
    }

    #[test]
    #[should_panic(expected = "allocates: 1 allocations")]
    fn an_allocation_beside_the_control_fails() {
        allocates_nothing("allocates", || drop(std::hint::black_box(vec![1u8; 4])));
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
