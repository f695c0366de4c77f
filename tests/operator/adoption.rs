//! What the operator finds already there: a capability operator installed by
//! someone else, by real Helm under another name or as a controller
//! Deployment with its CRDs (recognised by its labels or its image), is
//! adopted, never installed a second time and never touched; an unrelated
//! workload in the expected namespace is not taken for it; CRDs left by a
//! release that no longer exists are taken over by our install.

use crate::common::*;
use crate::harness::*;
use serde_json::{json, Value};

#[test]
fn a_cnpg_installed_by_real_helm_under_another_name_is_adopted_not_duplicated() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let chart = shared().unwrap().join("cloudnative-pg-0.29.0.tgz");
    env.helm(
        "postgres-operator",
        &["install", "my-cnpg", chart.to_str().unwrap(), "{}"],
    );
    env.track_namespace("postgres-operator");
    let op = Operator::start(&env);
    let ns = env.namespace("team-b");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(
        env.release("cnpg-system", "cloudnative-pg").is_none(),
        "no second install"
    );
    let cap = env.capability("cloudnative-pg");
    assert_eq!(cap["status"]["provenance"], "adopted");
    assert_eq!(
        cap["status"]["release"],
        json!({"name": "my-cnpg", "namespace": "postgres-operator"})
    );
    assert_eq!(cap["status"]["installedVersion"], "0.29.0");
    let adopted: Vec<String> = env
        .events("cloudnative-pg")
        .into_iter()
        .filter(|e| e.starts_with("Adopted: "))
        .collect();
    assert_eq!(adopted.len(), 1, "{adopted:?}");
    let pg = env.postgres(&ns, "app-db").unwrap();
    assert_eq!(pg["status"]["capabilities"][0]["provenance"], "adopted");
    assert_eq!(pg["status"]["capabilities"][0]["release"], "my-cnpg");
    // The adopted release is untouched: still Helm's revision 1.
    let history = env.helm("postgres-operator", &["history", "my-cnpg"]);
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    op.stop();
}

fn cnpg_crds_yaml() -> String {
    let chart = shared().unwrap().join("cloudnative-pg-0.29.0.tgz");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args([
            "template",
            "x",
            chart.to_str().unwrap(),
            "--show-only",
            "templates/crds/crds.yaml",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn controller_deployment(ns: &str, name: &str, labels: Value, image: &str) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "manager", "image": image}]}},
        },
    })
    .to_string()
}

#[test]
fn a_controller_running_anywhere_with_its_crds_is_adopted_by_labels_or_by_image() {
    if shared().is_none() {
        return;
    }
    for (labels, image, matched) in [
        (
            json!({"app.kubernetes.io/name": "cloudnative-pg"}),
            "ghcr.io/cloudnative-pg/cloudnative-pg:1.27.1",
            "identity labels",
        ),
        (
            json!({"app": "db-operator"}),
            "registry.local:5000/mirror/cloudnative-pg/cloudnative-pg:1.27.1",
            "image registry.local:5000/mirror/cloudnative-pg/cloudnative-pg:1.27.1",
        ),
    ] {
        let env = Env::new();
        env.apply_yaml(&cnpg_crds_yaml());
        let ops = env.namespace("dbops");
        env.apply_yaml(&controller_deployment(
            &ops,
            "cnpg-controller-manager",
            labels,
            image,
        ));
        let op = Operator::start(&env);
        let ns = env.namespace("team-c");
        env.create_postgres(&ns, "app-db", managed());
        env.wait_postgres_ready(&ns, "app-db");
        assert!(
            env.release("cnpg-system", "cloudnative-pg").is_none(),
            "no second CNPG"
        );
        let cap = env.capability("cloudnative-pg");
        assert_eq!(cap["status"]["provenance"], "adopted", "{cap}");
        assert_eq!(
            cap["status"]["release"],
            json!({"name": "cnpg-controller-manager", "namespace": ops})
        );
        let adopted = env.events("cloudnative-pg");
        assert!(
            adopted
                .iter()
                .any(|e| e.starts_with("Adopted: ") && e.contains(matched)),
            "{adopted:?}"
        );
        op.stop();
    }
}

#[test]
fn an_unrelated_workload_in_the_expected_namespace_is_not_the_operator() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    env.kubectl(&["create", "namespace", "cnpg-system"]);
    env.track_namespace("cnpg-system");
    env.apply_yaml(&controller_deployment(
        "cnpg-system",
        "web",
        json!({"app": "web"}),
        "nginx:1.27",
    ));
    let op = Operator::start(&env);
    let ns = env.namespace("team-d");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    assert_eq!(
        env.capability("cloudnative-pg")["status"]["provenance"],
        "owned"
    );
    op.stop();
}

#[test]
fn orphan_crds_left_by_an_uninstalled_release_are_taken_over_by_our_install() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let chart = shared().unwrap().join("cloudnative-pg-0.29.0.tgz");
    env.helm(
        "old-ns",
        &["install", "old-cnpg", chart.to_str().unwrap(), "{}"],
    );
    env.track_namespace("old-ns");
    env.helm("old-ns", &["uninstall", "old-cnpg"]);
    let crds = env.dynamic(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        None,
    );
    let left = env
        .get(&crds, "clusters.postgresql.cnpg.io")
        .expect("Helm keeps the CRDs (resource-policy keep)");
    assert_eq!(
        left["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "old-cnpg"
    );
    let op = Operator::start(&env);
    let ns = env.namespace("team-e");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    let now = env.get(&crds, "clusters.postgresql.cnpg.io").unwrap();
    assert_eq!(
        now["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "cloudnative-pg"
    );
    assert_eq!(
        now["metadata"]["annotations"]["meta.helm.sh/release-namespace"],
        "cnpg-system"
    );
    op.stop();
}
