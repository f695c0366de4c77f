//! The datastore kinds, PostgresCluster and ClickHouseCluster, in their modes
//! (managed, external, adopt) and the moves between them: a move deletes only
//! the objects we emitted and releases a capability operator nothing needs
//! any more, leaving an adopted cluster and the user's Secrets alone;
//! ClickHouse moves between ClickHouse Inc.'s operator and Altinity's keeping
//! its password, and takes an adopted server's password or names a missing
//! key; a deletion waits for an upstream finalizer and names it.

use crate::common::*;
use crate::harness::*;
use serde_json::{json, Value};
use std::time::Duration;

#[test]
fn managed_to_external_deletes_only_the_cluster_we_emitted_and_releases_cnpg() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-r");
    // The user's own CNPG Cluster, adopted by another PostgresCluster: never ours to delete.
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    env.apply_yaml(&json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "metadata": {"name": "legacy-db", "namespace": ns},
        "spec": {"instances": 1, "storage": {"size": "1Gi"}}}).to_string());
    env.create_postgres(
        &ns,
        "legacy",
        json!({"mode": "adopt", "adopt": {"clusterRef": {"name": "legacy-db"}}}),
    );
    env.wait_postgres_ready(&ns, "legacy");
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "pg-conn", "namespace": ns},
        "stringData": {"host": "h", "port": "5432", "username": "u", "password": "p", "dbname": "d"}}).to_string());
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    for name in ["app-db", "legacy"] {
        env.create_postgres(
            &ns,
            name,
            json!({"mode": "external", "external": {"connectionSecretRef": {"name": "pg-conn"}}}),
        );
    }
    env.wait_for(
        "the CNPG Cluster we emitted deleted",
        Duration::from_secs(30),
        |e| {
            if e.get(&clusters, "app-db").is_none() {
                return Ok(());
            }
            Err(e
                .postgres(&ns, "app-db")
                .map(|p| p.to_string())
                .unwrap_or_default())
        },
    );
    env.wait_for("app-db external and Ready", Duration::from_secs(30), |e| {
        let p = e.postgres(&ns, "app-db").unwrap_or_default();
        (p["status"]["phase"] == "Ready"
            && p["status"]["mode"] == "external"
            && p["status"]["connectionSecret"] == "pg-conn")
            .then_some(())
            .ok_or(p["status"].to_string())
    });
    assert!(
        env.events("app-db")
            .iter()
            .any(|e| e.starts_with("GarbageCollected: ") && e.contains("Cluster")),
        "{:?}",
        env.events("app-db")
    );
    env.wait_gone("our CloudNativePG release, needed by nothing now", |e| {
        e.release("cnpg-system", "cloudnative-pg").is_some()
    });
    assert!(
        env.get(&clusters, "legacy-db").is_some(),
        "the adopted Cluster was deleted"
    );
    assert_eq!(
        env.postgres(&ns, "app-db").unwrap()["status"].get("owned"),
        None
    );
    op.stop();
}

/// ClickHouse Inc.'s operator and Altinity's never run here: the test
/// writes the status each would write (`Env::clickhouse_reports_ready`).
#[test]
fn clickhouse_managed_then_switched_to_altinity_swaps_operators_and_keeps_the_password() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &["altinity"]));
    let ns = env.namespace("team-ch");
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("clickhouse", 0),
    );
    let ch = env.wait_phase("ClickHouseCluster", &ns, "analytics", "Ready");
    assert_eq!(ch["status"]["connectionSecret"], "analytics-clickhouse");
    assert_eq!(ch["status"]["type"], "clickhouse");
    assert!(ours_release(
        &env,
        "clickhouse-operator-system",
        "clickhouse-operator"
    ));
    assert!(ours_release(&env, "cert-manager", "cert-manager"));
    assert!(
        created_at(&env, "cert-manager", "cert-manager")
            <= created_at(&env, "clickhouse-operator-system", "clickhouse-operator")
    );
    let inc = |kind: &str, plural: &str| {
        env.dynamic("clickhouse.com", "v1alpha1", kind, plural, Some(&ns))
    };
    let server = env
        .get(&inc("ClickHouseCluster", "clickhouseclusters"), "analytics")
        .expect("emitted");
    assert_eq!(server["spec"]["replicas"], 2);
    assert_eq!(server["spec"]["keeperClusterRef"]["name"], "analytics");
    assert_eq!(
        server["metadata"]["ownerReferences"][0]["uid"],
        ch["metadata"]["uid"]
    );
    assert!(env
        .get(&inc("KeeperCluster", "keeperclusters"), "analytics")
        .is_some());
    let password = env
        .secret_value(&ns, "analytics-clickhouse", "password")
        .expect("a generated password");
    assert_eq!(password.len(), 32);
    assert_eq!(
        env.secret_value(&ns, "analytics-clickhouse", "host")
            .as_deref(),
        Some(format!("analytics-clickhouse-headless.{ns}.svc").as_str())
    );
    let revision = |e: &Env| {
        e.release("clickhouse-operator-system", "clickhouse-operator")
            .and_then(|l| l.get("version").cloned())
    };
    let before = revision(&env);

    // type clickhouse -> altinity: ClickHouse Inc.'s objects are deleted,
    // its operator released, Altinity's installed; the password stays.
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("altinity", 1),
    );
    env.wait_for("the type switched", Duration::from_secs(90), |e| {
        e.clickhouse_reports_ready(&ns);
        let r = e
            .resource("ClickHouseCluster", &ns, "analytics")
            .unwrap_or_default();
        (r["status"]["type"] == "altinity" && r["status"]["phase"] == "Ready")
            .then_some(())
            .ok_or(r["status"].to_string())
    });
    assert!(env
        .get(&inc("ClickHouseCluster", "clickhouseclusters"), "analytics")
        .is_none());
    assert!(env
        .get(&inc("KeeperCluster", "keeperclusters"), "analytics")
        .is_none());
    let chi = env
        .get(
            &env.dynamic(
                "clickhouse.altinity.com",
                "v1",
                "ClickHouseInstallation",
                "clickhouseinstallations",
                Some(&ns),
            ),
            "analytics",
        )
        .expect("a ClickHouseInstallation");
    assert_eq!(
        chi["spec"]["configuration"]["clusters"][0]["layout"]["replicasCount"],
        2
    );
    assert!(env
        .get(
            &env.dynamic(
                "clickhouse-keeper.altinity.com",
                "v1",
                "ClickHouseKeeperInstallation",
                "clickhousekeeperinstallations",
                Some(&ns)
            ),
            "analytics",
        )
        .is_some());
    assert!(ours_release(
        &env,
        "altinity-clickhouse",
        "altinity-clickhouse-operator"
    ));
    env.wait_gone("the ClickHouse Inc. operator, needed by nothing now", |e| {
        e.release("clickhouse-operator-system", "clickhouse-operator")
            .is_some()
    });
    assert_eq!(
        env.secret_value(&ns, "analytics-clickhouse", "password"),
        Some(password),
        "the connection Secret keeps its password across reconciles and the switch"
    );
    assert_eq!(
        env.secret_value(&ns, "analytics-clickhouse", "host")
            .as_deref(),
        Some(format!("clickhouse-analytics.{ns}.svc").as_str())
    );
    let events = env.events("analytics");
    for gone in ["ClickHouseCluster", "KeeperCluster"] {
        assert!(
            events
                .iter()
                .any(|e| e.starts_with("GarbageCollected: ") && e.contains(gone)),
            "{events:?}"
        );
    }
    assert!(before.is_some(), "the first operator had a release");

    // Deleted: the Altinity objects and our Secret go, then the operator.
    env.delete("ClickHouseCluster", &ns, "analytics");
    env.wait_gone("the ClickHouseCluster", |e| {
        e.resource("ClickHouseCluster", &ns, "analytics").is_some()
    });
    assert_eq!(env.secret_value(&ns, "analytics-clickhouse", "host"), None);
    env.wait_gone("Altinity's operator, needed by nothing now", |e| {
        e.release("altinity-clickhouse", "altinity-clickhouse-operator")
            .is_some()
    });
    op.stop();
}

#[test]
fn clickhouse_adopt_uses_the_adopted_servers_password_and_external_names_a_missing_key() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &["altinity"]));
    let ns = env.namespace("team-cha");
    // The user's own Altinity operator: its CRDs (applied as they come in
    // the chart) and the ClickHouseInstallation it serves.
    let crds = shared()
        .unwrap()
        .join("altinity-clickhouse-operator-0.25.6.tgz");
    let dir = temp_dir("navique-altinity-crds");
    let status = std::process::Command::new("tar")
        .args(["xzf", crds.to_str().unwrap(), "-C", dir.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    env.kubectl(&[
        "apply",
        "--server-side",
        "-f",
        dir.join("altinity-clickhouse-operator/crds")
            .to_str()
            .unwrap(),
    ]);
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "legacy-pw", "namespace": ns},
        "stringData": {"pw": "hunter2"}}).to_string());
    env.apply_yaml(&json!({"apiVersion": "clickhouse.altinity.com/v1", "kind": "ClickHouseInstallation",
        "metadata": {"name": "legacy-ch", "namespace": ns},
        "spec": {"configuration": {"users": {"default/password": {"valueFrom": {"secretKeyRef": {"name": "legacy-pw", "key": "pw"}}}},
                 "clusters": [{"name": "c", "layout": {"shardsCount": 1}}]}}}).to_string());
    env.create(
        "ClickHouseCluster",
        &ns,
        "legacy",
        json!({"type": "altinity", "mode": "adopt", "adopt": {"ref": {"name": "legacy-ch"}}}),
    );
    let r = env.wait_phase("ClickHouseCluster", &ns, "legacy", "Ready");
    assert_eq!(r["status"]["connectionSecret"], "legacy-clickhouse");
    assert_eq!(
        env.secret_value(&ns, "legacy-clickhouse", "password")
            .as_deref(),
        Some("hunter2")
    );
    assert_eq!(
        env.secret_value(&ns, "legacy-clickhouse", "host")
            .as_deref(),
        Some(format!("clickhouse-legacy-ch.{ns}.svc").as_str())
    );
    assert!(
        env.release("altinity-clickhouse", "altinity-clickhouse-operator")
            .is_none(),
        "adopt installs nothing"
    );

    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ch-conn", "namespace": ns},
        "stringData": {"host": "ch.example", "httpPort": "8123", "nativePort": "9000", "username": "u", "password": "p"}}).to_string());
    env.create(
        "ClickHouseCluster",
        &ns,
        "remote",
        json!({"type": "clickhouse", "mode": "external", "external": {"connectionSecretRef": {"name": "ch-conn"}}}),
    );
    let r = env.wait_phase("ClickHouseCluster", &ns, "remote", "Provisioning");
    let ready = r["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap()
        .clone();
    assert!(
        ready["message"]
            .as_str()
            .unwrap()
            .contains("lacks key database"),
        "{ready}"
    );
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ch-conn", "namespace": ns},
        "stringData": {"database": "default"}}).to_string());
    env.wait_phase("ClickHouseCluster", &ns, "remote", "Ready");
    assert!(env.releases().is_empty(), "{:?}", env.releases());

    // Deleting the adopting resource deletes only our Secret.
    env.delete("ClickHouseCluster", &ns, "legacy");
    env.wait_gone("the adopting ClickHouseCluster", |e| {
        e.resource("ClickHouseCluster", &ns, "legacy").is_some()
    });
    assert_eq!(env.secret_value(&ns, "legacy-clickhouse", "host"), None);
    assert!(env
        .get(
            &env.dynamic(
                "clickhouse.altinity.com",
                "v1",
                "ClickHouseInstallation",
                "clickhouseinstallations",
                Some(&ns)
            ),
            "legacy-ch"
        )
        .is_some());
    env.kubectl(&[
        "delete",
        "-f",
        dir.join("altinity-clickhouse-operator/crds")
            .to_str()
            .unwrap(),
        "--wait=false",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    op.stop();
}

/// CloudNativePG's own finalizer on its Cluster is played by the test: set
/// while it "cleans up", removed when it is done.
#[test]
fn deletion_waits_for_an_upstream_finalizer_names_it_and_releases_cnpg_only_after() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-fin");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    const HELD: &str = "cnpg.io/played-by-test";
    let set_finalizers = |e: &Env, list: Value| {
        e.block(clusters.patch(
            "app-db",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"finalizers": list}})),
        ))
        .expect("patch the Cluster's finalizers");
    };
    set_finalizers(&env, json!([HELD]));
    env.delete_postgres(&ns, "app-db");
    let p = env.wait_for("the wait named", Duration::from_secs(30), |e| {
        let p = e.postgres(&ns, "app-db").unwrap_or_default();
        let m = condition_of(&p, "Ready")["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (m.contains(&format!("Cluster {ns}/app-db")) && m.contains(HELD))
            .then_some(p.clone())
            .ok_or(p["status"].to_string())
    });
    assert_eq!(p["status"]["phase"], "Deleting");
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        ours_release(&env, "cnpg-system", "cloudnative-pg"),
        "CloudNativePG must outlive the Cluster it serves"
    );
    assert!(
        env.postgres(&ns, "app-db").is_some(),
        "our finalizer holds until the Cluster is gone"
    );

    // The upstream operator finishes: the Cluster, then the resource, then CloudNativePG go.
    set_finalizers(&env, json!(null));
    env.wait_gone("the PostgresCluster", |e| {
        e.postgres(&ns, "app-db").is_some()
    });
    assert!(env.get(&clusters, "app-db").is_none());
    env.wait_gone("our CloudNativePG release", |e| {
        e.release("cnpg-system", "cloudnative-pg").is_some()
    });

    // A namespace deleted with our resources in it completes.
    let doomed = env.namespace("team-doomed");
    env.create_postgres(&doomed, "db", managed());
    env.wait_postgres_ready(&doomed, "db");
    env.kubectl(&["delete", "namespace", &doomed, "--wait=false"]);
    let namespaces: kube::api::Api<k8s_openapi::api::core::v1::Namespace> =
        kube::api::Api::all(env.client.clone());
    env.wait_for(
        "the deleted namespace gone",
        Duration::from_secs(90),
        |e| match e.block(namespaces.get_opt(&doomed)).ok().flatten() {
            None => Ok(()),
            Some(n) => Err(format!(
                "{:?}; our resource: {}",
                n.status,
                e.postgres(&doomed, "db").unwrap_or_default()
            )),
        },
    );
    op.stop();
}

#[test]
fn external_to_managed_then_managed_to_adopt_moves_what_we_own_and_nothing_else() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-mig");
    pg_conn(&env, &ns);
    env.create_postgres(&ns, "app-db", external_pg());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(env.release("cnpg-system", "cloudnative-pg").is_none());

    // external -> managed: CloudNativePG comes, the Cluster is emitted.
    env.create_postgres(&ns, "app-db", managed());
    let p = env.wait_for("managed and Ready", Duration::from_secs(90), |e| {
        e.cnpg_reports_ready(&ns);
        let p = e.postgres(&ns, "app-db").unwrap_or_default();
        (p["status"]["mode"] == "managed" && p["status"]["phase"] == "Ready")
            .then_some(p.clone())
            .ok_or(p["status"].to_string())
    });
    assert_eq!(p["status"]["connectionSecret"], "app-db-app");
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    assert!(env.get(&clusters, "app-db").is_some());
    assert!(env
        .get(
            &env.dynamic("", "v1", "Secret", "secrets", Some(&ns)),
            "pg-conn"
        )
        .is_some());

    // managed -> adopt: our Cluster goes, the adopted one is untouched,
    // CloudNativePG (ours, needed by nothing now) is released.
    env.apply_yaml(&json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster", "metadata": {"name": "legacy-db", "namespace": ns},
        "spec": {"instances": 1, "storage": {"size": "1Gi"}}}).to_string());
    let legacy_before = env.get(&clusters, "legacy-db").unwrap();
    env.create_postgres(
        &ns,
        "app-db",
        json!({"mode": "adopt", "adopt": {"clusterRef": {"name": "legacy-db"}}}),
    );
    env.wait_for("adopt and Ready", Duration::from_secs(90), |e| {
        e.cnpg_reports_ready(&ns);
        let p = e.postgres(&ns, "app-db").unwrap_or_default();
        (p["status"]["mode"] == "adopt" && p["status"]["phase"] == "Ready")
            .then_some(())
            .ok_or(p["status"].to_string())
    });
    env.wait_gone("the Cluster we emitted", |e| {
        e.get(&clusters, "app-db").is_some()
    });
    env.wait_gone("our CloudNativePG release", |e| {
        e.release("cnpg-system", "cloudnative-pg").is_some()
    });
    let legacy = env
        .get(&clusters, "legacy-db")
        .expect("the adopted Cluster stays");
    assert_eq!(legacy["spec"], legacy_before["spec"]);
    assert!(legacy["metadata"].get("ownerReferences").is_none());
    assert_eq!(
        env.postgres(&ns, "app-db").unwrap()["status"]["connectionSecret"],
        "legacy-db-app"
    );
    assert!(env.events("app-db").iter().any(
        |e| e.starts_with("GarbageCollected: ") && e.contains(&format!("Cluster {ns}/app-db"))
    ));
    op.stop();
}
