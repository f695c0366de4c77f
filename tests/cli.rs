//! The `navique-operator template` command line: flags behave as Helm's.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_navique-operator"))
}

/// A small chart on disk: a ConfigMap template, a hook, a CRD and a NOTES.txt.
fn chart(dir: &Path) -> PathBuf {
    let c = dir.join("mini");
    std::fs::create_dir_all(c.join("templates")).unwrap();
    std::fs::create_dir_all(c.join("crds")).unwrap();
    std::fs::write(
        c.join("Chart.yaml"),
        "apiVersion: v2\nname: mini\nversion: 1.2.3\nappVersion: \"9\"\n",
    )
    .unwrap();
    std::fs::write(
        c.join("values.yaml"),
        "replicas: 1\nname: base\nlist: [a]\n",
    )
    .unwrap();
    std::fs::write(
        c.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n  namespace: {{ .Release.Namespace }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n  type: {{ typeOf .Values.replicas | quote }}\n  list: {{ toJson .Values.list | quote }}\n  release: {{ .Release.Name }}\n  upgrade: {{ .Release.IsUpgrade | quote }}\n  kube: {{ .Capabilities.KubeVersion.Version }}\n  extra: {{ .Capabilities.APIVersions.Has \"example.com/v1\" | quote }}\n",
    )
    .unwrap();
    std::fs::write(
        c.join("templates/hook.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: test\n",
    )
    .unwrap();
    std::fs::write(
        c.join("templates/sa.yaml"),
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
    )
    .unwrap();
    std::fs::write(
        c.join("templates/NOTES.txt"),
        "installed {{ .Release.Name }}\n",
    )
    .unwrap();
    std::fs::write(c.join("crds/crd.yaml"), "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n").unwrap();
    c
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("navique-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = bin().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn template_prints_manifest_then_hooks_in_helm_order() {
    let d = tmp("order");
    let c = chart(&d);
    let (ok, out, err) = run(&["template", "rel", c.to_str().unwrap(), "-n", "prod"]);
    assert!(ok, "{err}");
    // ServiceAccount sorts before ConfigMap; the hook comes last; NOTES never.
    let sa = out.find("# Source: mini/templates/sa.yaml").unwrap();
    let cm = out.find("# Source: mini/templates/cm.yaml").unwrap();
    let hook = out.find("# Source: mini/templates/hook.yaml").unwrap();
    assert!(sa < cm && cm < hook, "{out}");
    assert!(!out.contains("installed rel"));
    assert!(out.contains("namespace: prod"));
    assert!(out.starts_with("---\n# Source: mini/templates/sa.yaml\n"));
    assert!(out.contains("kube: v1.36.0"));
    // --no-hooks and --skip-tests drop the test hook.
    for flag in ["--no-hooks", "--skip-tests"] {
        let (_, out, _) = run(&["template", "rel", c.to_str().unwrap(), flag]);
        assert!(!out.contains("hook.yaml"), "{flag}");
    }
}

#[test]
fn values_flags_are_layered_like_helm() {
    let d = tmp("values");
    let c = chart(&d);
    let f = d.join("v.yaml");
    std::fs::write(&f, "name: from-file\nreplicas: 2\n").unwrap();
    let (ok, out, err) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "-f",
        f.to_str().unwrap(),
        "--set",
        "replicas=3",
        "--set-json",
        "list=[1,2]",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("name: from-file"));
    // --set beats -f and types 3 as int64; --set-json numbers are float64.
    assert!(
        out.contains("replicas: \"3\"") && out.contains("type: \"int64\""),
        "{out}"
    );
    assert!(out.contains("list: \"[1,2]\""), "{out}");
    let (_, out, _) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--set-string",
        "replicas=3",
    ]);
    assert!(out.contains("type: \"string\""));
    let lit = d.join("lit.txt");
    std::fs::write(&lit, "from a file").unwrap();
    let (_, out, _) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--set-file",
        &format!("name={}", lit.display()),
    ]);
    assert!(out.contains("name: from a file"), "{out}");
    let (_, out, _) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--set-literal",
        "name=a,b",
    ]);
    assert!(out.contains("name: a,b"), "{out}");
}

#[test]
fn capability_and_release_flags() {
    let d = tmp("caps");
    let c = chart(&d);
    let (_, out, _) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--kube-version",
        "1.30",
        "-a",
        "example.com/v1",
        "--is-upgrade",
    ]);
    // Helm v4 keeps the version as given, with a v in front.
    assert!(
        out.contains("kube: v1.30\n")
            && out.contains("extra: \"true\"")
            && out.contains("upgrade: \"true\""),
        "{out}"
    );
    let (_, out, _) = run(&["template", c.to_str().unwrap()]);
    assert!(out.contains("release: release-name"));
    let (_, out, _) = run(&["template", c.to_str().unwrap(), "--name-template", "named"]);
    assert!(out.contains("release: named"));
}

#[test]
fn crds_show_only_and_output_dir() {
    let d = tmp("crds");
    let c = chart(&d);
    let (_, out, _) = run(&["template", "rel", c.to_str().unwrap(), "--include-crds"]);
    assert!(
        out.starts_with("---\n# Source: mini/crds/crd.yaml\n"),
        "{out}"
    );
    let (_, out, _) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--include-crds",
        "--skip-crds",
    ]);
    assert!(!out.contains("crd.yaml"));
    let (ok, out, _) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--show-only",
        "templates/cm.yaml",
    ]);
    assert!(
        ok && out.contains("kind: ConfigMap") && !out.contains("ServiceAccount"),
        "{out}"
    );
    let (ok, _, err) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--show-only",
        "templates/nope.yaml",
    ]);
    assert!(
        !ok && err.contains("could not find template templates/nope.yaml in chart"),
        "{err}"
    );
    let outdir = d.join("out");
    let (ok, _, err) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--output-dir",
        outdir.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let written = std::fs::read_to_string(outdir.join("mini/templates/cm.yaml")).unwrap();
    assert!(
        written.starts_with("---\n# Source: mini/templates/cm.yaml\napiVersion: v1\n"),
        "{written}"
    );
}

#[test]
fn errors_go_to_stderr_with_helm_wording_and_fail() {
    let d = tmp("errors");
    let c = chart(&d);
    std::fs::write(c.join("templates/bad.yaml"), "{{ .Values.missing.deep }}").unwrap();
    let (ok, out, err) = run(&["template", "rel", c.to_str().unwrap()]);
    assert!(!ok && out.is_empty());
    assert!(
        err.starts_with("Error: mini/templates/bad.yaml:1:"),
        "{err}"
    );
    assert!(err.contains("nil pointer evaluating interface {}.deep"));
    let (ok, _, err) = run(&["template", "rel", d.join("nowhere").to_str().unwrap()]);
    assert!(!ok && err.contains("no such file or directory"), "{err}");
    let (ok, _, err) = run(&["template", "rel", c.to_str().unwrap(), "--set", "a[x]=1"]);
    assert!(!ok && err.contains("failed parsing --set data"), "{err}");
    // A truncated archive is refused, and nothing is written anywhere.
    let tgz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/charts/meilisearch-0.34.0.tgz");
    if let Ok(bytes) = std::fs::read(&tgz) {
        let cut = d.join("cut.tgz");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let (ok, _, err) = run(&["template", "rel", cut.to_str().unwrap()]);
        // Go's gzip and tar readers say io.ErrUnexpectedEOF, unprefixed.
        assert!(!ok && err.trim_end() == "Error: unexpected EOF", "{err}");
        let plain = d.join("plain.tgz");
        std::fs::write(&plain, "plain\n").unwrap();
        let (ok, _, err) = run(&["template", "rel", plain.to_str().unwrap()]);
        assert_eq!(
            err.trim_end(),
            format!("Error: file '{}' does not appear to be a gzipped archive; got 'application/octet-stream'", plain.display()),
            "{ok}"
        );
    }
}

#[test]
fn demo_releases_renders_then_runs_a_release_on_the_embedded_api_server() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .arg("demo-releases")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("# Source: navique-demo/templates/deployment.yaml"));
    assert!(
        text.contains("demo revision 1: deployed (Install complete)"),
        "{text}"
    );
    assert!(text.contains("demo revision 2: deployed (Upgrade complete)"));
    assert!(text.contains("demo revision 3: deployed (Rollback to 1)"));
    assert!(text.contains("uninstalled; 0 release records left"));
}

#[test]
fn the_operator_demo_adopts_installs_and_uninstalls_only_what_it_owns() {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/charts");
    if !shared.exists() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "../shared/charts is missing and CI=true"
        );
        eprintln!("skipping: ../shared/charts is missing");
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args(["demo", "--charts-dir"])
        .arg(&shared)
        .arg("--charts-dir")
        .arg(shared.join("upgrade"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (during, after) = text
        .split_once("7. ")
        .expect("the walk-through reaches step 7");
    for line in [
        "1. adopt cert-manager: Helm release platform-cert-manager in namespace platform-tools",
        "Event Adopted on Capability cert-manager",
        "Event Installed on Capability cloudnative-pg",
        "[simulated] CloudNativePG reports Cluster team-a/app-db Ready",
        "PostgresCluster team-a/app-db: Ready (connection Secret app-db-app)",
        "Event Uninstalled on Capability cloudnative-pg",
        "5. Day 2: someone deletes the CloudNativePG controller by mistake",
        "Event DriftCorrected on Capability cloudnative-pg: Deployment cnpg-system/cloudnative-pg",
    ] {
        assert!(during.contains(line), "missing {line:?} in\n{text}");
    }
    assert!(
        !after.contains("cloudnative-pg         cnpg-system"),
        "{after}"
    );
    assert!(
        after.contains(
            "platform-cert-manager  platform-tools  1         deployed  cert-manager-v1.19.2"
        ),
        "{after}"
    );
    assert!(
        !text.contains("Installed on Capability cert-manager"),
        "cert-manager was installed a second time:\n{text}"
    );
}

#[test]
fn the_platform_demo_brings_every_kind_up_once_and_takes_it_all_down() {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/charts");
    if !shared.exists() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "../shared/charts is missing and CI=true"
        );
        eprintln!("skipping: ../shared/charts is missing");
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navique-operator"))
        .args(["demo", "--platform", "--charts-dir"])
        .arg(&shared)
        .arg("--charts-dir")
        .arg(shared.join("extra"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (up, down) = text
        .split_once("4. ")
        .expect("the walk-through reaches step 4");
    for kind in [
        "PostgresCluster",
        "ClickHouseCluster",
        "Gateway",
        "ChatUI",
        "MeilisearchInstance",
        "Observability",
    ] {
        assert!(
            up.lines()
                .any(|l| l.contains(&format!("{kind} team-a/")) && l.contains(": Ready (")),
            "{kind} never Ready:\n{text}"
        );
    }
    for release in [
        "cert-manager ",
        "cloudnative-pg ",
        "clickhouse-operator ",
        "litellm-operator ",
        "external-secrets ",
        "chat-ui-web ",
        "meilisearch-search ",
        "langfuse-obs ",
    ] {
        let listed: Vec<&str> = up
            .lines()
            .filter(|l| l.trim_start().starts_with(release) && l.contains("deployed"))
            .collect();
        assert_eq!(listed.len(), 1, "{release}: {listed:?}\n{text}");
        assert!(
            listed[0].contains(" 1 ") && listed[0].ends_with("navique-ai-core-operator"),
            "{}",
            listed[0]
        );
    }
    assert!(
        up.lines()
            .any(|l| l.contains("SecretsManagement corp-vault: Ready (")),
        "SecretsManagement never Ready:\n{text}"
    );
    assert!(up.contains("[simulated] CloudNativePG reports Cluster team-a/app-db Ready"));
    assert!(
        up.contains("[simulated] external-secrets reports ExternalSecret search-master-key Ready")
    );
    let after = down.split_once("5. ").expect("step 5").1;
    assert!(!after.contains("deployed"), "releases left:\n{after}");
    assert!(down.contains("Capability cert-manager: absent"));
}

/// `--show-only` as Helm's template command does it: the whole output is
/// split into documents again, a document is named by its first
/// `# Source:` line without the chart's name and matched with
/// filepath.Match, and each match printed as `---\n<document>\n` (the last
/// document keeps the newline it ended with).
#[test]
fn show_only_splits_the_output_again() {
    let d = tmp("showonly");
    let c = chart(&d);
    // A CRD file is printed whole: its second document has no Source line
    // of its own once the output is split again, and Helm drops it.
    std::fs::write(
        c.join("crds/two.yaml"),
        "kind: CustomResourceDefinition\nmetadata:\n  name: a\n---\nkind: CustomResourceDefinition\nmetadata:\n  name: b\n",
    )
    .unwrap();
    let (ok, out, err) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--include-crds",
        "--show-only",
        "crds/two.yaml",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "---\n# Source: mini/crds/two.yaml\nkind: CustomResourceDefinition\nmetadata:\n  name: a\n"
    );
    let (ok, out, _) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "-s",
        "templates/sa.yaml",
        "-s",
        "templates/hook.yaml",
    ]);
    assert!(ok);
    assert_eq!(
        out,
        "---\n# Source: mini/templates/sa.yaml\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n---\n# Source: mini/templates/hook.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: test\n\n\n"
    );
    // The chart's own name is not part of the name matched.
    let (ok, _, err) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "-s",
        "mini/templates/sa.yaml",
    ]);
    assert!(
        !ok && err.contains("could not find template mini/templates/sa.yaml in chart"),
        "{err}"
    );
    let (ok, out, _) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "-s",
        "templates/*.yaml",
    ]);
    assert!(ok && out.matches("# Source:").count() == 3, "{out}");
}

#[test]
fn set_json_object_release_names_and_missing_dependencies() {
    let d = tmp("setjson");
    let c = chart(&d);
    let (ok, out, err) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--set-json",
        r#"{"name":"fromjson","list":["x"]}"#,
    ]);
    assert!(
        ok && out.contains("name: fromjson") && out.contains(r#"list: "[\"x\"]""#),
        "{err}{out}"
    );
    let (ok, _, err) = run(&["template", "rel", c.to_str().unwrap(), "--set-json", "{bad"]);
    assert!(
        !ok && err.trim_end() == "Error: failed parsing --set-json data JSON: {bad",
        "{err}"
    );
    let (ok, _, err) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--set-json",
        "a=bad",
    ]);
    assert!(
        !ok && err.trim_end() == "Error: failed parsing --set-json data a=bad",
        "{err}"
    );
    let (ok, _, err) = run(&["template", "Bad_Name", c.to_str().unwrap()]);
    assert!(!ok && err.starts_with("Error: release name check failed: release name \"Bad_Name\": invalid release name, must match regex"), "{err}");
    let (ok, _, err) = run(&[
        "template",
        "rel",
        c.to_str().unwrap(),
        "--kube-version",
        "x1",
    ]);
    assert!(
        !ok && err.trim_end()
            == "Error: invalid kube version 'x1': could not parse \"x1\" as version",
        "{err}"
    );
    std::fs::write(
        c.join("Chart.yaml"),
        "apiVersion: v2\nname: mini\nversion: 1.2.3\ndependencies:\n- name: gone\n  version: 1.0.0\n  condition: gone.enabled\n",
    )
    .unwrap();
    let (ok, _, err) = run(&["template", "rel", c.to_str().unwrap()]);
    assert!(!ok && err.trim_end() == "Error: an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: gone", "{err}");
}
