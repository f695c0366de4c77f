//! Kubernetes' protobuf encoding, read for every built-in kind: typed
//! client-go clients (Helm's release Secrets, `kubectl create
//! deployment|job|service|role...`, controllers) send
//! `application/vnd.kubernetes.protobuf`. The field tables are generated
//! (`proto_schema.rs`, from k8s-pb and k8s-openapi). Responses are always
//! JSON, which client-go accepts.
//!
//! The JSON is what the client's Go object would marshal to: Go's protobuf
//! code writes every non-pointer field, zero or not, and its JSON code drops
//! those zeros again (`omitempty`), so zero scalars are dropped unless the
//! field is one of the pointers whose zero means something (`replicas: 0`).

use base64::Engine;
use serde_json::{json, Map, Value};

#[path = "proto_schema.rs"]
mod schema;

#[derive(Clone, Copy)]
enum Kind {
    Str,
    Bytes,
    Int,
    Bool,
    Time,
    MicroTime,
    IntOrString,
    Quantity,
    /// FieldsV1 and RawExtension: their raw bytes are JSON.
    RawJson,
    Msg(u16),
    /// A Go struct embedded with `json:",inline"`: a field in protobuf, its
    /// fields merged into the parent in JSON.
    Inline(u16),
    Map(&'static Kind),
}

#[derive(Clone, Copy)]
struct Field {
    num: u32,
    name: &'static str,
    kind: Kind,
    repeated: bool,
}

/// Pointer fields of the built-in kinds whose zero value clients set on
/// purpose; every other zero scalar on the wire is a Go value field that
/// JSON would omit.
const MEANINGFUL_ZEROS: &[&str] = &[
    "replicas",
    "automountServiceAccountToken",
    "privileged",
    "runAsNonRoot",
    "runAsUser",
    "runAsGroup",
    "fsGroup",
    "allowPrivilegeEscalation",
    "readOnlyRootFilesystem",
    "suspend",
    "parallelism",
    "completions",
    "backoffLimit",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
    "ttlSecondsAfterFinished",
    "activeDeadlineSeconds",
    "startingDeadlineSeconds",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
    "terminationGracePeriodSeconds",
    "gracePeriodSeconds",
    "deletionGracePeriodSeconds",
    "revisionHistoryLimit",
    "progressDeadlineSeconds",
    "immutable",
    "optional",
    "defaultMode",
    "mode",
    "enableServiceLinks",
    "shareProcessNamespace",
    "hostUsers",
    "setHostnameAsFQDN",
    "allowVolumeExpansion",
    "controller",
    "blockOwnerDeletion",
    "orphanDependents",
    "publishNotReadyAddresses",
    "allocateLoadBalancerNodePorts",
    "expirationSeconds",
    "minAvailable",
    "maxUnavailable",
    "maxSurge",
    "partition",
    "leaseDurationSeconds",
    "leaseTransitions",
    "ready",
    "serving",
    "terminating",
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

    fn fixed64(&mut self) -> Result<u64, String> {
        let end = self.pos + 8;
        let raw = self.b.get(self.pos..end).ok_or("truncated fixed64")?;
        self.pos = end;
        Ok(u64::from_le_bytes(raw.try_into().expect("8 bytes")))
    }

    fn skip(&mut self, wire: u64) -> Result<(), String> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.fixed64().map(|_| ()),
            2 => self.bytes().map(|_| ()),
            5 => {
                self.pos += 4;
                Ok(())
            }
            w => Err(format!("unsupported wire type {w}")),
        }
    }
}

fn message(index: u16) -> &'static [Field] {
    schema::MESSAGES[usize::from(index)]
}

fn rfc3339(secs: i64, nanos: i64, micros: bool) -> Value {
    let Some(dt) = chrono::DateTime::from_timestamp(secs, nanos.clamp(0, 999_999_999) as u32)
    else {
        return Value::Null;
    };
    let format = if micros {
        "%Y-%m-%dT%H:%M:%S%.6fZ"
    } else {
        "%Y-%m-%dT%H:%M:%SZ"
    };
    json!(dt.format(format).to_string())
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

fn scalar(rd: &mut Reader, kind: Kind) -> Result<Value, String> {
    Ok(match kind {
        Kind::Str => Value::String(String::from_utf8_lossy(rd.bytes()?).into_owned()),
        Kind::Bytes => Value::String(base64::engine::general_purpose::STANDARD.encode(rd.bytes()?)),
        Kind::Int => json!(rd.varint()? as i64),
        Kind::Bool => json!(rd.varint()? != 0),
        Kind::Time | Kind::MicroTime | Kind::IntOrString => {
            let (mut a, mut b, mut text) = (0i64, 0i64, None);
            let inner = rd.bytes()?;
            let mut sub = Reader { b: inner, pos: 0 };
            while sub.pos < inner.len() {
                let tag = sub.varint()?;
                match (tag >> 3, tag & 7) {
                    (1, 0) => a = sub.varint()? as i64,
                    (2, 0) => b = sub.varint()? as i64,
                    (3, 2) => text = Some(String::from_utf8_lossy(sub.bytes()?).into_owned()),
                    (_, w) => sub.skip(w)?,
                }
            }
            match kind {
                // A zero metav1.Time is written as an empty message and
                // marshals to JSON null.
                Kind::Time | Kind::MicroTime if inner.is_empty() => Value::Null,
                Kind::Time => rfc3339(a, b, false),
                Kind::MicroTime => rfc3339(a, b, true),
                _ if a == 1 => json!(text.unwrap_or_default()),
                _ => json!(b as i32),
            }
        }
        Kind::Quantity => {
            let inner = decode(
                rd.bytes()?,
                &[Field {
                    num: 1,
                    name: "string",
                    kind: Kind::Str,
                    repeated: false,
                }],
                true,
            )?;
            inner.get("string").cloned().unwrap_or(json!("0"))
        }
        Kind::RawJson => {
            let raw = rd.bytes()?;
            // RawExtension and FieldsV1 are messages whose field 1 is the JSON.
            let mut sub = Reader { b: raw, pos: 0 };
            let mut json_bytes: &[u8] = &[];
            while sub.pos < raw.len() {
                let tag = sub.varint()?;
                if tag == 0x0a {
                    json_bytes = sub.bytes()?;
                } else {
                    sub.skip(tag & 7)?;
                }
            }
            if json_bytes.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(json_bytes).map_err(|e| format!("embedded JSON: {e}"))?
            }
        }
        Kind::Msg(index) | Kind::Inline(index) => decode(rd.bytes()?, message(index), false)?,
        Kind::Map(_) => unreachable!("maps are entries of their parent"),
    })
}

fn decode(b: &[u8], schema: &[Field], keep_zeros: bool) -> Result<Value, String> {
    let mut out = Map::new();
    let mut rd = Reader { b, pos: 0 };
    while rd.pos < b.len() {
        let tag = rd.varint()?;
        let (num, wire) = (tag >> 3, tag & 7);
        let Some(field) = schema.iter().find(|f| u64::from(f.num) == num) else {
            rd.skip(wire)?;
            continue;
        };
        if let Kind::Map(value_kind) = field.kind {
            let entry = rd.bytes()?;
            let mut sub = Reader { b: entry, pos: 0 };
            let (mut key, mut value) = (String::new(), None);
            while sub.pos < entry.len() {
                let tag = sub.varint()?;
                match tag >> 3 {
                    1 => key = String::from_utf8_lossy(sub.bytes()?).into_owned(),
                    2 => value = Some(scalar(&mut sub, *value_kind)?),
                    _ => sub.skip(tag & 7)?,
                }
            }
            let value = value.unwrap_or_else(|| match value_kind {
                Kind::Bytes | Kind::Str => json!(""),
                Kind::Msg(_) => json!({}),
                _ => Value::Null,
            });
            out.entry(field.name)
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .ok_or_else(|| format!("{} sent as a map and a value", field.name))?
                .insert(key, value);
            continue;
        }
        let value = scalar(&mut rd, field.kind)?;
        if let (Kind::Inline(_), Value::Object(fields)) = (field.kind, &value) {
            out.extend(fields.clone());
            continue;
        }
        if field.repeated {
            out.entry(field.name)
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .ok_or_else(|| format!("{} sent as a list and a value", field.name))?
                .push(value);
        } else if keep_zeros || !is_zero(&value) || MEANINGFUL_ZEROS.contains(&field.name) {
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
                let type_meta = [
                    Field {
                        num: 1,
                        name: "apiVersion",
                        kind: Kind::Str,
                        repeated: false,
                    },
                    Field {
                        num: 2,
                        name: "kind",
                        kind: Kind::Str,
                        repeated: false,
                    },
                ];
                let tm = decode(rd.bytes()?, &type_meta, false)?;
                let text = |k: &str| {
                    tm.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                (api_version, kind) = (text("apiVersion"), text("kind"));
            }
            0x12 => raw = rd.bytes()?,
            t => rd.skip(t & 7)?,
        }
    }
    // client-go writes DeleteOptions under the deleted resource's group.
    let found = schema::KINDS
        .iter()
        .find(|(v, k, _)| *v == api_version && *k == kind)
        .or_else(|| {
            schema::KINDS
                .iter()
                .find(|(_, k, _)| kind == "DeleteOptions" && *k == kind)
        });
    let Some(&(_, _, index)) = found else {
        return Err(format!(
            "protobuf encoding of {api_version} {kind} is not known to this server; send JSON"
        ));
    };
    let mut v = decode(raw, message(index), false)?;
    if kind != "DeleteOptions" {
        v["apiVersion"] = json!(api_version);
        v["kind"] = json!(kind);
    }
    Ok(v)
}

/// Lists whose Go field has no `omitempty`: an empty one is kept.
const LISTS_WITHOUT_OMITEMPTY: &[&str] =
    &["containers", "rules", "verbs", "nodeSelectorTerms", "paths"];

/// Stores a built-in object as its Go type round-trips it: empty maps and
/// empty lists under `omitempty` are dropped (Helm's `data: {}` on a
/// ConfigMap is stored without `data`, while Helm's apply still owns
/// `f:data`). Objects of kinds this server has no table for are left alone.
pub fn drop_empty_as_go(obj: &mut Value) {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    if let Some(&(_, _, index)) = schema::KINDS
        .iter()
        .find(|(v, k, _)| *v == api_version && *k == kind)
    {
        drop_empty_in(obj, index);
    }
}

/// A message's JSON fields, those of its inline structs included.
fn json_field(index: u16, name: &str) -> Option<Field> {
    message(index).iter().find_map(|f| match f.kind {
        Kind::Inline(inner) => json_field(inner, name),
        _ if f.name == name => Some(*f),
        _ => None,
    })
}

fn drop_empty_in(v: &mut Value, index: u16) {
    let Some(map) = v.as_object_mut() else { return };
    map.retain(|name, value| {
        let Some(field) = json_field(index, name) else {
            return true;
        };
        let empty_map =
            matches!(field.kind, Kind::Map(_)) && value.as_object().is_some_and(Map::is_empty);
        let empty_list = field.repeated
            && !LISTS_WITHOUT_OMITEMPTY.contains(&field.name)
            && value.as_array().is_some_and(Vec::is_empty);
        !(empty_map || empty_list)
    });
    for (name, value) in map.iter_mut() {
        let Some(field) = json_field(index, name) else {
            continue;
        };
        match (field.kind, value) {
            (Kind::Msg(inner), Value::Array(items)) => {
                for item in items {
                    drop_empty_in(item, inner);
                }
            }
            (Kind::Msg(inner), value) => drop_empty_in(value, inner),
            (Kind::Map(Kind::Msg(inner)), Value::Object(entries)) => {
                for item in entries.values_mut() {
                    drop_empty_in(item, *inner);
                }
            }
            _ => {}
        }
    }
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
    fn empty_maps_and_lists_go_as_in_go_but_empty_structs_stay() {
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {}}, "data": {}});
        drop_empty_as_go(&mut cm);
        assert_eq!(
            cm,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        );
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"strategy": {}, "template": {"spec": {
                "containers": [{"name": "c", "env": [], "resources": {}, "ports": []}],
                "volumes": [{"name": "v", "emptyDir": {}}], "nodeSelector": {}, "tolerations": []}}}});
        drop_empty_as_go(&mut d);
        assert_eq!(d["spec"]["strategy"], json!({}));
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(pod["containers"][0], json!({"name": "c", "resources": {}}));
        // emptyDir belongs to VolumeSource, inline in Volume.
        assert_eq!(pod["volumes"][0], json!({"name": "v", "emptyDir": {}}));
        assert!(
            pod.get("nodeSelector").is_none() && pod.get("tolerations").is_none(),
            "{pod}"
        );
        let mut role =
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "rules": []});
        drop_empty_as_go(&mut role);
        assert_eq!(role["rules"], json!([]));
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
