//! Splitting work in two: one half on a persistent worker pool (no thread
//! spawned per render), the other on the calling thread, which may hold
//! non-`Send` values (the template engine's `Rc` trees).

/// Runs `side` on the pool while `here` runs on this thread.
pub fn beside<A: Send, B>(side: impl FnOnce() -> A + Send, here: impl FnOnce() -> B) -> (A, B) {
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
