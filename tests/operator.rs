//! The operator's rules, one scenario each, on the embedded API server (or
//! the cluster NAVIQUE_TEST_KUBECONFIG names): cluster state afterwards
//! (releases, objects, Capability status, Events) is what is asserted.
//! CloudNativePG never runs here: the tests write the status it would write
//! on its Cluster (`Env::cnpg_reports_ready`).

#[path = "operator/harness.rs"]
mod harness;

use harness::*;
use serde_json::{json, Value};
use std::time::Duration;

const MANAGED: &str = r#"{"mode": "managed", "managed": {"instances": 1}}"#;

fn managed() -> Value {
    serde_json::from_str(MANAGED).unwrap()
}

fn ours_release(env: &Env, ns: &str, name: &str) -> bool {
    env.releases().iter().any(|(n, r, labels, annotations)| {
        n == ns
            && r == name
            && labels.get("status").map(String::as_str) == Some("deployed")
            && labels.get("app.kubernetes.io/managed-by").map(String::as_str) == Some("navique-ai-core-operator")
            && annotations.get("core.navique.com/provenance").map(String::as_str) == Some("owned")
    })
}

fn created_at(env: &Env, ns: &str, name: &str) -> i64 {
    env.releases()
        .into_iter()
        .find(|(n, r, _, _)| n == ns && r == name)
        .and_then(|(_, _, l, _)| l.get("createdAt").and_then(|c| c.parse().ok()))
        .unwrap_or(0)
}

#[test]
fn absent_capabilities_are_installed_prerequisite_first_marked_ours_and_helm_lists_them() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-a");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(ours_release(&env, "cert-manager", "cert-manager"));
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    assert!(created_at(&env, "cert-manager", "cert-manager") <= created_at(&env, "cnpg-system", "cloudnative-pg"));
    let listed = env.helm_list_all();
    assert!(listed.contains(&"cert-manager/cert-manager".to_string()), "{listed:?}");
    assert!(listed.contains(&"cloudnative-pg/cnpg-system".to_string()), "{listed:?}");
    let cluster = env.get(&env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns)), "app-db").expect("the CNPG Cluster");
    assert_eq!(cluster["metadata"]["ownerReferences"][0]["kind"], "PostgresCluster");
    assert_eq!(cluster["metadata"]["labels"]["app.kubernetes.io/managed-by"], "navique-ai-core-operator");
    let pg = env.postgres(&ns, "app-db").unwrap();
    assert_eq!(pg["status"]["connectionSecret"], "app-db-app");
    assert_eq!(pg["status"]["capabilities"][0], json!({"name": "cloudnative-pg", "chartVersion": "0.29.0", "provenance": "owned", "release": "cloudnative-pg", "namespace": "cnpg-system", "ready": true}));
    assert!(pg["metadata"]["finalizers"].as_array().unwrap().contains(&json!("core.navique.com/cleanup")));
    let cap = env.capability("cloudnative-pg");
    assert_eq!(cap["status"]["provenance"], "owned");
    assert_eq!(cap["status"]["consumers"], json!([{"kind": "PostgresCluster", "namespace": ns, "name": "app-db"}]));
    assert_eq!(cap["status"]["installedVersion"], "0.29.0");
    assert!(env.events("cloudnative-pg").iter().any(|e| e.starts_with("Installed: ")), "{:?}", env.events("cloudnative-pg"));
    // Objects of our releases carry the capability label.
    let webhook = env.get(&env.dynamic("apps", "v1", "Deployment", "deployments", Some("cert-manager")), "cert-manager-webhook").unwrap();
    assert_eq!(webhook["metadata"]["labels"]["core.navique.com/capability"], "cert-manager");
    op.stop();
}

#[test]
fn a_cnpg_installed_by_real_helm_under_another_name_is_adopted_not_duplicated() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let chart = shared().unwrap().join("cloudnative-pg-0.29.0.tgz");
    env.helm("postgres-operator", &["install", "my-cnpg", chart.to_str().unwrap(), "{}"]);
    env.track_namespace("postgres-operator");
    let op = Operator::start(&env);
    let ns = env.namespace("team-b");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(env.release("cnpg-system", "cloudnative-pg").is_none(), "no second install");
    let cap = env.capability("cloudnative-pg");
    assert_eq!(cap["status"]["provenance"], "adopted");
    assert_eq!(cap["status"]["release"], json!({"name": "my-cnpg", "namespace": "postgres-operator"}));
    assert_eq!(cap["status"]["installedVersion"], "0.29.0");
    let adopted: Vec<String> = env.events("cloudnative-pg").into_iter().filter(|e| e.starts_with("Adopted: ")).collect();
    assert_eq!(adopted.len(), 1, "{adopted:?}");
    let pg = env.postgres(&ns, "app-db").unwrap();
    assert_eq!(pg["status"]["capabilities"][0]["provenance"], "adopted");
    assert_eq!(pg["status"]["capabilities"][0]["release"], "my-cnpg");
    // The adopted release is untouched: still Helm's revision 1.
    let history = env.helm("postgres-operator", &["history", "my-cnpg"]);
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    op.stop();
}
