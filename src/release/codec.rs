//! Helm's storage encoding: JSON, gzip, base64; decoding accepts the
//! payload with or without gzip.

use super::model::{NotAnObject, Release};
use base64::Engine;
use std::io::Read;

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b, 0x08];

/// Helm compresses at the best level; so do we only when the record would
/// otherwise come near the Secret's 1 MiB. The default level was three
/// times faster (zlib's: 45 ms against 14 ms on cert-manager's record) for
/// about 1.5% more bytes, and a pending record (written as each hook
/// starts, five times in cert-manager's install, and overwritten within
/// seconds) takes the fastest level first. A level whose result comes near
/// the limit gives way to the next. Any gzip level, and libdeflate's gzip
/// (what compresses here), reads back alike.
pub fn encode(r: &Release) -> String {
    let _heavy = crate::memory::heavy();
    let json = r.to_json();
    let levels: &[i32] = if r.info.status.is_pending() {
        &[FAST, DEFAULT]
    } else {
        &[DEFAULT]
    };
    for level in levels {
        let compressed = gzip(json.as_bytes(), *level);
        if compressed.len() < NEAR_SECRET_LIMIT {
            return base64::engine::general_purpose::STANDARD.encode(compressed);
        }
    }
    let compressed = gzip(json.as_bytes(), BEST);
    base64::engine::general_purpose::STANDARD.encode(compressed)
}

/// libdeflate's levels (1-12). On cert-manager's and CloudNativePG's
/// records (2.8 and 3.1 MB of JSON), against zlib-rs: its 1 takes as long
/// and writes a quarter fewer bytes, its 6 takes a fifth less time for the
/// same size, its 9 matches zlib's 9 (Helm's level). Its 10-12 squeeze 2-4%
/// more in 6-18 times as long: not worth a write near the Secret's limit.
const FAST: i32 = 1;
const DEFAULT: i32 = 6;
const BEST: i32 = 9;

/// Compressed bytes past which the best level is worth its time: base64
/// makes them 4/3, and a Secret holds 1 MiB.
const NEAR_SECRET_LIMIT: usize = 700 * 1024;

/// One gzip member of `data` (libdeflate compresses a whole buffer at once,
/// which a record is).
fn gzip(data: &[u8], level: i32) -> Vec<u8> {
    let level = libdeflater::CompressionLvl::new(level).expect("a libdeflate level");
    let mut c = libdeflater::Compressor::new(level);
    // A record (base64 and YAML text) compresses to well under half: a
    // buffer of half its size is tried first (zeroed, so touched), the
    // worst case's bound only when that is not enough.
    let mut out = vec![0; data.len() / 2 + 4096];
    let n = match c.gzip_compress(data, &mut out) {
        Ok(n) => n,
        Err(_) => {
            out = vec![0; c.gzip_compress_bound(data.len())];
            c.gzip_compress(data, &mut out).expect("the bound fits")
        }
    };
    out.truncate(n);
    out
}

/// The most JSON a release record may decompress to.
pub const MAX_RELEASE_JSON: u64 = 64 << 20;

/// Why a stored release payload could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The object holds no payload at all.
    #[error("no release data")]
    NoData,
    #[error("illegal base64 data in release payload: {0}")]
    Base64(#[source] base64::DecodeError),
    #[error("release payload: {0}")]
    Gzip(#[source] std::io::Error),
    #[error("release payload decompresses to more than {} MiB; refusing it", MAX_RELEASE_JSON >> 20)]
    TooLarge,
    #[error("release payload is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("{0}")]
    Record(#[source] NotAnObject),
}

pub fn decode(data: &str) -> Result<Release, DecodeError> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(DecodeError::Base64)?;
    let json = if raw.starts_with(GZIP_MAGIC) {
        // A record someone else wrote may be a decompression bomb: a real
        // release is a few MB of JSON at most (the Secret holds 1 MiB).
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .take(MAX_RELEASE_JSON + 1)
            .read_to_end(&mut out)
            .map_err(DecodeError::Gzip)?;
        if out.len() as u64 > MAX_RELEASE_JSON {
            return Err(DecodeError::TooLarge);
        }
        out
    } else {
        raw
    };
    let v: serde_json::Value = serde_json::from_slice(&json).map_err(DecodeError::NotJson)?;
    Release::from_json(&v).map_err(DecodeError::Record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::model::{Info, Status};
    use serde_json::json;

    fn sample() -> Release {
        Release {
            name: "r".into(),
            info: Info {
                first_deployed: "2026-01-01T00:00:00.5Z".into(),
                last_deployed: "2026-01-01T00:00:00.5Z".into(),
                deleted: String::new(),
                description: "Install complete".into(),
                status: Status::Deployed,
                notes: "<b>hi</b>".into(),
            },
            chart: json!({"metadata": {"name": "c", "version": "1.0.0", "apiVersion": "v2"}, "lock": null,
                "templates": [{"name": "templates/a.yaml", "data": "YQ=="}], "values": {"a": 1},
                "schema": null, "schemamodtime": "0001-01-01T00:00:00Z", "files": null}),
            config: json!({"x": {"y": [1, 2.5, "z"]}}),
            manifest: "---\n# Source: c/templates/a.yaml\na\n".into(),
            hooks: vec![],
            version: 3,
            namespace: "ns".into(),
            labels: Default::default(),
            apply_method: "ssa".into(),
        }
    }

    #[test]
    fn round_trips_with_and_without_gzip() {
        let r = sample();
        assert_eq!(decode(&encode(&r)).unwrap(), r);
        let plain = base64::engine::general_purpose::STANDARD.encode(r.to_json());
        assert_eq!(decode(&plain).unwrap(), r);
    }

    #[test]
    fn a_record_near_the_secret_limit_is_compressed_at_the_best_level() {
        let small = sample();
        let json = small.to_json();
        let fast = base64::engine::general_purpose::STANDARD.encode(gzip(json.as_bytes(), DEFAULT));
        assert_eq!(encode(&small), fast);
        // Numbers of a poor generator: text gzip cannot squeeze much.
        let mut big = sample();
        let mut x: u64 = 1;
        big.manifest = (0..300_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                format!("{} ", x >> 40)
            })
            .collect();
        let json = big.to_json();
        let best = base64::engine::general_purpose::STANDARD.encode(gzip(json.as_bytes(), BEST));
        assert!(gzip(json.as_bytes(), DEFAULT).len() >= NEAR_SECRET_LIMIT);
        assert_eq!(encode(&big), best);
        assert_eq!(decode(&encode(&big)).unwrap(), big);
    }

    #[test]
    fn json_field_order_and_escaping_follow_helm() {
        let j = sample().to_json();
        assert!(j.starts_with(r#"{"name":"r","info":{"first_deployed":"2026-01-01T00:00:00.5Z","last_deployed":"2026-01-01T00:00:00.5Z","description":"Install complete","status":"deployed","notes":"\u003cb\u003ehi\u003c/b\u003e"},"chart":{"metadata":{"name":"c","version":"1.0.0","apiVersion":"v2"},"lock":null,"templates":"#), "{j}");
        assert!(
            j.ends_with(r#""version":3,"namespace":"ns","apply_method":"ssa"}"#),
            "{j}"
        );
    }
}
