//! Server-side printing: the `meta.k8s.io/v1` `Table` kube-apiserver answers
//! when a client (kubectl) asks for `application/json;as=Table;v=v1;g=meta.k8s.io`.
//!
//! Built-in kinds get the columns of Kubernetes' printers
//! (pkg/printers/internalversion/printers.go), custom resources their CRD
//! version's `additionalPrinterColumns` (a default `Age` when it has none, as
//! apiextensions-apiserver serves them), anything else the default
//! convertor's `Name` and `Created At`. The server always generates the wide
//! columns; kubectl hides those of priority 1 unless `-o wide`.

use crate::registry::ResourceType;
use crate::store::State;
use serde_json::{json, Value};

/// The Table version asked for by an Accept header, if any (kubectl sends
/// v1, then v1beta1, then plain JSON as fallbacks: the first one wins).
pub fn wanted(accept: &str) -> Option<&'static str> {
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let base = parts.next().unwrap_or_default();
        if base != "application/json" && base != "*/*" && base != "application/*" {
            continue;
        }
        let (mut as_, mut v, mut g) = ("", "", "");
        for p in parts {
            match p.split_once('=') {
                Some(("as", x)) => as_ = x,
                Some(("v", x)) => v = x,
                Some(("g", x)) => g = x,
                _ => {}
            }
        }
        if as_.is_empty() {
            return None;
        }
        if as_ == "Table" && g == "meta.k8s.io" {
            match v {
                "v1" => return Some("meta.k8s.io/v1"),
                "v1beta1" => return Some("meta.k8s.io/v1beta1"),
                _ => {}
            }
        }
    }
    None
}

/// `includeObject`: what each row carries in `object`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    pub fn parse(q: Option<&str>) -> Result<Include, String> {
        match q.unwrap_or("") {
            "" | "Metadata" => Ok(Include::Metadata),
            "None" => Ok(Include::None),
            "Object" => Ok(Include::Object),
            other => Err(format!(
                "includeObject: Unsupported value: \"{other}\": supported values: \"Metadata\", \"None\", \"Object\""
            )),
        }
    }
}

struct Col {
    name: String,
    typ: String,
    format: String,
    description: String,
    priority: i64,
}

fn col(name: &str, typ: &str, priority: i64, description: &str) -> Col {
    Col {
        name: name.into(),
        typ: typ.into(),
        format: if name == "Name" {
            "name".into()
        } else {
            String::new()
        },
        description: description.into(),
        priority,
    }
}

const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const CONTAINERS_DOC: &str = "Names of each container in the template.";
const IMAGES_DOC: &str = "Images referenced by each container in the template.";

/// A CRD column: its definition and the JSONPath that fills it.
struct CrdCol {
    col: Col,
    path: String,
}

enum Printer {
    Builtin(&'static str),
    Crd(Vec<CrdCol>),
    Default,
}

/// How objects of `t`, read in `version`, are printed.
fn printer(st: &State, t: &ResourceType, version: &str) -> Printer {
    if let Some(crd_name) = &t.crd {
        let crd_type = st
            .registry
            .lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .cloned();
        let crd = crd_type.and_then(|ct| st.get(&ct, "", crd_name).ok());
        let columns = crd
            .as_ref()
            .and_then(|c| {
                c.pointer("/spec/versions")
                    .and_then(Value::as_array)
                    .cloned()
            })
            .unwrap_or_default()
            .into_iter()
            .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
            .and_then(|v| {
                v.get("additionalPrinterColumns")
                    .and_then(Value::as_array)
                    .cloned()
            })
            .unwrap_or_default();
        let mut cols: Vec<CrdCol> = columns
            .iter()
            .map(|c| {
                let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                let path = s("jsonPath");
                let description = match s("description") {
                    d if d.is_empty() => {
                        format!("Custom resource definition column (in JSONPath format): {path}")
                    }
                    d => d,
                };
                CrdCol {
                    col: Col {
                        name: s("name"),
                        typ: s("type"),
                        format: s("format"),
                        description,
                        priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                    },
                    path,
                }
            })
            .collect();
        if cols.is_empty() {
            cols.push(CrdCol {
                col: col("Age", "date", 0, AGE_DOC),
                path: ".metadata.creationTimestamp".into(),
            });
        }
        return Printer::Crd(cols);
    }
    let key = match (t.group.as_str(), t.kind.as_str()) {
        ("", "Pod") => "Pod",
        ("apps", "Deployment") => "Deployment",
        ("apps", "StatefulSet") => "StatefulSet",
        ("apps", "DaemonSet") => "DaemonSet",
        ("apps", "ReplicaSet") => "ReplicaSet",
        ("batch", "Job") => "Job",
        ("batch", "CronJob") => "CronJob",
        ("", "Service") => "Service",
        ("", "ConfigMap") => "ConfigMap",
        ("", "Secret") => "Secret",
        ("", "Namespace") => "Namespace",
        ("", "ServiceAccount") => "ServiceAccount",
        ("", "PersistentVolumeClaim") => "PersistentVolumeClaim",
        ("", "Event") | ("events.k8s.io", "Event") => "Event",
        ("", "Node") => "Node",
        ("networking.k8s.io", "Ingress") => "Ingress",
        _ => return Printer::Default,
    };
    Printer::Builtin(key)
}

fn columns(p: &Printer) -> Vec<Col> {
    let name = || col("Name", "string", 0, NAME_DOC);
    let age = || col("Age", "string", 0, AGE_DOC);
    let containers = || col("Containers", "string", 1, CONTAINERS_DOC);
    let images = || col("Images", "string", 1, IMAGES_DOC);
    let selector = |d: &str| col("Selector", "string", 1, d);
    match p {
        Printer::Crd(cols) => {
            let mut out = vec![name()];
            out.extend(cols.iter().map(|c| Col {
                name: c.col.name.clone(),
                typ: c.col.typ.clone(),
                format: c.col.format.clone(),
                description: c.col.description.clone(),
                priority: c.col.priority,
            }));
            out
        }
        Printer::Default => vec![name(), col("Created At", "date", 0, AGE_DOC)],
        Printer::Builtin(kind) => match *kind {
            "Pod" => vec![
                name(),
                col("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
                col("Status", "string", 0, "The aggregate status of the containers in this pod."),
                col("Restarts", "string", 0, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
                age(),
                col("IP", "string", 1, "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."),
                col("Node", "string", 1, "NodeName indicates in which node this pod is scheduled."),
                col("Nominated Node", "string", 1, "nominatedNodeName is set only when this pod preempts other pods on the node."),
                col("Readiness Gates", "string", 1, "If specified, all readiness gates will be evaluated for pod readiness."),
            ],
            "Deployment" => vec![
                name(),
                col("Ready", "string", 0, "Number of the pod with ready state"),
                col("Up-to-date", "string", 0, "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
                col("Available", "string", 0, "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment."),
                age(),
                containers(),
                images(),
                selector("Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."),
            ],
            "StatefulSet" => vec![
                name(),
                col("Ready", "string", 0, "Number of the pod with ready state"),
                age(),
                containers(),
                images(),
            ],
            "DaemonSet" => vec![
                name(),
                col("Desired", "integer", 0, "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod)."),
                col("Current", "integer", 0, "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."),
                col("Ready", "integer", 0, "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."),
                col("Up-to-date", "integer", 0, "The total number of nodes that are running updated daemon pod"),
                col("Available", "integer", 0, "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
                col("Node Selector", "string", 0, "NodeSelector is a selector which must be true for the pod to fit on a node."),
                age(),
                containers(),
                images(),
                selector("A label query over pods that are managed by the daemon set."),
            ],
            "ReplicaSet" => vec![
                name(),
                col("Desired", "integer", 0, "Replicas is the number of desired pods."),
                col("Current", "integer", 0, "Replicas is the most recently observed number of non-terminating pods."),
                col("Ready", "integer", 0, "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition."),
                age(),
                containers(),
                images(),
                selector("Selector is a label query over pods that should match the replica count."),
            ],
            "Job" => vec![
                name(),
                col("Status", "string", 0, "Status of the job."),
                col("Completions", "string", 0, "The completion status of the job."),
                col("Duration", "string", 0, "Time required to complete the job."),
                age(),
                containers(),
                images(),
                selector("A label query over pods that should match the pod count."),
            ],
            "CronJob" => vec![
                name(),
                col("Schedule", "string", 0, "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
                col("Timezone", "string", 0, "The time zone name for the given schedule."),
                col("Suspend", "boolean", 0, "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions."),
                col("Active", "integer", 0, "A list of pointers to currently running jobs."),
                col("Last Schedule", "string", 0, "Information when was the last time the job was successfully scheduled."),
                age(),
                containers(),
                images(),
                selector("A label query over pods that should match the pod count."),
            ],
            "Service" => vec![
                name(),
                col("Type", "string", 0, "type determines how the Service is exposed."),
                col("Cluster-IP", "string", 0, "clusterIP is the IP address of the service and is usually assigned randomly."),
                col("External-IP", "string", 0, "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."),
                col("Port(s)", "string", 0, "The list of ports that are exposed by this service."),
                age(),
                selector("Route service traffic to pods with label keys and values matching this selector."),
            ],
            "ConfigMap" => vec![
                name(),
                col("Data", "integer", 0, "Data contains the configuration data."),
                age(),
            ],
            "Secret" => vec![
                name(),
                col("Type", "string", 0, "Used to facilitate programmatic handling of secret data."),
                col("Data", "integer", 0, "Data contains the secret data."),
                age(),
            ],
            "Namespace" => vec![
                name(),
                col("Status", "string", 0, "The status of the namespace"),
                age(),
            ],
            "ServiceAccount" => vec![
                name(),
                col("Secrets", "integer", 0, "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."),
                age(),
            ],
            "PersistentVolumeClaim" => vec![
                name(),
                col("Status", "string", 0, "phase represents the current phase of PersistentVolumeClaim."),
                col("Volume", "string", 0, "volumeName is the binding reference to the PersistentVolume backing this claim."),
                col("Capacity", "string", 0, "capacity represents the actual resources of the underlying volume."),
                col("Access Modes", "string", 0, "accessModes contains the actual access modes the volume backing the PVC has."),
                col("StorageClass", "string", 0, "storageClassName is the name of the StorageClass required by the claim."),
                col("VolumeAttributesClass", "string", 0, "volumeAttributesClassName sets the VolumeAttributesClass used by this claim."),
                age(),
                col("VolumeMode", "string", 1, "volumeMode defines what type of volume is required by the claim."),
            ],
            "Event" => vec![
                col("Last Seen", "string", 0, "The time at which the most recent occurrence of this event was recorded."),
                col("Type", "string", 0, "Type of this event (Normal, Warning), new types could be added in the future"),
                col("Reason", "string", 0, "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
                col("Object", "string", 0, "The object that this event is about."),
                col("Subobject", "string", 1, "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]."),
                col("Source", "string", 1, "The component reporting this event. Should be a short machine understandable string."),
                col("Message", "string", 0, "A human-readable description of the status of this operation."),
                col("First Seen", "string", 1, "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"),
                col("Count", "string", 1, "The number of times this event has occurred."),
                {
                    let mut c = col("Name", "string", 1, NAME_DOC);
                    c.format = "name".into();
                    c
                },
            ],
            "Node" => vec![
                name(),
                col("Status", "string", 0, "The status of the node"),
                col("Roles", "string", 0, "The roles of the node"),
                age(),
                col("Version", "string", 0, "Kubelet Version reported by the node."),
                col("Internal-IP", "string", 1, "List of addresses reachable to the node."),
                col("External-IP", "string", 1, "List of addresses reachable to the node."),
                col("OS-Image", "string", 1, "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
                col("Kernel-Version", "string", 1, "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
                col("Container-Runtime", "string", 1, "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."),
            ],
            "Ingress" => vec![
                name(),
                col("Class", "string", 0, "The name of the IngressClass cluster resource."),
                col("Hosts", "string", 0, "Hosts that incoming requests are matched against before the ingress rule"),
                col("Address", "string", 0, "Address is a list containing ingress points for the load-balancer"),
                col("Ports", "string", 0, "Ports of TLS configurations that open"),
                age(),
            ],
            _ => vec![name(), age()],
        },
    }
}

fn column_json(c: &Col) -> Value {
    json!({"name": c.name, "type": c.typ, "format": c.format,
        "description": c.description, "priority": c.priority})
}

// ---- helpers shared by the printers ----

fn get<'a>(v: &'a Value, path: &str) -> &'a Value {
    v.pointer(path).unwrap_or(&Value::Null)
}

fn int(v: &Value, path: &str) -> i64 {
    get(v, path).as_i64().unwrap_or(0)
}

fn text<'a>(v: &'a Value, path: &str) -> &'a str {
    get(v, path).as_str().unwrap_or("")
}

fn or_none(s: &str) -> String {
    if s.is_empty() {
        "<none>".into()
    } else {
        s.into()
    }
}

fn parse_time(s: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// apimachinery's duration.HumanDuration.
pub fn human_duration(d: chrono::Duration) -> String {
    let seconds = d.num_seconds();
    if seconds < -1 {
        return "<invalid>".into();
    } else if seconds < 0 {
        return "0s".into();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = d.num_minutes();
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = d.num_hours();
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    } else if hours < 48 {
        return format!("{hours}h");
    } else if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    } else if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// translateTimestampSince: the age of a timestamp, `<unknown>` when unset.
fn since(ts: &str) -> String {
    match parse_time(ts) {
        Some(t) => human_duration(chrono::Utc::now() - t),
        None => "<unknown>".into(),
    }
}

fn age(obj: &Value) -> String {
    since(text(obj, "/metadata/creationTimestamp"))
}

/// labels.FormatLabels / a selector's string: `k=v,...` sorted, `<none>` when empty.
fn format_labels(m: &Value) -> String {
    let Some(map) = m.as_object().filter(|m| !m.is_empty()) else {
        return "<none>".into();
    };
    let mut pairs: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs.join(",")
}

/// metav1.LabelSelectorAsSelector(...).String().
fn format_selector(sel: &Value) -> String {
    if sel.is_null() {
        return "<none>".into();
    }
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))));
        }
    }
    if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let key = e
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let mut values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            values.sort();
            let s = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.clone(),
                "DoesNotExist" => format!("!{key}"),
                _ => continue,
            };
            reqs.push((key, s));
        }
    }
    if reqs.is_empty() {
        return "<none>".into();
    }
    reqs.sort();
    reqs.into_iter()
        .map(|(_, s)| s)
        .collect::<Vec<_>>()
        .join(",")
}

fn containers_images(spec: &Value) -> (String, String) {
    let cs = spec
        .get("containers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = cs.iter().map(|c| text(c, "/name")).collect();
    let images: Vec<&str> = cs.iter().map(|c| text(c, "/image")).collect();
    (names.join(","), images.join(","))
}

fn pod_template_cells(obj: &Value) -> (Value, Value) {
    let (c, i) = containers_images(get(obj, "/spec/template/spec"));
    (json!(c), json!(i))
}

// ---- the printers ----

fn pod_cells(o: &Value) -> Vec<Value> {
    let containers = get(o, "/spec/containers").as_array().map_or(0, Vec::len);
    let mut restarts = 0;
    let mut ready = 0;
    let mut reason = match text(o, "/status/reason") {
        "" => text(o, "/status/phase").to_string(),
        r => r.to_string(),
    };
    let mut last_restart: Option<chrono::DateTime<chrono::Utc>> = None;
    let mut initializing = false;
    let inits = get(o, "/status/initContainerStatuses")
        .as_array()
        .cloned()
        .unwrap_or_default();
    let init_count = get(o, "/spec/initContainers")
        .as_array()
        .map_or(0, Vec::len);
    for (i, c) in inits.iter().enumerate() {
        restarts += int(c, "/restartCount");
        if let Some(t) = parse_time(text(c, "/lastState/terminated/finishedAt")) {
            last_restart = last_restart.max(Some(t));
        }
        if text(c, "/state/terminated/reason") == "Completed"
            || get(c, "/state/terminated/exitCode").as_i64() == Some(0)
        {
            continue;
        }
        if get(c, "/state/terminated").is_object() {
            reason = match text(c, "/state/terminated/reason") {
                "" => format!("Init:ExitCode:{}", int(c, "/state/terminated/exitCode")),
                r => format!("Init:{r}"),
            };
        } else if !matches!(text(c, "/state/waiting/reason"), "" | "PodInitializing") {
            reason = format!("Init:{}", text(c, "/state/waiting/reason"));
        } else {
            reason = format!("Init:{i}/{init_count}");
        }
        initializing = true;
        break;
    }
    if !initializing {
        restarts = 0;
        let mut has_running = false;
        let statuses = get(o, "/status/containerStatuses")
            .as_array()
            .cloned()
            .unwrap_or_default();
        for c in statuses.iter().rev() {
            restarts += int(c, "/restartCount");
            if let Some(t) = parse_time(text(c, "/lastState/terminated/finishedAt")) {
                last_restart = last_restart.max(Some(t));
            }
            if !text(c, "/state/waiting/reason").is_empty() {
                reason = text(c, "/state/waiting/reason").into();
            } else if !text(c, "/state/terminated/reason").is_empty() {
                reason = text(c, "/state/terminated/reason").into();
            } else if get(c, "/state/terminated").is_object() {
                reason = match get(c, "/state/terminated/signal").as_i64() {
                    Some(s) if s != 0 => format!("Signal:{s}"),
                    _ => format!("ExitCode:{}", int(c, "/state/terminated/exitCode")),
                };
            } else if get(c, "/ready").as_bool() == Some(true)
                && get(c, "/state/running").is_object()
            {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let ready_cond = get(o, "/status/conditions")
                .as_array()
                .and_then(|cs| cs.iter().find(|c| text(c, "/type") == "Ready"))
                .map(|c| text(c, "/status") == "True")
                .unwrap_or(false);
            reason = if ready_cond { "Running" } else { "NotReady" }.into();
        }
    }
    if !get(o, "/metadata/deletionTimestamp").is_null() {
        reason = if text(o, "/status/reason") == "NodeLost" {
            "Unknown".into()
        } else {
            "Terminating".into()
        };
    }
    let restarts_str = match last_restart {
        Some(t) if restarts > 0 => {
            format!(
                "{restarts} ({} ago)",
                human_duration(chrono::Utc::now() - t)
            )
        }
        _ => restarts.to_string(),
    };
    let gates = get(o, "/spec/readinessGates")
        .as_array()
        .cloned()
        .unwrap_or_default();
    let gates_str = if gates.is_empty() {
        "<none>".to_string()
    } else {
        let conds = get(o, "/status/conditions")
            .as_array()
            .cloned()
            .unwrap_or_default();
        let true_gates = gates
            .iter()
            .filter(|g| {
                conds.iter().any(|c| {
                    text(c, "/type") == text(g, "/conditionType") && text(c, "/status") == "True"
                })
            })
            .count();
        format!("{true_gates}/{}", gates.len())
    };
    vec![
        json!(format!("{ready}/{containers}")),
        json!(reason),
        json!(restarts_str),
        json!(age(o)),
        json!(or_none(text(o, "/status/podIP"))),
        json!(or_none(text(o, "/spec/nodeName"))),
        json!(or_none(text(o, "/status/nominatedNodeName"))),
        json!(gates_str),
    ]
}

fn has_condition(o: &Value, typ: &str) -> bool {
    get(o, "/status/conditions").as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| text(c, "/type") == typ && text(c, "/status") == "True")
    })
}

fn job_cells(o: &Value) -> Vec<Value> {
    let succeeded = int(o, "/status/succeeded");
    let completions = match (
        get(o, "/spec/completions").as_i64(),
        get(o, "/spec/parallelism").as_i64(),
    ) {
        (Some(c), _) => format!("{succeeded}/{c}"),
        (None, Some(p)) if p > 1 => format!("{succeeded}/1 of {p}"),
        _ => format!("{succeeded}/1"),
    };
    let duration = match (
        parse_time(text(o, "/status/startTime")),
        parse_time(text(o, "/status/completionTime")),
    ) {
        (None, _) => String::new(),
        (Some(s), None) => human_duration(chrono::Utc::now() - s),
        (Some(s), Some(c)) => human_duration(c - s),
    };
    let status = if has_condition(o, "Complete") {
        "Complete"
    } else if has_condition(o, "Failed") {
        "Failed"
    } else if !get(o, "/metadata/deletionTimestamp").is_null() {
        "Terminating"
    } else if has_condition(o, "Suspended") {
        "Suspended"
    } else if has_condition(o, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(o, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let (c, i) = pod_template_cells(o);
    vec![
        json!(status),
        json!(completions),
        json!(duration),
        json!(age(o)),
        c,
        i,
        json!(format_selector(get(o, "/spec/selector"))),
    ]
}

fn service_cells(o: &Value) -> Vec<Value> {
    let typ = match text(o, "/spec/type") {
        "" => "ClusterIP",
        t => t,
    };
    let external_ips: Vec<&str> = get(o, "/spec/externalIPs")
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let external = match typ {
        "ClusterIP" | "NodePort" => or_none(&external_ips.join(",")),
        "LoadBalancer" => {
            let mut ips: Vec<String> = get(o, "/status/loadBalancer/ingress")
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|i| match text(i, "/ip") {
                            "" => text(i, "/hostname").to_string(),
                            ip => ip.to_string(),
                        })
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            ips.extend(external_ips.iter().map(|s| s.to_string()));
            let s = ips.join(",");
            if s.is_empty() {
                "<pending>".into()
            } else if s.len() > 16 {
                format!("{}...", &s[..13])
            } else {
                s
            }
        }
        "ExternalName" => text(o, "/spec/externalName").to_string(),
        _ => "<unknown>".into(),
    };
    let ports: Vec<String> = get(o, "/spec/ports")
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| {
                    let proto = match text(p, "/protocol") {
                        "" => "TCP",
                        x => x,
                    };
                    match get(p, "/nodePort").as_i64() {
                        Some(np) if np != 0 && typ != "ClusterIP" => {
                            format!("{}:{np}/{proto}", int(p, "/port"))
                        }
                        _ => format!("{}/{proto}", int(p, "/port")),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    vec![
        json!(typ),
        json!(or_none(text(o, "/spec/clusterIP"))),
        json!(external),
        json!(or_none(&ports.join(","))),
        json!(age(o)),
        json!(format_labels(get(o, "/spec/selector"))),
    ]
}

fn event_cells(o: &Value) -> Vec<Value> {
    let first_ts = text(o, "/firstTimestamp");
    let first = if parse_time(first_ts).is_none() {
        since(text(o, "/eventTime"))
    } else {
        since(first_ts)
    };
    let mut last = if parse_time(text(o, "/lastTimestamp")).is_none() {
        first.clone()
    } else {
        since(text(o, "/lastTimestamp"))
    };
    let mut count = int(o, "/count");
    if get(o, "/series").is_object() {
        last = since(text(o, "/series/lastObservedTime"));
        count = int(o, "/series/count");
    } else if count == 0 {
        count = 1;
    }
    let kind = text(o, "/involvedObject/kind").to_lowercase();
    let target = match text(o, "/involvedObject/name") {
        "" => kind,
        n => format!("{kind}/{n}"),
    };
    let first_non_empty = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    let component = first_non_empty(text(o, "/source/component"), text(o, "/reportingComponent"));
    let instance = first_non_empty(text(o, "/source/host"), text(o, "/reportingInstance"));
    let source = if component.is_empty() {
        "<unknown>".to_string()
    } else if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(text(o, "/type")),
        json!(text(o, "/reason")),
        json!(target),
        json!(text(o, "/involvedObject/fieldPath")),
        json!(source),
        json!(text(o, "/message").trim()),
        json!(first),
        json!(count),
        json!(text(o, "/metadata/name")),
    ]
}

fn builtin_cells(kind: &str, o: &Value) -> Vec<Value> {
    let name = json!(text(o, "/metadata/name"));
    let mut cells = if kind == "Event" { vec![] } else { vec![name] };
    match kind {
        "Pod" => cells.extend(pod_cells(o)),
        "Deployment" => {
            let (c, i) = pod_template_cells(o);
            cells.extend([
                json!(format!(
                    "{}/{}",
                    int(o, "/status/readyReplicas"),
                    get(o, "/spec/replicas").as_i64().unwrap_or(1)
                )),
                json!(int(o, "/status/updatedReplicas")),
                json!(int(o, "/status/availableReplicas")),
                json!(age(o)),
                c,
                i,
                json!(format_selector(get(o, "/spec/selector"))),
            ]);
        }
        "StatefulSet" => {
            let (c, i) = pod_template_cells(o);
            cells.extend([
                json!(format!(
                    "{}/{}",
                    int(o, "/status/readyReplicas"),
                    get(o, "/spec/replicas").as_i64().unwrap_or(1)
                )),
                json!(age(o)),
                c,
                i,
            ]);
        }
        "DaemonSet" => {
            let (c, i) = pod_template_cells(o);
            cells.extend([
                json!(int(o, "/status/desiredNumberScheduled")),
                json!(int(o, "/status/currentNumberScheduled")),
                json!(int(o, "/status/numberReady")),
                json!(int(o, "/status/updatedNumberScheduled")),
                json!(int(o, "/status/numberAvailable")),
                json!(format_labels(get(o, "/spec/template/spec/nodeSelector"))),
                json!(age(o)),
                c,
                i,
                json!(format_selector(get(o, "/spec/selector"))),
            ]);
        }
        "ReplicaSet" => {
            let (c, i) = pod_template_cells(o);
            cells.extend([
                json!(get(o, "/spec/replicas").as_i64().unwrap_or(1)),
                json!(int(o, "/status/replicas")),
                json!(int(o, "/status/readyReplicas")),
                json!(age(o)),
                c,
                i,
                json!(format_selector(get(o, "/spec/selector"))),
            ]);
        }
        "Job" => cells.extend(job_cells(o)),
        "CronJob" => {
            let (c, i) = containers_images(get(o, "/spec/jobTemplate/spec/template/spec"));
            let last = match text(o, "/status/lastScheduleTime") {
                "" => "<none>".to_string(),
                t => since(t),
            };
            cells.extend([
                json!(text(o, "/spec/schedule")),
                json!(or_none(text(o, "/spec/timeZone"))),
                json!(get(o, "/spec/suspend").as_bool().unwrap_or(false)),
                json!(get(o, "/status/active").as_array().map_or(0, Vec::len)),
                json!(last),
                json!(age(o)),
                json!(c),
                json!(i),
                json!(format_selector(get(o, "/spec/jobTemplate/spec/selector"))),
            ]);
        }
        "Service" => cells.extend(service_cells(o)),
        "ConfigMap" => cells.extend([
            json!(
                get(o, "/data").as_object().map_or(0, |m| m.len())
                    + get(o, "/binaryData").as_object().map_or(0, |m| m.len())
            ),
            json!(age(o)),
        ]),
        "Secret" => cells.extend([
            json!(text(o, "/type")),
            json!(get(o, "/data").as_object().map_or(0, |m| m.len())),
            json!(age(o)),
        ]),
        "Namespace" => cells.extend([json!(text(o, "/status/phase")), json!(age(o))]),
        "ServiceAccount" => cells.extend([
            json!(get(o, "/secrets").as_array().map_or(0, Vec::len)),
            json!(age(o)),
        ]),
        "PersistentVolumeClaim" => {
            let bound = text(o, "/status/phase") == "Bound";
            let capacity = if bound {
                text(o, "/status/capacity/storage")
            } else {
                ""
            };
            let modes: Vec<&str> = if bound {
                get(o, "/status/accessModes")
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).map(mode_short).collect())
                    .unwrap_or_default()
            } else {
                vec![]
            };
            cells.extend([
                json!(text(o, "/status/phase")),
                json!(text(o, "/spec/volumeName")),
                json!(capacity),
                json!(modes.join(",")),
                json!(text(o, "/spec/storageClassName")),
                json!(or_unset(text(o, "/spec/volumeAttributesClassName"))),
                json!(age(o)),
                json!(match text(o, "/spec/volumeMode") {
                    "" => "<unset>",
                    m => m,
                }),
            ]);
        }
        "Event" => cells.extend(event_cells(o)),
        "Node" => cells.extend(node_cells(o)),
        "Ingress" => cells.extend(ingress_cells(o)),
        _ => cells.push(json!(age(o))),
    }
    cells
}

fn node_cells(o: &Value) -> Vec<Value> {
    let conds = get(o, "/status/conditions")
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut status: Vec<&str> = conds
        .iter()
        .filter(|c| text(c, "/type") == "Ready")
        .map(|c| match text(c, "/status") {
            "True" => "Ready",
            _ => "NotReady",
        })
        .collect();
    if status.is_empty() {
        status.push("Unknown");
    }
    if get(o, "/spec/unschedulable").as_bool() == Some(true) {
        status.push("SchedulingDisabled");
    }
    let mut roles: Vec<String> = get(o, "/metadata/labels")
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    if let Some(r) = k.strip_prefix("node-role.kubernetes.io/") {
                        Some(r.to_string())
                    } else if k == "kubernetes.io/role" {
                        v.as_str().map(str::to_string)
                    } else {
                        None
                    }
                })
                .filter(|r| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    roles.dedup();
    let address = |typ: &str| {
        get(o, "/status/addresses")
            .as_array()
            .and_then(|a| a.iter().find(|x| text(x, "/type") == typ))
            .map(|x| text(x, "/address").to_string())
            .unwrap_or_else(|| "<none>".into())
    };
    let unknown = |s: &str| {
        if s.is_empty() {
            "<unknown>".to_string()
        } else {
            s.to_string()
        }
    };
    vec![
        json!(status.join(",")),
        json!(or_none(&roles.join(","))),
        json!(age(o)),
        json!(text(o, "/status/nodeInfo/kubeletVersion")),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(unknown(text(o, "/status/nodeInfo/osImage"))),
        json!(unknown(text(o, "/status/nodeInfo/kernelVersion"))),
        json!(unknown(text(o, "/status/nodeInfo/containerRuntimeVersion"))),
    ]
}

fn ingress_cells(o: &Value) -> Vec<Value> {
    let rules = get(o, "/spec/rules")
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for r in &rules {
        if hosts.len() == 3 {
            more = true;
        }
        if !more && !text(r, "/host").is_empty() {
            hosts.push(text(r, "/host"));
        }
    }
    let hosts = match (hosts.is_empty(), more) {
        (true, _) => "*".to_string(),
        (false, false) => hosts.join(","),
        (false, true) => format!("{} + {} more...", hosts.join(","), rules.len() - 3),
    };
    let address: Vec<&str> = get(o, "/status/loadBalancer/ingress")
        .as_array()
        .map(|a| {
            a.iter()
                .map(|i| match text(i, "/ip") {
                    "" => text(i, "/hostname"),
                    ip => ip,
                })
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let tls = get(o, "/spec/tls")
        .as_array()
        .is_some_and(|t| !t.is_empty());
    vec![
        json!(or_none(text(o, "/spec/ingressClassName"))),
        json!(hosts),
        json!(address.join(",")),
        json!(if tls { "80, 443" } else { "80" }),
        json!(age(o)),
    ]
}

fn or_unset(s: &str) -> &str {
    if s.is_empty() {
        "<unset>"
    } else {
        s
    }
}

fn mode_short(m: &str) -> &str {
    match m {
        "ReadWriteOnce" => "RWO",
        "ReadOnlyMany" => "ROX",
        "ReadWriteMany" => "RWX",
        "ReadWriteOncePod" => "RWOP",
        other => other,
    }
}

fn crd_cells(cols: &[CrdCol], o: &Value) -> Vec<Value> {
    let mut cells = vec![json!(text(o, "/metadata/name"))];
    for c in cols {
        let found = crate::jsonpath::first(o, &c.path);
        let cell = match found {
            None => Value::Null,
            Some(v) => match c.col.typ.as_str() {
                "string" => json!(match &v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                "integer" => match &v {
                    Value::Number(n) => n
                        .as_i64()
                        .map(|i| json!(i))
                        .or_else(|| n.as_f64().map(|f| json!(f as i64)))
                        .unwrap_or(Value::Null),
                    Value::String(s) => s.parse::<i64>().map(|i| json!(i)).unwrap_or(Value::Null),
                    _ => Value::Null,
                },
                "number" => match &v {
                    Value::Number(_) => v.clone(),
                    Value::String(s) => s.parse::<f64>().map(|f| json!(f)).unwrap_or(Value::Null),
                    _ => Value::Null,
                },
                "boolean" => match &v {
                    Value::Bool(_) => v.clone(),
                    Value::String(s) => s.parse::<bool>().map(|b| json!(b)).unwrap_or(Value::Null),
                    _ => Value::Null,
                },
                // apiextensions renders a date as its age (ConvertToHumanReadableDateType).
                "date" => match &v {
                    Value::String(s) => match parse_time(s) {
                        Some(t) => json!(human_duration(chrono::Utc::now() - t)),
                        None => json!("<invalid>"),
                    },
                    _ => Value::Null,
                },
                _ => Value::Null,
            },
        };
        cells.push(cell);
    }
    cells
}

fn cells(p: &Printer, o: &Value) -> Vec<Value> {
    match p {
        Printer::Builtin(kind) => builtin_cells(kind, o),
        Printer::Crd(cols) => crd_cells(cols, o),
        Printer::Default => {
            let created = parse_time(text(o, "/metadata/creationTimestamp"))
                .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string());
            vec![json!(text(o, "/metadata/name")), json!(created)]
        }
    }
}

fn row_object(
    o: &Value,
    presented: &dyn Fn(&Value) -> Value,
    include: Include,
    table_version: &str,
) -> Option<Value> {
    match include {
        Include::None => None,
        Include::Metadata => Some(json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": table_version,
            "metadata": o.get("metadata").cloned().unwrap_or_else(|| json!({})),
        })),
        Include::Object => Some(presented(o)),
    }
}

/// What a Table needs besides the objects.
pub struct Request<'a> {
    pub t: &'a ResourceType,
    pub version: &'a str,
    pub table_version: &'a str,
    pub include: Include,
    pub headers: bool,
}

/// A Table of `objects` (as stored); `presented` turns a stored object into
/// what the request's version returns (for `includeObject=Object`).
pub fn table(
    st: &State,
    req: &Request,
    objects: &[&Value],
    list_meta: Value,
    presented: &dyn Fn(&Value) -> Value,
) -> Value {
    let p = printer(st, req.t, req.version);
    let cols = if req.headers {
        columns(&p).iter().map(column_json).collect()
    } else {
        vec![]
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut row = json!({"cells": cells(&p, o)});
            if let Some(obj) = row_object(o, presented, req.include, req.table_version) {
                row["object"] = obj;
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": req.table_version,
        "metadata": list_meta,
        "columnDefinitions": cols,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_headers() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(wanted(kubectl), Some("meta.k8s.io/v1"));
        assert_eq!(
            wanted("application/json;as=Table;v=v1beta1;g=meta.k8s.io, application/json"),
            Some("meta.k8s.io/v1beta1")
        );
        assert_eq!(wanted("application/json"), None);
        assert_eq!(
            wanted(
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"
            ),
            None
        );
        assert_eq!(wanted("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io"), Some("meta.k8s.io/v1"));
    }

    #[test]
    fn human_durations_as_kubectl_prints_them() {
        let d = chrono::Duration::seconds;
        assert_eq!(human_duration(d(5)), "5s");
        assert_eq!(human_duration(d(119)), "119s");
        assert_eq!(human_duration(d(150)), "2m30s");
        assert_eq!(human_duration(d(600)), "10m");
        assert_eq!(human_duration(d(3 * 3600 + 60)), "3h1m");
        assert_eq!(human_duration(d(10 * 3600)), "10h");
        assert_eq!(human_duration(d(50 * 3600)), "2d2h");
        assert_eq!(human_duration(d(10 * 86400)), "10d");
        assert_eq!(human_duration(d(-5)), "<invalid>");
    }

    #[test]
    fn selectors_and_labels() {
        assert_eq!(format_labels(&json!({"b": "2", "a": "1"})), "a=1,b=2");
        assert_eq!(format_labels(&json!({})), "<none>");
        assert_eq!(
            format_selector(&json!({"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]})),
            "app=web,tier in (a,b)"
        );
    }

    #[test]
    fn service_ports_and_external_ips() {
        let svc = json!({"metadata": {"name": "s"}, "spec": {"type": "NodePort", "clusterIP": "10.0.0.1",
            "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}});
        let c = service_cells(&svc);
        assert_eq!(c[0], "NodePort");
        assert_eq!(c[1], "10.0.0.1");
        assert_eq!(c[2], "<none>");
        assert_eq!(c[3], "80:30080/TCP,53/UDP");
        let lb = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.0.0.2", "ports": [{"port": 443}]}});
        assert_eq!(service_cells(&lb)[2], "<pending>");
    }

    #[test]
    fn nodes_and_ingresses() {
        let node = json!({"metadata": {"labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "10.0.0.5"}],
                "nodeInfo": {"kubeletVersion": "v1.33.1"}}});
        let c = node_cells(&node);
        assert_eq!(c[0], "Ready,SchedulingDisabled");
        assert_eq!(c[1], "control-plane");
        assert_eq!(c[3], "v1.33.1");
        assert_eq!(c[4], "10.0.0.5");
        assert_eq!(c[5], "<none>");
        assert_eq!(c[6], "<unknown>");
        let ing = json!({"spec": {"rules": [{"host": "a"}, {"host": "b"}, {"host": "c"}, {"host": "d"}],
            "tls": [{"hosts": ["a"]}]}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        let c = ingress_cells(&ing);
        assert_eq!(c[0], "<none>");
        assert_eq!(c[1], "a,b,c + 1 more...");
        assert_eq!(c[2], "1.2.3.4");
        assert_eq!(c[3], "80, 443");
    }

    #[test]
    fn events_print_their_object_and_source() {
        let ev = json!({"metadata": {"name": "e1"}, "involvedObject": {"kind": "PostgresCluster", "name": "app-db"},
            "reason": "Ready", "type": "Normal", "message": " up ", "reportingComponent": "navique", "reportingInstance": "pod-1",
            "eventTime": "2020-01-01T00:00:00.000000Z"});
        let c = event_cells(&ev);
        assert_eq!(c[3], "postgrescluster/app-db");
        assert_eq!(c[5], "navique, pod-1");
        assert_eq!(c[6], "up");
        assert_eq!(c[8], 1);
        assert_eq!(c[9], "e1");
        assert_eq!(c[0], c[7]);
    }
}
