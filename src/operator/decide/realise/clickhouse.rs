//! ClickHouseCluster -> the objects of the ClickHouse Inc. operator
//! (`type: clickhouse`: a KeeperCluster and a ClickHouseCluster) or of
//! Altinity's (`type: altinity`: a ClickHouseInstallation, and a
//! ClickHouseKeeperInstallation when keeper replicas > 0), plus, for managed
//! and adopted ones, a connection Secret we write and own, with the keys an
//! external connection Secret has. Neither operator writes one, and
//! consumers (Observability) read one shape whatever the mode.

use super::{
    check_blocks, datastore_status, owned_metadata, parse_spec, Inputs, PasswordSource, ReadyWhen,
    Realised, SpecError,
};
use crate::operator::api::clickhouse::{
    ClickHouseClusterSpec, ClickHouseManaged, ClickHouseType, EXTERNAL_KEYS,
};
use crate::operator::api::Mode;
use crate::operator::model::snapshot::Resource;
use base64::Engine;
use serde_json::{json, Value};

pub const CLICKHOUSE_API_VERSION: &str = "clickhouse.com/v1alpha1";
pub const ALTINITY_API_VERSION: &str = "clickhouse.altinity.com/v1";
pub const ALTINITY_KEEPER_API_VERSION: &str = "clickhouse-keeper.altinity.com/v1";
pub const HTTP_PORT: u16 = 8123;
pub const NATIVE_PORT: u16 = 9000;
/// The key of our connection Secret the servers' `default` user password comes from.
pub const PASSWORD_KEY: &str = "password";

/// The connection Secret we write for a managed or adopted ClickHouseCluster.
pub fn connection_secret_name(r: &Resource) -> String {
    format!("{}-clickhouse", r.name)
}

fn spec(r: &Resource) -> Result<ClickHouseClusterSpec, SpecError> {
    let spec: ClickHouseClusterSpec = parse_spec(&r.spec)?;
    check_blocks(
        spec.mode,
        spec.managed.is_some(),
        spec.adopt.is_some(),
        spec.external.is_some(),
    )?;
    Ok(spec)
}

/// The upstream kind that serves a ClickHouse server of this type.
fn server_kind(t: ClickHouseType) -> (&'static str, &'static str) {
    match t {
        ClickHouseType::Clickhouse => (CLICKHOUSE_API_VERSION, "ClickHouseCluster"),
        ClickHouseType::Altinity => (ALTINITY_API_VERSION, "ClickHouseInstallation"),
    }
}

/// The Service each operator puts in front of the servers of `name`.
fn host(t: ClickHouseType, namespace: &str, name: &str) -> String {
    match t {
        ClickHouseType::Clickhouse => format!("{name}-clickhouse-headless.{namespace}.svc"),
        ClickHouseType::Altinity => format!("clickhouse-{name}.{namespace}.svc"),
    }
}

fn ready(t: ClickHouseType, api_version: &str, kind: &str, name: &str) -> ReadyWhen {
    match t {
        // Kubernetes-style conditions.
        ClickHouseType::Clickhouse => ReadyWhen::ConditionReady {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
        },
        // Altinity reports a reconcile's outcome as status.status.
        ClickHouseType::Altinity => ReadyWhen::StatusEquals {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            pointer: "/status/status".into(),
            value: "Completed".into(),
        },
    }
}

pub fn password_source(r: &Resource) -> PasswordSource {
    let Ok(spec) = spec(r) else {
        return PasswordSource::None;
    };
    match spec.mode {
        Mode::Managed => PasswordSource::Keep {
            secret: connection_secret_name(r),
            key: PASSWORD_KEY.into(),
        },
        Mode::Adopt => {
            let (api_version, kind) = server_kind(spec.type_);
            PasswordSource::Adopted {
                api_version: api_version.into(),
                kind: kind.into(),
                name: spec.adopt.expect("checked").ref_.name,
            }
        }
        Mode::External => PasswordSource::None,
    }
}

/// The Secret (name, key) an adopted server object takes its `default`
/// user's password from, where it names one.
pub fn adopted_password_ref(object: &Value) -> Option<(String, String)> {
    let pick = |r: &Value| {
        Some((
            r.get("name")?.as_str()?.to_string(),
            r.get("key")?.as_str()?.to_string(),
        ))
    };
    if let Some(r) = object.pointer("/spec/settings/defaultUserPassword/secret") {
        return pick(r);
    }
    let users = object.pointer("/spec/configuration/users")?;
    pick(
        users
            .get("default/password")?
            .pointer("/valueFrom/secretKeyRef")?,
    )
}

fn connection_secret(r: &Resource, host: &str, password: Option<&str>) -> Value {
    let b64 = |s: &str| Value::String(base64::engine::general_purpose::STANDARD.encode(s));
    let mut data = json!({
        "host": b64(host),
        "httpPort": b64(&HTTP_PORT.to_string()),
        "nativePort": b64(&NATIVE_PORT.to_string()),
        "username": b64("default"),
        "database": b64("default"),
    });
    if let Some(p) = password {
        data[PASSWORD_KEY] = b64(p);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": owned_metadata(crate::operator::api::API_VERSION, "ClickHouseCluster", r, &connection_secret_name(r)),
        "type": "Opaque",
        "data": data,
    })
}

fn merged(
    mut fields: serde_json::Map<String, Value>,
    extra: &serde_json::Map<String, Value>,
) -> serde_json::Map<String, Value> {
    fields.extend(extra.clone());
    fields
}

fn volume_claim(size: &str, class: Option<&str>) -> Value {
    let mut spec = json!({
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
    });
    if let Some(c) = class.filter(|c| !c.is_empty()) {
        spec["storageClassName"] = json!(c);
    }
    spec
}

pub fn realise(r: &Resource, inputs: &Inputs) -> Result<Realised, SpecError> {
    let spec = spec(r)?;
    let t = spec.type_;
    let mut status = serde_json::Map::new();
    status.insert("type".into(), serde_json::to_value(t).expect("an enum"));
    Ok(match spec.mode {
        Mode::Managed => managed(r, t, &spec.managed.expect("checked"), inputs, &status)?,
        Mode::Adopt => {
            let name = spec.adopt.expect("checked").ref_.name;
            adopted(r, t, &name, inputs, &status)
        }
        Mode::External => {
            let mut x = super::external(
                spec.external.expect("checked").connection_secret_ref.name,
                EXTERNAL_KEYS,
            );
            x.status.extend(status);
            x
        }
    })
}

/// What one managed cluster's servers are made of, on either operator.
struct Servers<'a> {
    r: &'a Resource,
    managed: &'a ClickHouseManaged,
    size: String,
    class: Option<&'a str>,
    /// Where the servers read the default user's password.
    secret_ref: Value,
}

impl Servers<'_> {
    /// Every server object is named as the resource (kinds differ).
    fn metadata(&self) -> Value {
        owned_metadata(
            crate::operator::api::API_VERSION,
            "ClickHouseCluster",
            self.r,
            &self.r.name,
        )
    }
}

fn managed(
    r: &Resource,
    t: ClickHouseType,
    m: &ClickHouseManaged,
    inputs: &Inputs,
    status: &serde_json::Map<String, Value>,
) -> Result<Realised, SpecError> {
    let password = inputs.password.as_deref().ok_or_else(|| SpecError {
        field: "spec.managed".into(),
        message: "no password was provided for the connection Secret".into(),
    })?;
    let servers = Servers {
        r,
        managed: m,
        size: m.storage.size.clone().unwrap_or_else(|| "10Gi".into()),
        class: m.storage.storage_class.as_deref(),
        secret_ref: json!({"name": connection_secret_name(r), "key": PASSWORD_KEY}),
    };
    let ((objects, ready_when), needs) = match t {
        ClickHouseType::Clickhouse => (clickhouse_inc(&servers), "clickhouse-operator"),
        ClickHouseType::Altinity => (altinity(&servers), "altinity-clickhouse-operator"),
    };
    let mut emit = vec![connection_secret(
        r,
        &host(t, &r.namespace, &r.name),
        Some(password),
    )];
    emit.extend(objects);
    Ok(Realised {
        needs: vec![needs.into()],
        emit,
        ready_when,
        status: merged(
            datastore_status(&connection_secret_name(r), Mode::Managed),
            status,
        ),
        waiting_for: vec![],
    })
}

/// On ClickHouse Inc.'s operator: a KeeperCluster and a ClickHouseCluster.
fn clickhouse_inc(s: &Servers) -> (Vec<Value>, Vec<ReadyWhen>) {
    let t = ClickHouseType::Clickhouse;
    let name = &s.r.name;
    // The ClickHouseCluster CRD requires a keeperClusterRef, so a keeper
    // of at least one replica is always made.
    let keeper = json!({
        "apiVersion": CLICKHOUSE_API_VERSION,
        "kind": "KeeperCluster",
        "metadata": s.metadata(),
        "spec": {
            "replicas": s.managed.keeper.replicas.max(1),
            "dataVolumeClaimSpec": volume_claim("1Gi", s.class),
        },
    });
    let server = json!({
        "apiVersion": CLICKHOUSE_API_VERSION,
        "kind": "ClickHouseCluster",
        "metadata": s.metadata(),
        "spec": {
            "shards": s.managed.shards,
            "replicas": s.managed.replicas,
            "keeperClusterRef": {"name": name},
            "dataVolumeClaimSpec": volume_claim(&s.size, s.class),
            "settings": {"defaultUserPassword": {"secret": s.secret_ref}},
        },
    });
    let ready_when = vec![
        ready(t, CLICKHOUSE_API_VERSION, "KeeperCluster", name),
        ready(t, CLICKHOUSE_API_VERSION, "ClickHouseCluster", name),
    ];
    (vec![keeper, server], ready_when)
}

/// On Altinity's operator: a ClickHouseInstallation, and a
/// ClickHouseKeeperInstallation when keeper replicas are asked for.
fn altinity(s: &Servers) -> (Vec<Value>, Vec<ReadyWhen>) {
    let t = ClickHouseType::Altinity;
    let (m, name) = (s.managed, &s.r.name);
    let mut configuration = json!({
        "clusters": [{"name": "default", "layout": {"shardsCount": m.shards, "replicasCount": m.replicas}}],
        "users": {"default/password": {"valueFrom": {"secretKeyRef": s.secret_ref}}},
    });
    let mut emit = Vec::new();
    let mut ready_when = Vec::new();
    if m.keeper.replicas > 0 {
        emit.push(json!({
            "apiVersion": ALTINITY_KEEPER_API_VERSION,
            "kind": "ClickHouseKeeperInstallation",
            "metadata": s.metadata(),
            "spec": {
                "configuration": {"clusters": [{"name": "keeper", "layout": {"replicasCount": m.keeper.replicas}}]},
                "defaults": {"templates": {"dataVolumeClaimTemplate": "data"}},
                "templates": {"volumeClaimTemplates": [{"name": "data", "spec": volume_claim("1Gi", s.class)}]},
            },
        }));
        ready_when.push(ready(
            t,
            ALTINITY_KEEPER_API_VERSION,
            "ClickHouseKeeperInstallation",
            name,
        ));
        configuration["zookeeper"] =
            json!({"nodes": [{"host": format!("keeper-{name}"), "port": 2181}]});
    }
    emit.push(json!({
        "apiVersion": ALTINITY_API_VERSION,
        "kind": "ClickHouseInstallation",
        "metadata": s.metadata(),
        "spec": {
            "configuration": configuration,
            "defaults": {"templates": {"dataVolumeClaimTemplate": "data"}},
            "templates": {"volumeClaimTemplates": [{"name": "data", "spec": volume_claim(&s.size, s.class)}]},
        },
    }));
    ready_when.push(ready(
        t,
        ALTINITY_API_VERSION,
        "ClickHouseInstallation",
        name,
    ));
    (emit, ready_when)
}

/// An adopted server: only the connection Secret is ours, and the server
/// must be Ready and name its password's Secret.
fn adopted(
    r: &Resource,
    t: ClickHouseType,
    name: &str,
    inputs: &Inputs,
    status: &serde_json::Map<String, Value>,
) -> Realised {
    let (api_version, kind) = server_kind(t);
    let secret = connection_secret(r, &host(t, &r.namespace, name), inputs.password.as_deref());
    Realised {
        needs: vec![],
        emit: vec![secret],
        ready_when: vec![
            ready(t, api_version, kind, name),
            ReadyWhen::SecretKeys {
                name: connection_secret_name(r),
                keys: vec![PASSWORD_KEY.into()],
            },
        ],
        status: merged(
            datastore_status(&connection_secret_name(r), Mode::Adopt),
            status,
        ),
        waiting_for: vec![],
    }
}

/// ClickHouseCluster: on ClickHouse Inc.'s or Altinity's operator, adopted or external.
pub struct ClickHouse;

impl super::Realise for ClickHouse {
    fn password_source(&self, r: &Resource) -> PasswordSource {
        password_source(r)
    }

    fn realise_spec(&self, r: &Resource, inputs: &Inputs) -> Result<super::Realisation, SpecError> {
        realise(r, inputs).map(super::Realisation::Objects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(spec: Value) -> Resource {
        Resource::for_test("ClickHouseCluster", "analytics", "u-7", spec)
    }

    fn with_password() -> Inputs {
        Inputs {
            password: Some("s3cret".into()),
            ..Default::default()
        }
    }

    fn decoded(secret: &Value, key: &str) -> String {
        let b = secret["data"][key].as_str().unwrap();
        String::from_utf8(base64::engine::general_purpose::STANDARD.decode(b).unwrap()).unwrap()
    }

    #[test]
    fn clickhouse_managed_emits_keeper_server_and_a_connection_secret() {
        let r = ch(
            json!({"type": "clickhouse", "mode": "managed", "managed": {"shards": 2, "replicas": 3, "storage": {"size": "20Gi"}}}),
        );
        let x = realise(&r, &with_password()).unwrap();
        assert_eq!(x.needs, ["clickhouse-operator"]);
        assert_eq!(x.connection_secret(), Some("analytics-clickhouse"));
        let kinds: Vec<&str> = x.emit.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["Secret", "KeeperCluster", "ClickHouseCluster"]);
        let server = &x.emit[2];
        assert_eq!(server["spec"]["shards"], 2);
        assert_eq!(server["spec"]["replicas"], 3);
        assert_eq!(server["spec"]["keeperClusterRef"]["name"], "analytics");
        assert_eq!(
            server["spec"]["settings"]["defaultUserPassword"]["secret"],
            json!({"name": "analytics-clickhouse", "key": "password"})
        );
        assert_eq!(x.emit[1]["spec"]["replicas"], 1, "a keeper is always made");
        assert_eq!(decoded(&x.emit[0], "password"), "s3cret");
        assert_eq!(
            decoded(&x.emit[0], "host"),
            "analytics-clickhouse-headless.team-a.svc"
        );
        assert_eq!(x.ready_when.len(), 2);
        assert_eq!(x.status["type"], "clickhouse");
        for o in &x.emit {
            assert_eq!(o["metadata"]["ownerReferences"][0]["uid"], "u-7");
        }
        // The password is an input, never made up here.
        assert_eq!(
            realise(&r, &Inputs::default()).unwrap_err().field,
            "spec.managed"
        );
        assert_eq!(
            password_source(&r),
            PasswordSource::Keep {
                secret: "analytics-clickhouse".into(),
                key: "password".into()
            }
        );
    }

    #[test]
    fn altinity_managed_adds_a_keeper_only_with_keeper_replicas() {
        let spec = |keeper: i32| json!({"type": "altinity", "mode": "managed", "managed": {"keeper": {"replicas": keeper}}});
        let x = realise(&ch(spec(0)), &with_password()).unwrap();
        assert_eq!(x.needs, ["altinity-clickhouse-operator"]);
        let kinds: Vec<&str> = x.emit.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["Secret", "ClickHouseInstallation"]);
        let chi = &x.emit[1];
        assert!(chi["spec"]["configuration"].get("zookeeper").is_none());
        assert_eq!(
            chi["spec"]["configuration"]["users"]["default/password"]["valueFrom"]["secretKeyRef"]
                ["name"],
            "analytics-clickhouse"
        );
        assert_eq!(
            decoded(&x.emit[0], "host"),
            "clickhouse-analytics.team-a.svc"
        );
        assert!(
            matches!(&x.ready_when[..], [ReadyWhen::StatusEquals { value, .. }] if value == "Completed")
        );
        let x = realise(&ch(spec(3)), &with_password()).unwrap();
        let kinds: Vec<&str> = x.emit.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "Secret",
                "ClickHouseKeeperInstallation",
                "ClickHouseInstallation"
            ]
        );
        assert_eq!(
            x.emit[1]["spec"]["configuration"]["clusters"][0]["layout"]["replicasCount"],
            3
        );
        assert_eq!(
            x.emit[2]["spec"]["configuration"]["zookeeper"]["nodes"][0]["host"],
            "keeper-analytics"
        );
        assert_eq!(x.ready_when.len(), 2);
    }

    #[test]
    fn adopt_publishes_a_secret_for_the_adopted_server_and_external_emits_nothing() {
        let r = ch(
            json!({"type": "altinity", "mode": "adopt", "adopt": {"ref": {"name": "legacy-ch"}}}),
        );
        assert_eq!(
            password_source(&r),
            PasswordSource::Adopted {
                api_version: ALTINITY_API_VERSION.into(),
                kind: "ClickHouseInstallation".into(),
                name: "legacy-ch".into()
            }
        );
        let x = realise(&r, &Inputs::default()).unwrap();
        assert!(x.needs.is_empty());
        assert_eq!(x.emit.len(), 1);
        assert!(x.emit[0]["data"].get("password").is_none());
        assert_eq!(
            decoded(&x.emit[0], "host"),
            "clickhouse-legacy-ch.team-a.svc"
        );
        let e = realise(
            &ch(json!({"type": "clickhouse", "mode": "external", "external": {"connectionSecretRef": {"name": "ch-conn"}}})),
            &Inputs::default(),
        )
        .unwrap();
        assert!(e.emit.is_empty() && e.needs.is_empty());
        assert_eq!(e.connection_secret(), Some("ch-conn"));
        assert!(
            matches!(&e.ready_when[..], [ReadyWhen::SecretKeys { keys, .. }] if keys.len() == 6)
        );
    }

    #[test]
    fn adopted_password_references_are_read_from_either_operators_shape() {
        let inc = json!({"spec": {"settings": {"defaultUserPassword": {"secret": {"name": "pw", "key": "k"}}}}});
        assert_eq!(adopted_password_ref(&inc), Some(("pw".into(), "k".into())));
        let alt = json!({"spec": {"configuration": {"users": {"default/password": {"valueFrom": {"secretKeyRef": {"name": "a", "key": "b"}}}}}}});
        assert_eq!(adopted_password_ref(&alt), Some(("a".into(), "b".into())));
        assert_eq!(adopted_password_ref(&json!({"spec": {}})), None);
    }

    #[test]
    fn bad_specs_name_the_field() {
        let e = realise(
            &ch(json!({"mode": "managed", "managed": {}})),
            &with_password(),
        )
        .unwrap_err();
        assert!(e.message.contains("type"), "{e}");
        let e = realise(
            &ch(json!({"type": "mysql", "mode": "managed", "managed": {}})),
            &with_password(),
        )
        .unwrap_err();
        assert_eq!(e.field, "spec.type");
        let e = realise(
            &ch(json!({"type": "clickhouse", "mode": "adopt"})),
            &with_password(),
        )
        .unwrap_err();
        assert_eq!(e.field, "spec.adopt");
    }
}
