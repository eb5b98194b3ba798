//! The process's allocator, mimalloc, and the return of freed memory to the operating system.
//!
//! mimalloc keeps freed pages in the heap of the thread that allocated them and gives memory
//! back to the OS lazily, on that thread's later allocations; a worker thread that goes idle
//! after a large query would hold its freed gigabytes for good. So each execution thread
//! collects its own heap when it parks (at most once a second), and a purge thread returns the
//! freed arena memory to the OS every second.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// mimalloc instead of glibc malloc: query operators allocate and free many short-lived
/// buffers from several threads; glibc's arenas showed up in profiles (malloc, page faults
/// from memory trimmed and touched again).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How often freed memory is handed back.
const PURGE_INTERVAL: Duration = Duration::from_secs(1);

thread_local! {
    static LAST_COLLECT: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Collects the calling thread's heap if it has not done so within the last interval; cheap
/// enough for a runtime's park hook.
pub fn collect_parked_thread() {
    let now = Instant::now();
    let due = LAST_COLLECT.with(|last| {
        let due = last
            .get()
            .is_none_or(|at| now.duration_since(at) >= PURGE_INTERVAL);
        if due {
            last.set(Some(now));
        }
        due
    });
    if due {
        // SAFETY: mi_collect only walks the calling thread's own heap and the shared arenas,
        // under mimalloc's own synchronisation; it has no preconditions.
        unsafe { libmimalloc_sys::mi_collect(false) };
    }
}

/// Starts the thread that returns freed memory to the OS every [`PURGE_INTERVAL`].
pub fn start_purger() {
    let spawned = std::thread::Builder::new()
        .name("basalt-mem-purge".into())
        .spawn(|| loop {
            std::thread::sleep(PURGE_INTERVAL);
            // SAFETY: as above; `force` purges freed arena memory now rather than after
            // mimalloc's delay.
            unsafe { libmimalloc_sys::mi_collect(true) };
        });
    if let Err(e) = spawned {
        tracing::warn!("freed memory will not be returned to the OS: {e}");
    }
}
