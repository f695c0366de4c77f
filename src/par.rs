//! Splitting work in two: one half on a persistent worker pool (no thread
//! spawned per render), the other on the calling thread, which may hold
//! non-`Send` values (the template engine's `Rc` trees).

use std::sync::atomic::{AtomicBool, Ordering};

static ONE_SHOT: AtomicBool = AtomicBool::new(false);

/// For a process that renders once and exits (`navique-operator template`):
/// a scoped thread per split instead of the pool, whose start-up (a worker
/// per core, spinning before it sleeps) costs more than the work it shares.
pub fn one_shot() {
    ONE_SHOT.store(true, Ordering::Relaxed);
}

/// Whether this process renders once and exits.
pub fn is_one_shot() -> bool {
    ONE_SHOT.load(Ordering::Relaxed)
}

/// Runs `side` on the pool (or its own thread, see [`one_shot`]) while
/// `here` runs on this thread.
pub fn beside<A: Send, B>(side: impl FnOnce() -> A + Send, here: impl FnOnce() -> B) -> (A, B) {
    if ONE_SHOT.load(Ordering::Relaxed) {
        return std::thread::scope(|s| {
            let side = s.spawn(side);
            let here = here();
            (
                side.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                here,
            )
        });
    }
    let mut side_result = None;
    let here_result = rayon::in_place_scope(|s| {
        s.spawn(|_| side_result = Some(side()));
        here()
    });
    (
        side_result.expect("the scope waited for the side job"),
        here_result,
    )
}
