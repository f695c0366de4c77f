//! Kubernetes' protobuf encoding, read for the few kinds clients send that
//! way by default (typed client-go: Helm's release Secrets, `kubectl create
//! configmap|secret|namespace|serviceaccount`, DeleteOptions). Responses are
//! always JSON, which client-go accepts.

use base64::Engine;
use serde_json::{json, Map, Value};

#[derive(Clone, Copy)]
enum Kind {
    Str,
    Bytes,
    Int,
    Bool,
    Time,
    Msg(&'static [Field]),
    MapStr,
    MapBytes,
    /// FieldsV1: its raw bytes are JSON.
    RawJson,
}

#[derive(Clone, Copy)]
struct Field {
    num: u64,
    name: &'static str,
    kind: Kind,
    repeated: bool,
}

const fn f(num: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        num,
        name,
        kind,
        repeated: false,
    }
}

const fn r(num: u64, name: &'static str, kind: Kind) -> Field {
    Field {
        num,
        name,
        kind,
        repeated: true,
    }
}

const FIELDS_V1: &[Field] = &[f(1, "raw", Kind::RawJson)];
const MANAGED_FIELDS: &[Field] = &[
    f(1, "manager", Kind::Str),
    f(2, "operation", Kind::Str),
    f(3, "apiVersion", Kind::Str),
    f(4, "time", Kind::Time),
    f(6, "fieldsType", Kind::Str),
    f(7, "fieldsV1", Kind::Msg(FIELDS_V1)),
    f(8, "subresource", Kind::Str),
];
const OWNER_REF: &[Field] = &[
    f(1, "kind", Kind::Str),
    f(3, "name", Kind::Str),
    f(4, "uid", Kind::Str),
    f(5, "apiVersion", Kind::Str),
    f(6, "controller", Kind::Bool),
    f(7, "blockOwnerDeletion", Kind::Bool),
];
const OBJECT_META: &[Field] = &[
    f(1, "name", Kind::Str),
    f(2, "generateName", Kind::Str),
    f(3, "namespace", Kind::Str),
    f(5, "uid", Kind::Str),
    f(6, "resourceVersion", Kind::Str),
    f(7, "generation", Kind::Int),
    f(8, "creationTimestamp", Kind::Time),
    f(9, "deletionTimestamp", Kind::Time),
    f(10, "deletionGracePeriodSeconds", Kind::Int),
    f(11, "labels", Kind::MapStr),
    f(12, "annotations", Kind::MapStr),
    r(13, "ownerReferences", Kind::Msg(OWNER_REF)),
    r(14, "finalizers", Kind::Str),
    r(17, "managedFields", Kind::Msg(MANAGED_FIELDS)),
];
const SECRET: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    f(2, "data", Kind::MapBytes),
    f(3, "type", Kind::Str),
    f(4, "stringData", Kind::MapStr),
    f(5, "immutable", Kind::Bool),
];
const CONFIG_MAP: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    f(2, "data", Kind::MapStr),
    f(3, "binaryData", Kind::MapBytes),
    f(4, "immutable", Kind::Bool),
];
const NAMESPACE_SPEC: &[Field] = &[r(1, "finalizers", Kind::Str)];
const NAMESPACE: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    f(2, "spec", Kind::Msg(NAMESPACE_SPEC)),
];
const LOCAL_REF: &[Field] = &[f(1, "name", Kind::Str)];
const OBJECT_REF: &[Field] = &[
    f(1, "kind", Kind::Str),
    f(2, "namespace", Kind::Str),
    f(3, "name", Kind::Str),
    f(4, "uid", Kind::Str),
    f(5, "apiVersion", Kind::Str),
    f(6, "resourceVersion", Kind::Str),
    f(7, "fieldPath", Kind::Str),
];
const SERVICE_ACCOUNT: &[Field] = &[
    f(1, "metadata", Kind::Msg(OBJECT_META)),
    r(2, "secrets", Kind::Msg(OBJECT_REF)),
    r(3, "imagePullSecrets", Kind::Msg(LOCAL_REF)),
    f(4, "automountServiceAccountToken", Kind::Bool),
];
const PRECONDITIONS: &[Field] = &[f(1, "uid", Kind::Str), f(2, "resourceVersion", Kind::Str)];
const DELETE_OPTIONS: &[Field] = &[
    f(1, "gracePeriodSeconds", Kind::Int),
    f(2, "preconditions", Kind::Msg(PRECONDITIONS)),
    f(3, "orphanDependents", Kind::Bool),
    f(4, "propagationPolicy", Kind::Str),
    r(5, "dryRun", Kind::Str),
];
const TYPE_META: &[Field] = &[f(1, "apiVersion", Kind::Str), f(2, "kind", Kind::Str)];
const UNKNOWN: &[Field] = &[
    f(1, "typeMeta", Kind::Msg(TYPE_META)),
    f(2, "raw", Kind::Bytes),
];

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.pos).ok_or("truncated varint")?;
            self.pos += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint too long".into())
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.varint()? as usize;
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.b.len())
            .ok_or("truncated field")?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn skip(&mut self, wire: u64) -> Result<(), String> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => {
                self.pos += 8;
                Ok(())
            }
            2 => self.bytes().map(|_| ()),
            5 => {
                self.pos += 4;
                Ok(())
            }
            w => Err(format!("unsupported wire type {w}")),
        }
    }
}

fn decode(b: &[u8], schema: &[Field]) -> Result<Value, String> {
    let mut out = Map::new();
    let mut rd = Reader { b, pos: 0 };
    while rd.pos < b.len() {
        let tag = rd.varint()?;
        let (num, wire) = (tag >> 3, tag & 7);
        let Some(field) = schema.iter().find(|f| f.num == num) else {
            rd.skip(wire)?;
            continue;
        };
        let value = match field.kind {
            Kind::Str => Value::String(String::from_utf8_lossy(rd.bytes()?).into_owned()),
            Kind::Bytes => {
                Value::String(base64::engine::general_purpose::STANDARD.encode(rd.bytes()?))
            }
            Kind::Int => json!(rd.varint()? as i64),
            Kind::Bool => json!(rd.varint()? != 0),
            Kind::Time => {
                let t = decode(rd.bytes()?, &[f(1, "seconds", Kind::Int)])?;
                let secs = t.get("seconds").and_then(Value::as_i64).unwrap_or(0);
                let dt = chrono::DateTime::from_timestamp(secs, 0).unwrap_or_default();
                json!(dt.format("%Y-%m-%dT%H:%M:%SZ").to_string())
            }
            Kind::Msg(s) => decode(rd.bytes()?, s)?,
            Kind::RawJson => serde_json::from_slice(rd.bytes()?).map_err(|e| e.to_string())?,
            Kind::MapStr | Kind::MapBytes => {
                let vk = if matches!(field.kind, Kind::MapStr) {
                    Kind::Str
                } else {
                    Kind::Bytes
                };
                let entry = decode(rd.bytes()?, &[f(1, "k", Kind::Str), f(2, "v", vk)])?;
                let k = entry
                    .get("k")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let v = entry.get("v").cloned().unwrap_or(json!(""));
                out.entry(field.name).or_insert_with(|| json!({}))[k] = v;
                continue;
            }
        };
        if let Kind::RawJson = field.kind {
            return Ok(value);
        }
        if field.repeated {
            out.entry(field.name)
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .expect("array")
                .push(value);
        } else {
            out.insert(field.name.to_string(), value);
        }
    }
    Ok(Value::Object(out))
}

/// Decodes a `k8s\0`-prefixed protobuf body into the JSON form of the object.
pub fn decode_object(body: &[u8]) -> Result<Value, String> {
    let rest = body
        .strip_prefix(b"k8s\0")
        .ok_or("protobuf body lacks the k8s magic prefix")?;
    let mut rd = Reader { b: rest, pos: 0 };
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    while rd.pos < rest.len() {
        let tag = rd.varint()?;
        match tag {
            0x0a => {
                let tm = decode(rd.bytes()?, TYPE_META)?;
                api_version = tm
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .into();
                kind = tm
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .into();
            }
            0x12 => raw = rd.bytes()?,
            t => rd.skip(t & 7)?,
        }
    }
    let _ = UNKNOWN;
    let schema = match kind.as_str() {
        "Secret" => SECRET,
        "ConfigMap" => CONFIG_MAP,
        "Namespace" => NAMESPACE,
        "ServiceAccount" => SERVICE_ACCOUNT,
        "DeleteOptions" => DELETE_OPTIONS,
        other => {
            return Err(format!(
                "protobuf encoding of {other} is not supported by this server; send JSON"
            ))
        }
    };
    let mut v = decode(raw, schema)?;
    if kind != "DeleteOptions" {
        v["apiVersion"] = json!(api_version);
        v["kind"] = json!(kind);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(num: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![((num << 3) | 2) as u8, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn decodes_a_secret_envelope() {
        let meta = [
            field(1, b"s1"),
            field(11, &[field(1, b"owner"), field(2, b"helm")].concat()),
        ]
        .concat();
        let secret = [
            field(1, &meta),
            field(2, &[field(1, b"release"), field(2, b"\x01\x02")].concat()),
            field(3, b"helm.sh/release.v1"),
        ]
        .concat();
        let tm = [field(1, b"v1"), field(2, b"Secret")].concat();
        let body = [b"k8s\0".to_vec(), field(1, &tm), field(2, &secret)].concat();
        let v = decode_object(&body).unwrap();
        assert_eq!(v["metadata"]["name"], "s1");
        assert_eq!(v["metadata"]["labels"]["owner"], "helm");
        assert_eq!(v["data"]["release"], "AQI=");
        assert_eq!(v["type"], "helm.sh/release.v1");
        assert_eq!(v["kind"], "Secret");
    }
}
