//! Memory given back when a thread goes idle.
//!
//! mimalloc (the binary's allocator) purges the pages a thread freed only
//! later, from that same thread's next allocation or free. A worker that
//! parks after a burst (an install renders and compresses megabytes) never
//! comes back to do so, and a release-action thread exits with its purges
//! still pending: an idle operator kept some 15 MiB that nothing used.
//! Immediate purging on every free (`MIMALLOC_PURGE_DELAY=0`) cost 55% more
//! CPU to Ready; a forced collection at every park, 29%. So a parking worker
//! forces one at most every [`FORCED_EVERY`], and otherwise purges only what
//! has waited long enough, which is cheap.
//!
//! Where the process runs on another allocator (the test binaries), mimalloc's
//! heaps are empty and a collection costs next to nothing.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// How often a parking worker forces a whole collection.
const FORCED_EVERY: Duration = Duration::from_millis(50);

thread_local! {
    static LAST_FORCED: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// For a worker about to park: give back what it freed.
pub fn on_park() {
    let now = Instant::now();
    let due = LAST_FORCED.with(|last| match last.get() {
        Some(at) if now.duration_since(at) < FORCED_EVERY => false,
        _ => {
            last.set(Some(now));
            true
        }
    });
    collect(due);
}

/// For a release-action thread about to end: give back everything it held,
/// and what the render's pool threads (`crate::par`) freed. They sleep
/// between renders without allocating again, so their purges would wait
/// for the next render: 1-3 MiB held by an idle operator.
pub fn on_thread_end() {
    collect(true);
    rayon::broadcast(|_| collect(true));
}

/// One memory-heavy phase at a time: a chart's render, a release record's
/// encoding. Installs run side by side (the whole platform installs four
/// capability operators at once) and each phase holds a few times its
/// chart in parse trees, JSON and gzip buffers for a moment; side by side,
/// those moments made the process's peak. Their waits still overlap.
pub fn heavy() -> std::sync::MutexGuard<'static, ()> {
    static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

fn collect(force: bool) {
    // SAFETY: mi_collect takes no pointers and may run on any thread at any
    // time; it only walks mimalloc's own structures of the calling thread
    // (and, forced, what exited threads abandoned).
    unsafe { libmimalloc_sys::mi_collect(force) }
}
