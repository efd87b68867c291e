//! The memory pool of a stepping thread's Lua state: one block taken from the system when the
//! assembly is prepared (every page touched then, so none faults in later), divided by TLSF
//! (`rlsf`: allocation and release in constant time) for that Lua state's allocator. Nothing
//! of a real-time Lua step reaches the system allocator.

use std::alloc::Layout;
use std::mem::MaybeUninit;
use std::os::raw::c_void;
use std::ptr::NonNull;

use mlua::ffi;
use rlsf::Tlsf;

/// Lua's allocations are aligned like malloc's (16 bytes on 64-bit machines).
const ALIGN: usize = 16;

/// TLSF with blocks up to 32 B << 28 = 8 GB and 16 second-level lists per size class.
type Heap = Tlsf<'static, u32, u16, 28, 16>;

/// A fixed block of memory and the TLSF heap over it; Lua's allocator for one state.
pub(crate) struct Pool {
    heap: Heap,
    /// The block; owned here, the heap only points into it.
    block: NonNull<[MaybeUninit<u8>]>,
    /// Its size in bytes.
    pub capacity: usize,
    /// Bytes Lua holds now.
    pub used: usize,
    /// The most Lua has held at once.
    pub peak: usize,
    /// Allocations refused because the pool was full (Lua then raised "not enough memory",
    /// after a collection of its own).
    pub refused: u64,
}

// SAFETY: the pool is used by one Lua state, which one thread at a time uses (behind the
// stepping thread's mutex); the raw block is owned by the pool alone.
unsafe impl Send for Pool {}

impl Pool {
    /// A pool of `bytes` (at least 64 kB), every page written once so none faults in later.
    pub fn new(bytes: usize) -> Result<Box<Pool>, String> {
        let bytes = bytes.max(64 << 10);
        let mut memory: Vec<MaybeUninit<u8>> = Vec::new();
        memory.try_reserve_exact(bytes).map_err(|_| format!("cannot reserve a Lua memory pool of {} MB", bytes >> 20))?;
        // SAFETY: MaybeUninit<u8> needs no initialisation; capacity was reserved above.
        unsafe { memory.set_len(bytes) };
        for page in memory.chunks_mut(4096) {
            page[0] = MaybeUninit::new(0);
        }
        let block = NonNull::from(Box::leak(memory.into_boxed_slice()));
        let mut heap = Heap::new();
        // SAFETY: the block is valid, unused elsewhere, and outlives the heap (freed in Drop,
        // after the Lua state that uses the heap is closed).
        unsafe {
            heap.insert_free_block_ptr(NonNull::new_unchecked(block.as_ptr() as *mut [u8]));
        }
        Ok(Box::new(Pool { heap, block, capacity: bytes, used: 0, peak: 0, refused: 0 }))
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: the block came from Box::leak in `new` and nothing uses it any more.
        unsafe { drop(Box::from_raw(self.block.as_ptr())) };
    }
}

/// Lua's allocator function (`lua_Alloc`) over a [`Pool`] given as `ud`.
///
/// # Safety
/// `ud` must point to a live `Pool` used by this Lua state only; `ptr`, `osize` are as Lua
/// passes them (a block from this pool and its size, or null).
pub(crate) unsafe extern "C-unwind" fn allocate(ud: *mut c_void, ptr: *mut c_void, osize: usize, nsize: usize) -> *mut c_void {
    let pool = &mut *(ud as *mut Pool);
    // When `ptr` is null, `osize` is a type tag, not a size.
    let old = if ptr.is_null() { 0 } else { osize };
    if nsize == 0 {
        if let Some(p) = NonNull::new(ptr as *mut u8) {
            pool.heap.deallocate(p, ALIGN);
            pool.used -= old;
        }
        return std::ptr::null_mut();
    }
    let Ok(layout) = Layout::from_size_align(nsize, ALIGN) else {
        return std::ptr::null_mut();
    };
    let result = match NonNull::new(ptr as *mut u8) {
        None => pool.heap.allocate(layout),
        Some(p) => pool.heap.reallocate(p, layout),
    };
    match result {
        Some(p) => {
            pool.used = pool.used - old + nsize;
            pool.peak = pool.peak.max(pool.used);
            p.as_ptr() as *mut c_void
        }
        None => {
            // A failed reallocation leaves the old block as it was, as Lua expects.
            pool.refused += 1;
            std::ptr::null_mut()
        }
    }
}

/// A new Lua state allocating from `pool`, with the standard libraries open.
///
/// # Safety
/// `pool` must outlive the state (close it with `lua_close` before dropping the pool).
pub(crate) unsafe fn new_state(pool: &mut Pool) -> Result<*mut ffi::lua_State, String> {
    let state = ffi::lua_newstate(allocate, pool as *mut Pool as *mut c_void);
    if state.is_null() {
        return Err(format!("the Lua memory pool ({} kB) is too small for a Lua state", pool.capacity >> 10));
    }
    ffi::luaL_openlibs(state);
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_come_from_the_pool_and_go_back() {
        let mut pool = Pool::new(1 << 20).unwrap();
        let ud = &mut *pool as *mut Pool as *mut c_void;
        unsafe {
            let a = allocate(ud, std::ptr::null_mut(), 5, 100);
            assert!(!a.is_null());
            assert_eq!(pool.used, 100);
            let b = allocate(ud, a, 100, 5000);
            assert!(!b.is_null());
            assert_eq!(pool.used, 5000);
            allocate(ud, b, 5000, 0);
            assert_eq!(pool.used, 0);
            assert_eq!(pool.peak, 5000);
        }
    }

    #[test]
    fn a_full_pool_refuses_and_counts() {
        let mut pool = Pool::new(64 << 10).unwrap();
        let ud = &mut *pool as *mut Pool as *mut c_void;
        unsafe {
            let big = allocate(ud, std::ptr::null_mut(), 0, 1 << 20);
            assert!(big.is_null());
            assert_eq!(pool.refused, 1);
            assert_eq!(pool.used, 0);
        }
    }
}
