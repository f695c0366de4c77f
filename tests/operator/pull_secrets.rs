//! `--image-pull-secret`: each named Secret of the operator's namespace is
//! copied (ours, labelled, kept current) into every namespace where we
//! install a release or emit objects, and deleted with the last of them
//! there; every pod template we apply and every emitted object whose kind
//! takes them lists them. A named Secret that is missing or of the wrong
//! type is a condition naming it; nothing else stops.

use crate::common::*;
use crate::harness::*;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{json, Value};
use std::time::Duration;

const DOCKER: &str = "kubernetes.io/dockerconfigjson";

fn write_secret(env: &Env, ns: &str, name: &str, type_: &str, auth: &str) {
    let data = match type_ {
        DOCKER => {
            json!({".dockerconfigjson": json!({"auths": {"mirror.navique.test": {"auth": auth}}}).to_string()})
        }
        _ => json!({"token": auth}),
    };
    let body = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
        "type": type_, "stringData": data});
    let api: Api<Secret> = Api::namespaced(env.client.clone(), ns);
    env.block(api.patch(
        name,
        &PatchParams::apply("test").force(),
        &Patch::Apply(&body),
    ))
    .expect("write the Secret");
}

fn delete_secret(env: &Env, ns: &str, name: &str) {
    let api: Api<Secret> = Api::namespaced(env.client.clone(), ns);
    let _ = env.block(api.delete(name, &Default::default()));
    env.wait_gone(&format!("Secret {ns}/{name}"), |e| {
        secret(e, ns, name).is_some()
    });
}

fn secret(env: &Env, ns: &str, name: &str) -> Option<Value> {
    let api: Api<Secret> = Api::namespaced(env.client.clone(), ns);
    env.block(api.get_opt(name))
        .expect("read the Secret")
        .map(|s| serde_json::to_value(s).unwrap())
}

/// Our copy of `name` in `ns`, once it holds `source`'s data.
fn wait_copy(env: &Env, source_ns: &str, ns: &str, name: &str) -> Value {
    env.wait_for(
        &format!("our copy of {name} in {ns}"),
        Duration::from_secs(60),
        |e| {
            let source = secret(e, source_ns, name).ok_or("no source")?;
            let copy = secret(e, ns, name).ok_or("no copy")?;
            (copy["data"] == source["data"])
                .then_some(copy.clone())
                .ok_or(format!("{copy}"))
        },
    )
}

fn pull_secret_names(spec: &Value) -> Vec<String> {
    spec["imagePullSecrets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str().map(str::to_string))
        .collect()
}

/// `ImagePullSecrets` of a resource or Capability, once `want(condition)`.
fn wait_condition(
    env: &Env,
    what: &str,
    read: impl Fn(&Env) -> Option<Value>,
    want: impl Fn(&Value) -> bool,
) -> Value {
    env.wait_for(what, Duration::from_secs(60), |e| {
        let c = condition_of(&read(e).ok_or("gone")?, "ImagePullSecrets");
        want(&c).then_some(c.clone()).ok_or(format!("{c}"))
    })
}

#[test]
fn pull_secrets_copied_injected_and_removed() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let mut opts = options(&env);
    opts.namespace = env.namespace("navique-pull");
    let suffix = &opts.namespace[opts.namespace.len() - 6..];
    let (good, wrong) = (format!("mirror-{suffix}"), format!("opaque-{suffix}"));
    write_secret(&env, &opts.namespace, &good, DOCKER, "Zmlyc3Q=");
    write_secret(
        &env,
        &opts.namespace,
        &wrong,
        "Opaque",
        "not-a-docker-config",
    );
    opts.image_pull_secrets = vec![good.clone(), wrong.clone()];
    let op_ns = opts.namespace.clone();
    let op = Operator::start_with(opts);
    let ns = env.namespace("team-pull");
    env.create_postgres(&ns, "app-db", managed());

    // Copied where we emit (never the wrong-typed one), labelled as ours.
    let copy = wait_copy(&env, &op_ns, &ns, &good);
    assert_eq!(copy["type"], DOCKER);
    assert_eq!(
        copy["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "navique-ai-core-operator"
    );
    assert!(secret(&env, &ns, &wrong).is_none());

    // Set on the CNPG Cluster, and the resource still becomes Ready.
    env.wait_postgres_ready(&ns, "app-db");
    let clusters = env.dynamic("postgresql.cnpg.io", "v1", "Cluster", "clusters", Some(&ns));
    let cluster = env.get(&clusters, "app-db").expect("the CNPG Cluster");
    assert_eq!(
        pull_secret_names(&cluster["spec"]),
        [good.clone(), wrong.clone()]
    );

    // A workload release of ours in the same namespace: its pod templates too.
    meilisearch_ready(&env, &ns, "a-master-key");
    let sets = env.dynamic("apps", "v1", "StatefulSet", "statefulsets", Some(&ns));
    let list = env.block(sets.list(&Default::default())).unwrap();
    assert!(!list.items.is_empty());
    for s in list.items {
        let spec = &s.data["spec"]["template"]["spec"];
        assert_eq!(
            pull_secret_names(spec),
            [good.clone(), wrong.clone()],
            "{:?}",
            s.metadata.name
        );
    }

    // The wrong type: a condition naming it, on the resource and on our
    // capabilities.
    let c = wait_condition(
        &env,
        "the wrong type reported",
        |e| e.postgres(&ns, "app-db"),
        |c| c["status"] == "False",
    );
    assert_eq!(c["reason"], "PullSecretInvalid");
    assert!(c["message"].as_str().unwrap().contains(&wrong), "{c}");
    for capability in ["cert-manager", "cloudnative-pg"] {
        if env.capability(capability)["status"]["provenance"] != "owned" {
            continue; // adopted on a real cluster: not ours to copy into
        }
        let c = wait_condition(
            &env,
            capability,
            |e| Some(e.capability(capability)),
            |c| c["status"] == "False",
        );
        assert!(c["message"].as_str().unwrap().contains(&wrong), "{c}");
    }

    // Copied into our releases' namespaces; in every pod template we applied.
    let owned_cm = env.capability("cert-manager")["status"]["provenance"] == "owned";
    if owned_cm {
        wait_copy(&env, &op_ns, "cert-manager", &good);
        let deployments = env.dynamic(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            Some("cert-manager"),
        );
        let list = env.block(deployments.list(&Default::default())).unwrap();
        assert!(list.items.len() >= 3);
        for d in list.items {
            let spec = &d.data["spec"]["template"]["spec"];
            assert_eq!(
                pull_secret_names(spec),
                [good.clone(), wrong.clone()],
                "{:?}",
                d.metadata.name
            );
        }
    }

    // The source changes: so do the copies. Fixed: the condition clears.
    write_secret(&env, &op_ns, &good, DOCKER, "c2Vjb25k");
    wait_copy(&env, &op_ns, &ns, &good);
    delete_secret(&env, &op_ns, &wrong);
    write_secret(&env, &op_ns, &wrong, DOCKER, "dGhpcmQ=");
    let c = wait_condition(
        &env,
        "the condition cleared",
        |e| e.postgres(&ns, "app-db"),
        |c| c["status"] == "True",
    );
    assert_eq!(c["reason"], "Copied");
    wait_copy(&env, &op_ns, &ns, &wrong);

    // A missing one: a condition naming it, never a crash.
    delete_secret(&env, &op_ns, &wrong);
    let c = wait_condition(
        &env,
        "the missing one reported",
        |e| e.postgres(&ns, "app-db"),
        |c| c["reason"] == "PullSecretMissing",
    );
    assert!(c["message"].as_str().unwrap().contains(&wrong), "{c}");
    assert_eq!(env.phase(&ns, "app-db"), "Ready");

    // A Secret of that name we do not own is never overwritten.
    let mine = env.namespace("team-own");
    write_secret(&env, &mine, &good, DOCKER, "dGhlaXJz");
    env.create_postgres(&mine, "other-db", managed());
    let c = wait_condition(
        &env,
        "someone else's Secret reported",
        |e| e.postgres(&mine, "other-db"),
        |c| {
            c["message"]
                .as_str()
                .is_some_and(|m| m.contains("not our copy"))
        },
    );
    assert_eq!(c["status"], "False");
    let theirs = secret(&env, &mine, &good).unwrap();
    assert!(theirs["metadata"]["labels"]["app.kubernetes.io/managed-by"].is_null());

    // Gone with the last of ours in the namespace (someone else's stays).
    env.delete_postgres(&ns, "app-db");
    env.delete_postgres(&mine, "other-db");
    env.delete("MeilisearchInstance", &ns, "search");
    env.wait_gone("our copy in the emptied namespace", |e| {
        secret(e, &ns, &good).is_some()
    });
    assert!(secret(&env, &mine, &good).is_some());
    if owned_cm {
        env.wait_gone("our copy with our cert-manager release", |e| {
            secret(e, "cert-manager", &good).is_some()
        });
    }
    op.stop();
}

#[test]
fn pull_secrets_given_later_reach_our_existing_releases_by_one_upgrade() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let mut opts = options(&env);
    opts.namespace = env.namespace("navique-pull-later");
    let suffix = &opts.namespace[opts.namespace.len() - 6..];
    let good = format!("later-{suffix}");
    write_secret(&env, &opts.namespace, &good, DOCKER, "Zmlyc3Q=");
    let op = Operator::start_with(opts.clone());
    let ns = env.namespace("team-pull-later");
    env.create_postgres(&ns, "app-db", managed());
    env.wait_postgres_ready(&ns, "app-db");
    if env.capability("cloudnative-pg")["status"]["provenance"] != "owned" {
        op.stop();
        env.delete_postgres(&ns, "app-db");
        return; // adopted on a real cluster: not ours to upgrade
    }
    let version = |e: &Env| -> i64 {
        e.release("cnpg-system", "cloudnative-pg")
            .and_then(|l| l.get("version").and_then(|v| v.parse().ok()))
            .unwrap_or(0)
    };
    let before = version(&env);
    op.stop();

    // The operator restarted with the flag: one upgrade, and its pods get it.
    opts.image_pull_secrets = vec![good.clone()];
    let op = Operator::start_with(opts);
    let deployments = env.dynamic(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        Some("cnpg-system"),
    );
    env.wait_for(
        "the CNPG Deployment with the pull secret",
        Duration::from_secs(60),
        |e| {
            let d = e
                .get(&deployments, "cloudnative-pg")
                .ok_or("no Deployment")?;
            let names = pull_secret_names(&d["spec"]["template"]["spec"]);
            (names == [good.clone()])
                .then_some(())
                .ok_or(format!("{names:?}"))
        },
    );
    env.wait_for("revision + 1", Duration::from_secs(30), |e| {
        (version(e) == before + 1)
            .then_some(())
            .ok_or(format!("revision {}", version(e)))
    });
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(version(&env), before + 1, "upgraded once");
    env.delete_postgres(&ns, "app-db");
    drop(op);
}
