//! Unmodified kubectl against the server.

mod common;
use common::{cluster, stderr, unique};
use serde_json::Value;

fn deployment(ns: &str, image: &str, replicas: u32) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: {ns}
  labels: {{app: web, tier: front}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: nginx
        image: {image}
        ports: [{{containerPort: 80}}]
        env: [{{name: A, value: "1"}}]
"#
    )
}

fn get_json(c: &common::Cluster, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    serde_json::from_str(&c.ok(&a)).expect("kubectl -o json")
}

#[test]
fn client_side_and_server_side_apply_with_conflicts() {
    let c = cluster();
    let ns = unique("kubectl-apply");
    c.ok(&["create", "namespace", &ns]);

    let out = c.apply_stdin(&["apply", "-f", "-"], &deployment(&ns, "nginx:1.25", 2));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(common::stdout(&out).contains("deployment.apps/web created"));
    let out = c.apply_stdin(&["apply", "-f", "-"], &deployment(&ns, "nginx:1.26", 2));
    assert!(
        common::stdout(&out).contains("deployment.apps/web configured"),
        "{}",
        stderr(&out)
    );
    let d = get_json(&c, &["-n", &ns, "get", "deploy", "web"]);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.26"
    );
    assert_eq!(d["metadata"]["generation"], 2);
    assert!(
        d["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string()
    );

    // Another manager changing a field kubectl-client-side-apply owns conflicts.
    let out = c.apply_stdin(
        &["apply", "--server-side", "--field-manager=other", "-f", "-"],
        &deployment(&ns, "nginx:1.26", 5),
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas"#),
        "{err}"
    );
    assert_eq!(
        get_json(&c, &["-n", &ns, "get", "deploy", "web"])["spec"]["replicas"],
        2
    );

    // kubectl itself moving from client-side to server-side apply does not
    // conflict: the server lets manager "kubectl" take what its last-applied
    // annotation set, and kubectl then rewrites the client-side entry into
    // its own with a JSON patch on metadata.managedFields.
    let out = c.apply_stdin(
        &["apply", "--server-side", "-f", "-"],
        &deployment(&ns, "nginx:1.26", 5),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let d = get_json(
        &c,
        &["-n", &ns, "get", "deploy", "web", "--show-managed-fields"],
    );
    assert_eq!(d["spec"]["replicas"], 5);
    let managers: Vec<(&str, &str)> = d["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap(),
                e["operation"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(managers.contains(&("kubectl", "Apply")), "{managers:?}");
    assert!(
        !managers
            .iter()
            .any(|(m, _)| *m == "kubectl-client-side-apply"),
        "{managers:?}"
    );
    // Writing `[{}]` to managedFields clears them; `[]` leaves them be.
    let strip = |value: &str| {
        let patch =
            format!(r#"[{{"op":"replace","path":"/metadata/managedFields","value":{value}}}]"#);
        c.ok(&[
            "-n",
            &ns,
            "patch",
            "deploy",
            "web",
            "--type=json",
            "-p",
            &patch,
        ]);
        get_json(
            &c,
            &["-n", &ns, "get", "deploy", "web", "--show-managed-fields"],
        )["metadata"]
            .get("managedFields")
            .and_then(Value::as_array)
            .map(|m| m.iter().filter(|e| e.get("subresource").is_none()).count())
            .unwrap_or(0)
    };
    assert!(strip("[]") > 0);
    let kubectl_fields = d["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kubectl")
        .unwrap()["fieldsV1"]
        .clone();
    assert!(
        kubectl_fields["f:spec"]["f:replicas"].is_object(),
        "{kubectl_fields}"
    );
    assert!(
        kubectl_fields["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"nginx\"}"]
            ["f:image"]
            .is_object()
    );

    // Re-applying the same configuration changes nothing (status may move on
    // as the controller works, so compare generation and field ownership).
    let out = c.apply_stdin(
        &["apply", "--server-side", "-f", "-"],
        &deployment(&ns, "nginx:1.26", 5),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let again = get_json(
        &c,
        &["-n", &ns, "get", "deploy", "web", "--show-managed-fields"],
    );
    assert_eq!(again["metadata"]["generation"], d["metadata"]["generation"]);
    let apply_entry = |v: &Value| {
        v["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["manager"] == "kubectl")
            .cloned()
    };
    assert_eq!(apply_entry(&again), apply_entry(&d));

    // -l selects by label; -o yaml prints the object.
    assert!(c
        .ok(&["-n", &ns, "get", "deploy", "-l", "tier=front", "-o", "name"])
        .contains("deployment.apps/web"));
    assert!(c
        .ok(&[
            "-n",
            &ns,
            "get",
            "deploy",
            "-l",
            "tier!=front",
            "-o",
            "name"
        ])
        .trim()
        .is_empty());
    let yaml = c.ok(&["-n", &ns, "get", "deploy", "web", "-o", "yaml"]);
    assert!(
        yaml.contains("replicas: 5") && yaml.contains("kind: Deployment"),
        "{yaml}"
    );

    // The three patch types.
    c.ok(&[
        "-n",
        &ns,
        "patch",
        "deploy",
        "web",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"patched":"merge"}}}"#,
    ]);
    c.ok(&[
        "-n",
        &ns,
        "patch",
        "deploy",
        "web",
        "--type=json",
        "-p",
        r#"[{"op":"replace","path":"/spec/replicas","value":3}]"#,
    ]);
    c.ok(&[
        "-n",
        &ns,
        "patch",
        "deploy",
        "web",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}"#,
    ]);
    let d = get_json(&c, &["-n", &ns, "get", "deploy", "web"]);
    assert_eq!(d["metadata"]["labels"]["patched"], "merge");
    assert_eq!(d["spec"]["replicas"], 3);
    let names: Vec<&str> = d["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["nginx", "sidecar"],
        "strategic merge keeps nginx and adds sidecar by name"
    );

    assert_eq!(strip("[{}]"), 0, "managedFields [{{}}] clears them");

    c.ok(&["-n", &ns, "delete", "deploy", "web", "--wait=true"]);
    let out = c.kubectl(&["-n", &ns, "get", "deploy", "web"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(r#"deployments.apps "web" not found"#),
        "{}",
        stderr(&out)
    );
    c.ok(&["delete", "namespace", &ns, "--wait=true"]);
}

#[test]
fn crd_becomes_established_and_serves_custom_resources() {
    let c = cluster();
    let group = format!("{}.navique.test", unique("g"));
    let crd = format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {{status: {{}}}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"#
    );
    let out = c.apply_stdin(&["apply", "-f", "-"], &crd);
    assert!(out.status.success(), "{}", stderr(&out));
    c.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/widgets.{group}"),
        "--timeout=30s",
    ]);
    let ns = unique("kubectl-crd");
    c.ok(&["create", "namespace", &ns]);
    let cr = format!("apiVersion: {group}/v1alpha1\nkind: Widget\nmetadata: {{name: w1, namespace: {ns}}}\nspec: {{size: 3}}\n");
    let out = c.apply_stdin(&["apply", "--server-side", "-f", "-"], &cr);
    assert!(out.status.success(), "{}", stderr(&out));
    let w = get_json(&c, &["-n", &ns, "get", &format!("widgets.{group}"), "w1"]);
    assert_eq!(w["spec"]["size"], 3);
    assert!(
        c.ok(&["-n", &ns, "get", "wd", "-o", "name"]).contains("w1"),
        "short name from discovery"
    );

    c.ok(&["delete", "crd", &format!("widgets.{group}"), "--wait=true"]);
    let out = c.kubectl(&["-n", &ns, "get", &format!("widgets.{group}"), "w1"]);
    assert!(
        !out.status.success(),
        "custom resources go with their definition"
    );
    c.ok(&["delete", "namespace", &ns]);
}

#[test]
fn generate_name_dry_run_and_delete_collection() {
    let c = cluster();
    let ns = unique("kubectl-misc");
    c.ok(&["create", "namespace", &ns]);
    for i in 0..3 {
        c.ok(&[
            "-n",
            &ns,
            "create",
            "configmap",
            &format!("cm{i}"),
            "--from-literal=k=v",
        ]);
        c.ok(&[
            "-n",
            &ns,
            "label",
            "configmap",
            &format!("cm{i}"),
            &format!("idx={i}"),
        ]);
    }
    let out = c.apply_stdin(
        &["create", "--dry-run=server", "-o", "json", "-f", "-"],
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: dry, namespace: {ns}}}\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !c.kubectl(&["-n", &ns, "get", "cm", "dry"]).status.success(),
        "dry run stores nothing"
    );
    let names = c.ok(&["-n", &ns, "get", "cm", "-l", "idx in (0,2)", "-o", "name"]);
    assert_eq!(names.lines().count(), 2, "{names}");
    c.ok(&["-n", &ns, "delete", "cm", "-l", "idx"]);
    assert!(c
        .ok(&["-n", &ns, "get", "cm", "-l", "idx", "-o", "name"])
        .trim()
        .is_empty());
    c.ok(&["delete", "namespace", &ns]);
}

#[test]
fn tls_with_generated_ca_and_bearer_tokens() {
    if std::env::var("NAVIQUE_TEST_KUBECONFIG").is_ok_and(|v| !v.is_empty()) {
        eprintln!("skipping: the sandbox's own TLS and token");
        return;
    }
    let c = common::cluster_with(navique_sandbox::Options {
        tls: true,
        ..Default::default()
    });
    let kubeconfig = std::fs::read_to_string(&c.kubeconfig).unwrap();
    assert!(kubeconfig.contains("server: https://127.0.0.1:"));
    assert!(kubeconfig.contains("certificate-authority-data: "));
    assert!(c
        .ok(&["get", "namespace", "default", "-o", "name"])
        .contains("namespace/default"));
    let out = c.kubectl(&["--token", "not-the-token", "get", "namespaces"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Unauthorized"), "{}", stderr(&out));
}

/// kubectl's typed commands send protobuf (client-go's default for built-in
/// kinds), which the server must read for every kind, not JSON only.
#[test]
fn typed_create_commands_send_protobuf_for_every_kind() {
    let c = cluster();
    let ns = unique("kubectl-typed");
    c.ok(&["create", "namespace", &ns]);
    // The PriorityClass is cluster-scoped: removed even when an assertion fails.
    struct RemovePriorityClass<'a>(&'a common::Cluster, String);
    impl Drop for RemovePriorityClass<'_> {
        fn drop(&mut self) {
            let _ = self
                .0
                .kubectl(&["delete", "priorityclass", &self.1, "--ignore-not-found"]);
        }
    }
    let _remove = RemovePriorityClass(&c, format!("{ns}-low"));
    let creates: &[&[&str]] = &[
        &[
            "create",
            "deployment",
            "web",
            "--image=nginx:1.25",
            "--replicas=0",
            "--port=8080",
        ],
        &[
            "create",
            "job",
            "once",
            "--image=busybox:1.36",
            "--",
            "echo",
            "hi",
        ],
        &[
            "create",
            "cronjob",
            "nightly",
            "--image=busybox:1.36",
            "--schedule=0 3 * * *",
        ],
        &["create", "service", "clusterip", "web", "--tcp=80:8080"],
        &[
            "create",
            "role",
            "reader",
            "--verb=get,list",
            "--resource=pods,configmaps",
        ],
        &[
            "create",
            "rolebinding",
            "reader",
            "--role=reader",
            "--user=jane",
        ],
        &[
            "create",
            "poddisruptionbudget",
            "web",
            "--selector=app=web",
            "--min-available=0",
        ],
        &[
            "create",
            "priorityclass",
            &format!("{ns}-low"),
            "--value=10",
        ],
        &["create", "ingress", "web", "--rule=example.com/=web:80"],
        &[
            "create",
            "quota",
            "small",
            "--hard=pods=3,requests.cpu=500m",
        ],
    ];
    for args in creates {
        let mut a = vec!["-n", ns.as_str(), "-v=8"];
        a.extend_from_slice(args);
        let out = c.kubectl(&a);
        let log = stderr(&out);
        assert!(out.status.success(), "kubectl {args:?}: {log}");
        assert!(
            log.contains("Content-Type: application/vnd.kubernetes.protobuf"),
            "kubectl {args:?} did not send protobuf: {log}"
        );
    }
    let d = get_json(&c, &["-n", &ns, "get", "deploy", "web"]);
    // replicas 0 is a pointer set on purpose and must survive the decoding.
    assert_eq!(d["spec"]["replicas"], 0, "{d}");
    let container = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx:1.25");
    assert_eq!(container["ports"][0]["containerPort"], 8080);
    assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "web");
    // Go's JSON of the client's object: value structs stay, zero scalars go.
    assert_eq!(container["resources"], serde_json::json!({}), "{container}");
    assert!(container.get("stdin").is_none(), "{container}");
    assert!(d["spec"].get("paused").is_none(), "{d}");

    let job = get_json(&c, &["-n", &ns, "get", "job", "once"]);
    let jc = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(jc["command"], serde_json::json!(["echo", "hi"]), "{job}");
    assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
    let cron = get_json(&c, &["-n", &ns, "get", "cronjob", "nightly"]);
    assert_eq!(cron["spec"]["schedule"], "0 3 * * *");
    let svc = get_json(&c, &["-n", &ns, "get", "service", "web"]);
    assert_eq!(svc["spec"]["ports"][0]["port"], 80);
    // targetPort is an IntOrString.
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], 8080, "{svc}");
    let role = get_json(&c, &["-n", &ns, "get", "role", "reader"]);
    assert_eq!(
        role["rules"][0]["verbs"],
        serde_json::json!(["get", "list"]),
        "{role}"
    );
    let binding = get_json(&c, &["-n", &ns, "get", "rolebinding", "reader"]);
    assert_eq!(binding["roleRef"]["name"], "reader");
    assert_eq!(binding["subjects"][0]["name"], "jane");
    let pdb = get_json(&c, &["-n", &ns, "get", "pdb", "web"]);
    assert_eq!(pdb["spec"]["minAvailable"], 0, "{pdb}");
    let pc = get_json(&c, &["get", "priorityclass", &format!("{ns}-low")]);
    assert_eq!(pc["value"], 10);
    let ing = get_json(&c, &["-n", &ns, "get", "ingress", "web"]);
    assert_eq!(ing["spec"]["rules"][0]["host"], "example.com");
    assert_eq!(
        ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"]["number"],
        80
    );
    let quota = get_json(&c, &["-n", &ns, "get", "resourcequota", "small"]);
    assert_eq!(quota["spec"]["hard"]["requests.cpu"], "500m", "{quota}");
    assert_eq!(quota["spec"]["hard"]["pods"], "3");

    c.ok(&["delete", "priorityclass", &format!("{ns}-low")]);
}
