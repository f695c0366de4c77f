//! Helm's release model, its storage codec and the Secret (and, read-only,
//! ConfigMap) storage drivers, compatible with Helm v4.2.3 both ways.

pub mod codec;
pub mod gojson;
pub mod model;
pub mod record;
pub mod storage;

pub use model::{Hook, HookExecution, Info, Release, Status};
