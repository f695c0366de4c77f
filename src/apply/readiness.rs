//! Readiness per kind, as Helm v4's kstatus-based waiter decides it.

use serde_json::Value;

pub enum Ready {
    Yes,
    No(String),
    Failed(String),
}

fn i(v: &Value, p: &str) -> Option<i64> {
    v.pointer(p).and_then(Value::as_i64)
}

fn condition<'a>(v: &'a Value, t: &str) -> Option<&'a Value> {
    v.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some(t))
        })
}

fn condition_true(v: &Value, t: &str) -> bool {
    condition(v, t)
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True")
}

pub fn check(kind: &str, obj: Option<&Value>) -> Ready {
    let Some(o) = obj else {
        return Ready::No("not found".into());
    };
    let generation = i(o, "/metadata/generation").unwrap_or(0);
    let observed = i(o, "/status/observedGeneration");
    let stale =
        || matches!(observed, Some(g) if g < generation) || (observed.is_none() && generation > 0);
    match kind {
        "Deployment" => {
            if stale() {
                return Ready::No("the controller has not observed the latest generation".into());
            }
            let want = i(o, "/spec/replicas").unwrap_or(1);
            let updated = i(o, "/status/updatedReplicas").unwrap_or(0);
            let available = i(o, "/status/availableReplicas").unwrap_or(0);
            let ready = i(o, "/status/readyReplicas").unwrap_or(0);
            if updated < want || available < want || ready < want {
                return Ready::No(format!(
                    "{ready}/{want} replicas ready, {available} available, {updated} updated"
                ));
            }
            if condition(o, "Available").is_some() && !condition_true(o, "Available") {
                return Ready::No("condition Available is not True".into());
            }
            Ready::Yes
        }
        "StatefulSet" => {
            if stale() {
                return Ready::No("the controller has not observed the latest generation".into());
            }
            let want = i(o, "/spec/replicas").unwrap_or(1);
            let ready = i(o, "/status/readyReplicas").unwrap_or(0);
            if ready < want {
                return Ready::No(format!("{ready}/{want} replicas ready"));
            }
            let rolling = o
                .pointer("/spec/updateStrategy/type")
                .and_then(Value::as_str)
                != Some("OnDelete");
            let (cur, upd) = (
                o.pointer("/status/currentRevision"),
                o.pointer("/status/updateRevision"),
            );
            if rolling && upd.is_some() && cur != upd {
                return Ready::No("partitioned roll out in progress".into());
            }
            Ready::Yes
        }
        "DaemonSet" => {
            if stale() {
                return Ready::No("the controller has not observed the latest generation".into());
            }
            let desired = i(o, "/status/desiredNumberScheduled").unwrap_or(0);
            let available = i(o, "/status/numberAvailable").unwrap_or(0);
            let updated = i(o, "/status/updatedNumberScheduled").unwrap_or(0);
            if available < desired || updated < desired {
                return Ready::No(format!("{available}/{desired} pods available"));
            }
            Ready::Yes
        }
        "ReplicaSet" => {
            let want = i(o, "/spec/replicas").unwrap_or(1);
            let ready = i(o, "/status/readyReplicas").unwrap_or(0);
            if ready < want {
                return Ready::No(format!("{ready}/{want} replicas ready"));
            }
            Ready::Yes
        }
        "Job" => {
            if condition_true(o, "Failed") {
                let msg = condition(o, "Failed")
                    .and_then(|c| c.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("job failed");
                return Ready::Failed(msg.to_string());
            }
            if condition_true(o, "Complete") {
                Ready::Yes
            } else {
                Ready::No("job has not completed".into())
            }
        }
        "PersistentVolumeClaim" => match o.pointer("/status/phase").and_then(Value::as_str) {
            Some("Bound") => Ready::Yes,
            other => Ready::No(format!("phase {}", other.unwrap_or("Pending"))),
        },
        "Pod" => {
            let phase = o
                .pointer("/status/phase")
                .and_then(Value::as_str)
                .unwrap_or("Pending");
            match phase {
                "Succeeded" => Ready::Yes,
                "Failed" => Ready::Failed("pod failed".into()),
                _ if condition_true(o, "Ready") => Ready::Yes,
                _ => Ready::No(format!("pod phase {phase}")),
            }
        }
        "Service" => {
            if o.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer")
                && o.pointer("/status/loadBalancer/ingress")
                    .and_then(Value::as_array)
                    .is_none_or(|a| a.is_empty())
            {
                return Ready::No("no load balancer ingress yet".into());
            }
            Ready::Yes
        }
        "CustomResourceDefinition" => {
            if condition_true(o, "Established") {
                Ready::Yes
            } else {
                Ready::No("condition Established is not True".into())
            }
        }
        _ => {
            // kstatus's generic rules: a Ready condition, or an observed generation.
            if let Some(c) = condition(o, "Ready") {
                if c.get("status").and_then(Value::as_str) != Some("True") {
                    return Ready::No("condition Ready is not True".into());
                }
            }
            if matches!(observed, Some(g) if g < generation) {
                return Ready::No("the controller has not observed the latest generation".into());
            }
            Ready::Yes
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deployment_needs_observed_generation_and_available_replicas() {
        let mut d = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2},
            "status": {"observedGeneration": 1, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2}});
        assert!(matches!(check("Deployment", Some(&d)), Ready::No(_)));
        d["status"]["observedGeneration"] = json!(2);
        assert!(matches!(check("Deployment", Some(&d)), Ready::Yes));
        d["status"]["availableReplicas"] = json!(1);
        assert!(matches!(check("Deployment", Some(&d)), Ready::No(_)));
        let job = json!({"status": {"conditions": [{"type": "Failed", "status": "True", "message": "BackoffLimitExceeded"}]}});
        assert!(
            matches!(check("Job", Some(&job)), Ready::Failed(m) if m == "BackoffLimitExceeded")
        );
    }
}
