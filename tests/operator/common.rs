//! What scenarios of several topics share, beyond the harness: the managed
//! PostgresCluster and ClickHouseCluster specs, the external PostgresCluster
//! and its connection Secret, whether a release is ours and when it was made,
//! a resource's condition, the cert-manager pins a newer operator upgrades
//! between, the HTTP probe of the health and metrics endpoints, a free port,
//! a fresh temporary directory, SIGTERM and a Ready MeilisearchInstance.

use crate::harness::*;
use serde_json::{json, Value};

pub const MANAGED: &str = r#"{"mode": "managed", "managed": {"instances": 1}}"#;

pub fn managed() -> Value {
    serde_json::from_str(MANAGED).unwrap()
}

pub fn ours_release(env: &Env, ns: &str, name: &str) -> bool {
    env.releases().iter().any(|(n, r, labels, annotations)| {
        n == ns
            && r == name
            && labels.get("status").map(String::as_str) == Some("deployed")
            && labels
                .get("app.kubernetes.io/managed-by")
                .map(String::as_str)
                == Some("navique-ai-core-operator")
            && annotations
                .get("core.navique.com/provenance")
                .map(String::as_str)
                == Some("owned")
    })
}

pub fn created_at(env: &Env, ns: &str, name: &str) -> i64 {
    env.releases()
        .into_iter()
        .find(|(n, r, _, _)| n == ns && r == name)
        .and_then(|(_, _, l, _)| l.get("createdAt").and_then(|c| c.parse().ok()))
        .unwrap_or(0)
}

pub const CERT_MANAGER_OLD: (&str, &str) = (
    "v1.19.2",
    "87e2dafa946bd05c56be897b2fe2e171f2bbfad96c9d48409d4b1188d240af6f",
);

/// The built-in catalog's cert-manager pin.
pub const CERT_MANAGER_NEW: (&str, &str) = (
    "v1.21.1",
    "1231d2e3f363e3cb3def950b58138cd52c2f53903247177f1111156b3a907c60",
);

pub fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return (0, String::new());
    };
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let code = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, out)
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn clickhouse_managed(type_: &str, keeper: i64) -> Value {
    json!({"type": type_, "mode": "managed", "managed": {"shards": 1, "replicas": 2, "storage": {"size": "5Gi"}, "keeper": {"replicas": keeper}}})
}

pub fn external_pg() -> Value {
    json!({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}})
}

pub fn pg_conn(env: &Env, ns: &str) {
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pg-conn", "namespace": ns},
        "stringData": {"host": "h", "port": "5432", "username": "u", "password": "p", "dbname": "d"}}).to_string());
}

pub fn condition_of(r: &Value, type_: &str) -> Value {
    r["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .cloned()
        .unwrap_or(Value::Null)
}

/// A fresh directory of this test's, `prefix` and a random suffix.
pub fn temp_dir(prefix: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("{prefix}-{:08x}", rand::random::<u32>()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn send_sigterm(c: &std::process::Child) {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &c.id().to_string()])
        .status();
}

/// A MeilisearchInstance `search` in `ns` whose master key `key` is in the
/// Secret `search-keys`, once Ready (its release: `meilisearch-search`).
pub fn meilisearch_ready(env: &Env, ns: &str, key: &str) {
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "search-keys", "namespace": ns},
        "stringData": {"master": key}}).to_string());
    env.create(
        "MeilisearchInstance",
        ns,
        "search",
        json!({"masterKey": {"secretKeyRef": {"name": "search-keys", "key": "master"}}}),
    );
    env.wait_phase("MeilisearchInstance", ns, "search", "Ready");
}
