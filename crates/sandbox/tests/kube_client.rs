//! kube-rs against the server: watches, server-side apply, finalizers,
//! garbage collection, pagination, simulated readiness.

mod common;
use common::{cluster, cluster_with, unique};
use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy, WatchEvent,
    WatchParams,
};
use kube::runtime::WatchStreamExt;
use kube::Client;
use serde_json::json;
use std::time::Duration;

async fn namespace(client: &Client, prefix: &str) -> String {
    let ns = unique(prefix);
    let api: Api<Namespace> = Api::all(client.clone());
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
    )
    .await
    .unwrap();
    ns
}

fn cm(name: &str, data: serde_json::Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).unwrap()
}

async fn gone<
    K: kube::Resource + Clone + for<'de> k8s_openapi::serde::Deserialize<'de> + std::fmt::Debug,
>(
    api: &Api<K>,
    name: &str,
) -> bool {
    for _ in 0..100 {
        if api.get_opt(name).await.unwrap().is_none() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_streams_events_in_order_and_resumes_from_a_resource_version() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "watch").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let start = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();

    let mut stream = api
        .watch(&WatchParams::default().timeout(10), &start)
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &cm("a", json!({"k": "1"})))
        .await
        .unwrap();
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await
    .unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match stream.try_next().await.unwrap().expect("event") {
            WatchEvent::Added(o) => seen.push(("ADDED", o.data.unwrap()["k"].clone())),
            WatchEvent::Modified(o) => seen.push(("MODIFIED", o.data.unwrap()["k"].clone())),
            WatchEvent::Deleted(o) => seen.push(("DELETED", o.data.unwrap()["k"].clone())),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            ("ADDED", "1".to_string()),
            ("MODIFIED", "2".into()),
            ("DELETED", "2".into())
        ]
    );

    // Resuming from the first list's resourceVersion replays the same three events.
    let replay: Vec<_> = api
        .watch(&WatchParams::default().timeout(1), &start)
        .await
        .unwrap()
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    let kinds: Vec<&str> = replay
        .iter()
        .filter_map(|e| match e {
            WatchEvent::Added(_) => Some("ADDED"),
            WatchEvent::Modified(_) => Some("MODIFIED"),
            WatchEvent::Deleted(_) => Some("DELETED"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["ADDED", "MODIFIED", "DELETED"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_old_resource_version_is_gone() {
    if std::env::var("NAVIQUE_TEST_KUBECONFIG").is_ok_and(|v| !v.is_empty()) {
        eprintln!("skipping: a real cluster compacts on its own schedule");
        return;
    }
    let c = cluster_with(navique_sandbox::Options {
        event_log: 10,
        ..Default::default()
    });
    let client = c.client().await;
    let ns = namespace(&client, "gone").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let start = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    for i in 0..20 {
        api.create(&PostParams::default(), &cm(&format!("c{i}"), json!({})))
            .await
            .unwrap();
    }
    let events: Vec<_> = api
        .watch(&WatchParams::default().timeout(1), &start)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    match events.first() {
        Some(WatchEvent::Error(e)) => {
            assert_eq!(e.code, 410);
            assert!(
                e.message.starts_with("too old resource version"),
                "{}",
                e.message
            );
        }
        other => panic!("expected 410 Gone, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_with_bookmarks_and_a_label_selector() {
    let c = cluster_with(navique_sandbox::Options {
        bookmark_interval: Duration::from_millis(100),
        ..Default::default()
    });
    let client = c.client().await;
    let ns = namespace(&client, "bookmark").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let rv = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = api
        .watch(&WatchParams::default().labels("pick=yes").timeout(10), &rv)
        .await
        .unwrap()
        .boxed();
    let mut other = cm("other", json!({}));
    other.metadata.labels = Some([("pick".to_string(), "no".to_string())].into());
    api.create(&PostParams::default(), &other).await.unwrap();
    let mut picked = cm("picked", json!({}));
    picked.metadata.labels = Some([("pick".to_string(), "yes".to_string())].into());
    api.create(&PostParams::default(), &picked).await.unwrap();
    // Relabelling out of the selector is a DELETED event for this watch.
    api.patch(
        "picked",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"pick": "no"}}})),
    )
    .await
    .unwrap();
    let (mut added, mut deleted, mut bookmarks) = (Vec::new(), Vec::new(), 0);
    while deleted.is_empty() || bookmarks == 0 {
        match tokio::time::timeout(Duration::from_secs(10), stream.try_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
        {
            WatchEvent::Added(o) => added.push(o.metadata.name.unwrap()),
            WatchEvent::Deleted(o) => deleted.push(o.metadata.name.unwrap()),
            WatchEvent::Bookmark(_) => bookmarks += 1,
            e => panic!("unexpected {e:?}"),
        }
    }
    assert_eq!(added, ["picked"]);
    assert_eq!(deleted, ["picked"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_conflicts_force_and_optimistic_concurrency() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "ssa").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let doc = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": {"owned": v}});
    api.patch(
        "shared",
        &PatchParams::apply("alice"),
        &Patch::Apply(doc("a")),
    )
    .await
    .unwrap();
    let err = api
        .patch(
            "shared",
            &PatchParams::apply("bob"),
            &Patch::Apply(doc("b")),
        )
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert_eq!(
                s.message,
                r#"Apply failed with 1 conflict: conflict with "alice": .data.owned"#
            );
        }
        e => panic!("{e}"),
    }
    // Same value: shared ownership, no conflict.
    api.patch(
        "shared",
        &PatchParams::apply("bob"),
        &Patch::Apply(doc("a")),
    )
    .await
    .unwrap();
    let forced = api
        .patch(
            "shared",
            &PatchParams::apply("carol").force(),
            &Patch::Apply(doc("c")),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["owned"], "c");
    let managers: Vec<String> = forced
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .map(|m| m.manager.unwrap())
        .collect();
    assert_eq!(
        managers,
        ["carol"],
        "forcing takes the field from alice and bob"
    );

    // A stale resourceVersion on update is a 409 Conflict.
    let mut current = api.get("shared").await.unwrap();
    api.patch(
        "shared",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "1"}})),
    )
    .await
    .unwrap();
    current
        .data
        .as_mut()
        .unwrap()
        .insert("y".into(), "2".into());
    match api
        .replace("shared", &PostParams::default(), &current)
        .await
        .unwrap_err()
    {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert!(
                s.message.contains("the object has been modified"),
                "{}",
                s.message
            );
        }
        e => panic!("{e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finalizers_hold_deletion_until_removed() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "fin").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let mut obj = cm("held", json!({}));
    obj.metadata.finalizers = Some(vec!["navique.test/hold".into()]);
    api.create(&PostParams::default(), &obj).await.unwrap();
    api.delete("held", &DeleteParams::default()).await.unwrap();
    let held = api.get("held").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(gone(&api, "held").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_collection_background_foreground_and_orphan() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "gc").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let make_family = |owner: &'static str| {
        let api = api.clone();
        async move {
            let o = api
                .create(&PostParams::default(), &cm(owner, json!({})))
                .await
                .unwrap();
            let uid = o.metadata.uid.unwrap();
            let mut child = cm(&format!("{owner}-child"), json!({}));
            child.metadata.owner_references = Some(vec![serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid
            }))
            .unwrap()]);
            api.create(&PostParams::default(), &child).await.unwrap();
        }
    };
    make_family("bg").await;
    api.delete("bg", &DeleteParams::background()).await.unwrap();
    assert!(
        gone(&api, "bg-child").await,
        "background deletes dependents after the owner"
    );

    make_family("fg").await;
    let mut hold = api.get("fg-child").await.unwrap();
    hold.metadata.finalizers = Some(vec!["navique.test/hold".into()]);
    api.replace("fg-child", &PostParams::default(), &hold)
        .await
        .unwrap();
    api.delete("fg", &DeleteParams::foreground()).await.unwrap();
    let owner = api.get("fg").await.unwrap();
    assert!(owner
        .metadata
        .finalizers
        .unwrap()
        .contains(&"foregroundDeletion".to_string()));
    assert!(api
        .get("fg-child")
        .await
        .unwrap()
        .metadata
        .deletion_timestamp
        .is_some());
    api.patch(
        "fg-child",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(gone(&api, "fg-child").await);
    assert!(
        gone(&api, "fg").await,
        "foreground owner goes once its dependents are gone"
    );

    make_family("or").await;
    api.delete(
        "or",
        &DeleteParams {
            propagation_policy: Some(PropagationPolicy::Orphan),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(gone(&api, "or").await);
    let orphan = api.get("or-child").await.unwrap();
    assert!(orphan
        .metadata
        .owner_references
        .unwrap_or_default()
        .is_empty());

    // Deleting the namespace deletes what it holds.
    let nsapi: Api<Namespace> = Api::all(client.clone());
    nsapi.delete(&ns, &DeleteParams::default()).await.unwrap();
    assert!(gone(&api, "or-child").await);
    assert!(gone(&nsapi, &ns).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_pages_with_limit_and_continue() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "page").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    for i in 0..7 {
        api.create(&PostParams::default(), &cm(&format!("p{i}"), json!({})))
            .await
            .unwrap();
    }
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut lp = ListParams::default().limit(3);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = api.list(&lp).await.unwrap();
        pages += 1;
        names.extend(page.items.into_iter().map(|c| c.metadata.name.unwrap()));
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    names.retain(|n| n.starts_with('p'));
    assert_eq!(names, ["p0", "p1", "p2", "p3", "p4", "p5", "p6"]);
    assert!(pages >= 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_controllers_make_deployments_ready_unless_held() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "ready").await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let deploy = |name: &str, hold: bool| {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}});
        if hold {
            d["metadata"]["annotations"] =
                json!({navique_sandbox::controllers::HOLD_ANNOTATION: "true"});
        }
        d
    };
    api.patch(
        "ok",
        &PatchParams::apply("test"),
        &Patch::Apply(deploy("ok", false)),
    )
    .await
    .unwrap();
    let ready =
        kube::runtime::wait::await_condition(api.clone(), "ok", |d: Option<&Deployment>| {
            d.and_then(|d| d.status.as_ref())
                .and_then(|s| s.ready_replicas)
                == Some(2)
        });
    tokio::time::timeout(Duration::from_secs(30), ready)
        .await
        .expect("ready in time")
        .unwrap();
    if !c.is_sandbox() {
        return;
    }
    api.patch(
        "held",
        &PatchParams::apply("test"),
        &Patch::Apply(deploy("held", true)),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        api.get("held").await.unwrap().status.is_none(),
        "held objects stay unready"
    );
    api.patch(
        "held",
        &PatchParams::apply("test"),
        &Patch::Apply(deploy("held", false)),
    )
    .await
    .unwrap();
    let ready =
        kube::runtime::wait::await_condition(api.clone(), "held", |d: Option<&Deployment>| {
            d.and_then(|d| d.status.as_ref())
                .and_then(|s| s.available_replicas)
                == Some(2)
        });
    tokio::time::timeout(Duration::from_secs(30), ready)
        .await
        .expect("ready once released")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_runtime_watcher_and_reflector_stay_consistent() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "reflect").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let (reader, writer) = kube::runtime::reflector::store();
    let stream = kube::runtime::reflector(
        writer,
        kube::runtime::watcher(api.clone(), Default::default()),
    )
    .applied_objects();
    let handle = tokio::spawn(stream.for_each(|_| async {}));
    for i in 0..20 {
        api.create(
            &PostParams::default(),
            &cm(&format!("r{i}"), json!({"i": i.to_string()})),
        )
        .await
        .unwrap();
    }
    for i in 0..5 {
        api.delete(&format!("r{i}"), &DeleteParams::default())
            .await
            .unwrap();
    }
    let mut count = 0;
    for _ in 0..100 {
        count = reader
            .state()
            .iter()
            .filter(|c| c.metadata.name.as_deref().unwrap_or("").starts_with('r'))
            .count();
        if count == 15 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    handle.abort();
    assert_eq!(count, 15);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_subresource_and_delete_preconditions() {
    let c = cluster_with(navique_sandbox::Options {
        simulate: false,
        ..Default::default()
    });
    let client = c.client().await;
    let ns = namespace(&client, "status").await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}},
        "status": {"replicas": 99}});
    let created = api
        .create(&PostParams::default(), &serde_json::from_value(d).unwrap())
        .await
        .unwrap();
    if c.is_sandbox() {
        assert!(
            created.status.is_none(),
            "status is not set through the main resource"
        );
    }
    let st = api
        .patch_status(
            "d",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"observedGeneration": 1, "replicas": 7}})),
        )
        .await
        .unwrap();
    assert_eq!(st.status.as_ref().unwrap().replicas, Some(7));
    assert_eq!(
        st.metadata.generation,
        Some(1),
        "status writes leave the generation alone"
    );
    // A spec change through /status is ignored; through the main resource it bumps the generation.
    let st = api
        .patch_status(
            "d",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(st.spec.replicas, Some(1));
    let main = api
        .patch(
            "d",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(main.metadata.generation, Some(2));

    // An apply to /status keeps the ownership other managers hold of the spec.
    let spec = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}});
    api.patch("d", &PatchParams::apply("spec-owner"), &Patch::Apply(&spec))
        .await
        .unwrap();
    let st = api
        .patch_status(
            "d",
            &PatchParams::apply("status-owner").force(),
            &Patch::Apply(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "status": {"replicas": 3}}),
            ),
        )
        .await
        .unwrap();
    let managers: Vec<(String, Option<String>)> = st
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.manager.unwrap_or_default(), m.subresource))
        .collect();
    assert!(
        managers.contains(&("spec-owner".into(), None)),
        "{managers:?}"
    );
    assert!(
        managers.contains(&("status-owner".into(), Some("status".into()))),
        "{managers:?}"
    );

    let wrong = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    match api.delete("d", &wrong).await.unwrap_err() {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            assert!(
                s.message
                    .contains("Precondition failed: UID in precondition: not-the-uid"),
                "{}",
                s.message
            );
        }
        e => panic!("{e}"),
    }
    let right = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: created.metadata.uid.clone(),
            resource_version: None,
        }),
        ..Default::default()
    };
    api.delete("d", &right).await.unwrap();
    assert!(gone(&api, "d").await);
}
