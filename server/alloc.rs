//! The C allocator's upkeep, so that a server that did large transient work (a full sync of a
//! hundred thousand files builds maps of every path) goes back to a small footprint when idle.
//!
//! glibc's malloc gives each thread that allocates its own arena (up to eight per core) and keeps
//! what is freed in them; and once a large block was freed it raises its own threshold for handing
//! memory back. A server on 100,000 segments held 45 to 54 MB idle, of which about 8 MB was live.
//! Two arenas and a trim after each full sync bring it to about 27 MB, with no measurable cost to a
//! search (docs/performance.md). Elsewhere (another C library, another system) both are no-ops.

/// Limits the allocator to two arenas. Call once, before the runtime starts its threads.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` takes two integers and changes only the allocator's own settings; glibc
    // documents it as safe to call at any time.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Hands the memory the allocator holds free back to the system. Call after large transient work.
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes an integer and only returns free pages of the allocator's own
    // arenas to the system; glibc documents it as safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
