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
    /// Bytes of the pool in use now: Lua's blocks with TLSF's headers and rounding.
    pub used: usize,
    /// The most Lua has held at once.
    pub peak: usize,
    /// Allocations refused because the pool was full (Lua then raised "not enough memory",
    /// after a collection of its own).
    pub refused: u64,
    /// Set while a component's own code runs (its init and steps): it may fill the pool
    /// only up to [`Pool::reserve`] short of its capacity. The rest is for morc's own calls on
    /// the state (copying ports, references, reading results), which run outside a protected
    /// call: there a failed allocation would abort the process instead of faulting the component.
    pub user_code: bool,
    /// Bytes kept for morc's own calls (see [`Pool::user_code`]).
    pub reserve: usize,
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
        let reserve = (bytes / 16).clamp(16 << 10, 256 << 10);
        Ok(Box::new(Pool { heap, block, capacity: bytes, used: 0, peak: 0, refused: 0, user_code: false, reserve }))
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
pub(crate) unsafe extern "C-unwind" fn allocate(ud: *mut c_void, ptr: *mut c_void, _osize: usize, nsize: usize) -> *mut c_void {
    let pool = &mut *(ud as *mut Pool);
    let old_block = NonNull::new(ptr as *mut u8);
    // What the pool holds for it, TLSF's header and rounding included (Lua's `osize` is the
    // size it asked for, or a type tag when `ptr` is null).
    let old = old_block.map_or(0, |p| block_size(p));
    if nsize == 0 {
        if let Some(p) = old_block {
            pool.heap.deallocate(p, ALIGN);
            pool.used -= old;
        }
        return std::ptr::null_mut();
    }
    let Ok(layout) = Layout::from_size_align(nsize, ALIGN) else {
        return std::ptr::null_mut();
    };
    if pool.user_code && pool.used - old + block_for(nsize) > pool.capacity - pool.reserve && block_for(nsize) > old {
        pool.refused += 1;
        return std::ptr::null_mut();
    }
    let result = match old_block {
        None => pool.heap.allocate(layout),
        Some(p) => pool.heap.reallocate(p, layout),
    };
    match result {
        Some(p) => {
            pool.used = pool.used - old + block_size(p);
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

/// TLSF's header before each used block's payload (its size and the previous block).
const BLOCK_HEADER: usize = 2 * std::mem::size_of::<usize>();

/// The bytes of the pool a block given out takes.
///
/// # Safety
/// `p` is a block of this pool's heap, still allocated.
unsafe fn block_size(p: NonNull<u8>) -> usize {
    Heap::allocation_usable_size(p) + BLOCK_HEADER
}

/// The bytes of the pool a new block of `size` will take.
fn block_for(size: usize) -> usize {
    (size + BLOCK_HEADER).div_ceil(rlsf::GRANULARITY) * rlsf::GRANULARITY
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
            // 100 bytes and TLSF's 16-byte header, rounded up to its 32-byte granularity.
            assert_eq!(pool.used, 128);
            let b = allocate(ud, a, 100, 5000);
            assert!(!b.is_null());
            assert_eq!(pool.used, block_for(5000));
            allocate(ud, b, 5000, 0);
            assert_eq!(pool.used, 0);
            assert_eq!(pool.peak, block_for(5000));
        }
    }

    #[test]
    fn a_components_code_cannot_take_the_reserve() {
        let mut pool = Pool::new(1 << 20).unwrap();
        let ud = &mut *pool as *mut Pool as *mut c_void;
        let mut blocks = 0;
        unsafe {
            pool.user_code = true;
            while !allocate(ud, std::ptr::null_mut(), 0, 40).is_null() {
                blocks += 1;
            }
            assert_eq!(pool.refused, 1);
            assert!(pool.used <= pool.capacity - pool.reserve && pool.used + 64 > pool.capacity - pool.reserve, "{} of {}", pool.used, pool.capacity);
            // morc's own calls still get memory.
            pool.user_code = false;
            assert!(!allocate(ud, std::ptr::null_mut(), 0, 40).is_null());
        }
        assert!(blocks > 10_000);
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
