//! The license: without one, the free tier limits how many of each kind are
//! looked after (a freed place goes to the next in line) and skips the
//! features outside it; a signed license lifts the limits until it expires,
//! and expiry or a tampered payload brings back the free tier without
//! deleting anything.

use crate::common::*;
use crate::harness::*;
use serde_json::json;
use std::time::Duration;

#[test]
fn without_a_license_the_free_tier_limits_kinds_and_skips_features_and_a_freed_place_is_taken() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-free");
    pg_conn(&env, &ns);
    for name in ["pg-a", "pg-b", "pg-c"] {
        env.create_postgres(&ns, name, external_pg());
    }
    env.wait_phase("PostgresCluster", &ns, "pg-a", "Ready");
    env.wait_phase("PostgresCluster", &ns, "pg-b", "Ready");
    let c = env.wait_phase("PostgresCluster", &ns, "pg-c", "Rejected");
    let licensed = condition_of(&c, "Licensed");
    assert_eq!(licensed["status"], "False");
    assert_eq!(licensed["reason"], "InstanceLimitExceeded");
    assert!(
        licensed["message"]
            .as_str()
            .unwrap()
            .contains("limited to 2"),
        "{licensed}"
    );
    assert!(
        env.events("pg-c")
            .iter()
            .any(|e| e.starts_with("InstanceLimitExceeded: ")),
        "{:?}",
        env.events("pg-c")
    );
    assert_eq!(
        condition_of(&env.postgres(&ns, "pg-a").unwrap(), "Licensed")["status"],
        "True"
    );

    // A feature outside the free tier: nothing is emitted or installed for it.
    env.create(
        "ClickHouseCluster",
        &ns,
        "alt",
        json!({"type": "altinity", "mode": "managed", "managed": {}}),
    );
    let alt = env.wait_phase("ClickHouseCluster", &ns, "alt", "Rejected");
    assert_eq!(condition_of(&alt, "Licensed")["reason"], "LicenseSkipped");
    assert!(alt["status"].get("owned").is_none(), "{alt}");
    assert!(env
        .events("alt")
        .iter()
        .any(|e| e.starts_with("LicenseSkipped: ")));
    assert_eq!(env.secret_value(&ns, "alt-clickhouse", "host"), None);
    assert!(env
        .release("altinity-clickhouse", "altinity-clickhouse-operator")
        .is_none());
    assert!(
        env.release("cert-manager", "cert-manager").is_none(),
        "nothing is needed for it"
    );

    // The oldest goes: the next in line takes its place.
    env.delete_postgres(&ns, "pg-a");
    env.wait_phase("PostgresCluster", &ns, "pg-c", "Ready");
    op.stop();
}

#[test]
fn a_signed_license_lifts_limits_until_it_expires_and_expiry_or_tampering_deletes_nothing() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let key = licenses::key();
    let dir = temp_dir("navique-license");
    let mut opts = options(&env);
    let license_ns = env.namespace("navique-lic");
    opts.namespace = license_ns.clone();
    opts.license_key = Some(
        navique_ai_core_operator::operator::model::licensing::public_key_from_pem(
            &std::fs::read_to_string(licenses::public_pem(&key, &dir)).unwrap(),
        )
        .unwrap(),
    );
    // Long enough for a managed database to become Ready first.
    let lifetime = if env.is_real() { 240 } else { 25 };
    let expires = chrono::Utc::now() + chrono::Duration::seconds(lifetime);
    let payload = json!({"licensee": "Acme", "tier": "enterprise", "expires": expires.to_rfc3339(),
        "limits": {"PostgresCluster": 3}, "features": ["altinity"]});
    licenses::write(&env, &license_ns, &key, &payload, None);
    let op = Operator::start_with(opts);
    let ns = env.namespace("team-lic");
    pg_conn(&env, &ns);
    env.create_postgres(&ns, "pg-1", external_pg());
    env.create_postgres(&ns, "pg-2", external_pg());
    std::thread::sleep(Duration::from_millis(1100)); // creationTimestamp has seconds
    env.create_postgres(&ns, "pg-3", managed());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "ch-conn", "namespace": ns},
        "stringData": {"host": "h", "httpPort": "8123", "nativePort": "9000", "username": "u", "password": "p", "database": "d"}}).to_string());
    env.create(
        "ClickHouseCluster",
        &ns,
        "alt",
        json!({"type": "altinity", "mode": "external", "external": {"connectionSecretRef": {"name": "ch-conn"}}}),
    );
    for name in ["pg-1", "pg-2", "pg-3"] {
        let r = env.wait_phase("PostgresCluster", &ns, name, "Ready");
        assert!(
            condition_of(&r, "Licensed")["message"]
                .as_str()
                .unwrap()
                .contains("licensed to Acme"),
            "{r}"
        );
    }
    env.wait_phase("ClickHouseCluster", &ns, "alt", "Ready");
    assert!(
        chrono::Utc::now() < expires,
        "the managed database became Ready only after the license expired"
    );

    // Expiry with nothing else changing: the free tier; pg-3 (newest) and
    // the altinity one stop being updated; nothing of theirs is deleted.
    let r = env.wait_for(
        "the expiry taking effect",
        Duration::from_secs(lifetime as u64 + 30),
        |e| {
            let r = e.postgres(&ns, "pg-3").unwrap_or_default();
            (r["status"]["phase"] == "Rejected")
                .then_some(r.clone())
                .ok_or(r["status"].to_string())
        },
    );
    assert!(
        condition_of(&r, "Licensed")["message"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{r}"
    );
    env.wait_phase("ClickHouseCluster", &ns, "alt", "Rejected");
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    assert!(
        env.get(&clusters, "pg-3").is_some(),
        "licensing never deletes"
    );
    assert!(
        ours_release(&env, "cnpg-system", "cloudnative-pg"),
        "licensing never uninstalls"
    );
    assert_eq!(env.phase(&ns, "pg-1"), "Ready");
    let expired: Vec<String> = env
        .events("navique-license")
        .into_iter()
        .filter(|e| e.starts_with("LicenseExpired: "))
        .collect();
    assert_eq!(expired.len(), 1, "{expired:?}");

    // A payload changed after signing is the free tier too.
    let later = chrono::Utc::now() + chrono::Duration::days(365);
    let mut forged = payload.clone();
    forged["expires"] = json!(later.to_rfc3339());
    licenses::write(&env, &license_ns, &key, &payload, Some(&forged));
    env.wait_for(
        "the tampered license judged",
        Duration::from_secs(30),
        |e| {
            let r = e.postgres(&ns, "pg-3").unwrap_or_default();
            let m = condition_of(&r, "Licensed")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m.contains("does not match").then_some(()).ok_or(m)
        },
    );
    assert_eq!(env.phase(&ns, "pg-3"), "Rejected");

    // A valid license again: everything is looked after again.
    licenses::write(&env, &license_ns, &key, &forged, None);
    env.wait_phase("PostgresCluster", &ns, "pg-3", "Ready");
    env.wait_phase("ClickHouseCluster", &ns, "alt", "Ready");
    let _ = std::fs::remove_dir_all(&dir);
    op.stop();
}
