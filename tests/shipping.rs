//! The install paths, from one source: `manifests --check` (config/, the
//! chart's generated templates, bundle/ as `src/packaging/shipping.rs`
//! makes them); the operator's Helm chart rendered byte for byte alike by
//! our engine and real Helm, installed and upgraded by real Helm (CRDs move
//! forward) and listed by `helm list`; `make install`/`make deploy IMG=...`
//! with kustomize; the OLM bundle's rules; RBAC without `*` on `*`; CRDs
//! only added to since the last release.
//!
//! The chart and kustomize installs run on an embedded API server of their
//! own, or on the shared cluster NAVIQUE_TEST_KUBECONFIG names, taking turns
//! there and deleting the operator's cluster-scoped objects after
//! (tests/support/cluster.rs).

#[path = "support/cluster.rs"]
mod cluster;
#[path = "support/kubectl.rs"]
mod kubectl;
#[path = "support/python.rs"]
mod python;
#[path = "support/registry.rs"]
mod registry;

use kubectl::kubectl;
use navique_ai_core_operator::apply::objects::parse_manifest;
use navique_ai_core_operator::operator::model::catalog::Catalog;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_navique-operator");

fn shared() -> Option<PathBuf> {
    let p = Path::new(ROOT).join("../shared/charts");
    if p.join("cert-manager-v1.21.1.tgz").exists() {
        return Some(p);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "../shared/charts is missing and CI=true"
    );
    eprintln!("skipping: ../shared/charts not found");
    None
}

fn helm_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import helm_python"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok || std::env::var("CI").as_deref() != Ok("true"),
        "helm_python is required under CI"
    );
    ok
}

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn objects(yaml: &str) -> Vec<Value> {
    parse_manifest(yaml, "")
        .expect("YAML")
        .into_iter()
        .map(|o| o.body)
        .collect()
}

fn one(path: &str) -> Value {
    objects(&read(path)).remove(0)
}

fn python(script: &str) -> Value {
    python::json(script, "")
}

#[test]
fn every_generated_install_file_is_current() {
    if shared().is_none() {
        return;
    }
    let out = Command::new(BIN)
        .args(["manifests", "--check", "--root", ROOT])
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Our render of the operator's chart with `values`, as the release manifest.
fn our_manifest(values: &Value) -> String {
    let chart = navique_ai_core_operator::chart::load::load_chart(
        &Path::new(ROOT).join("chart/navique-ai-core-operator"),
    )
    .unwrap();
    let text = values.to_string();
    let values = navique_ai_core_operator::goyaml::parse_values(&text).unwrap();
    navique_ai_core_operator::action::render::render(
        navique_ai_core_operator::action::render::Request {
            chart: &chart,
            values: &values,
            name: "navique",
            namespace: "navique-system",
            revision: 1,
            is_upgrade: false,
            capabilities: Default::default(),
        },
    )
    .unwrap()
    .manifest
}

fn helms_manifest(values: &Value) -> String {
    let script = format!(
        r#"
import helm_python, json
cfg = helm_python.Config(storage_driver="memory", namespace="navique-system")
r = cfg.install({chart:?}, "navique", json.loads({values:?}), dry_run="client")
print(json.dumps(r["manifest"] if isinstance(r, dict) else r.manifest))
"#,
        chart = format!("{ROOT}/chart/navique-ai-core-operator"),
        values = values.to_string()
    );
    python(&script).as_str().unwrap().to_string()
}

#[test]
fn the_operators_chart_renders_byte_for_byte_like_helm() {
    if !helm_available() {
        return;
    }
    for values in [
        json!({}),
        json!({"image": {"digest": format!("sha256:{}", "a".repeat(64))}, "leaderElect": false, "replicas": 2,
               "registryMirrors": ["quay.io=registry.local:5000/quay.io", "ghcr.io=registry.local:5000/ghcr.io"],
               "metrics": {"serviceMonitor": {"enabled": true}}, "nodeSelector": {"kubernetes.io/os": "linux"},
               "imagePullSecrets": [{"name": "pull"}]}),
    ] {
        let ours = our_manifest(&values);
        let helms = helms_manifest(&values);
        assert!(ours.contains("kind: Deployment"));
        assert_eq!(ours.trim_end(), helms.trim_end(), "values {values}");
    }
}

#[test]
fn the_charts_image_pull_secrets_are_passed_on_as_image_pull_secret() {
    let manifest = our_manifest(&json!({"imagePullSecrets": [{"name": "pull"}, {"name": "more"}]}));
    assert!(
        manifest
            .contains("        - --image-pull-secret=pull\n        - --image-pull-secret=more\n"),
        "{manifest}"
    );
    assert!(!our_manifest(&json!({})).contains("--image-pull-secret"));
}

fn without_keep(mut crd: Value) -> Value {
    let annotations = crd["metadata"]["annotations"].as_object_mut().unwrap();
    assert_eq!(
        annotations.remove("helm.sh/resource-policy"),
        Some(json!("keep")),
        "the chart keeps its CRDs"
    );
    if annotations.is_empty() {
        crd["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("annotations");
    }
    crd
}

#[test]
fn the_chart_kustomize_and_the_bundle_say_the_same_thing() {
    if shared().is_none() {
        return;
    }
    let chart = objects(&our_manifest(&json!({})));
    let of = |kind: &str| {
        chart
            .iter()
            .filter(|o| o["kind"] == kind)
            .cloned()
            .collect::<Vec<_>>()
    };
    let committed: BTreeMap<String, Value> = std::fs::read_dir(Path::new(ROOT).join("crds"))
        .unwrap()
        .map(|e| {
            let crd = objects(&std::fs::read_to_string(e.unwrap().path()).unwrap()).remove(0);
            (crd["metadata"]["name"].as_str().unwrap().to_string(), crd)
        })
        .collect();
    // CRDs: crds/ = kustomize = bundle = the chart's (less its keep policy).
    let chart_crds: BTreeMap<String, Value> = of("CustomResourceDefinition")
        .into_iter()
        .map(|c| {
            (
                c["metadata"]["name"].as_str().unwrap().to_string(),
                without_keep(c),
            )
        })
        .collect();
    assert_eq!(chart_crds, committed);
    for (name, crd) in &committed {
        assert_eq!(
            &one(&format!("config/crd/bases/{name}.yaml")),
            crd,
            "{name}"
        );
        assert_eq!(
            &one(&format!("bundle/manifests/{name}.yaml")),
            crd,
            "{name}"
        );
    }
    // RBAC: the chart's ClusterRole = kustomize's = the CSV's clusterPermissions.
    let role = one("config/rbac/role.yaml");
    assert_eq!(of("ClusterRole"), vec![role.clone()]);
    let csv = one("bundle/manifests/navique-ai-core-operator.clusterserviceversion.yaml");
    assert_eq!(
        csv["spec"]["install"]["spec"]["clusterPermissions"][0]["rules"],
        role["rules"]
    );
    // The Deployment: one pod spec, whatever installs it (the image aside).
    let manager = objects(&read("config/manager/manager.yaml"));
    let kustomized = manager
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .unwrap()
        .clone();
    let mut charted = of("Deployment").remove(0);
    let mut bundled = csv["spec"]["install"]["spec"]["deployments"][0]["spec"].clone();
    let image = |d: &mut Value| {
        let pointer = "/spec/template/spec/containers/0/image";
        let i = d
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_string);
        *d.pointer_mut(pointer).unwrap() = json!("IMAGE");
        i.unwrap()
    };
    assert_eq!(
        image(&mut charted),
        "ghcr.io/scigility/navique-ai-core-operator:0.1.0"
    );
    let mut k = kustomized.clone();
    assert_eq!(
        image(&mut k),
        "navique-ai-core-operator",
        "kustomize's name, which its images: entry replaces"
    );
    assert_eq!(charted["spec"], k["spec"]);
    let mut wrapped = json!({"spec": bundled.take()});
    let bundled_image = image(&mut wrapped);
    assert_eq!(wrapped["spec"], k["spec"]);
    assert_eq!(
        csv["metadata"]["annotations"]["containerImage"],
        bundled_image.as_str()
    );
    // No `*` verb on a `*` resource anywhere.
    for rule in role["rules"].as_array().unwrap() {
        let has = |k: &str, v: &str| rule[k].as_array().is_some_and(|a| a.iter().any(|x| x == v));
        assert!(!(has("verbs", "*") && has("resources", "*")), "{rule}");
    }
}

#[test]
fn the_derived_cluster_role_holds_every_rule_the_bundled_charts_grant() {
    let Some(shared) = shared() else { return };
    let catalog = Catalog::built_in();
    let store = navique_ai_core_operator::operator::model::catalog::ChartStore::with_dirs(vec![
        shared.clone(),
        shared.join("extra"),
    ]);
    let role = one("config/rbac/role.yaml");
    let held = |group: &str, resource: &str, verb: &str| {
        role["rules"].as_array().unwrap().iter().any(|r| {
            let has = |k: &str, v: &str| {
                r[k].as_array()
                    .is_some_and(|a| a.iter().any(|x| x == v || x == "*"))
            };
            has("apiGroups", group) && has("resources", resource) && has("verbs", verb)
        })
    };
    let rendered =
        navique_ai_core_operator::packaging::airgap::rendered_objects(&catalog, &store).unwrap();
    let mut checked = 0;
    for (chart, objects) in &rendered {
        for o in objects
            .iter()
            .filter(|o| o["kind"] == "ClusterRole" || o["kind"] == "Role")
        {
            for rule in o["rules"].as_array().into_iter().flatten() {
                for group in rule["apiGroups"].as_array().into_iter().flatten() {
                    for resource in rule["resources"].as_array().into_iter().flatten() {
                        for verb in rule["verbs"].as_array().into_iter().flatten() {
                            let (g, r, v) = (
                                group.as_str().unwrap(),
                                resource.as_str().unwrap(),
                                verb.as_str().unwrap(),
                            );
                            assert!(
                                held(g, r, v),
                                "chart {chart} grants {v} on {g}/{r}; the operator must hold it"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(
        checked > 100,
        "the bundled charts grant many rules: {checked}"
    );
    // And what it emits and runs on.
    for (g, r, v) in [
        ("postgresql.cnpg.io", "clusters", "create"),
        ("coordination.k8s.io", "leases", "update"),
        ("core.navique.com", "postgresclusters/status", "patch"),
        ("", "secrets", "delete"),
    ] {
        assert!(held(g, r, v), "{v} on {g}/{r}");
    }
}

#[test]
fn the_bundle_follows_olms_rules() {
    let annotations =
        navique_ai_core_operator::goyaml::parse_values(&read("bundle/metadata/annotations.yaml"))
            .unwrap();
    let annotations = navique_ai_core_operator::release::record::values_to_json(&annotations)
        ["annotations"]
        .clone();
    let dockerfile = read("bundle.Dockerfile");
    let labels: serde_json::Map<String, Value> = dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("LABEL "))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_string(), json!(v))
        })
        .collect();
    assert_eq!(
        Value::Object(labels),
        annotations,
        "bundle.Dockerfile labels = metadata/annotations.yaml"
    );
    assert_eq!(
        annotations["operators.operatorframework.io.bundle.mediatype.v1"],
        "registry+v1"
    );
    let manifests: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("bundle/manifests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let csvs: Vec<&PathBuf> = manifests
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".clusterserviceversion.yaml"))
        .collect();
    assert_eq!(csvs.len(), 1, "one CSV");
    let csv = objects(&std::fs::read_to_string(csvs[0]).unwrap()).remove(0);
    let spec = &csv["spec"];
    // What OLM's ClusterServiceVersion schema requires, and what we promise.
    assert_eq!(csv["apiVersion"], "operators.coreos.com/v1alpha1");
    assert!(spec["displayName"].is_string() && spec["install"]["strategy"] == "deployment");
    assert_eq!(spec["minKubeVersion"], "1.28.0");
    assert_eq!(spec["version"], env!("CARGO_PKG_VERSION"));
    let modes: BTreeMap<String, bool> = spec["installModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["type"].as_str().unwrap().to_string(),
                m["supported"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(modes.len(), 4);
    assert_eq!(modes["AllNamespaces"], true);
    let a = &csv["metadata"]["annotations"];
    assert_eq!(a["features.operators.openshift.io/disconnected"], "true");
    for f in [
        "fips-compliant",
        "proxy-aware",
        "tls-profiles",
        "token-auth-aws",
        "token-auth-azure",
        "token-auth-gcp",
    ] {
        assert!(
            a[format!("features.operators.openshift.io/{f}")].is_string(),
            "{f}"
        );
    }
    // Every owned CRD is in the bundle, as crds/ has it.
    let owned = spec["customresourcedefinitions"]["owned"]
        .as_array()
        .unwrap();
    let crds: Vec<Value> = manifests
        .iter()
        .filter(|p| !csvs.contains(p))
        .map(|p| objects(&std::fs::read_to_string(p).unwrap()).remove(0))
        .collect();
    assert_eq!(owned.len(), crds.len());
    for o in owned {
        let crd = crds
            .iter()
            .find(|c| c["metadata"]["name"] == o["name"])
            .unwrap_or_else(|| panic!("{o} not in the bundle"));
        assert_eq!(crd["spec"]["names"]["kind"], o["kind"]);
        assert!(crd["spec"]["versions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == o["version"]));
        assert!(o["displayName"].is_string() && o["description"].is_string());
    }
    // relatedImages: every image `charts images` lists, by digest, and the
    // operator's own; each also a RELATED_IMAGE_* of the Deployment.
    let related = spec["relatedImages"].as_array().unwrap();
    let catalog = Catalog::built_in();
    assert_eq!(related.len(), catalog.image.len() + 1);
    let deployment = &spec["install"]["spec"]["deployments"][0]["spec"];
    let env = deployment["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap();
    // env is a keyed list: a real API server's server-side apply refuses a
    // name twice (two bundled images are both `.../clickhouse-operator`).
    let mut names: Vec<&str> = env.iter().map(|e| e["name"].as_str().unwrap()).collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "env names repeat: {env:?}");
    let operator_image = a["containerImage"].as_str().unwrap();
    for r in related {
        let image = r["image"].as_str().unwrap();
        if image == operator_image {
            continue;
        }
        assert!(
            image.contains("@sha256:") && image.rsplit("@sha256:").next().unwrap().len() == 64,
            "{image}"
        );
        assert!(
            env.iter().any(
                |e| e["name"].as_str().unwrap().starts_with("RELATED_IMAGE_")
                    && e["value"] == image
            ),
            "{image}"
        );
    }
    for image in &catalog.image {
        assert!(
            related.iter().any(|r| r["image"] == image.by_digest()),
            "{}",
            image.tagged()
        );
    }
    // alm-examples parse and pass the CRDs' schemas.
    let examples: Vec<Value> = serde_json::from_str(a["alm-examples"].as_str().unwrap()).unwrap();
    assert_eq!(examples.len(), 7);
    for ex in &examples {
        let crd = crds
            .iter()
            .find(|c| c["spec"]["names"]["kind"] == ex["kind"])
            .unwrap();
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        let mut errors = Vec::new();
        schema::check(schema, ex, "", &mut errors);
        assert!(errors.is_empty(), "{}: {errors:?}", ex["kind"]);
        assert!(
            ex["apiVersion"]
                == format!(
                    "core.navique.com/{}",
                    crd["spec"]["versions"][0]["name"].as_str().unwrap()
                )
        );
    }
    // The checker itself refuses what the API server would.
    let pg = crds
        .iter()
        .find(|c| c["spec"]["names"]["kind"] == "PostgresCluster")
        .unwrap();
    let mut errors = Vec::new();
    schema::check(
        &pg["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        &json!({"apiVersion": "x", "kind": "PostgresCluster", "metadata": {}, "spec": {"mode": "sideways", "managed": {"instances": "one"}, "typo": 1}}),
        "",
        &mut errors,
    );
    assert!(
        errors.iter().any(|e| e.contains(".spec.mode"))
            && errors.iter().any(|e| e.contains(".spec.managed.instances"))
            && errors.iter().any(|e| e.contains(".spec.typo")),
        "{errors:?}"
    );
}

/// The structural part of a CRD's OpenAPI v3 schema, as the API server
/// applies it to a create: types, enums, required fields, unknown fields
/// (pruned there; an error here, since an example should hold none).
mod schema {
    use serde_json::Value;

    pub fn check(schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
        if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
            && schema.get("properties").is_none()
        {
            return;
        }
        if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            if !(v.is_i64() || v.is_u64() || v.is_string()) {
                errors.push(format!("{at}: want an integer or a string"));
            }
            return;
        }
        let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
        let ok = match ty {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            _ => true,
        };
        if !ok {
            errors.push(format!("{at}: want {ty}, found {v}"));
            return;
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            if !values.contains(v) {
                errors.push(format!("{at}: {v} is not one of {values:?}"));
            }
        }
        if let (Some(props), Some(obj)) = (
            schema.get("properties").and_then(Value::as_object),
            v.as_object(),
        ) {
            for req in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !obj.contains_key(req.as_str().unwrap_or_default()) {
                    errors.push(format!(
                        "{at}.{}: required",
                        req.as_str().unwrap_or_default()
                    ));
                }
            }
            for (k, child) in obj {
                match props.get(k) {
                    Some(s) => check(s, child, &format!("{at}.{k}"), errors),
                    None if at.is_empty()
                        && (k == "apiVersion" || k == "kind" || k == "metadata") => {}
                    None if schema.get("x-kubernetes-preserve-unknown-fields")
                        == Some(&Value::Bool(true)) => {}
                    None => errors.push(format!("{at}.{k}: unknown field")),
                }
            }
        } else if let (Some(extra), Some(obj)) = (schema.get("additionalProperties"), v.as_object())
        {
            for (k, child) in obj {
                check(extra, child, &format!("{at}.{k}"), errors);
            }
        }
        if let (Some(items), Some(list)) = (schema.get("items"), v.as_array()) {
            for (i, child) in list.iter().enumerate() {
                check(items, child, &format!("{at}[{i}]"), errors);
            }
        }
    }
}

/// Properties of a schema, by path, with their type and whether required.
fn fields(schema: &Value, at: &str, required: bool, out: &mut BTreeMap<String, (String, bool)>) {
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    out.insert(at.to_string(), (ty, required));
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let req: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (k, child) in props {
            fields(child, &format!("{at}.{k}"), req.contains(&k.as_str()), out);
        }
    }
    if let Some(items) = schema.get("items") {
        fields(items, &format!("{at}[]"), false, out);
    }
}

/// What in `now` breaks a client of `before`: a field removed, a type
/// changed, a field newly required.
fn breaking(before: &Value, now: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for v in before["spec"]["versions"].as_array().into_iter().flatten() {
        let name = v["name"].as_str().unwrap_or_default();
        let Some(nv) = now["spec"]["versions"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["name"] == name))
        else {
            problems.push(format!("version {name} removed"));
            continue;
        };
        let (mut old, mut new) = (BTreeMap::new(), BTreeMap::new());
        fields(&v["schema"]["openAPIV3Schema"], "", false, &mut old);
        fields(&nv["schema"]["openAPIV3Schema"], "", false, &mut new);
        for (path, (ty, req)) in &old {
            match new.get(path) {
                None => problems.push(format!("{name}{path}: removed")),
                Some((t, _)) if t != ty => {
                    problems.push(format!("{name}{path}: type {ty} became {t}"))
                }
                Some((_, r)) if *r && !req => {
                    problems.push(format!("{name}{path}: newly required"))
                }
                _ => {}
            }
        }
        for (path, (_, r)) in &new {
            if *r
                && !old.contains_key(path)
                && old.contains_key(path.rsplit_once('.').map(|(p, _)| p).unwrap_or(""))
            {
                problems.push(format!("{name}{path}: a new required field"));
            }
        }
    }
    problems
}

#[test]
fn crds_only_grow_within_v1alpha1_since_the_last_release() {
    let dir = Path::new(ROOT).join("tests/data/crds-v0.1.0");
    let mut compared = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let before = objects(&std::fs::read_to_string(&path).unwrap()).remove(0);
        let now_path = Path::new(ROOT).join("crds").join(path.file_name().unwrap());
        let now = objects(
            &std::fs::read_to_string(&now_path)
                .unwrap_or_else(|_| panic!("{} was removed", now_path.display())),
        )
        .remove(0);
        let problems = breaking(&before, &now);
        assert!(problems.is_empty(), "{}: {problems:?}", now_path.display());
        compared += 1;
    }
    assert_eq!(compared, 8);
    // The comparison itself sees a removed field, a changed type and a new
    // required field.
    let pg = objects(&read("crds/core.navique.com_postgresclusters.yaml")).remove(0);
    let mut changed = pg.clone();
    let spec = changed
        .pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties/spec")
        .unwrap();
    spec["properties"]
        .as_object_mut()
        .unwrap()
        .remove("external");
    spec["properties"]["managed"]["properties"]["instances"]["type"] = json!("string");
    spec["properties"]["rename"] = json!({"type": "string"});
    spec["required"]
        .as_array_mut()
        .unwrap()
        .push(json!("rename"));
    let problems = breaking(&pg, &changed);
    assert!(
        problems
            .iter()
            .any(|p| p.contains(".spec.external: removed")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains(".spec.managed.instances: type integer became string")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.contains(".spec.rename: a new required field")),
        "{problems:?}"
    );
}

#[test]
fn real_helm_installs_the_chart_lists_it_and_an_upgrade_moves_the_crds_forward() {
    if !helm_available() {
        return;
    }
    let mut s = cluster::TestCluster::start();
    let ns = s.namespace("navique-system");
    let chart = format!("{ROOT}/chart/navique-ai-core-operator");
    // The product pages' path: the chart from its OCI repository (a real
    // registry standing in for ghcr.io) under the release name they give.
    let reg = registry::Registry::start(None);
    // The previous operator's chart: its PostgresCluster CRD had no
    // spec.external yet.
    let old = std::env::temp_dir().join(format!("navique-old-chart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&old);
    let copy = Command::new("cp")
        .args(["-r", &chart])
        .arg(&old)
        .status()
        .unwrap();
    assert!(copy.success());
    let crd_file = old.join("templates/generated/crd-postgresclusters.core.navique.com.yaml");
    let mut crd = objects(&std::fs::read_to_string(&crd_file).unwrap()).remove(0);
    crd.pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties")
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove("external");
    std::fs::write(&crd_file, serde_json::to_string_pretty(&crd).unwrap()).unwrap();
    let script = format!(
        r#"
import helm_python, json, subprocess, tempfile
kc, old, chart, ns, reg = {kc:?}, {old:?}, {chart:?}, {ns:?}, {reg:?}
def has_external():
    crd = json.loads(subprocess.check_output(["kubectl", "--kubeconfig", kc, "get", "crd", "postgresclusters.core.navique.com", "-o", "json"]))
    return "external" in crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
repo = f"oci://{{reg}}/ghcr.io/scigility/charts"
out = tempfile.mkdtemp()
for path, version in [(old, "0.0.9"), (chart, None)]:
    helm_python.push(helm_python.package(path, destination=out, version=version), repo, plain_http=True)
ref = repo + "/navique-ai-core-operator"
cfg = helm_python.Config(kubeconfig_path=kc, namespace=ns)
cfg.install(ref, "navique-ai-core-operator", {{}}, create_namespace=True, chart_version="0.0.9", plain_http=True)
listed = [r["name"] for r in cfg.list()]
before = has_external()
cfg.upgrade(ref, "navique-ai-core-operator", {{"image": {{"tag": "0.1.1"}}}}, plain_http=True)
after = has_external()
dep = json.loads(subprocess.check_output(["kubectl", "--kubeconfig", kc, "-n", ns, "get", "deployment", "navique-ai-core-operator", "-o", "json"]))
cfg.uninstall("navique-ai-core-operator")
kept = subprocess.run(["kubectl", "--kubeconfig", kc, "get", "crd", "postgresclusters.core.navique.com"], capture_output=True).returncode == 0
print(json.dumps({{"listed": listed, "before": before, "after": after, "kept": kept,
  "image": dep["spec"]["template"]["spec"]["containers"][0]["image"]}}))
"#,
        kc = s.kubeconfig.display().to_string(),
        old = old.display().to_string(),
        chart = chart,
        ns = ns,
        reg = reg.addr
    );
    let r = python(&script);
    assert!(
        r["listed"]
            .as_array()
            .unwrap()
            .contains(&json!("navique-ai-core-operator")),
        "helm list: {}",
        r["listed"]
    );
    assert_eq!(r["before"], false);
    assert_eq!(
        r["after"], true,
        "helm upgrade applied the chart's CRD again"
    );
    assert_eq!(
        r["image"],
        "ghcr.io/scigility/navique-ai-core-operator:0.1.1"
    );
    assert_eq!(
        r["kept"], true,
        "helm.sh/resource-policy: keep leaves the CRDs on uninstall"
    );
    std::fs::remove_dir_all(&old).unwrap();
}

#[test]
fn make_install_and_make_deploy_put_the_given_image_in_the_deployment() {
    if shared().is_none() {
        return;
    }
    let s = cluster::TestCluster::start();
    let kubectl_flag = format!("KUBECTL=kubectl --kubeconfig {}", s.kubeconfig.display());
    let make = |args: &[&str]| {
        let out = Command::new("make")
            .args(args)
            .arg(&kubectl_flag)
            .current_dir(ROOT)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "make {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    make(&["install"]);
    let crds = kubectl(&s.kubeconfig, &["get", "crd", "-o", "name"]).unwrap();
    assert_eq!(
        crds.lines()
            .filter(|l| l.contains("core.navique.com"))
            .count(),
        8,
        "{crds}"
    );
    for img in [
        format!(
            "registry.local:5000/scigility/navique-ai-core-operator@sha256:{}",
            "b".repeat(64)
        ),
        "registry.local:5000/scigility/navique-ai-core-operator:v9".to_string(),
    ] {
        make(&["deploy", &format!("IMG={img}")]);
        let dep = kubectl(
            &s.kubeconfig,
            &[
                "-n",
                "navique-system",
                "get",
                "deployment",
                "navique-ai-core-operator",
                "-o",
                "json",
            ],
        )
        .unwrap();
        let dep: Value = serde_json::from_str(&dep).unwrap();
        assert_eq!(
            dep["spec"]["template"]["spec"]["containers"][0]["image"],
            img.as_str()
        );
        let sa = kubectl(
            &s.kubeconfig,
            &[
                "-n",
                "navique-system",
                "get",
                "serviceaccount",
                "navique-ai-core-operator",
                "-o",
                "name",
            ],
        );
        assert!(sa.is_some());
        assert!(kubectl(
            &s.kubeconfig,
            &[
                "get",
                "clusterrole",
                "navique-ai-core-operator",
                "-o",
                "name"
            ]
        )
        .is_some());
    }
    make(&["undeploy"]);
    assert!(kubectl(
        &s.kubeconfig,
        &[
            "get",
            "clusterrole",
            "navique-ai-core-operator",
            "-o",
            "name"
        ]
    )
    .is_none());
}
