//! Day-2 operations, as a platform team meets them after the first install:
//! the admin's `Capability.spec` (values that upgrade our release once,
//! locked values refused, a spec that survives the operator's restarts,
//! suspend and resume) and the pause annotation on a resource.

use crate::common::*;
use crate::harness::*;
use serde_json::{json, Value};
use std::time::Duration;

/// Puts back the Capabilities' specs as they were, even after a failure
/// (on a shared cluster they outlive the test).
struct SpecGuard<'a> {
    env: &'a Env,
    before: Vec<(String, Value)>,
}

impl<'a> SpecGuard<'a> {
    fn new(env: &'a Env, names: &[&str]) -> SpecGuard<'a> {
        env.wait_operator_crds(Duration::from_secs(60));
        let before = names
            .iter()
            .map(|n| {
                let cap = env.wait_for("the Capability", Duration::from_secs(60), |e| {
                    e.get(&e.ours("Capability", "capabilities", None), n)
                        .ok_or_else(|| "not created yet".to_string())
                });
                (
                    n.to_string(),
                    cap.get("spec").cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
        SpecGuard { env, before }
    }
}

impl Drop for SpecGuard<'_> {
    fn drop(&mut self) {
        for (name, spec) in &self.before {
            set_spec(self.env, name, Value::Null);
            if !spec.is_null() {
                set_spec(self.env, name, spec.clone());
            }
        }
    }
}

/// The admin's edit: a merge patch of the Capability's spec.
fn set_spec(env: &Env, name: &str, spec: Value) {
    let patch = json!({ "spec": spec }).to_string();
    env.kubectl(&["patch", "capability", name, "--type=merge", "-p", &patch]);
}

fn revision(env: &Env, ns: &str, name: &str) -> i64 {
    env.release(ns, name)
        .and_then(|l| l.get("version").and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn capability_condition(env: &Env, name: &str, type_: &str) -> Value {
    condition_of(&env.capability(name), type_)
}

fn cnpg_requests(env: &Env) -> Value {
    let deployments = env.dynamic(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        Some("cnpg-system"),
    );
    env.get(&deployments, "cloudnative-pg")
        .map(|d| d["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn day2_capability_values_upgrade_our_release_once_and_a_locked_value_is_refused() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let _op = Operator::start(&env);
    let _specs = SpecGuard::new(&env, &["cert-manager", "cloudnative-pg"]);
    let ns = env.namespace("day2-values");
    env.create_postgres(&ns, "db", managed());
    env.wait_postgres_ready(&ns, "db");
    let installed = revision(&env, "cnpg-system", "cloudnative-pg");
    assert!(installed >= 1);
    let requests = json!({"cpu": "50m", "memory": "64Mi"});
    set_spec(
        &env,
        "cloudnative-pg",
        json!({"values": {"resources": {"requests": requests}}}),
    );
    env.wait_for("the values in our release", Duration::from_secs(120), |e| {
        let got = cnpg_requests(e);
        (got == requests && revision(e, "cnpg-system", "cloudnative-pg") == installed + 1)
            .then_some(())
            .ok_or(format!("requests {got}"))
    });
    env.wait_for("Configured", Duration::from_secs(30), |e| {
        let c = capability_condition(e, "cloudnative-pg", "Configured");
        (c["status"] == "True" && c["reason"] == "Configured")
            .then_some(())
            .ok_or(c.to_string())
    });
    wait_event(
        &env,
        "cloudnative-pg",
        "Configured: spec.values took effect",
    );
    // An unchanged spec never upgrades again.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        revision(&env, "cnpg-system", "cloudnative-pg"),
        installed + 1
    );

    // A locked value: refused whole, naming the path; the release stays.
    let cert_manager = revision(&env, "cert-manager", "cert-manager");
    set_spec(
        &env,
        "cert-manager",
        json!({"values": {"crds": {"enabled": false}, "replicaCount": 2}}),
    );
    let refused = env.wait_for("the refusal", Duration::from_secs(30), |e| {
        let c = capability_condition(e, "cert-manager", "Configured");
        (c["status"] == "False" && c["reason"] == "Refused")
            .then(|| c["message"].as_str().unwrap_or_default().to_string())
            .ok_or(c.to_string())
    });
    assert!(refused.contains("spec.values.crds.enabled"), "{refused}");
    wait_event(&env, "cert-manager", "Configured: spec.values.crds.enabled");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(revision(&env, "cert-manager", "cert-manager"), cert_manager);
    env.delete_postgres(&ns, "db");
}

#[test]
fn day2_the_admins_capability_spec_survives_operator_restarts() {
    let env = Env::new();
    let op = Operator::start(&env);
    let _specs = SpecGuard::new(&env, &["litellm-operator"]);
    let spec = json!({"suspend": true, "drift": "warn", "values": {"replicaCount": 1}});
    env.apply_yaml(
        &json!({"apiVersion": "core.navique.com/v1alpha1", "kind": "Capability",
            "metadata": {"name": "litellm-operator"}, "spec": spec})
        .to_string(),
    );
    let suspended = |e: &Env| {
        let c = capability_condition(e, "litellm-operator", "Suspended");
        (c["status"] == "True").then_some(()).ok_or(c.to_string())
    };
    env.wait_for("Suspended", Duration::from_secs(30), suspended);
    op.stop();
    let _op = Operator::start(&env);
    std::thread::sleep(Duration::from_secs(2));
    env.wait_for("Suspended again", Duration::from_secs(30), suspended);
    let cap = env.capability("litellm-operator");
    assert_eq!(cap["spec"], spec);
    // The operator's field manager owns the status and its label, no spec field.
    let ours: Vec<&Value> = cap["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["manager"] == "navique-operator")
        .collect();
    assert!(!ours.is_empty());
    for m in ours {
        assert!(m["fieldsV1"].get("f:spec").is_none(), "{m}");
    }
}

#[test]
fn day2_a_suspended_capability_is_not_installed_until_resumed() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let _op = Operator::start(&env);
    let _specs = SpecGuard::new(&env, &["cloudnative-pg"]);
    set_spec(&env, "cloudnative-pg", json!({"suspend": true}));
    let ns = env.namespace("day2-suspend");
    env.create_postgres(&ns, "db", managed());
    env.wait_for(
        "cert-manager, not CloudNativePG",
        Duration::from_secs(120),
        |e| {
            let c = condition_of(&e.capability("cloudnative-pg"), "Progressing");
            (ours_release(e, "cert-manager", "cert-manager") && c["reason"] == "Suspended")
                .then_some(())
                .ok_or(c.to_string())
        },
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(!ours_release(&env, "cnpg-system", "cloudnative-pg"));
    assert_eq!(env.capability("cloudnative-pg")["status"]["needed"], true);
    wait_event(&env, "cloudnative-pg", "Suspended: ");
    set_spec(&env, "cloudnative-pg", json!({"suspend": false}));
    env.wait_postgres_ready(&ns, "db");
    assert!(ours_release(&env, "cnpg-system", "cloudnative-pg"));
    wait_event(&env, "cloudnative-pg", "Resumed: ");
    env.delete_postgres(&ns, "db");
}

#[test]
fn day2_a_paused_postgres_cluster_is_left_alone_and_its_deletion_waits() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let _op = Operator::start(&env);
    let ns = env.namespace("day2-pause");
    env.create_postgres(&ns, "db", managed());
    env.wait_postgres_ready(&ns, "db");
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    let pause = |on: bool| {
        let value = if on {
            "core.navique.com/reconcile=disabled"
        } else {
            "core.navique.com/reconcile-"
        };
        env.kubectl(&[
            "annotate",
            "postgrescluster",
            "db",
            "-n",
            &ns,
            value,
            "--overwrite",
        ]);
    };
    pause(true);
    env.wait_for("Ready reason Suspended", Duration::from_secs(30), |e| {
        let c = condition_of(&e.postgres(&ns, "db").unwrap(), "Ready");
        (c["reason"] == "Suspended")
            .then_some(())
            .ok_or(c.to_string())
    });
    // A spec change is not carried out while paused.
    env.kubectl(&[
        "patch",
        "postgrescluster",
        "db",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"spec": {"managed": {"instances": 3}}}"#,
    ]);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(env.get(&clusters, "db").unwrap()["spec"]["instances"], 1);
    // Its deletion waits, and nothing is collected meanwhile.
    env.kubectl(&["delete", "postgrescluster", "db", "-n", &ns, "--wait=false"]);
    env.wait_for("the deletion held", Duration::from_secs(30), |e| {
        let c = condition_of(&e.postgres(&ns, "db").unwrap_or_default(), "Ready");
        c["message"]
            .as_str()
            .is_some_and(|m| m.contains("deletion waits"))
            .then_some(())
            .ok_or(c.to_string())
    });
    std::thread::sleep(Duration::from_secs(2));
    assert!(env.postgres(&ns, "db").is_some());
    assert!(env.get(&clusters, "db").is_some());
    wait_event(&env, "db", "Suspended: ");
    // Resumed: the deletion goes through.
    pause(false);
    env.wait_for("the PostgresCluster gone", Duration::from_secs(60), |e| {
        e.postgres(&ns, "db")
            .map_or(Ok(()), |_| Err("still there".to_string()))
    });
    assert!(env.get(&clusters, "db").is_none());
}

/// Waits for an Event on `name` starting with `prefix`: Events are written
/// after the status they report, so a test that saw the status may be early.
fn wait_event(env: &Env, name: &str, prefix: &str) {
    env.wait_for(
        &format!("an Event {prefix}"),
        Duration::from_secs(20),
        |e| {
            let events = e.events(name);
            events
                .iter()
                .any(|e| e.starts_with(prefix))
                .then_some(())
                .ok_or(format!("{events:?}"))
        },
    );
}

fn count(env: &Env, name: &str, prefix: &str) -> usize {
    env.events(name)
        .iter()
        .filter(|e| e.starts_with(prefix))
        .count()
}

#[test]
fn day2_the_emitted_cnpg_cluster_deleted_by_hand_comes_back() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let _op = Operator::start(&env);
    let ns = env.namespace("day2-heal-emitted");
    env.create_postgres(&ns, "db", managed());
    env.wait_postgres_ready(&ns, "db");
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    let uid = env.get(&clusters, "db").unwrap()["metadata"]["uid"].clone();
    env.kubectl(&[
        "delete",
        "clusters.postgresql.cnpg.io",
        "db",
        "-n",
        &ns,
        "--wait=false",
    ]);
    let back = env.wait_for("the CNPG Cluster back", Duration::from_secs(20), |e| {
        e.get(&clusters, "db")
            .filter(|c| c["metadata"]["uid"] != uid)
            .ok_or_else(|| "not back yet".to_string())
    });
    assert_eq!(back["spec"]["instances"], 1);
    // The Events follow the write that brought it back.
    env.wait_for(
        "DriftDetected and DriftCorrected",
        Duration::from_secs(20),
        |e| {
            let events = e.events("db");
            let detected = events
                .iter()
                .any(|e| e.starts_with("DriftDetected: Cluster ") && e.contains("(deleted)"));
            let corrected = events
                .iter()
                .any(|e| e.starts_with("DriftCorrected: Cluster "));
            (detected && corrected)
                .then_some(())
                .ok_or(format!("{events:?}"))
        },
    );
    // A field we set changed by hand is put back too.
    env.kubectl(&[
        "patch",
        "clusters.postgresql.cnpg.io",
        "db",
        "-n",
        &ns,
        "--type=merge",
        "-p",
        r#"{"spec": {"instances": 5}}"#,
    ]);
    env.wait_for("instances back to 1", Duration::from_secs(20), |e| {
        let c = e.get(&clusters, "db").unwrap();
        (c["spec"]["instances"] == 1)
            .then_some(())
            .ok_or(c["spec"]["instances"].to_string())
    });
    env.cnpg_reports_ready(&ns);
    env.delete_postgres(&ns, "db");
}

#[test]
fn day2_objects_of_our_cnpg_release_deleted_or_edited_come_back_and_co_writers_are_not_fought() {
    if shared().is_none() || !helm_available() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let _specs = SpecGuard::new(&env, &["cloudnative-pg"]);
    let ns = env.namespace("day2-heal-release");
    env.create_postgres(&ns, "db", managed());
    env.wait_postgres_ready(&ns, "db");
    let revision_before = revision(&env, "cnpg-system", "cloudnative-pg");
    let deployments = env.dynamic(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        Some("cnpg-system"),
    );
    let image = |e: &Env| {
        e.get(&deployments, "cloudnative-pg")
            .map(|d| d["spec"]["template"]["spec"]["containers"][0]["image"].clone())
    };
    let original = image(&env).expect("the CNPG Deployment");
    let corrected_before = count(&env, "cloudnative-pg", "DriftCorrected: ");

    // Deleted: back within seconds.
    let started = std::time::Instant::now();
    env.kubectl(&[
        "delete",
        "deployment",
        "cloudnative-pg",
        "-n",
        "cnpg-system",
        "--wait=false",
    ]);
    env.wait_for("the Deployment back", Duration::from_secs(20), |e| {
        e.get(&deployments, "cloudnative-pg")
            .filter(|d| d["metadata"]["deletionTimestamp"].is_null())
            .map(|_| ())
            .ok_or_else(|| "not back".to_string())
    });
    eprintln!("deleted Deployment back after {:?}", started.elapsed());
    // Its image changed by hand: put back.
    env.kubectl(&[
        "set",
        "image",
        "deployment/cloudnative-pg",
        "-n",
        "cnpg-system",
        "manager=evil.example/cnpg:1",
    ]);
    env.wait_for("the image back", Duration::from_secs(20), |e| {
        (image(e).as_ref() == Some(&original))
            .then_some(())
            .ok_or(format!("{:?}", image(e)))
    });
    // A ClusterRole of the release deleted: back.
    let roles = env.dynamic(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        None,
    );
    env.kubectl(&["delete", "clusterrole", "cloudnative-pg", "--wait=false"]);
    env.wait_for("the ClusterRole back", Duration::from_secs(20), |e| {
        e.get(&roles, "cloudnative-pg")
            .map(|_| ())
            .ok_or_else(|| "not back".to_string())
    });
    // One Event per object (a second correction of one object joins its
    // series), and the metric counts each correction.
    env.wait_for("the corrections reported", Duration::from_secs(10), |e| {
        let n = count(e, "cloudnative-pg", "DriftCorrected: ");
        (n >= corrected_before + 2)
            .then_some(())
            .ok_or(format!("{:?}", e.events("cloudnative-pg")))
    });
    // The metric counts after the Event is written: wait for it too.
    env.wait_for("the corrections counted", Duration::from_secs(10), |_| {
        let metrics = op.metrics.encode();
        [
            "navique_drift_corrections_total{kind=\"Deployment\"} 2",
            "navique_drift_corrections_total{kind=\"ClusterRole\"} 1",
        ]
        .iter()
        .all(|line| metrics.contains(line))
        .then_some(())
        .ok_or(metrics)
    });
    assert_eq!(
        revision(&env, "cnpg-system", "cloudnative-pg"),
        revision_before,
        "a correction is no new revision"
    );

    // An autoscaler's replicas (through scale) and an injected caBundle: not drift.
    let detected = count(&env, "cloudnative-pg", "DriftDetected: ");
    env.kubectl(&[
        "scale",
        "deployment/cloudnative-pg",
        "-n",
        "cnpg-system",
        "--replicas=2",
    ]);
    let webhook = env
        .kubectl(&[
            "get",
            "mutatingwebhookconfigurations",
            "-l",
            "core.navique.com/capability=cloudnative-pg",
            "-o",
            "name",
        ])
        .lines()
        .next()
        .map(str::to_string);
    if let Some(w) = &webhook {
        env.kubectl(&[
            "patch",
            w,
            "--type=json",
            "-p",
            r#"[{"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "Y2EK"}]"#,
        ]);
    }
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        count(&env, "cloudnative-pg", "DriftDetected: "),
        detected,
        "{:?}",
        env.events("cloudnative-pg")
    );
    let after = op.metrics.encode();
    assert!(
        after.contains("navique_drift_corrections_total{kind=\"Deployment\"} 2"),
        "{after}"
    );
    assert!(
        !after.contains("kind=\"MutatingWebhookConfiguration\""),
        "{after}"
    );
    let scaled = env.get(&deployments, "cloudnative-pg").unwrap();
    assert_eq!(
        scaled["spec"]["replicas"], 2,
        "{:#}",
        scaled["metadata"]["managedFields"]
    );
    env.kubectl(&[
        "scale",
        "deployment/cloudnative-pg",
        "-n",
        "cnpg-system",
        "--replicas=1",
    ]);

    // warn: reported, not corrected; off: nothing.
    set_spec(&env, "cloudnative-pg", json!({"drift": "warn"}));
    env.wait_for("drift: warn", Duration::from_secs(20), |e| {
        let c = capability_condition(e, "cloudnative-pg", "Configured");
        c["message"]
            .as_str()
            .is_some_and(|m| m.contains("drift: warn"))
            .then_some(())
            .ok_or(c.to_string())
    });
    env.kubectl(&["delete", "clusterrole", "cloudnative-pg", "--wait=false"]);
    env.wait_for("Drifted", Duration::from_secs(20), |e| {
        let c = capability_condition(e, "cloudnative-pg", "Drifted");
        (c["status"] == "True"
            && c["message"]
                .as_str()
                .unwrap_or_default()
                .contains("ClusterRole"))
        .then_some(())
        .ok_or(c.to_string())
    });
    std::thread::sleep(Duration::from_secs(2));
    assert!(env.get(&roles, "cloudnative-pg").is_none());
    // off: not even reported.
    set_spec(&env, "cloudnative-pg", json!({"drift": "off"}));
    env.wait_for("drift: off", Duration::from_secs(20), |e| {
        let c = capability_condition(e, "cloudnative-pg", "Configured");
        c["message"]
            .as_str()
            .is_some_and(|m| m.contains("drift: off"))
            .then_some(())
            .ok_or(c.to_string())
    });
    let detected = count(&env, "cloudnative-pg", "DriftDetected: ");
    let services = env.dynamic("", "v1", "Service", "services", Some("cnpg-system"));
    let service = env
        .kubectl(&[
            "get",
            "services",
            "-n",
            "cnpg-system",
            "-l",
            "core.navique.com/capability=cloudnative-pg",
            "-o",
            "name",
        ])
        .lines()
        .next()
        .map(|l| l.trim_start_matches("service/").to_string())
        .expect("a Service of our CNPG release");
    env.kubectl(&[
        "delete",
        "service",
        &service,
        "-n",
        "cnpg-system",
        "--wait=false",
    ]);
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        env.get(&services, &service).is_none(),
        "put back with drift: off"
    );
    assert_eq!(
        count(&env, "cloudnative-pg", "DriftDetected: "),
        detected,
        "{:?}",
        env.events("cloudnative-pg")
    );
    // Back to correct: healed at once, both.
    set_spec(&env, "cloudnative-pg", json!({"drift": "correct"}));
    env.wait_for(
        "the ClusterRole and the Service back",
        Duration::from_secs(20),
        |e| {
            (e.get(&roles, "cloudnative-pg").is_some() && e.get(&services, &service).is_some())
                .then_some(())
                .ok_or_else(|| "not back".to_string())
        },
    );

    // Converged with the drift watches on: no request beyond watches and the lease.
    let mut last = (
        op.metrics.api_requests_beyond_watches(),
        std::time::Instant::now(),
    );
    env.wait_for("the operator to settle", Duration::from_secs(60), |_| {
        let now = op.metrics.api_requests_beyond_watches();
        if now != last.0 {
            last = (now, std::time::Instant::now());
        }
        (last.1.elapsed() >= Duration::from_secs(2))
            .then_some(())
            .ok_or(format!("{now} requests"))
    });
    let settled = op.metrics.api_requests_beyond_watches();
    std::thread::sleep(Duration::from_secs(5));
    let idle = op.metrics.api_requests_beyond_watches() - settled;
    eprintln!("idle 5 s with drift watches on: {idle} requests beyond watches");
    assert_eq!(
        idle, 0,
        "idle, the operator made requests beyond its watches"
    );
    env.delete_postgres(&ns, "db");
}

#[test]
fn day2_objects_of_a_workload_release_deleted_or_edited_come_back_without_a_new_revision() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("day2-heal-workload");
    meilisearch_ready(&env, &ns, "a-key");
    let release = "meilisearch-search";
    let revision_before = revision(&env, &ns, release);
    // Every object of the release carries the label the drift watches select.
    let selector = format!("core.navique.com/workload={release}");
    let labelled = env.kubectl(&[
        "get",
        "service,configmap,statefulset",
        "-n",
        &ns,
        "-l",
        &selector,
        "-o",
        "name",
    ]);
    for object in [
        "service/meilisearch-search",
        "statefulset.apps/meilisearch-search",
    ] {
        assert!(labelled.contains(object), "{object} not in {labelled}");
    }

    // Deleted: back, as a new object.
    let services = env.dynamic("", "v1", "Service", "services", Some(&ns));
    let uid = env.get(&services, release).unwrap()["metadata"]["uid"].clone();
    env.kubectl(&["delete", "service", release, "-n", &ns, "--wait=false"]);
    env.wait_for("the Service back", Duration::from_secs(20), |e| {
        e.get(&services, release)
            .filter(|s| s["metadata"]["uid"] != uid)
            .map(|_| ())
            .ok_or_else(|| "not back".to_string())
    });
    // A field we applied changed by hand: put back.
    let sets = env.dynamic("apps", "v1", "StatefulSet", "statefulsets", Some(&ns));
    let image = |e: &Env| {
        e.get(&sets, release)
            .map(|s| s["spec"]["template"]["spec"]["containers"][0]["image"].clone())
    };
    let original = image(&env).expect("the StatefulSet");
    env.kubectl(&[
        "set",
        "image",
        &format!("statefulset/{release}"),
        "-n",
        &ns,
        "meilisearch=evil.example/meili:1",
    ]);
    env.wait_for("the image back", Duration::from_secs(20), |e| {
        (image(e).as_ref() == Some(&original))
            .then_some(())
            .ok_or(format!("{:?}", image(e)))
    });
    wait_event(&env, "search", "DriftCorrected: Service ");
    wait_event(&env, "search", "DriftCorrected: StatefulSet ");
    assert!(
        count(&env, "search", "DriftDetected: ") >= 2,
        "{:?}",
        env.events("search")
    );
    env.wait_for("the corrections counted", Duration::from_secs(10), |_| {
        let metrics = op.metrics.encode();
        [
            "navique_drift_corrections_total{kind=\"Service\"} 1",
            "navique_drift_corrections_total{kind=\"StatefulSet\"} 1",
        ]
        .iter()
        .all(|line| metrics.contains(line))
        .then_some(())
        .ok_or(metrics)
    });
    assert_eq!(
        revision(&env, &ns, release),
        revision_before,
        "a correction is no new revision"
    );

    env.delete("MeilisearchInstance", &ns, "search");
    env.wait_gone("the instance", |e| {
        e.resource("MeilisearchInstance", &ns, "search").is_some()
    });
    assert!(env.release(&ns, release).is_none());
}

#[test]
fn day2_an_adopted_capability_is_never_configured_or_healed_and_bad_specs_are_refused_by_the_schema(
) {
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
    let _op = Operator::start(&env);
    let _specs = SpecGuard::new(&env, &["cloudnative-pg"]);
    let ns = env.namespace("day2-adopted");
    env.create_postgres(&ns, "db", managed());
    env.wait_postgres_ready(&ns, "db");
    assert_eq!(
        env.capability("cloudnative-pg")["status"]["provenance"],
        "adopted"
    );

    // What the CRD's schema refuses never reaches the operator; kubectl
    // names the field.
    for (spec, field) in [
        (json!({"drift": "sometimes"}), "spec.drift"),
        (json!({"values": "replicaCount=2"}), "spec.values"),
        (json!({"suspend": "yes"}), "spec.suspend"),
    ] {
        let patch = json!({ "spec": spec }).to_string();
        let (ok, _, err) = env.kubectl_result(
            &[
                "patch",
                "capability",
                "cloudnative-pg",
                "--type=merge",
                "-p",
                &patch,
            ],
            None,
        );
        assert!(!ok && err.contains(field), "{spec}: {err}");
    }

    // Values and drift on an adopted capability: a condition says they have
    // no effect; Helm's release stays at its revision.
    set_spec(
        &env,
        "cloudnative-pg",
        json!({"values": {"replicaCount": 2}, "drift": "correct"}),
    );
    env.wait_for("Configured NotOurs", Duration::from_secs(30), |e| {
        let c = capability_condition(e, "cloudnative-pg", "Configured");
        (c["status"] == "False" && c["reason"] == "NotOurs")
            .then_some(())
            .ok_or(c.to_string())
    });
    // An object of the adopted release deleted: not ours to put back.
    let role = env
        .kubectl(&[
            "get",
            "clusterroles",
            "-l",
            "app.kubernetes.io/instance=my-cnpg",
            "-o",
            "name",
        ])
        .lines()
        .next()
        .map(str::to_string)
        .expect("a ClusterRole of the adopted release");
    env.kubectl(&["delete", &role, "--wait=false"]);
    std::thread::sleep(Duration::from_secs(3));
    let (still, _, _) = env.kubectl_result(&["get", &role], None);
    assert!(!still, "{role} put back, but it is not ours");
    assert_eq!(
        count(&env, "cloudnative-pg", "DriftDetected: "),
        0,
        "{:?}",
        env.events("cloudnative-pg")
    );
    let history = env.helm("postgres-operator", &["history", "my-cnpg"]);
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    env.delete_postgres(&ns, "db");
}
