//! What the operator knows: the catalog of pinned charts ([`catalog`]), the
//! cluster as one fresh read ([`gather`]) or as the watches keep it
//! ([`watch`]), both in the shape decisions read ([`snapshot`]), and the
//! license as found ([`licensing`]).

pub mod catalog;
pub mod gather;
pub mod licensing;
pub mod snapshot;
pub mod watch;
