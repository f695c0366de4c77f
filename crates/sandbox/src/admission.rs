//! Admission a real kube-apiserver runs on every create, whichever client
//! sends it: NamespaceLifecycle (in `store::State::create`) and the
//! ServiceAccount plugin, which refuses a Pod naming a ServiceAccount its
//! namespace does not hold. The simulated workload controllers put the Pods
//! they would create through the same check.

use crate::error::ApiError;
use crate::store::State;
use serde_json::Value;

/// The name admission shows for an object being created: its name, else its
/// generateName (names are generated after admission), else "Unknown".
pub fn shown_name(obj: &Value) -> String {
    let meta = &obj["metadata"];
    ["name", "generateName"]
        .iter()
        .filter_map(|k| meta.get(*k).and_then(Value::as_str))
        .find(|n| !n.is_empty())
        .unwrap_or("Unknown")
        .to_string()
}

/// The ServiceAccount admission plugin: `spec.serviceAccountName` (default
/// "default") must exist in the Pod's namespace.
pub fn pod_service_account(
    st: &State,
    ns: &str,
    pod_spec: &Value,
    shown: &str,
) -> Result<(), ApiError> {
    let sa = pod_spec
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default");
    let sa_type = st.type_of("/serviceaccounts").expect("serviceaccounts");
    if st.get(&sa_type, ns, sa).is_ok() {
        return Ok(());
    }
    let pods = st.type_of("/pods").expect("pods");
    Err(ApiError::forbidden_object(
        &pods,
        shown,
        &format!("error looking up service account {ns}/{sa}: serviceaccount {sa:?} not found"),
    ))
}

/// What creating a Pod from `template` in `ns` would meet: NamespaceLifecycle
/// and the ServiceAccount plugin. `Err((error, terminating))`: controllers
/// record no event when the namespace is being terminated.
pub fn pod_create(
    st: &State,
    ns: &str,
    template: &Value,
    shown: &str,
) -> Result<(), (ApiError, bool)> {
    let pods = st.type_of("/pods").expect("pods");
    let ns_type = st.type_of("/namespaces").expect("namespaces");
    match st.get(&ns_type, "", ns) {
        Err(_) => return Err((ApiError::namespace_not_found(ns), true)),
        Ok(n) if n.pointer("/metadata/deletionTimestamp").is_some() => {
            return Err((namespace_terminating(&pods, ns, shown), true))
        }
        Ok(_) => {}
    }
    let spec = template.get("spec").cloned().unwrap_or(Value::Null);
    pod_service_account(st, ns, &spec, shown).map_err(|e| (e, false))
}

/// NamespaceLifecycle's refusal in a namespace being deleted, with the
/// `NamespaceTerminating` cause controllers look for.
pub fn namespace_terminating(t: &crate::registry::ResourceType, ns: &str, shown: &str) -> ApiError {
    let mut e = ApiError::forbidden_object(
        t,
        shown,
        &format!("unable to create new content in namespace {ns} because it is being terminated"),
    );
    if let Some(d) = e.details.as_mut() {
        d["causes"] = serde_json::json!([{
            "reason": "NamespaceTerminating",
            "message": format!("namespace {ns} is being terminated"),
            "field": "metadata.namespace",
        }]);
    }
    e
}

