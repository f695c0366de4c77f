//! Memory given back when a thread goes idle, code pages let go when the
//! whole process is ([`trim_when_idle`]), and one memory-heavy phase of a
//! release at a time ([`heavy`]).
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

/// How long the operator must have done nothing before its code pages are
/// let go (see [`trim_when_idle`]).
const QUIET: Duration = Duration::from_secs(2);

static ACTIVITY: tokio::sync::Notify = tokio::sync::Notify::const_new();
static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Something ran (a reconcile): the process is not idle.
pub fn active() {
    GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ACTIVITY.notify_one();
}

/// Runs for the life of the operator process: once nothing has been active
/// for [`QUIET`] after some activity, lets go of the pages of code and
/// read-only data the process has mapped (the binary, libc), see
/// [`release_code_pages`]. Wakes only after activity: an idle process is
/// not woken by it. `NAVIQUE_IDLE_TRIM=0` turns it off (benchmarks compare).
pub async fn trim_when_idle() {
    if std::env::var_os("NAVIQUE_IDLE_TRIM").is_some_and(|v| v == "0") {
        return;
    }
    loop {
        ACTIVITY.notified().await;
        loop {
            let seen = GENERATION.load(std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(QUIET).await;
            if GENERATION.load(std::sync::atomic::Ordering::Relaxed) == seen {
                break;
            }
        }
        let released = release_code_pages();
        tracing::debug!(kib = released, "idle: released the mapped code pages");
        // Every worker collects once more: one that parked before its
        // frees were due to be purged (mimalloc waits a second) never
        // comes back to them otherwise. A task spawned here wakes a
        // parked worker to steal it.
        let workers = tokio::runtime::Handle::current().metrics().num_workers();
        for _ in 0..workers * 2 {
            tokio::spawn(async {
                tokio::task::yield_now().await;
                collect(true);
            });
        }
        collect(true);
    }
}

/// Unmaps the resident pages of every file-backed mapping that cannot be
/// written (code, read-only data) and holds no private copy of a page
/// (`Anonymous: 0`, so nothing but the file's own bytes is dropped); the
/// next use maps them again from the page cache. An install runs through
/// most of the 20 MB of code once, and the kernel maps code in 64 KiB runs
/// around each page touched: the idle operator kept some 20 MiB of code
/// resident (RssFile) that its watches never run. Returns the KiB released.
pub fn release_code_pages() -> u64 {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let mut released = 0;
    let mut candidate: Option<(usize, usize)> = None;
    let (mut rss, mut anonymous) = (0u64, 0u64);
    let mut flush = |c: Option<(usize, usize)>, rss: u64, anonymous: u64| {
        if let Some((start, end)) = c.filter(|_| rss > 0 && anonymous == 0) {
            // SAFETY: the range is a whole mapping of this process that no
            // thread can write (no `w` permission) and that holds only
            // pages of its file: dropping them loses nothing, the next
            // access faults the same bytes back in.
            let done = unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED)
            };
            if done == 0 {
                released += rss;
            }
        }
    };
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else { continue };
        if let Some((start, end)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
            flush(candidate.take(), rss, anonymous);
            (rss, anonymous) = (0, 0);
            let perms = fields.next().unwrap_or("");
            let path = fields.nth(3).unwrap_or("");
            let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            ) else {
                continue;
            };
            let readonly_file = path.starts_with('/')
                && !line.ends_with("(deleted)")
                && !perms.contains('w')
                && perms.ends_with('p');
            candidate = readonly_file.then_some((start, end));
        } else if first == "Rss:" {
            rss = fields.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        } else if first == "Anonymous:" {
            anonymous = fields.next().and_then(|n| n.parse().ok()).unwrap_or(1);
        }
    }
    flush(candidate, rss, anonymous);
    released
}
