//! Simulated controllers: workloads become Ready after a delay, with the
//! status a real controller writes; Jobs complete; claims bind.

use crate::server::Shared;
use crate::store::{now, ObjKey};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Annotation that keeps an object unready while present ("true").
pub const HOLD_ANNOTATION: &str = "sandbox.navique.dev/hold-unready";

pub struct Simulation {
    pub enabled: AtomicBool,
    pub delay_ms: AtomicU64,
}

const SIMULATED: &[&str] = &[
    "apps/deployments",
    "apps/statefulsets",
    "apps/daemonsets",
    "apps/replicasets",
    "batch/jobs",
    "/persistentvolumeclaims",
    "/pods",
    "/services",
];

pub async fn run(shared: Arc<Shared>, sim: Arc<Simulation>) {
    let mut pending: HashMap<ObjKey, Instant> = HashMap::new();
    // The FailedCreate Event last recorded per owner, counted up on retries.
    let mut events: HashMap<ObjKey, (String, String)> = HashMap::new();
    loop {
        {
            let mut st = shared.state.lock().expect("lock");
            let touched = std::mem::take(&mut st.touched);
            if sim.enabled.load(Ordering::Relaxed) {
                let delay = Duration::from_millis(sim.delay_ms.load(Ordering::Relaxed));
                for k in touched {
                    if SIMULATED.contains(&k.0.as_str()) {
                        pending.entry(k).or_insert_with(|| Instant::now() + delay);
                    }
                }
                let due: Vec<ObjKey> = pending
                    .iter()
                    .filter(|(_, t)| **t <= Instant::now())
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in due {
                    pending.remove(&k);
                    let Some(obj) = st.object(&k) else { continue };
                    let held = obj
                        .pointer("/metadata/annotations")
                        .and_then(|a| a.get(HOLD_ANNOTATION))
                        .and_then(Value::as_str)
                        == Some("true");
                    if held || obj.pointer("/metadata/deletionTimestamp").is_some() {
                        continue;
                    }
                    if let Some(status) = ready_status(&k.0, &obj) {
                        if obj.get("status") != Some(&status) {
                            // The Pods the controller would create first meet
                            // admission; refused, the owner stays unready.
                            if let Some((pod, refusal, terminating)) = refused_pod(&st, &k, &obj) {
                                if !terminating {
                                    failed_create(&mut st, &mut events, &k, &obj, &pod, &refusal);
                                }
                                pending.insert(k, Instant::now() + RETRY.max(delay));
                                continue;
                            }
                            events.remove(&k);
                            st.write_status(&k, status);
                        }
                    }
                }
            } else {
                pending.clear();
            }
        }
        let wait = pending
            .values()
            .min()
            .map(|t| t.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_millis(500));
        tokio::select! {
            _ = shared.wake_controllers.notified() => {}
            _ = tokio::time::sleep(wait.min(Duration::from_millis(500))) => {}
        }
    }
}

/// How soon a controller whose Pods were refused tries again.
const RETRY: Duration = Duration::from_secs(1);

/// The Pod a workload controller would create next and why admission
/// refuses it: (the Pod's name as admission shows it, the error, whether the
/// namespace is being terminated). None when it would be admitted or the
/// owner wants no Pods.
fn refused_pod(
    st: &crate::store::State,
    k: &ObjKey,
    obj: &Value,
) -> Option<(String, crate::error::ApiError, bool)> {
    let name = obj.pointer("/metadata/name")?.as_str()?;
    let pod = match k.0.as_str() {
        "apps/deployments" => format!("{name}-{}-", template_hash(obj)),
        "apps/replicasets" | "apps/daemonsets" | "batch/jobs" => format!("{name}-"),
        "apps/statefulsets" => format!("{name}-0"),
        _ => return None,
    };
    let wanted = match k.0.as_str() {
        "batch/jobs" => {
            obj.pointer("/spec/suspend") != Some(&json!(true))
                && int(obj, "/spec/parallelism", 1) > 0
        }
        "apps/daemonsets" => true,
        _ => int(obj, "/spec/replicas", 1) > 0,
    };
    if !wanted {
        return None;
    }
    let template = obj
        .pointer("/spec/template")
        .cloned()
        .unwrap_or(Value::Null);
    crate::admission::pod_create(st, &k.1, &template, &pod)
        .err()
        .map(|(e, terminating)| (pod, e, terminating))
}

/// Records the Warning Event a controller writes when a Pod create is
/// refused (core/v1, as client-go's event recorder), or counts up the one
/// it recorded last time when the message is the same.
fn failed_create(
    st: &mut crate::store::State,
    events: &mut HashMap<ObjKey, (String, String)>,
    k: &ObjKey,
    obj: &Value,
    pod: &str,
    refusal: &crate::error::ApiError,
) {
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let (kind, component) = match k.0.as_str() {
        "apps/deployments" | "apps/replicasets" => (
            if k.0 == "apps/deployments" {
                "Deployment"
            } else {
                "ReplicaSet"
            },
            "replicaset-controller",
        ),
        "apps/statefulsets" => ("StatefulSet", "statefulset-controller"),
        "apps/daemonsets" => ("DaemonSet", "daemonset-controller"),
        _ => ("Job", "job-controller"),
    };
    let message = if kind == "StatefulSet" {
        format!(
            "create Pod {pod} in StatefulSet {name} failed error: {}",
            refusal.message
        )
    } else {
        format!("Error creating: {}", refusal.message)
    };
    let Some(t) = st.type_of("/events") else {
        return;
    };
    let opts = crate::store::WriteOptions {
        manager: component.into(),
        ..Default::default()
    };
    if let Some((ev, last)) = events.get(k) {
        if *last == message {
            if let Ok(cur) = st.get(&t, &k.1, ev) {
                let mut e = (*cur).clone();
                e["count"] = json!(int(&e, "/count", 1) + 1);
                e["lastTimestamp"] = json!(now());
                let _ = st.update(&t, &k.1, ev, e, &opts);
                return;
            }
        }
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let ev = format!("{name}.{nanos:x}");
    let event = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": ev, "namespace": k.1},
        "involvedObject": {
            "kind": kind,
            "namespace": k.1,
            "name": name,
            "uid": obj["metadata"]["uid"],
            "apiVersion": obj["apiVersion"],
            "resourceVersion": obj["metadata"]["resourceVersion"],
        },
        "reason": "FailedCreate",
        "message": message,
        "source": {"component": component},
        "firstTimestamp": now(),
        "lastTimestamp": now(),
        "count": 1,
        "type": "Warning",
        "reportingComponent": component,
        "reportingInstance": "",
    });
    if st.create(&t, &k.1, event, &opts).is_ok() {
        events.insert(k.clone(), (ev, message));
    }
}

/// The pod-template-hash the simulated Deployment's ReplicaSet is named by.
fn template_hash(obj: &Value) -> String {
    let generation = int(obj, "/metadata/generation", 1);
    format!("{:x}", generation * 7919 + 1_000_000_000)
        .chars()
        .take(10)
        .collect()
}

fn int(v: &Value, p: &str, default: i64) -> i64 {
    v.pointer(p).and_then(Value::as_i64).unwrap_or(default)
}

fn keep_time(obj: &Value, ctype: &str, field: &str) -> Value {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(ctype))
        })
        .and_then(|c| c.get(field).cloned())
        .unwrap_or_else(|| json!(now()))
}

/// The status a healthy controller would write for this object.
pub fn ready_status(res: &str, obj: &Value) -> Option<Value> {
    let generation = int(obj, "/metadata/generation", 1);
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let hash = template_hash(obj);
    match res {
        "apps/deployments" => {
            let r = int(obj, "/spec/replicas", 1);
            let mut s = json!({
                "observedGeneration": generation,
                "replicas": r,
                "updatedReplicas": r,
                "readyReplicas": r,
                "availableReplicas": r,
                "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.",
                     "lastUpdateTime": keep_time(obj, "Available", "lastUpdateTime"), "lastTransitionTime": keep_time(obj, "Available", "lastTransitionTime")},
                    {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet \"{name}-{hash}\" has successfully progressed."),
                     "lastUpdateTime": keep_time(obj, "Progressing", "lastUpdateTime"), "lastTransitionTime": keep_time(obj, "Progressing", "lastTransitionTime")},
                ]
            });
            if r == 0 {
                let m = s.as_object_mut().expect("object");
                for k in [
                    "replicas",
                    "updatedReplicas",
                    "readyReplicas",
                    "availableReplicas",
                ] {
                    m.remove(k);
                }
            }
            Some(s)
        }
        "apps/statefulsets" => {
            let r = int(obj, "/spec/replicas", 1);
            Some(json!({
                "observedGeneration": generation,
                "replicas": r,
                "readyReplicas": r,
                "currentReplicas": r,
                "updatedReplicas": r,
                "availableReplicas": r,
                "currentRevision": format!("{name}-{hash}"),
                "updateRevision": format!("{name}-{hash}"),
                "collisionCount": 0,
            }))
        }
        "apps/replicasets" => {
            let r = int(obj, "/spec/replicas", 1);
            Some(
                json!({"observedGeneration": generation, "replicas": r, "fullyLabeledReplicas": r, "readyReplicas": r, "availableReplicas": r}),
            )
        }
        "apps/daemonsets" => Some(json!({
            "observedGeneration": generation,
            "currentNumberScheduled": 1,
            "desiredNumberScheduled": 1,
            "numberAvailable": 1,
            "numberReady": 1,
            "numberMisscheduled": 0,
            "updatedNumberScheduled": 1,
        })),
        "batch/jobs" => {
            let completions = int(obj, "/spec/completions", 1);
            let start = obj
                .pointer("/status/startTime")
                .cloned()
                .unwrap_or_else(|| json!(now()));
            Some(json!({
                "startTime": start,
                "completionTime": obj.pointer("/status/completionTime").cloned().unwrap_or_else(|| json!(now())),
                "succeeded": completions,
                "ready": 0,
                "terminating": 0,
                "uncountedTerminatedPods": {},
                "conditions": [
                    {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods",
                     "lastProbeTime": keep_time(obj, "SuccessCriteriaMet", "lastProbeTime"), "lastTransitionTime": keep_time(obj, "SuccessCriteriaMet", "lastTransitionTime")},
                    {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods",
                     "lastProbeTime": keep_time(obj, "Complete", "lastProbeTime"), "lastTransitionTime": keep_time(obj, "Complete", "lastTransitionTime")},
                ]
            }))
        }
        "/persistentvolumeclaims" => {
            let mut s = json!({"phase": "Bound", "accessModes": obj.pointer("/spec/accessModes").cloned().unwrap_or(json!(["ReadWriteOnce"]))});
            if let Some(c) = obj.pointer("/spec/resources/requests/storage") {
                s["capacity"] = json!({"storage": c});
            }
            Some(s)
        }
        "/pods" => Some(json!({
            "phase": "Running",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": keep_time(obj, "Initialized", "lastTransitionTime")},
                {"type": "Ready", "status": "True", "lastTransitionTime": keep_time(obj, "Ready", "lastTransitionTime")},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": keep_time(obj, "ContainersReady", "lastTransitionTime")},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": keep_time(obj, "PodScheduled", "lastTransitionTime")},
            ],
            "hostIP": "127.0.0.1",
            "podIP": "10.244.0.10",
            "startTime": started_at(obj),
            "containerStatuses": running_containers(obj, &started_at(obj)),
        })),
        "/services" => {
            if obj.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer") {
                Some(json!({"loadBalancer": {"ingress": [{"ip": "127.0.0.1", "ipMode": "VIP"}]}}))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// What a kubelet reports for a Pod whose containers all run and are ready
/// (kubectl's READY column counts them).
fn running_containers(pod: &Value, started: &Value) -> Value {
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array);
    Value::Array(
        containers
            .into_iter()
            .flatten()
            .map(|c| {
                json!({"name": c["name"], "image": c["image"], "imageID": "", "ready": true,
                    "started": true, "restartCount": 0, "state": {"running": {"startedAt": started}}})
            })
            .collect(),
    )
}

fn started_at(pod: &Value) -> Value {
    pod.pointer("/status/startTime")
        .cloned()
        .unwrap_or_else(|| json!(now()))
}
