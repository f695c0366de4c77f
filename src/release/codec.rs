//! Helm's storage encoding: JSON, gzip, base64; decoding accepts the
//! payload with or without gzip.

use super::model::Release;
use base64::Engine;
use std::io::{Read, Write};

const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b, 0x08];

pub fn encode(r: &Release) -> String {
    let json = r.to_json();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(json.as_bytes()).expect("in-memory gzip");
    let bytes = gz.finish().expect("in-memory gzip");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The most JSON a release record may decompress to.
pub const MAX_RELEASE_JSON: u64 = 64 << 20;

pub fn decode(data: &str) -> Result<Release, String> {
    let raw = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("illegal base64 data in release payload: {e}"))?;
    let json = if raw.starts_with(GZIP_MAGIC) {
        // A record someone else wrote may be a decompression bomb: a real
        // release is a few MB of JSON at most (the Secret holds 1 MiB).
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .take(MAX_RELEASE_JSON + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("release payload: {e}"))?;
        if out.len() as u64 > MAX_RELEASE_JSON {
            return Err(format!(
                "release payload decompresses to more than {} MiB; refusing it",
                MAX_RELEASE_JSON >> 20
            ));
        }
        out
    } else {
        raw
    };
    let v: serde_json::Value =
        serde_json::from_slice(&json).map_err(|e| format!("release payload is not JSON: {e}"))?;
    Release::from_json(&v)
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
    fn json_field_order_and_escaping_follow_helm() {
        let j = sample().to_json();
        assert!(j.starts_with(r#"{"name":"r","info":{"first_deployed":"2026-01-01T00:00:00.5Z","last_deployed":"2026-01-01T00:00:00.5Z","description":"Install complete","status":"deployed","notes":"\u003cb\u003ehi\u003c/b\u003e"},"chart":{"metadata":{"name":"c","version":"1.0.0","apiVersion":"v2"},"lock":null,"templates":"#), "{j}");
        assert!(
            j.ends_with(r#""version":3,"namespace":"ns","apply_method":"ssa"}"#),
            "{j}"
        );
    }
}
