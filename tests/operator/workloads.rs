//! The workload kinds on top of the datastores: a Gateway (LiteLLM) waits for
//! its database and follows its models and references; SecretsManagement
//! connects a vault, and a vault source becomes an ExternalSecret of ours;
//! ChatUI, MeilisearchInstance and Observability (Langfuse) are releases of
//! ours that follow their spec and references, are upgraded only when those
//! change, and go with their resource.

use crate::common::*;
use crate::harness::*;
use serde_json::{json, Value};
use std::time::Duration;

fn env_var<'a>(proxy: &'a Value, name: &str) -> Option<&'a Value> {
    proxy["spec"]["env"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == name)
}

/// The LiteLLM operator never runs here: the test writes the Ready
/// condition it would write on the LiteLLMProxy (`Env::litellm_reports_ready`).
#[test]
fn a_gateway_waits_for_its_database_then_follows_its_models_and_reference() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-gw");
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "litellm-master", "namespace": ns},
        "stringData": {"key": "sk-master-not-logged"}}).to_string());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "openai", "namespace": ns},
        "stringData": {"api-key": "sk-openai-not-logged"}}).to_string());
    let gateway = |pg: &str, models: Value| {
        json!({"postgresClusterRef": {"name": pg}, "masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}},
               "models": models})
    };
    let two = json!([
        {"name": "gpt-4o", "model": "openai/gpt-4o", "apiKey": {"secretKeyRef": {"name": "openai", "key": "api-key"}}},
        {"name": "llama3", "model": "ollama/llama3", "apiBase": "http://ollama:11434"}]);
    env.create("Gateway", &ns, "team-gw", gateway("app-db", two.clone()));
    let g = env.wait_for(
        "the Gateway waiting for its database",
        Duration::from_secs(30),
        |e| {
            let g = e.resource("Gateway", &ns, "team-gw").unwrap_or_default();
            let m = condition_of(&g, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m.contains(&format!("PostgresCluster {ns}/app-db does not exist"))
                .then_some(g.clone())
                .ok_or(g["status"].to_string())
        },
    );
    assert_eq!(g["status"]["phase"], "Pending");
    assert!(env
        .events("team-gw")
        .iter()
        .any(|e| e.starts_with("Waiting: ") && e.contains("app-db")));
    assert!(
        env.release("litellm-operator-system", "litellm-operator")
            .is_none()
            || env.is_real()
    );

    env.create_postgres(&ns, "app-db", managed());
    let g = env.wait_phase("Gateway", &ns, "team-gw", "Ready");
    assert_eq!(
        g["status"]["endpoint"],
        format!("http://team-gw.{ns}.svc:4000")
    );
    assert!(ours_release(
        &env,
        "litellm-operator-system",
        "litellm-operator"
    ));
    let proxies = env.dynamic(
        "litellm.home-operations.com",
        "v1alpha1",
        "LiteLLMProxy",
        "litellmproxies",
        Some(&ns),
    );
    let models = env.dynamic(
        "litellm.home-operations.com",
        "v1alpha1",
        "LiteLLMModel",
        "litellmmodels",
        Some(&ns),
    );
    let proxy = env.get(&proxies, "team-gw").expect("the proxy");
    assert_eq!(proxy["spec"]["applyMode"], "api");
    assert_eq!(
        env_var(&proxy, "DATABASE_PASSWORD").unwrap()["valueFrom"]["secretKeyRef"],
        json!({"name": "app-db-app", "key": "password"})
    );
    assert!(
        !proxy.to_string().contains("not-logged"),
        "secret values never reach the proxy's spec"
    );
    let gpt = env
        .get(&models, "team-gw-gpt-4o")
        .expect("one model per entry");
    assert_eq!(
        gpt["spec"]["params"]["apiKeyRef"],
        json!({"name": "openai", "key": "api-key"})
    );
    assert!(env.get(&models, "team-gw-llama3").is_some());

    // A model dropped from the list: its LiteLLMModel goes.
    pg_conn(&env, &ns);
    env.create_postgres(&ns, "other-db", external_pg());
    env.wait_postgres_ready(&ns, "other-db");
    env.create(
        "Gateway",
        &ns,
        "team-gw",
        gateway("other-db", json!([two[0]])),
    );
    env.wait_gone("the dropped model", |e| {
        e.get(&models, "team-gw-llama3").is_some()
    });
    // The Event follows the deletion (it is recorded once the delete went
    // through), so a reader that saw the object go may be a moment early.
    env.wait_for("the GarbageCollected Event", Duration::from_secs(30), |e| {
        let events = e.events("team-gw");
        events
            .iter()
            .any(|e| e.starts_with("GarbageCollected: ") && e.contains("LiteLLMModel"))
            .then_some(())
            .ok_or_else(|| format!("{events:?}"))
    });
    // The reference switched: the proxy's database is the other one's.
    env.wait_for(
        "the proxy on the other database",
        Duration::from_secs(30),
        |e| {
            let p = e.get(&proxies, "team-gw").unwrap_or_default();
            let secret = env_var(&p, "DATABASE_PASSWORD")
                .map(|v| v["valueFrom"]["secretKeyRef"]["name"].clone());
            (secret == Some(json!("pg-conn")))
                .then_some(())
                .ok_or(p["spec"]["env"].to_string())
        },
    );
    assert!(env.get(&models, "team-gw-gpt-4o").is_some());

    env.delete("Gateway", &ns, "team-gw");
    env.wait_gone("the Gateway", |e| {
        e.resource("Gateway", &ns, "team-gw").is_some()
    });
    assert!(env.get(&proxies, "team-gw").is_none());
    assert!(env.get(&models, "team-gw-gpt-4o").is_none());
    env.wait_gone("our LiteLLM operator release", |e| {
        e.release("litellm-operator-system", "litellm-operator")
            .is_some()
    });
    op.stop();
}

/// external-secrets never runs here: the test writes what it would (the
/// stores' and ExternalSecrets' Ready condition, and each target Secret).
#[test]
fn secrets_management_connects_a_vault_and_a_vault_source_becomes_an_external_secret() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &["SecretsManagement"]));
    let ns = env.namespace("team-vault");
    let store = format!("corp-{:06x}", rand::random::<u32>() & 0xffffff);
    env.create(
        "Gateway",
        &ns,
        "team-gw",
        json!({"masterKey": {"vault": {"store": store, "path": "ai/litellm", "property": "master"}}, "models": []}),
    );
    env.wait_for(
        "the Gateway waiting for its store",
        Duration::from_secs(30),
        |e| {
            let g = e.resource("Gateway", &ns, "team-gw").unwrap_or_default();
            let m = condition_of(&g, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m.contains(&format!("SecretsManagement {store}"))
                .then_some(())
                .ok_or(g["status"].to_string())
        },
    );

    env.create(
        "SecretsManagement",
        "",
        &store,
        json!({"vault": {"server": "https://vault.example:8200", "path": "secret",
                         "auth": {"kubernetes": {"mountPath": "kubernetes", "role": "navique"}}}}),
    );
    let sm = env.wait_phase("SecretsManagement", "", &store, "Ready");
    assert_eq!(sm["status"]["store"], format!("navique-{store}"));
    assert!(ours_release(&env, "external-secrets", "external-secrets"));
    let stores = env.dynamic(
        "external-secrets.io",
        "v1",
        "ClusterSecretStore",
        "clustersecretstores",
        None,
    );
    let cs = env
        .get(&stores, &format!("navique-{store}"))
        .expect("the store");
    assert_eq!(
        cs["spec"]["provider"]["vault"]["auth"]["kubernetes"]["role"],
        "navique"
    );

    env.wait_phase("Gateway", &ns, "team-gw", "Ready");
    let externals = env.dynamic(
        "external-secrets.io",
        "v1",
        "ExternalSecret",
        "externalsecrets",
        Some(&ns),
    );
    let es = env
        .get(&externals, "team-gw-master-key")
        .expect("an ExternalSecret of ours");
    assert_eq!(
        es["spec"]["secretStoreRef"]["name"],
        format!("navique-{store}")
    );
    assert_eq!(
        es["spec"]["data"][0]["remoteRef"],
        json!({"key": "ai/litellm", "property": "master"})
    );
    let proxies = env.dynamic(
        "litellm.home-operations.com",
        "v1alpha1",
        "LiteLLMProxy",
        "litellmproxies",
        Some(&ns),
    );
    let proxy = env.get(&proxies, "team-gw").unwrap();
    assert_eq!(
        env_var(&proxy, "LITELLM_MASTER_KEY").unwrap()["valueFrom"]["secretKeyRef"],
        json!({"name": "team-gw-master-key", "key": "value"})
    );

    env.delete("Gateway", &ns, "team-gw");
    env.wait_gone("the Gateway", |e| {
        e.resource("Gateway", &ns, "team-gw").is_some()
    });
    assert!(env.get(&externals, "team-gw-master-key").is_none());
    env.delete("SecretsManagement", "", &store);
    env.wait_gone("the SecretsManagement", |e| {
        e.resource("SecretsManagement", "", &store).is_some()
    });
    assert!(env.get(&stores, &format!("navique-{store}")).is_none());
    env.wait_gone("our external-secrets release", |e| {
        e.release("external-secrets", "external-secrets").is_some()
    });
    op.stop();
}

fn release_record(
    env: &Env,
    ns: &str,
    name: &str,
) -> Option<navique_ai_core_operator::release::Release> {
    let storage = navique_ai_core_operator::release::storage::Storage::new(env.client.clone(), ns);
    env.block(storage.last(name)).expect("read the release")
}

#[test]
fn workload_releases_follow_their_spec_and_references_and_go_with_their_resource() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start(&env);
    let ns = env.namespace("team-wl");
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "litellm-master", "namespace": ns},
        "stringData": {"key": "sk-master"}}).to_string());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "meili", "namespace": ns},
        "stringData": {"MEILI_MASTER_KEY": "meili-master"}}).to_string());
    env.create("ChatUI", &ns, "web", json!({"gatewayRef": {"name": "team-gw"}, "values": {"envVars": {"PUBLIC_APP_NAME": "Navique"}}}));
    env.wait_for(
        "the ChatUI waiting for its Gateway",
        Duration::from_secs(30),
        |e| {
            let c = e.resource("ChatUI", &ns, "web").unwrap_or_default();
            let m = condition_of(&c, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            m.contains(&format!("Gateway {ns}/team-gw does not exist"))
                .then_some(())
                .ok_or(c["status"].to_string())
        },
    );
    assert!(release_record(&env, &ns, "chat-ui-web").is_none());
    env.create("Gateway", &ns, "team-gw", json!({"masterKey": {"secretKeyRef": {"name": "litellm-master", "key": "key"}}, "models": []}));
    env.wait_phase("Gateway", &ns, "team-gw", "Ready");
    let c = env.wait_phase("ChatUI", &ns, "web", "Ready");
    assert_eq!(c["status"]["release"]["name"], "chat-ui-web");
    assert_eq!(c["status"]["release"]["revision"], 1);
    assert_eq!(c["status"]["release"]["chartVersion"], "0.0.1-latest");
    assert!(ours_release(&env, &ns, "chat-ui-web"));
    let rel = release_record(&env, &ns, "chat-ui-web").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(
        values["envVars"]["OPENAI_BASE_URL"],
        format!("http://team-gw.{ns}.svc:4000/v1")
    );
    assert_eq!(values["envVars"]["PUBLIC_APP_NAME"], "Navique");
    assert_eq!(
        values["extraEnv"][0]["valueFrom"]["secretKeyRef"]["name"],
        "litellm-master"
    );
    let deployments = env.dynamic("apps", "v1", "Deployment", "deployments", Some(&ns));
    let list = env.block(deployments.list(&Default::default())).unwrap();
    let d = list
        .items
        .iter()
        .find(|d| {
            d.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.contains("chat-ui"))
        })
        .expect("chat-ui's Deployment");
    assert_eq!(
        d.metadata.annotations.as_ref().unwrap()["core.navique.com/owner"],
        format!("ChatUI/{ns}/web")
    );

    // Nothing changed: no new revision, however often it is looked at.
    for i in 0..3 {
        env.kubectl(&[
            "annotate",
            "chatuis.core.navique.com",
            "web",
            "-n",
            &ns,
            &format!("poke={i}"),
            "--overwrite",
        ]);
    }
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(release_record(&env, &ns, "chat-ui-web").unwrap().version, 1);
    // Changed values: an upgrade.
    env.create("ChatUI", &ns, "web", json!({"gatewayRef": {"name": "team-gw"}, "replicas": 2, "values": {"envVars": {"PUBLIC_APP_NAME": "Navique"}}}));
    env.wait_for("the upgrade", Duration::from_secs(60), |e| {
        let c = e.resource("ChatUI", &ns, "web").unwrap_or_default();
        (c["status"]["release"]["revision"] == 2 && c["status"]["phase"] == "Ready")
            .then_some(())
            .ok_or(c["status"].to_string())
    });
    assert!(
        env.events("web")
            .iter()
            .any(|e| e.starts_with("Upgraded: ")),
        "{:?}",
        env.events("web")
    );

    env.create("MeilisearchInstance", &ns, "search", json!({"masterKey": {"secretKeyRef": {"name": "meili", "key": "MEILI_MASTER_KEY"}}, "persistence": {"size": "5Gi"}}));
    let m = env.wait_phase("MeilisearchInstance", &ns, "search", "Ready");
    assert_eq!(m["status"]["release"]["name"], "meilisearch-search");
    let rel = release_record(&env, &ns, "meilisearch-search").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(values["auth"]["existingMasterKeySecret"], "meili");
    assert!(
        !rel.manifest.contains("meili-master"),
        "the key's value is never in the release"
    );

    env.delete("ChatUI", &ns, "web");
    env.wait_gone("the ChatUI", |e| e.resource("ChatUI", &ns, "web").is_some());
    assert!(
        release_record(&env, &ns, "chat-ui-web").is_none(),
        "uninstalled"
    );
    assert!(env
        .events("web")
        .iter()
        .any(|e| e.starts_with("Uninstalled: ")));
    env.delete("MeilisearchInstance", &ns, "search");
    env.wait_gone("the MeilisearchInstance", |e| {
        e.resource("MeilisearchInstance", &ns, "search").is_some()
    });
    assert!(release_record(&env, &ns, "meilisearch-search").is_none());
    op.stop();
}

/// The chart reads its master key Secret whole, as environment: a key kept
/// under another name is copied into a Secret of ours under the chart's name,
/// follows the source when it changes (looked at again on resync), and goes
/// with the resource.
#[test]
fn a_meilisearch_master_key_under_any_name_is_copied_and_follows_its_source() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let mut opts = options(&env);
    opts.resync = Duration::from_secs(2);
    let op = Operator::start_with(opts);
    let ns = env.namespace("team-meili");
    env.create(
        "MeilisearchInstance",
        &ns,
        "search",
        json!({"masterKey": {"secretKeyRef": {"name": "search-keys", "key": "master"}}}),
    );
    env.wait_for(
        "the instance waiting for its key",
        Duration::from_secs(30),
        |e| {
            let m = e
                .resource("MeilisearchInstance", &ns, "search")
                .unwrap_or_default();
            let message = condition_of(&m, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            message.contains("search-keys").then_some(()).ok_or(message)
        },
    );
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "search-keys", "namespace": ns},
        "stringData": {"master": "first-key", "other": "x"}}).to_string());
    env.wait_phase("MeilisearchInstance", &ns, "search", "Ready");
    assert_eq!(
        env.secret_value(&ns, "search-master-key", "MEILI_MASTER_KEY")
            .as_deref(),
        Some("first-key")
    );
    let rel = release_record(&env, &ns, "meilisearch-search").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(
        values["auth"]["existingMasterKeySecret"],
        "search-master-key"
    );
    assert!(!rel.manifest.contains("first-key") && !values.to_string().contains("first-key"));

    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "search-keys", "namespace": ns},
        "stringData": {"master": "rotated-key", "other": "x"}}).to_string());
    env.wait_for(
        "the copy to follow the rotated key",
        Duration::from_secs(30),
        |e| {
            let v = e.secret_value(&ns, "search-master-key", "MEILI_MASTER_KEY");
            (v.as_deref() == Some("rotated-key"))
                .then_some(())
                .ok_or(format!("{v:?}"))
        },
    );
    assert_eq!(
        release_record(&env, &ns, "meilisearch-search")
            .unwrap()
            .version,
        1,
        "a rotated key is no new revision"
    );
    env.delete("MeilisearchInstance", &ns, "search");
    env.wait_gone("the MeilisearchInstance", |e| {
        e.resource("MeilisearchInstance", &ns, "search").is_some()
    });
    assert!(env
        .secret_value(&ns, "search-master-key", "MEILI_MASTER_KEY")
        .is_none());
    assert!(
        env.secret_value(&ns, "search-keys", "master").is_some(),
        "the user's Secret stays"
    );
    op.stop();
}

/// CloudNativePG and the ClickHouse operator are played by the test: their
/// objects' status, and the `<cluster>-app` Secret CNPG writes.
#[test]
fn observability_runs_langfuse_on_the_platforms_datastores() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    let op = Operator::start_with(licensed_options(&env, &["Observability"]));
    let ns = env.namespace("team-obs");
    env.create("Observability", &ns, "obs", json!({"postgresClusterRef": {"name": "app-db"}, "clickHouseClusterRef": {"name": "analytics"},
        "values": {"langfuse": {"features": {"telemetryEnabled": false}}}}));
    env.wait_for(
        "the Observability waiting for its datastores",
        Duration::from_secs(30),
        |e| {
            let o = e.resource("Observability", &ns, "obs").unwrap_or_default();
            let m = condition_of(&o, "Ready")["message"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (m.contains("PostgresCluster") && m.contains("ClickHouseCluster"))
                .then_some(())
                .ok_or(o["status"].to_string())
        },
    );
    env.create_postgres(&ns, "app-db", managed());
    env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "app-db-app", "namespace": ns},
        "stringData": {"host": "app-db-rw", "port": "5432", "username": "app", "password": "pg-pass-not-copied", "dbname": "app"}}).to_string());
    env.create(
        "ClickHouseCluster",
        &ns,
        "analytics",
        clickhouse_managed("clickhouse", 0),
    );
    env.wait_postgres_ready(&ns, "app-db");
    env.wait_phase("ClickHouseCluster", &ns, "analytics", "Ready");
    let o = env.wait_phase("Observability", &ns, "obs", "Ready");
    assert_eq!(o["status"]["release"]["name"], "langfuse-obs");
    assert!(ours_release(&env, &ns, "langfuse-obs"));
    let rel = release_record(&env, &ns, "langfuse-obs").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(values["postgresql"]["deploy"], false);
    assert_eq!(values["postgresql"]["host"], "app-db-rw");
    assert_eq!(values["postgresql"]["auth"]["existingSecret"], "app-db-app");
    assert_eq!(
        values["clickhouse"]["host"],
        format!("analytics-clickhouse-headless.{ns}.svc")
    );
    assert_eq!(
        values["clickhouse"]["auth"]["existingSecret"],
        "analytics-clickhouse"
    );
    assert_eq!(values["langfuse"]["features"]["telemetryEnabled"], false);
    let text = format!("{}{}", rel.manifest, values);
    assert!(
        !text.contains("pg-pass-not-copied"),
        "a datastore password is never copied into the release"
    );
    let salt = env
        .secret_value(&ns, "langfuse-obs-navique-keys", "salt")
        .expect("a generated salt");
    let key = env
        .secret_value(&ns, "langfuse-obs-navique-keys", "encryption-key")
        .unwrap();
    assert_eq!(key.len(), 64);
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
    env.kubectl(&[
        "annotate",
        "observabilities.core.navique.com",
        "obs",
        "-n",
        &ns,
        "poke=1",
    ]);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        env.secret_value(&ns, "langfuse-obs-navique-keys", "salt"),
        Some(salt),
        "kept"
    );
    assert_eq!(
        release_record(&env, &ns, "langfuse-obs").unwrap().version,
        1
    );

    env.delete("Observability", &ns, "obs");
    env.wait_gone("the Observability", |e| {
        e.resource("Observability", &ns, "obs").is_some()
    });
    assert!(release_record(&env, &ns, "langfuse-obs").is_none());
    assert_eq!(
        env.secret_value(&ns, "langfuse-obs-navique-keys", "salt"),
        None
    );
    op.stop();
}

#[test]
fn a_chat_ui_switching_its_gateway_is_upgraded_onto_the_other_one() {
    if shared().is_none() {
        return;
    }
    let env = Env::new();
    // Two Gateways: beyond the free tier's one.
    let op = Operator::start_with(licensed_options(&env, &[]));
    let ns = env.namespace("team-sw");
    for (secret, key) in [("key-a", "a"), ("key-b", "b")] {
        env.apply_yaml(&json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret, "namespace": ns},
            "stringData": {key: "sk"}}).to_string());
    }
    env.create(
        "Gateway",
        &ns,
        "gw-a",
        json!({"masterKey": {"secretKeyRef": {"name": "key-a", "key": "a"}}}),
    );
    env.create(
        "Gateway",
        &ns,
        "gw-b",
        json!({"masterKey": {"secretKeyRef": {"name": "key-b", "key": "b"}}}),
    );
    env.wait_phase("Gateway", &ns, "gw-a", "Ready");
    env.wait_phase("Gateway", &ns, "gw-b", "Ready");
    env.create(
        "ChatUI",
        &ns,
        "web",
        json!({"gatewayRef": {"name": "gw-a"}}),
    );
    env.wait_phase("ChatUI", &ns, "web", "Ready");
    env.create(
        "ChatUI",
        &ns,
        "web",
        json!({"gatewayRef": {"name": "gw-b"}}),
    );
    env.wait_for("the upgrade onto gw-b", Duration::from_secs(60), |e| {
        let c = e.resource("ChatUI", &ns, "web").unwrap_or_default();
        (c["status"]["release"]["revision"] == 2 && c["status"]["phase"] == "Ready")
            .then_some(())
            .ok_or(c["status"].to_string())
    });
    let rel = release_record(&env, &ns, "chat-ui-web").unwrap();
    let values = serde_json::to_value(&rel.config).unwrap();
    assert_eq!(
        values["envVars"]["OPENAI_BASE_URL"],
        format!("http://gw-b.{ns}.svc:4000/v1")
    );
    assert_eq!(
        values["extraEnv"][0]["valueFrom"]["secretKeyRef"],
        json!({"name": "key-b", "key": "b"})
    );
    // Nothing of gw-a's was ours to collect, and gw-a is untouched.
    assert_eq!(env.phase_of("Gateway", &ns, "gw-a"), "Ready");
    op.stop();
}
