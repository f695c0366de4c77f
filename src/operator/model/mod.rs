//! What the operator knows: the catalog of pinned charts ([`catalog`]), the
//! cluster as one fresh read ([`gather`]) or as the watches keep it
//! ([`watch`]), both in the shape decisions read ([`snapshot`]), and the
//! license as found ([`licensing`]); the watches of what we own, which tell
//! of a deletion or an edit of it ([`owned`]).

pub mod catalog;
pub mod gather;
pub mod licensing;
pub mod light;
pub mod owned;
pub mod snapshot;
pub mod watch;
