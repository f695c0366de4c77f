//! Custom resources checked against their CRD's schema, with unmodified
//! kubectl: pruning and `fieldValidation`, defaults, OpenAPI validations,
//! list types and CEL rules, with a real kube-apiserver's answers.

mod common;
use common::{cluster, stderr, unique};
use serde_json::Value;

fn crd(group: &str) -> String {
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
    subresources: {{status: {{}}}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [mode]
            x-kubernetes-validations:
            - rule: "self.mode != 'managed' || has(self.managed)"
              message: managed mode needs spec.managed
            properties:
              mode: {{type: string, enum: [managed, external]}}
              instances: {{type: integer, minimum: 1, default: 1}}
              name: {{type: string, maxLength: 5, pattern: '^[a-z]+$'}}
              immutable:
                type: string
                x-kubernetes-validations:
                - rule: self == oldSelf
                  message: immutable is immutable
              managed:
                type: object
                properties:
                  size: {{type: string, default: 1Gi}}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {{type: string}}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {{type: string}}
                    port: {{type: integer}}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              phase: {{type: string}}
"#
    )
}

fn get_json(c: &common::Cluster, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    serde_json::from_str(&c.ok(&a)).expect("kubectl -o json")
}

fn gadget(group: &str, ns: &str, name: &str, spec: &str) -> String {
    format!("apiVersion: {group}/v1\nkind: Gadget\nmetadata: {{name: {name}, namespace: {ns}}}\nspec: {spec}\n")
}

#[test]
fn custom_resources_are_pruned_defaulted_and_validated_against_their_schema() {
    let c = cluster();
    let group = format!("{}.navique.test", unique("s"));
    let out = c.apply_stdin(&["apply", "-f", "-"], &crd(&group));
    assert!(out.status.success(), "{}", stderr(&out));
    c.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/gadgets.{group}"),
        "--timeout=30s",
    ]);
    let ns = unique("crd-schema");
    c.ok(&["create", "namespace", &ns]);
    let res = format!("gadgets.{group}");

    // kubectl sends fieldValidation=Strict: an unknown field is refused.
    let out = c.apply_stdin(
        &["apply", "-f", "-"],
        &gadget(&group, &ns, "g1", "{mode: external, foo: 1}"),
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(r#"Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.foo""#),
        "{err}"
    );
    // Warn: stored without it, with a warning; defaults filled in.
    let out = c.apply_stdin(
        &["apply", "--validate=warn", "-f", "-"],
        &gadget(
            &group,
            &ns,
            "g1",
            "{mode: external, foo: 1, extra: {any: {thing: 1}}}",
        ),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(r#"Warning: unknown field "spec.foo""#),
        "{}",
        stderr(&out)
    );
    let g = get_json(&c, &["-n", &ns, "get", &res, "g1"]);
    assert_eq!(g["spec"]["instances"], 1, "{g}");
    assert!(g["spec"].get("foo").is_none(), "{g}");
    assert_eq!(g["spec"]["extra"]["any"]["thing"], 1, "preserved: {g}");
    // Ignore: pruned silently.
    let out = c.apply_stdin(
        &["create", "--validate=false", "-f", "-"],
        &gadget(&group, &ns, "g2", "{mode: managed, managed: {}, bar: 2}"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("unknown field"), "{}", stderr(&out));
    let g = get_json(&c, &["-n", &ns, "get", &res, "g2"]);
    assert_eq!(g["spec"]["managed"]["size"], "1Gi", "nested default: {g}");
    assert!(g["spec"].get("bar").is_none(), "{g}");

    // Server-side apply: the typed conversion refuses unknown fields.
    let out = c.apply_stdin(
        &["apply", "--server-side", "-f", "-"],
        &gadget(&group, &ns, "g3", "{mode: external, baz: 1}"),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(".spec.baz: field not declared in schema"),
        "{}",
        stderr(&out)
    );

    // OpenAPI validations: one error, then several joined as Kubernetes does.
    let out = c.apply_stdin(
        &["apply", "--server-side", "-f", "-"],
        &gadget(&group, &ns, "g3", "{mode: external, instances: 0}"),
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        // kubectl prints an Invalid status from its causes.
        err.contains(r#"The Gadget "g3" is invalid: spec.instances: Invalid value: 0: spec.instances in body should be greater than or equal to 1"#),
        "{err}"
    );
    let out = c.apply_stdin(
        &["apply", "-f", "-"],
        &gadget(
            &group,
            &ns,
            "g3",
            "{mode: other, name: TOOLONG, instances: two, tags: [a, a]}",
        ),
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    for part in [
        r#"spec.instances: Invalid value: "string": spec.instances in body must be of type integer: "string""#,
        r#"spec.mode: Unsupported value: "other": supported values: "managed", "external""#,
        r#"spec.name: Invalid value: "TOOLONG": spec.name in body should match '^[a-z]+$'"#,
        "spec.name: Too long: may not be more than 5 bytes",
        r#"spec.tags[1]: Duplicate value: "a""#,
    ] {
        assert!(err.contains(part), "{part} in {err}");
    }
    assert!(err.contains(r#"The Gadget "g3" is invalid: "#), "{err}");
    let out = c.apply_stdin(
        &["apply", "-f", "-"],
        &gadget(
            &group,
            &ns,
            "g3",
            "{mode: external, ports: [{name: a, port: 1}, {name: a, port: 2}]}",
        ),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out)
            .contains(r#"spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}"#),
        "{}",
        stderr(&out)
    );
    let out = c.apply_stdin(&["apply", "-f", "-"], &gadget(&group, &ns, "g3", "{}"));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("spec.mode: Required value"),
        "{}",
        stderr(&out)
    );
    assert!(c
        .kubectl(&["-n", &ns, "get", &res, "g3"])
        .status
        .code()
        .is_some_and(|c| c != 0));

    // CEL: a rule on spec, and a transition rule only checked on update.
    let out = c.apply_stdin(
        &["apply", "-f", "-"],
        &gadget(&group, &ns, "g4", "{mode: managed}"),
    );
    assert!(!out.status.success());
    // Kubernetes before 1.31 printed the type of an object as its value.
    assert!(
        stderr(&out).contains(
            r#"The Gadget "g4" is invalid: spec: Invalid value: "object": managed mode needs spec.managed"#
        ) || stderr(&out).contains(
            r#"The Gadget "g4" is invalid: spec: Invalid value: managed mode needs spec.managed"#
        ),
        "{}",
        stderr(&out)
    );
    let out = c.apply_stdin(
        &["apply", "--server-side", "-f", "-"],
        &gadget(&group, &ns, "g4", "{mode: external, immutable: a}"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = c.kubectl(&[
        "-n",
        &ns,
        "patch",
        &res,
        "g4",
        "--type=merge",
        "-p",
        r#"{"spec":{"immutable":"b"}}"#,
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(r#"spec.immutable: Invalid value: "b": immutable is immutable"#),
        "{}",
        stderr(&out)
    );
    // kubectl patch sends no fieldValidation: the server's default, Warn.
    let out = c.kubectl(&[
        "-n",
        &ns,
        "patch",
        &res,
        "g4",
        "--type=merge",
        "-p",
        r#"{"spec":{"qux":1}}"#,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(r#"Warning: unknown field "spec.qux""#),
        "{}",
        stderr(&out)
    );
    let g = get_json(&c, &["-n", &ns, "get", &res, "g4"]);
    assert!(g["spec"].get("qux").is_none(), "{g}");

    // The status subresource: a main write leaves status alone and a status
    // write the rest; status is validated too.
    let out = c.kubectl(&[
        "-n",
        &ns,
        "patch",
        &res,
        "g4",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":7}}"#,
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(r#"status.phase: Invalid value: "integer": status.phase in body must be of type string: "integer""#),
        "{}",
        stderr(&out)
    );
    c.ok(&[
        "-n",
        &ns,
        "patch",
        &res,
        "g4",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Ready"},"spec":{"instances":4}}"#,
    ]);
    let g = get_json(&c, &["-n", &ns, "get", &res, "g4"]);
    assert_eq!(g["status"]["phase"], "Ready");
    assert_eq!(g["spec"]["instances"], 1, "{g}");
    assert_eq!(g["metadata"]["generation"], 1, "{g}");
    c.ok(&[
        "-n",
        &ns,
        "patch",
        &res,
        "g4",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Gone"},"spec":{"instances":4}}"#,
    ]);
    let g = get_json(&c, &["-n", &ns, "get", &res, "g4"]);
    assert_eq!(g["status"]["phase"], "Ready");
    assert_eq!(g["spec"]["instances"], 4);
    assert_eq!(g["metadata"]["generation"], 2, "{g}");

    c.ok(&["delete", "crd", &res, "--wait=true"]);
    c.ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
fn without_the_status_subresource_a_status_change_is_a_new_generation() {
    let c = cluster();
    let group = format!("{}.navique.test", unique("n"));
    let plain = crd(&group).replace("    subresources: {status: {}}\n", "");
    assert_ne!(plain, crd(&group));
    let out = c.apply_stdin(&["apply", "-f", "-"], &plain);
    assert!(out.status.success(), "{}", stderr(&out));
    c.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/gadgets.{group}"),
        "--timeout=30s",
    ]);
    let ns = unique("crd-gen");
    c.ok(&["create", "namespace", &ns]);
    let res = format!("gadgets.{group}");
    let out = c.apply_stdin(
        &["apply", "--server-side", "-f", "-"],
        &gadget(&group, &ns, "g", "{mode: external}"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    c.ok(&[
        "-n",
        &ns,
        "patch",
        &res,
        "g",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Ready"}}"#,
    ]);
    let g = get_json(&c, &["-n", &ns, "get", &res, "g"]);
    assert_eq!(g["status"]["phase"], "Ready", "{g}");
    assert_eq!(g["metadata"]["generation"], 2, "{g}");
    c.ok(&["delete", "crd", &res, "--wait=true"]);
    c.ok(&["delete", "namespace", &ns, "--wait=false"]);
}

#[test]
fn a_crd_whose_rule_does_not_compile_is_refused() {
    let c = cluster();
    let group = format!("{}.navique.test", unique("r"));
    let bad = crd(&group).replace("rule: self == oldSelf", "rule: self == ");
    let out = c.apply_stdin(&["apply", "-f", "-"], &bad);
    assert!(
        !out.status.success(),
        "accepted a rule that does not compile"
    );
    assert!(
        stderr(&out).contains("x-kubernetes-validations[0].rule"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("is invalid"), "{}", stderr(&out));
}

#[test]
fn server_side_apply_merges_custom_lists_by_their_schema_list_type() {
    let c = cluster();
    let group = format!("{}.navique.test", unique("l"));
    let out = c.apply_stdin(&["apply", "-f", "-"], &crd(&group));
    assert!(out.status.success(), "{}", stderr(&out));
    c.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/gadgets.{group}"),
        "--timeout=30s",
    ]);
    let ns = unique("crd-lists");
    c.ok(&["create", "namespace", &ns]);
    let res = format!("gadgets.{group}");
    let apply = |manager: &str, spec: &str| {
        let out = c.apply_stdin(
            &[
                "apply",
                "--server-side",
                &format!("--field-manager={manager}"),
                "-f",
                "-",
            ],
            &gadget(&group, &ns, "g", spec),
        );
        assert!(out.status.success(), "{}", stderr(&out));
    };
    // A map list keyed by name and a set: each manager owns its own items.
    apply(
        "alice",
        "{mode: external, ports: [{name: a, port: 1}], tags: [x1]}",
    );
    apply(
        "bob",
        "{mode: external, ports: [{name: b, port: 2}], tags: [y1]}",
    );
    let g = get_json(&c, &["-n", &ns, "get", &res, "g", "--show-managed-fields"]);
    assert_eq!(
        g["spec"]["ports"],
        serde_json::json!([{"name": "a", "port": 1}, {"name": "b", "port": 2}]),
        "{g}"
    );
    assert_eq!(g["spec"]["tags"], serde_json::json!(["x1", "y1"]), "{g}");
    let bob = g["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "bob")
        .expect("bob's entry")
        .clone();
    let ports = &bob["fieldsV1"]["f:spec"]["f:ports"];
    assert!(ports.get(r#"k:{"name":"b"}"#).is_some(), "{bob}");
    assert!(ports.get(r#"k:{"name":"a"}"#).is_none(), "{bob}");
    assert!(
        bob["fieldsV1"]["f:spec"]["f:tags"]
            .get(r#"v:"y1""#)
            .is_some(),
        "{bob}"
    );
    // Alice stops applying her port: it goes, Bob's stays.
    apply("alice", "{mode: external}");
    let g = get_json(&c, &["-n", &ns, "get", &res, "g"]);
    assert_eq!(
        g["spec"]["ports"],
        serde_json::json!([{"name": "b", "port": 2}]),
        "{g}"
    );
    assert_eq!(g["spec"]["tags"], serde_json::json!(["y1"]), "{g}");
    // Changing Bob's item conflicts.
    let out = c.apply_stdin(
        &["apply", "--server-side", "--field-manager=carol", "-f", "-"],
        &gadget(
            &group,
            &ns,
            "g",
            "{mode: external, ports: [{name: b, port: 3}]}",
        ),
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(r#".spec.ports[name="b"].port"#),
        "{}",
        stderr(&out)
    );
    c.ok(&["delete", "crd", &res, "--wait=true"]);
    c.ok(&["delete", "namespace", &ns, "--wait=false"]);
}
