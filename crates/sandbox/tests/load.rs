//! 10,000 objects written by several concurrent clients and watched by
//! several others: every watcher sees every change exactly once, in order.

mod common;
use common::{cluster, unique};
use futures_util::TryStreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::json;
use std::collections::HashMap;
use std::time::{Duration, Instant};

const WRITERS: usize = 4;
const PER_WRITER: usize = 2_500;
const WATCHERS: usize = 3;

fn expected(name: &str) -> Vec<&'static str> {
    let i: usize = name.rsplit('-').next().unwrap().parse().unwrap();
    let mut v = vec!["ADDED"];
    if i % 10 == 0 {
        v.push("MODIFIED");
    }
    if i % 20 == 0 {
        v.push("DELETED");
    }
    v
}

async fn watch_all(
    api: Api<ConfigMap>,
    from: String,
    total: usize,
) -> HashMap<String, Vec<&'static str>> {
    let mut seen: HashMap<String, Vec<&'static str>> = HashMap::new();
    let mut rv = from;
    let mut count = 0;
    let mut last_rv: u64 = rv.parse().unwrap_or(0);
    while count < total {
        // A watch ends at its timeout; clients resume from the last resourceVersion.
        let mut stream = Box::pin(
            api.watch(&WatchParams::default().timeout(30), &rv)
                .await
                .unwrap(),
        );
        while let Some(ev) = stream.try_next().await.unwrap() {
            let (kind, obj) = match ev {
                WatchEvent::Added(o) => ("ADDED", o),
                WatchEvent::Modified(o) => ("MODIFIED", o),
                WatchEvent::Deleted(o) => ("DELETED", o),
                WatchEvent::Bookmark(b) => {
                    rv = b.metadata.resource_version;
                    continue;
                }
                WatchEvent::Error(e) => panic!("watch error {e:?}"),
            };
            let this_rv = obj.metadata.resource_version.clone().unwrap();
            if let Ok(n) = this_rv.parse::<u64>() {
                assert!(n > last_rv, "resourceVersions only grow on one watch");
                last_rv = n;
            }
            rv = this_rv;
            seen.entry(obj.metadata.name.unwrap())
                .or_default()
                .push(kind);
            count += 1;
            if count == total {
                break;
            }
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_thousand_objects_no_lost_or_duplicated_watch_events() {
    let c = cluster();
    let admin = c.client().await;
    let ns = unique("load");
    Api::<Namespace>::all(admin.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}})).unwrap(),
        )
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(admin.clone(), &ns);
    let start_rv = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let total_objects = WRITERS * PER_WRITER;
    let total_events: usize = (0..total_objects)
        .map(|i| expected(&format!("x-{}", i % PER_WRITER)).len())
        .sum();

    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let api: Api<ConfigMap> = Api::namespaced(c.client().await, &ns);
        watchers.push(tokio::spawn(watch_all(api, start_rv.clone(), total_events)));
    }

    let started = Instant::now();
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let api: Api<ConfigMap> = Api::namespaced(c.client().await, &ns);
        writers.push(tokio::spawn(async move {
            for i in 0..PER_WRITER {
                let name = format!("w{w}-{i}");
                let cm: ConfigMap = serde_json::from_value(
                    json!({"metadata": {"name": name}, "data": {"i": i.to_string()}}),
                )
                .unwrap();
                api.create(&PostParams::default(), &cm).await.unwrap();
            }
            for i in (0..PER_WRITER).step_by(10) {
                let name = format!("w{w}-{i}");
                api.patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"data": {"changed": "yes"}})),
                )
                .await
                .unwrap();
                if i % 20 == 0 {
                    api.delete(&name, &DeleteParams::default()).await.unwrap();
                }
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    let wrote = started.elapsed();
    for (i, w) in watchers.into_iter().enumerate() {
        let seen = tokio::time::timeout(Duration::from_secs(300), w)
            .await
            .expect("watchers finish")
            .unwrap();
        assert_eq!(seen.len(), total_objects, "watcher {i} saw every object");
        for (name, events) in &seen {
            assert_eq!(events, &expected(name), "watcher {i}, object {name}");
        }
    }
    let remaining = api.list(&ListParams::default()).await.unwrap().items.len();
    assert_eq!(remaining, total_objects - total_objects / 20);
    eprintln!(
        "load: {} writes from {WRITERS} clients in {:.2?} ({:.0} writes/s), {total_events} events to each of {WATCHERS} watchers",
        total_objects + total_objects / 10 + total_objects / 20,
        wrote,
        (total_objects + total_objects / 10 + total_objects / 20) as f64 / wrote.as_secs_f64()
    );
    Api::<Namespace>::all(admin)
        .delete(&ns, &DeleteParams::default())
        .await
        .unwrap();
}
