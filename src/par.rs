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

/// `f` over every item, in order, shared between this thread and one
/// beside it: each takes the next item not yet taken, so a few expensive
/// items (a template dense with actions among large plain CRDs) do not
/// leave one side idle the way a split by size would.
pub fn map_shared<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::AtomicUsize;
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let (side, here) = beside(take, take);
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for (i, r) in side.into_iter().chain(here) {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every item was taken by one side"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_shared_keeps_the_order_and_maps_every_item_once() {
        let items: Vec<u64> = (0..1000).collect();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let out = map_shared(&items, |&x| {
            calls.fetch_add(1, Ordering::Relaxed);
            // Uneven work, so both sides take items in an interleaved order.
            (0..(x % 7) * 100).fold(x, |a, b| a.wrapping_add(b)) - (0..(x % 7) * 100).sum::<u64>()
        });
        assert_eq!(out, items);
        assert_eq!(calls.load(Ordering::Relaxed), 1000);
        assert!(map_shared(&[] as &[u8], |_| 0).is_empty());
    }
}
