//! What a real kube-apiserver refuses, refused alike: admission
//! (ServiceAccount, NamespaceLifecycle), server-side apply of duplicate list
//! keys, built-in validation; and workload controllers that cannot create
//! their Pods. Status codes and messages are Kubernetes' own; every test
//! also runs against the cluster `NAVIQUE_TEST_KUBECONFIG` names.

mod common;
use common::{cluster, stderr, unique};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Pod, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::json;
use std::time::{Duration, Instant};

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

/// The Status a refused request got.
fn api_error<T: std::fmt::Debug>(r: Result<T, kube::Error>) -> kube::core::Status {
    match r {
        Err(kube::Error::Api(s)) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Polls `f` until it answers Some, for at most `secs` seconds.
async fn eventually<T, F, Fut>(what: &str, secs: u64, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn pod(name: &str, sa: Option<&str>) -> Pod {
    let mut p = json!({"metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]}});
    if let Some(sa) = sa {
        p["spec"]["serviceAccountName"] = json!(sa);
    }
    serde_json::from_value(p).unwrap()
}

fn service_account(name: &str) -> ServiceAccount {
    serde_json::from_value(json!({"metadata": {"name": name}})).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_need_their_service_account_and_namespaces_get_a_default_one() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "adm-sa").await;
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), &ns);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);

    // The serviceaccount controller gives every namespace its `default`.
    eventually("the default ServiceAccount", 30, || async {
        sas.get_opt("default").await.unwrap()
    })
    .await;
    let system: Api<ServiceAccount> = Api::namespaced(client.clone(), "kube-system");
    assert!(system.get_opt("default").await.unwrap().is_some());

    let e = api_error(
        pods.create(&PostParams::default(), &pod("p", Some("missing")))
            .await,
    );
    assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"), "{e:?}");
    assert_eq!(
        e.message,
        format!(
            r#"pods "p" is forbidden: error looking up service account {ns}/missing: serviceaccount "missing" not found"#
        )
    );
    // generateName is what admission calls a Pod without a name yet.
    let mut unnamed = pod("", Some("missing"));
    unnamed.metadata.name = None;
    unnamed.metadata.generate_name = Some("gen-".into());
    let e = api_error(pods.create(&PostParams::default(), &unnamed).await);
    assert!(
        e.message
            .starts_with(r#"pods "gen-" is forbidden: error looking up service account"#),
        "{e:?}"
    );
    // kubectl shows the same Status.
    let out = c.apply_stdin(
        &["-n", &ns, "create", "-f", "-"],
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: k\nspec:\n  serviceAccountName: missing\n  containers:\n  - name: c\n    image: busybox:1.36\n",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!(
            r#"Error from server (Forbidden): error when creating "STDIN": pods "k" is forbidden: error looking up service account {ns}/missing: serviceaccount "missing" not found"#
        )),
        "{}",
        stderr(&out)
    );

    sas.create(&PostParams::default(), &service_account("missing"))
        .await
        .unwrap();
    pods.create(&PostParams::default(), &pod("p", Some("missing")))
        .await
        .unwrap();
    // Without serviceAccountName the Pod runs as `default`.
    pods.create(&PostParams::default(), &pod("d", None))
        .await
        .unwrap();

    // Deleted, `default` comes back.
    sas.delete("default", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the default ServiceAccount made again", 30, || async {
        sas.get_opt("default")
            .await
            .unwrap()
            .filter(|sa| sa.metadata.deletion_timestamp.is_none())
    })
    .await;
    for p in ["p", "d"] {
        let _ = pods
            .delete(
                p,
                &DeleteParams {
                    grace_period_seconds: Some(0),
                    ..Default::default()
                },
            )
            .await;
    }
    let _ = Api::<Namespace>::all(client)
        .delete(&ns, &DeleteParams::default())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_lifecycle_refuses_missing_and_terminating_namespaces() {
    let c = cluster();
    let client = c.client().await;
    let missing = unique("adm-nowhere");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &missing);
    let cm = |name: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name}, "data": {"a": "1"}})).unwrap()
    };
    let e = api_error(cms.create(&PostParams::default(), &cm("x")).await);
    assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"), "{e:?}");
    assert_eq!(e.message, format!(r#"namespaces "{missing}" not found"#));

    // A finalizer on its content keeps a deleted namespace Terminating.
    let ns = namespace(&client, "adm-term").await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let mut held = cm("held");
    held.metadata.finalizers = Some(vec!["navique.dev/test-hold".into()]);
    cms.create(&PostParams::default(), &held).await.unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete(&ns, &DeleteParams::default())
        .await
        .unwrap();
    let e = api_error(cms.create(&PostParams::default(), &cm("late")).await);
    assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"), "{e:?}");
    assert_eq!(
        e.message,
        format!(
            r#"configmaps "late" is forbidden: unable to create new content in namespace {ns} because it is being terminated"#
        )
    );
    // The cause controllers look for.
    let cause = &e.details.as_ref().expect("details").causes;
    assert_eq!(cause.len(), 1, "{e:?}");
    assert_eq!(
        (cause[0].reason.as_str(), cause[0].field.as_str()),
        ("NamespaceTerminating", "metadata.namespace")
    );
    assert_eq!(
        cause[0].message,
        format!("namespace {ns} is being terminated")
    );
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    eventually("the namespace gone", 60, || async {
        namespaces
            .get_opt(&ns)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
}

fn job(name: &str, sa: &str) -> Job {
    serde_json::from_value(json!({"metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "serviceAccountName": sa,
            "containers": [{"name": "c", "image": "busybox:1.36", "command": ["true"]}]}}}}))
    .unwrap()
}

/// Warning Events with reason FailedCreate about `name`, as messages.
async fn failed_creates(client: &Client, ns: &str, name: &str) -> Vec<String> {
    let events: Api<Event> = Api::namespaced(client.clone(), ns);
    events
        .list(&ListParams::default().fields(&format!("involvedObject.name={name}")))
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("FailedCreate"))
        .filter_map(|e| e.message)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workload_controllers_do_not_get_past_pod_admission() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "adm-ctl").await;
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), &ns);

    jobs.create(&PostParams::default(), &job("migrate", "runner"))
        .await
        .unwrap();
    let d: Deployment = serde_json::from_value(json!({"metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"serviceAccountName": "runner",
                "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]}}}}))
    .unwrap();
    deployments
        .create(&PostParams::default(), &d)
        .await
        .unwrap();

    let messages = eventually("the Job's FailedCreate Event", 60, || async {
        let m = failed_creates(&client, &ns, "migrate").await;
        (!m.is_empty()).then_some(m)
    })
    .await;
    assert!(
        messages.iter().any(|m| m.starts_with(r#"Error creating: pods "migrate-"#)
            && m.ends_with(&format!(
                r#" is forbidden: error looking up service account {ns}/runner: serviceaccount "runner" not found"#
            ))),
        "{messages:?}"
    );
    if c.is_sandbox() {
        // Without ReplicaSets here, the Deployment carries its Event.
        eventually("the Deployment's FailedCreate Event", 30, || async {
            let m = failed_creates(&client, &ns, "web").await;
            (!m.is_empty()).then_some(())
        })
        .await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let complete = |j: &Job| {
        j.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.type_ == "Complete" && c.status == "True")
            })
    };
    assert!(!complete(&jobs.get("migrate").await.unwrap()));
    let available = |d: &Deployment| {
        d.status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0)
    };
    assert_eq!(available(&deployments.get("web").await.unwrap()), 0);

    // Once the ServiceAccount exists the controllers get through.
    sas.create(&PostParams::default(), &service_account("runner"))
        .await
        .unwrap();
    eventually("the Job complete", 180, || async {
        complete(&jobs.get("migrate").await.unwrap()).then_some(())
    })
    .await;
    eventually("the Deployment available", 180, || async {
        (available(&deployments.get("web").await.unwrap()) == 1).then_some(())
    })
    .await;
    let _ = Api::<Namespace>::all(client)
        .delete(&ns, &DeleteParams::default())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_refuses_duplicate_list_keys() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "adm-dup").await;
    let api: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let deploy = |env: serde_json::Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "manager", "image": "busybox:1.36", "env": env}]}}}})
    };
    let dup = deploy(json!([{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]));
    let e = api_error(
        api.patch("web", &PatchParams::apply("test"), &Patch::Apply(&dup))
            .await,
    );
    assert_eq!(e.code, 500, "{e:?}");
    assert_eq!(
        e.message,
        format!(
            r#"failed to create typed patch object ({ns}/web; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="manager"].env: duplicate entries for key [name="A"]"#
        )
    );
    assert!(api.get_opt("web").await.unwrap().is_none());
    // kubectl reports it as it comes.
    let out = c.apply_stdin(
        &["apply", "--server-side", "-f", "-"],
        &serde_json::to_string(&dup).unwrap(),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(r#".spec.template.spec.containers[name="manager"].env: duplicate entries for key [name="A"]"#),
        "{}",
        stderr(&out)
    );
    // A create (not an apply) with the same duplicates is accepted.
    let d: Deployment = serde_json::from_value(dup.clone()).unwrap();
    api.create(&PostParams::default(), &d).await.unwrap();
    let _ = Api::<Namespace>::all(client)
        .delete(&ns, &DeleteParams::default())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_subresource_of_deployments_and_custom_resources() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "adm-scale").await;
    let d: Deployment = serde_json::from_value(json!({"metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]}}}}))
    .unwrap();
    let api: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    api.create(&PostParams::default(), &d).await.unwrap();
    let out = c.ok(&["-n", &ns, "scale", "deployment", "web", "--replicas=3"]);
    assert!(out.contains("deployment.apps/web scaled"), "{out}");
    assert_eq!(api.get("web").await.unwrap().spec.replicas, Some(3));
    let scale = api.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(3));
    assert_eq!(scale.status.unwrap().selector.as_deref(), Some("app=web"));
    let scale = api
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 0}})),
        )
        .await
        .unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(0));
    let e = api_error(
        api.patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": -1}})),
        )
        .await,
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert!(
        e.message
            .ends_with("spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        "{e:?}"
    );

    // A custom resource whose CRD declares the scale subresource.
    let group = format!("{}.navique.dev", unique("scale"));
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.size",
                    "statusReplicasPath": ".status.size", "labelSelectorPath": ".status.selector"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {"size": {"type": "integer"}, "selector": {"type": "string"}}}}}}}]}});
    let out = c.apply_stdin(&["create", "-f", "-"], &crd.to_string());
    assert!(out.status.success(), "{}", stderr(&out));
    c.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/widgets.{group}"),
    ]);
    let widget = json!({"apiVersion": format!("{group}/v1"), "kind": "Widget",
        "metadata": {"name": "w", "namespace": ns}, "spec": {"size": 1}});
    eventually("the Widget created", 30, || async {
        c.apply_stdin(&["create", "-f", "-"], &widget.to_string())
            .status
            .success()
            .then_some(())
    })
    .await;
    let out = c.ok(&[
        "-n",
        &ns,
        "scale",
        &format!("widgets.{group}"),
        "w",
        "--replicas=4",
    ]);
    assert!(out.contains("scaled"), "{out}");
    let w: serde_json::Value = serde_json::from_str(&c.ok(&[
        "-n",
        &ns,
        "get",
        &format!("widgets.{group}"),
        "w",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(w["spec"]["size"], 4);
    c.ok(&["delete", &format!("crd/widgets.{group}"), "--wait=false"]);
    let _ = Api::<Namespace>::all(client)
        .delete(&ns, &DeleteParams::default())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_validation_of_selectors_immutable_fields_and_names() {
    let c = cluster();
    let client = c.client().await;
    let ns = namespace(&client, "adm-valid").await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let deploy = |selector: &str, label: &str| -> Deployment {
        serde_json::from_value(json!({"metadata": {"name": "web"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": selector}},
                "template": {"metadata": {"labels": {"app": label}},
                    "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]}}}}))
        .unwrap()
    };
    let e = api_error(
        deployments
            .create(&PostParams::default(), &deploy("web", "other"))
            .await,
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert_eq!(
        e.message,
        r#"Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`"#
    );
    let d = e.details.as_ref().expect("details");
    assert_eq!(
        (d.group.as_str(), d.kind.as_str(), d.name.as_str()),
        ("apps", "Deployment", "web")
    );
    assert_eq!(d.causes.len(), 1, "{e:?}");
    assert_eq!(
        (d.causes[0].reason.as_str(), d.causes[0].field.as_str()),
        ("FieldValueInvalid", "spec.template.metadata.labels")
    );

    // The selector of an apps/v1 workload never changes.
    deployments
        .create(&PostParams::default(), &deploy("web", "web"))
        .await
        .unwrap();
    let e = api_error(
        deployments
            .patch(
                "web",
                &PatchParams::default(),
                &Patch::Merge(
                    json!({"spec": {"selector": {"matchLabels": {"app": "web2"}},
                    "template": {"metadata": {"labels": {"app": "web2"}}}}}),
                ),
            )
            .await,
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert_eq!(
        e.message,
        r#"Deployment.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"#
    );

    // A Job's pod template is immutable (its selector too).
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    jobs.create(&PostParams::default(), &job("once", "default"))
        .await
        .unwrap();
    let e = api_error(
        jobs.patch(
            "once",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "c", "image": "busybox:1.37", "command": ["true"]}]}}}})),
        )
        .await,
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert!(
        e.message
            .starts_with(r#"Job.batch "once" is invalid: spec.template: Invalid value: "#)
            && e.message.ends_with(": field is immutable"),
        "{e:?}"
    );

    // Pod specs: unique container and volume names, mounts of volumes
    // that exist, at unique paths; duplicate env names are accepted.
    let bad: Deployment = serde_json::from_value(json!({"metadata": {"name": "bad"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "bad"}},
            "template": {"metadata": {"labels": {"app": "bad"}},
                "spec": {
                    "volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}],
                    "containers": [
                        {"name": "c", "image": "busybox:1.36", "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}],
                         "volumeMounts": [{"name": "v", "mountPath": "/a"}, {"name": "w", "mountPath": "/a"}]},
                        {"name": "c", "image": "busybox:1.36"}]}}}}))
    .unwrap();
    let e = api_error(deployments.create(&PostParams::default(), &bad).await);
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    let causes: Vec<(String, String, String)> = e
        .details
        .as_ref()
        .expect("details")
        .causes
        .iter()
        .map(|c| (c.reason.clone(), c.field.clone(), c.message.clone()))
        .collect();
    for expected in [
        (
            "FieldValueDuplicate",
            "spec.template.spec.volumes[1].name",
            r#"Duplicate value: "v""#,
        ),
        (
            "FieldValueNotFound",
            "spec.template.spec.containers[0].volumeMounts[1].name",
            r#"Not found: "w""#,
        ),
        (
            "FieldValueInvalid",
            "spec.template.spec.containers[0].volumeMounts[1].mountPath",
            r#"Invalid value: "/a": must be unique"#,
        ),
        (
            "FieldValueDuplicate",
            "spec.template.spec.containers[1].name",
            r#"Duplicate value: "c""#,
        ),
    ] {
        assert!(
            causes
                .iter()
                .any(|(r, f, m)| (r.as_str(), f.as_str(), m.as_str()) == expected),
            "{expected:?} in {causes:?}"
        );
    }
    let mut fine = bad.clone();
    let spec = fine.spec.template.spec.as_mut().unwrap();
    spec.volumes.as_mut().unwrap().pop();
    spec.containers.pop();
    spec.containers[0].volume_mounts.as_mut().unwrap().pop();
    deployments
        .create(&PostParams::default(), &fine)
        .await
        .unwrap();

    // A StatefulSet's spec is immutable but for replicas, template, ...
    let sts: Api<k8s_openapi::api::apps::v1::StatefulSet> = Api::namespaced(client.clone(), &ns);
    let set = |size: &str| {
        json!({"metadata": {"name": "db"},
            "spec": {"serviceName": "db", "replicas": 1, "selector": {"matchLabels": {"app": "db"}},
                "template": {"metadata": {"labels": {"app": "db"}},
                    "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "command": ["sleep", "3600"]}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}]}})
    };
    sts.create(
        &PostParams::default(),
        &serde_json::from_value(set("1Gi")).unwrap(),
    )
    .await
    .unwrap();
    let e = api_error(
        sts.patch(
            "db",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 0, "volumeClaimTemplates": set("2Gi")["spec"]["volumeClaimTemplates"]}})),
        )
        .await,
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert_eq!(
        e.message,
        r#"StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"#
    );
    sts.patch(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 0}})),
    )
    .await
    .unwrap();

    // A Service keeps its cluster IP.
    let services: Api<k8s_openapi::api::core::v1::Service> = Api::namespaced(client.clone(), &ns);
    let svc = services
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "web"},
                "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let ip = svc.spec.unwrap().cluster_ip.unwrap();
    let (net, last) = ip.rsplit_once('.').unwrap();
    let other = format!("{net}.{}", if last == "200" { 201 } else { 200 });
    let e = api_error(
        services
            .patch(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"clusterIP": other, "clusterIPs": [other]}})),
            )
            .await,
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    let causes = &e.details.as_ref().expect("details").causes;
    assert!(
        causes.iter().any(|c| c.field == "spec.clusterIPs[0]"
            && c.message
                == format!(r#"Invalid value: []string{{"{other}"}}: may not change once set"#)),
        "{e:?}"
    );

    // A claim's spec is immutable but for its storage request once bound.
    let pvcs: Api<k8s_openapi::api::core::v1::PersistentVolumeClaim> =
        Api::namespaced(client.clone(), &ns);
    pvcs.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}))
        .unwrap(),
    )
    .await
    .unwrap();
    let e = api_error(
        pvcs.patch(
            "data",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"accessModes": ["ReadWriteMany"]}})),
        )
        .await,
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert!(
        e.message.starts_with(r#"PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"#),
        "{e:?}"
    );

    // Names: a Namespace is an RFC 1123 label, a Service an RFC 1035 label,
    // most other kinds an RFC 1123 subdomain.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let bad_ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "a.b"}})).unwrap();
    let e = api_error(namespaces.create(&PostParams::default(), &bad_ns).await);
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert_eq!(
        e.message,
        r#"Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#
    );
    let svc = serde_json::from_value(json!({"metadata": {"name": "1web"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}}}))
    .unwrap();
    let e = api_error(services.create(&PostParams::default(), &svc).await);
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert_eq!(
        e.message,
        r#"Service "1web" is invalid: metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#
    );
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let cm: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "Upper"}})).unwrap();
    let e = api_error(cms.create(&PostParams::default(), &cm).await);
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"), "{e:?}");
    assert!(
        e.message.starts_with(r#"ConfigMap "Upper" is invalid: metadata.name: Invalid value: "Upper": a lowercase RFC 1123 subdomain must consist of"#),
        "{e:?}"
    );
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
}
