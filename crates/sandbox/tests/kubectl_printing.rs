//! What kubectl prints: the server's Tables (`get`, `get -o wide`), and
//! Events through both API groups (`get events -A`, `describe`).

mod common;
use common::{cluster, stderr, stdout, unique, Cluster};

/// kubectl's table output as rows of cells (split on runs of 2+ spaces),
/// the header first.
fn table(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// The row whose first cell is `name`, as header -> cell.
fn row(out: &str, name: &str) -> std::collections::BTreeMap<String, String> {
    let t = table(out);
    let header = t.first().cloned().unwrap_or_default();
    let r = t
        .iter()
        .skip(1)
        .find(|r| r.first().map(String::as_str) == Some(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{out}"))
        .clone();
    assert_eq!(header.len(), r.len(), "a cell per column in\n{out}");
    header.into_iter().zip(r).collect()
}

fn header(out: &str) -> Vec<String> {
    table(out).into_iter().next().unwrap_or_default()
}

const PAUSE: &str = "registry.k8s.io/pause:3.10";

fn workloads(ns: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: {ns}}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - {{name: pause, image: "{PAUSE}"}}
---
apiVersion: v1
kind: Service
metadata: {{name: web, namespace: {ns}}}
spec:
  selector: {{app: web}}
  ports: [{{port: 80, targetPort: 8080}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: settings, namespace: {ns}}}
data: {{a: "1", b: "2"}}
---
apiVersion: v1
kind: Secret
metadata: {{name: token, namespace: {ns}}}
type: Opaque
stringData: {{t: x}}
---
apiVersion: v1
kind: Pod
metadata: {{name: solo, namespace: {ns}}}
spec:
  containers:
  - {{name: pause, image: "{PAUSE}"}}
"#
    )
}

#[test]
fn get_prints_the_columns_of_the_server_printers() {
    let c = cluster();
    let ns = unique("print");
    c.ok(&["create", "namespace", &ns]);
    let out = c.apply_stdin(&["apply", "-f", "-"], &workloads(&ns));
    assert!(out.status.success(), "{}", stderr(&out));
    c.ok(&[
        "-n",
        &ns,
        "wait",
        "--for=condition=Available",
        "deployment/web",
        "--timeout=180s",
    ]);
    c.ok(&[
        "-n",
        &ns,
        "wait",
        "--for=condition=Ready",
        "pod/solo",
        "--timeout=180s",
    ]);

    let out = c.ok(&["-n", &ns, "get", "deployment", "web"]);
    assert_eq!(
        header(&out),
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );
    let r = row(&out, "web");
    assert_eq!(
        (
            r["READY"].as_str(),
            r["UP-TO-DATE"].as_str(),
            r["AVAILABLE"].as_str()
        ),
        ("2/2", "2", "2")
    );
    let out = c.ok(&["-n", &ns, "get", "deployments", "-o", "wide"]);
    assert_eq!(
        header(&out),
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    let r = row(&out, "web");
    assert_eq!(
        (
            r["CONTAINERS"].as_str(),
            r["IMAGES"].as_str(),
            r["SELECTOR"].as_str()
        ),
        ("pause", PAUSE, "app=web")
    );

    let out = c.ok(&["-n", &ns, "get", "service", "web", "-o", "wide"]);
    assert_eq!(
        header(&out),
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ]
    );
    let r = row(&out, "web");
    let ip = c.ok(&[
        "-n",
        &ns,
        "get",
        "service",
        "web",
        "-o",
        "jsonpath={.spec.clusterIP}",
    ]);
    assert_eq!(r["TYPE"], "ClusterIP");
    assert_eq!(r["CLUSTER-IP"], ip);
    assert_eq!(r["EXTERNAL-IP"], "<none>");
    assert_eq!(r["PORT(S)"], "80/TCP");
    assert_eq!(r["SELECTOR"], "app=web");

    let out = c.ok(&["-n", &ns, "get", "configmap", "settings"]);
    assert_eq!(header(&out), ["NAME", "DATA", "AGE"]);
    assert_eq!(row(&out, "settings")["DATA"], "2");
    let out = c.ok(&["-n", &ns, "get", "secret", "token"]);
    assert_eq!(header(&out), ["NAME", "TYPE", "DATA", "AGE"]);
    let r = row(&out, "token");
    assert_eq!((r["TYPE"].as_str(), r["DATA"].as_str()), ("Opaque", "1"));

    let out = c.ok(&["get", "namespace", &ns]);
    assert_eq!(header(&out), ["NAME", "STATUS", "AGE"]);
    assert_eq!(row(&out, &ns)["STATUS"], "Active");

    let out = c.ok(&["-n", &ns, "get", "pod", "solo"]);
    assert_eq!(header(&out), ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    let r = row(&out, "solo");
    assert_eq!(
        (
            r["READY"].as_str(),
            r["STATUS"].as_str(),
            r["RESTARTS"].as_str()
        ),
        ("1/1", "Running", "0")
    );
    let out = c.ok(&["-n", &ns, "get", "pod", "solo", "-o", "wide"]);
    let h = header(&out);
    assert_eq!(
        h[..7],
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    );
    let ip = c.ok(&[
        "-n",
        &ns,
        "get",
        "pod",
        "solo",
        "-o",
        "jsonpath={.status.podIP}",
    ]);
    assert_eq!(row(&out, "solo")["IP"], ip);

    // A list across namespaces gets kubectl's NAMESPACE column from the rows' objects.
    let out = c.ok(&["get", "configmaps", "-A"]);
    assert_eq!(header(&out), ["NAMESPACE", "NAME", "DATA", "AGE"]);
    assert!(
        out.lines()
            .any(|l| l.starts_with(&ns) && l.contains("settings")),
        "{out}"
    );
    // The category `all`, one table per resource.
    let out = c.ok(&["-n", &ns, "get", "all"]);
    assert!(
        out.contains("deployment.apps/web") && out.contains("service/web"),
        "{out}"
    );
    // Other output formats are unaffected.
    assert!(c
        .ok(&["-n", &ns, "get", "deployments", "-o", "name"])
        .contains("deployment.apps/web"));
    c.ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
fn jobs_print_status_and_completions() {
    let c = cluster();
    let ns = unique("print-job");
    c.ok(&["create", "namespace", &ns]);
    let job = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: once, namespace: {ns}}}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {{name: c, image: \"busybox:1.36\", command: [\"true\"]}}\n"
    );
    let out = c.apply_stdin(&["apply", "-f", "-"], &job);
    assert!(out.status.success(), "{}", stderr(&out));
    c.ok(&[
        "-n",
        &ns,
        "wait",
        "--for=condition=Complete",
        "job/once",
        "--timeout=180s",
    ]);
    let out = c.ok(&["-n", &ns, "get", "job", "once"]);
    assert_eq!(
        header(&out),
        ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    );
    let r = row(&out, "once");
    assert_eq!(
        (r["STATUS"].as_str(), r["COMPLETIONS"].as_str()),
        ("Complete", "1/1")
    );
    let out = c.ok(&["-n", &ns, "get", "job", "once", "-o", "wide"]);
    let r = row(&out, "once");
    assert_eq!(
        (r["CONTAINERS"].as_str(), r["IMAGES"].as_str()),
        ("c", "busybox:1.36")
    );
    c.ok(&["delete", "namespace", &ns, "--wait=false"]);
}

fn crd(group: &str, columns: &str) -> String {
    format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: gadgets, singular: gadget, kind: Gadget}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
{columns}"#
    )
}

#[test]
fn custom_resources_print_their_printer_columns() {
    let c = cluster();
    let with = format!("{}.navique.test", unique("cols"));
    let without = format!("{}.navique.test", unique("nocols"));
    let columns = r#"    additionalPrinterColumns:
    - {name: Mode, type: string, jsonPath: .spec.mode}
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Ready, type: string, jsonPath: '.spec.conditions[?(@.type=="Ready")].status'}
    - {name: Enabled, type: boolean, jsonPath: .spec.enabled}
    - {name: Owner, type: string, priority: 1, jsonPath: .metadata.labels.owner}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
"#;
    for (group, cols) in [(&with, columns), (&without, "")] {
        let out = c.apply_stdin(&["apply", "-f", "-"], &crd(group, cols));
        assert!(out.status.success(), "{}", stderr(&out));
        c.ok(&[
            "wait",
            "--for=condition=Established",
            &format!("crd/gadgets.{group}"),
            "--timeout=30s",
        ]);
    }
    let ns = unique("print-cr");
    c.ok(&["create", "namespace", &ns]);
    for group in [&with, &without] {
        let cr = format!(
            "apiVersion: {group}/v1\nkind: Gadget\nmetadata: {{name: g1, namespace: {ns}, labels: {{owner: team-a}}}}\nspec:\n  mode: managed\n  size: 3\n  enabled: true\n  conditions: [{{type: Synced, status: \"False\"}}, {{type: Ready, status: \"True\"}}]\n"
        );
        let out = c.apply_stdin(&["apply", "-f", "-"], &cr);
        assert!(out.status.success(), "{}", stderr(&out));
    }

    let out = c.ok(&["-n", &ns, "get", &format!("gadgets.{with}")]);
    assert_eq!(
        header(&out),
        ["NAME", "MODE", "SIZE", "READY", "ENABLED", "AGE"]
    );
    let r = row(&out, "g1");
    assert_eq!(
        (
            r["MODE"].as_str(),
            r["SIZE"].as_str(),
            r["READY"].as_str(),
            r["ENABLED"].as_str()
        ),
        ("managed", "3", "True", "true")
    );
    assert!(
        r["AGE"].ends_with('s') || r["AGE"].ends_with('m'),
        "an age, not a timestamp: {}",
        r["AGE"]
    );
    let out = c.ok(&["-n", &ns, "get", &format!("gadgets.{with}"), "-o", "wide"]);
    assert_eq!(
        header(&out),
        ["NAME", "MODE", "SIZE", "READY", "ENABLED", "OWNER", "AGE"]
    );
    assert_eq!(row(&out, "g1")["OWNER"], "team-a");

    // No columns declared: the server's default Age.
    let out = c.ok(&["-n", &ns, "get", &format!("gadgets.{without}")]);
    assert_eq!(header(&out), ["NAME", "AGE"]);
    row(&out, "g1");

    // CustomResourceDefinitions themselves: NAME and CREATED AT, a timestamp.
    let out = c.ok(&["get", "crd", &format!("gadgets.{with}")]);
    assert_eq!(header(&out), ["NAME", "CREATED AT"]);
    let created = c.ok(&[
        "get",
        "crd",
        &format!("gadgets.{with}"),
        "-o",
        "jsonpath={.metadata.creationTimestamp}",
    ]);
    assert_eq!(row(&out, &format!("gadgets.{with}"))["CREATED AT"], created);

    for group in [&with, &without] {
        c.ok(&["delete", "crd", &format!("gadgets.{group}"), "--wait=true"]);
    }
    c.ok(&["delete", "namespace", &ns, "--wait=false"]);
}

fn uid(c: &Cluster, ns: &str, what: &str) -> String {
    c.ok(&["-n", ns, "get", what, "-o", "jsonpath={.metadata.uid}"])
}

#[test]
fn events_of_either_group_are_one_store() {
    let c = cluster();
    let ns = unique("print-ev");
    c.ok(&["create", "namespace", &ns]);
    c.ok(&[
        "-n",
        &ns,
        "create",
        "configmap",
        "watched",
        "--from-literal=a=1",
    ]);
    let cm_uid = uid(&c, &ns, "configmap/watched");
    let now = chrono_now();

    // Written through events.k8s.io/v1, as the operator (kube-rs' Recorder) writes them.
    let new_style = format!(
        r#"{{"apiVersion": "events.k8s.io/v1", "kind": "Event",
  "metadata": {{"name": "watched.new", "namespace": "{ns}"}},
  "eventTime": "{now}", "reportingController": "navique.dev/test", "reportingInstance": "test-1",
  "action": "Reconcile", "reason": "Configured", "type": "Normal", "note": "configured by the new API",
  "regarding": {{"apiVersion": "v1", "kind": "ConfigMap", "name": "watched", "namespace": "{ns}", "uid": "{cm_uid}"}}}}"#
    );
    let out = c.apply_stdin(&["create", "-f", "-"], &new_style);
    assert!(out.status.success(), "{}", stderr(&out));
    // Written through core v1, as client-go's old recorder writes them.
    let old_style = format!(
        r#"{{"apiVersion": "v1", "kind": "Event",
  "metadata": {{"name": "watched.old", "namespace": "{ns}"}},
  "firstTimestamp": "{ts}", "lastTimestamp": "{ts}", "count": 2,
  "source": {{"component": "old-recorder"}}, "reason": "Checked", "type": "Warning", "message": "checked by the old API",
  "involvedObject": {{"apiVersion": "v1", "kind": "ConfigMap", "name": "watched", "namespace": "{ns}", "uid": "{cm_uid}"}}}}"#,
        ts = format!("{}Z", &now[..19])
    );
    let out = c.apply_stdin(&["create", "-f", "-"], &old_style);
    assert!(out.status.success(), "{}", stderr(&out));

    // core v1, as kubectl reads them.
    let out = c.ok(&["get", "events", "-A"]);
    assert_eq!(
        header(&out),
        [
            "NAMESPACE",
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "MESSAGE"
        ]
    );
    let mine: Vec<&str> = out.lines().filter(|l| l.starts_with(&ns)).collect();
    assert!(
        mine.iter().any(|l| l.contains("Normal")
            && l.contains("Configured")
            && l.contains("configmap/watched")
            && l.contains("configured by the new API")),
        "{out}"
    );
    assert!(
        mine.iter()
            .any(|l| l.contains("Warning") && l.contains("Checked")),
        "{out}"
    );
    let out = c.ok(&["-n", &ns, "get", "events", "-o", "wide"]);
    assert_eq!(
        header(&out),
        [
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME"
        ]
    );
    // SUBOBJECT is empty: the cells are found in the line, not by position.
    let cells = |name: &str| -> Vec<String> {
        let line = out
            .lines()
            .find(|l| l.ends_with(name))
            .unwrap_or_else(|| panic!("{out}"));
        table(line).remove(0)
    };
    let new = cells("watched.new");
    assert_eq!(
        new[new.len() - 5..],
        [
            "navique.dev/test, test-1",
            "configured by the new API",
            &new[0],
            "1",
            "watched.new"
        ]
    );
    let old = cells("watched.old");
    assert_eq!(
        old[old.len() - 5..],
        [
            "old-recorder",
            "checked by the old API",
            &old[0],
            "2",
            "watched.old"
        ]
    );
    let core = c.ok(&[
        "-n",
        &ns,
        "get",
        "event",
        "watched.new",
        "-o",
        "jsonpath={.message}|{.involvedObject.uid}|{.reportingComponent}",
    ]);
    assert_eq!(
        core,
        format!("configured by the new API|{cm_uid}|navique.dev/test")
    );

    // events.k8s.io, the other way round.
    let new = c.ok(&[
        "-n",
        &ns,
        "get",
        "events.v1.events.k8s.io",
        "watched.old",
        "-o",
        "jsonpath={.note}|{.regarding.name}|{.deprecatedSource.component}|{.deprecatedCount}",
    ]);
    assert_eq!(new, "checked by the old API|watched|old-recorder|2");

    // A merge patch through events.k8s.io, as kube-rs' Recorder counts a repeat.
    let series = format!(
        r#"{{"series": {{"count": 3, "lastObservedTime": "{}"}}}}"#,
        chrono_now()
    );
    c.ok(&[
        "-n",
        &ns,
        "patch",
        "events.v1.events.k8s.io",
        "watched.new",
        "--type=merge",
        "-p",
        &series,
    ]);
    let core = c.ok(&[
        "-n",
        &ns,
        "get",
        "event",
        "watched.new",
        "-o",
        "jsonpath={.series.count}|{.message}",
    ]);
    assert_eq!(core, "3|configured by the new API");

    // Field selectors, in each group's own field names.
    let out = c.ok(&[
        "-n",
        &ns,
        "get",
        "events",
        "--field-selector",
        &format!("involvedObject.uid={cm_uid},involvedObject.kind=ConfigMap,type=Warning"),
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "event/watched.old");
    let out = c.ok(&[
        "-n",
        &ns,
        "get",
        "events.v1.events.k8s.io",
        "--field-selector",
        "regarding.name=watched,reason=Configured",
        "-o",
        "name",
    ]);
    assert_eq!(out.trim(), "event.events.k8s.io/watched.new");

    // describe finds both by the object's uid.
    let out = c.ok(&["-n", &ns, "describe", "configmap", "watched"]);
    let events = out.split("Events:").nth(1).unwrap_or_default();
    assert!(
        events.contains("Configured") && events.contains("configured by the new API"),
        "{out}"
    );
    assert!(
        events.contains("Checked") && events.contains("old-recorder"),
        "{out}"
    );

    // A watch through either group sees what the other wrote.
    let watched = c.ok(&[
        "get",
        "--raw",
        &format!("/apis/events.k8s.io/v1/namespaces/{ns}/events?watch=true&timeoutSeconds=2&fieldSelector=regarding.name%3Dwatched"),
    ]);
    assert!(
        watched.contains("\"note\":\"checked by the old API\""),
        "{watched}"
    );
    let watched = c.ok(&[
        "get",
        "--raw",
        &format!("/api/v1/namespaces/{ns}/events?watch=true&timeoutSeconds=2&fieldSelector=involvedObject.name%3Dwatched"),
    ]);
    assert!(
        watched.contains("\"message\":\"configured by the new API\""),
        "{watched}"
    );

    // Deleted through one group, gone from the other.
    c.ok(&[
        "-n",
        &ns,
        "delete",
        "events.v1.events.k8s.io",
        "watched.old",
    ]);
    let out = c.kubectl(&["-n", &ns, "get", "event", "watched.old"]);
    assert!(!out.status.success(), "{}", stdout(&out));
    c.ok(&["delete", "namespace", &ns, "--wait=false"]);
}

/// Now as a MicroTime (RFC 3339 with microseconds).
fn chrono_now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}
