//! The process around the controllers: start-up, leader election and
//! shutdown ([`process`]), metrics and health ([`telemetry`]), and the
//! image rewrite `--registry-mirror` asks for ([`images`]).

pub mod images;
pub mod process;
pub mod telemetry;
