//! `navique-operator template` against real Helm v4.2.3 (helm-python-sdk)
//! installing the same small charts client-side (dry run, memory storage):
//! the checks `helm template` and `helm install` share (release names,
//! missing dependencies, manifests Helm's YAML reader and SimpleHead
//! refuse, bytes that are not UTF-8) must give Helm's output or error.
//!
//! Helm's template command prints `strings.TrimSpace(rel.Manifest)` and a
//! newline (hooks after, left out here with --no-hooks); where the install
//! fails it prints the error, with a hint about --debug when the release
//! had been rendered. The SDK words the missing-dependency error itself; the
//! command's wording is Helm's pkg/cmd/install.go.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HELM_INSTALL: &str = r#"
import json, sys, helm_python
cfg = helm_python.Config(storage_driver="memory")
out = []
for case in json.load(sys.stdin):
    try:
        chart = helm_python.Chart.load(case["dir"])
        rel = cfg.install(chart, case["name"], dry_run="client", namespace="ns")
        out.append({"manifest": rel["manifest"]})
    except helm_python.HelmError as e:
        out.append({"error": str(e)})
print(json.dumps(out))
"#;

const SDK_DEPS: &str = "chart dependencies are missing; run dependency update/build first: ";
const CLI_DEPS: &str = "an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' to fetch missing dependencies: ";
const DEBUG_HINT: &str = "\n\nUse --debug flag to render out invalid YAML";

struct Case {
    name: &'static str,
    release: String,
    files: Vec<(&'static str, Vec<u8>)>,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn case(name: &'static str, release: &str, files: &[(&'static str, &[u8])]) -> Case {
    Case {
        name,
        release: release.to_string(),
        files: files.iter().map(|(p, b)| (*p, b.to_vec())).collect(),
    }
}

const CHART: &[u8] = b"apiVersion: v2\nname: mychart\nversion: 0.1.0\n";
const SCHEMA: &[u8] = br#"{"type": "object", "properties": {"a": {"type": "string"}}}"#;

fn cases() -> Vec<Case> {
    let gz = {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&b"{\"panels\": [1, 2, 3]}\n".repeat(20))
            .unwrap();
        e.finish().unwrap()
    };
    let gz: &'static [u8] = Box::leak(gz.into_boxed_slice());
    let t = |text: &'static str| -> (&'static str, &'static [u8]) {
        ("templates/t.yaml", text.as_bytes())
    };
    let mut v = vec![
        // Bytes that are not UTF-8.
        case("b64-of-gzip", "rel", &[("Chart.yaml", CHART), ("files/d.json.gz", gz),
            t("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  d: {{ .Files.Get \"files/d.json.gz\" | b64enc }}\n  sum: {{ .Files.Get \"files/d.json.gz\" | sha256sum | b64enc }}\n  len: {{ .Files.Get \"files/d.json.gz\" | len | toString | b64enc }}\n{{ (.Files.Glob \"files/*\").AsSecrets | indent 2 }}\n")]),
        case("raw-bytes-printed", "rel", &[("Chart.yaml", CHART), ("files/d.json.gz", gz),
            t("kind: ConfigMap\ndata:\n  d: {{ .Files.Get \"files/d.json.gz\" | quote }}\n")]),
        case("raw-bytes-in-a-comment", "rel", &[("Chart.yaml", CHART), ("files/x", b"a\xe2\x82"),
            t("# {{ .Files.Get \"files/x\" }}\nkind: ConfigMap\n")]),
        case("cut-sequence-at-the-end", "rel", &[("Chart.yaml", CHART), ("files/x", b"a\xe2\x82"),
            t("kind: ConfigMap\nx: {{ .Files.Get \"files/x\" }}")]),
        case("raw-bytes-second-document", "rel", &[("Chart.yaml", CHART), ("files/x", b"\xc3\x28"),
            t("kind: A\n---\nkind: B\nx: {{ .Files.Get \"files/x\" }}\n")]),
        case("raw-bytes-only-in-notes", "rel", &[("Chart.yaml", CHART), ("files/x", b"\xff"),
            t("kind: ConfigMap\n"), ("templates/NOTES.txt", b"{{ .Files.Get \"files/x\" }}\n")]),
        case("raw-bytes-in-template-text", "rel", &[("Chart.yaml", CHART),
            ("templates/t.yaml", b"kind: ConfigMap\nx: \"\xe9t\xe9\"\n")]),
        case("control-character", "rel", &[("Chart.yaml", CHART),
            t("kind: ConfigMap\nx: \"{{ printf \"%c\" 1 }}\"\n")]),
        // Dependencies named in Chart.yaml but absent from charts/.
        case("missing-dependencies", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.1.0\n  condition: sub.enabled\n- name: present\n  version: 0.1.0\n- name: other\n  alias: ali\n  version: 1.0.0\n  tags: [x]\n"),
            ("values.yaml", b"sub:\n  enabled: false\n"),
            ("charts/present/Chart.yaml", b"apiVersion: v2\nname: present\nversion: 0.1.0\n"),
            t("kind: ConfigMap\n")]),
        case("aliased-dependency-present", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\ndependencies:\n- name: present\n  alias: other\n  version: 0.1.0\n"),
            ("charts/present/Chart.yaml", b"apiVersion: v2\nname: present\nversion: 0.1.0\n"),
            ("charts/present/templates/c.yaml", b"kind: ConfigMap\nname: {{ .Chart.Name }}\n"),
            t("kind: ConfigMap\n")]),
        case("requirements-of-a-v1-chart", "rel", &[
            ("Chart.yaml", b"apiVersion: v1\nname: mychart\nversion: 0.1.0\n"),
            ("requirements.yaml", b"dependencies:\n- name: gone\n  version: 0.1.0\n"),
            t("kind: ConfigMap\n")]),
        // Heads Helm 4 reads into util.SimpleHead.
        case("head-kind-number", "rel", &[("Chart.yaml", CHART), t("kind: 5\n")]),
        case("head-kind-list", "rel", &[("Chart.yaml", CHART), t("kind: [1]\n")]),
        case("head-name-list", "rel", &[("Chart.yaml", CHART), t("metadata:\n  name: [1]\n")]),
        case("head-namespace-list", "rel", &[("Chart.yaml", CHART), t("metadata:\n  namespace: [1]\n")]),
        case("head-metadata-list", "rel", &[("Chart.yaml", CHART), t("metadata: []\n")]),
        case("head-annotations-number", "rel", &[("Chart.yaml", CHART), t("metadata:\n  annotations: 5\n")]),
        case("head-annotation-number", "rel", &[("Chart.yaml", CHART), t("metadata:\n  annotations:\n    a: 5\n")]),
        case("head-api-version-map", "rel", &[("Chart.yaml", CHART), t("apiVersion: {a: 1}\n")]),
        case("head-list", "rel", &[("Chart.yaml", CHART), t("- a\n- b\n")]),
        case("head-string", "rel", &[("Chart.yaml", CHART), t("just text\n")]),
        case("no-kind", "rel", &[("Chart.yaml", CHART), t("apiVersion: v1\nmetadata:\n  name: x\n")]),
        // go-yaml's scanner and parser errors on a manifest, and what it
        // never reads (after the first document's end).
        case("yaml-mapping-values", "rel", &[("Chart.yaml", CHART), t("kind: ConfigMap\ndata:\n  a: b: c\n")]),
        case("yaml-tab-indent", "rel", &[("Chart.yaml", CHART), t("kind: ConfigMap\ndata:\n\ta: b\n")]),
        case("yaml-unterminated-quote", "rel", &[("Chart.yaml", CHART), t("kind: ConfigMap\ndata:\n  a: \"x\n")]),
        case("yaml-expected-key", "rel", &[("Chart.yaml", CHART), t("kind: ConfigMap\ndata:\n  a: 1\n b: 2\n")]),
        case("yaml-second-document", "rel", &[("Chart.yaml", CHART), t("kind: A\n---\nkind: B\nx: [1, 2\n")]),
        case("yaml-after-document-end", "rel", &[("Chart.yaml", CHART), t("kind: A\n...\n}}garbage\n")]),
        case("yaml-after-quote", "rel", &[("Chart.yaml", CHART), t("kind: A\nx: 'a'b\n")]),
        case("yaml-tab-in-block-scalar", "rel", &[("Chart.yaml", CHART), t("kind: A\nx: |\n  a\n\tb\n")]),
        // The reader's 512-byte buffer: a control character or bytes that
        // are not UTF-8 are refused when their chunk is decoded, so a
        // scanner error before that chunk wins.
        case("reader-control-late", "rel", &[("Chart.yaml", CHART),
            t(leak(format!("kind: A\nx: a: b\n#{}\ny: \"{{{{ printf \"%c\" 1 }}}}\"\n", "c".repeat(600))))]),
        case("reader-control-early", "rel", &[("Chart.yaml", CHART),
            t(leak(format!("kind: A\ny: \"{{{{ printf \"%c\" 1 }}}}\"\n#{}\nx: a: b\n", "c".repeat(600))))]),
        case("reader-control-same-chunk", "rel", &[("Chart.yaml", CHART),
            t(leak(format!("kind: A\nx: a: b\n#{}\ny: \"{{{{ printf \"%c\" 1 }}}}\"\n", "c".repeat(400))))]),
        case("reader-raw-bytes-late", "rel", &[("Chart.yaml", CHART), ("files/x", b"\xff\xfe"),
            t(leak(format!("kind: A\nx: [1\n#{}\ny: {{{{ .Files.Get \"files/x\" }}}}\n", "c".repeat(1100))))]),
        case("reader-raw-bytes-early", "rel", &[("Chart.yaml", CHART), ("files/x", b"\xff\xfe"),
            t(leak(format!("kind: A\ny: {{{{ .Files.Get \"files/x\" }}}}\n#{}\nx: [1\n", "c".repeat(1100))))]),
        // Tags, '...' and flow mappings over lines in a manifest.
        case("yaml-tag-quote", "rel", &[("Chart.yaml", CHART), t("kind: A\nx: !a'b c\n")]),
        case("yaml-tag-handle-bang", "rel", &[("Chart.yaml", CHART), t("kind: A\nx: !t!!str c\n")]),
        case("yaml-tag-refused-deep", "rel", &[("Chart.yaml", CHART), t("kind: A\nspec:\n  x: [!!int foo]\n")]),
        case("yaml-tag-refused-then-error", "rel", &[("Chart.yaml", CHART), t("kind: A\nx: !!int foo\ny: [1\n")]),
        case("yaml-starts-with-document-end", "rel", &[("Chart.yaml", CHART), t("...\nkind: A\n")]),
        case("yaml-flow-mapping-lines", "rel", &[("Chart.yaml", CHART), t("kind: A\nx: {a: 1,\n  b: 2\n\n")]),
        case("yaml-anchor-contains-itself", "rel", &[("Chart.yaml", CHART), t("kind: A\nx: &a [*a]\n")]),
        case("yaml-bom-inside", "rel", &[("Chart.yaml", CHART), t("kind: A\n\u{feff}x: 1\n")]),
        // decode.go's order in a manifest: a merge's list is decoded from its
        // end, so the alias is expanded before its anchor's node and the
        // alias-bomb check stops it before the refused tag inside; a map
        // printed in an invalid-key error shows its merges applied.
        case("yaml-refused-tag-inside-expansion", "rel", &[("Chart.yaml", CHART),
            t("kind: A\n{{ printf \"p: [%s1]\\nm:\\n  <<: [&a {%sbad: !!int x, %sz: 1}, *a]\\n\" (repeat 20 \"1, \") (repeat 1500 \"k: 1, \") (repeat 500 \"k: 1, \") }}")]),
        case("yaml-refused-tag-before-bomb-check", "rel", &[("Chart.yaml", CHART),
            t("kind: A\n{{ printf \"p: [%s1]\\nm:\\n  <<: [&a {%sbad: !!int x, %sz: 1}, *a]\\n\" (repeat 20 \"1, \") (repeat 1000 \"k: 1, \") (repeat 1000 \"k: 1, \") }}")]),
        case("yaml-invalid-key-merged-map", "rel", &[("Chart.yaml", CHART), t("kind: A\nb: {? {<<: {q: 2}, x: 1, x: 3} : 1}\n")]),
        case("yaml-invalid-key-then-refused-tag", "rel", &[("Chart.yaml", CHART), t("kind: A\na: &a {x: 1}\nb: {*a : 1, c: !!int x}\n")]),
        case("yaml-alias-of-merge-key", "rel", &[("Chart.yaml", CHART), t("kind: A\na: &a <<\nb: {*a : {x: 1}}\n")]),
        // What the decoder and sigs.k8s.io/yaml refuse below the head.
        case("deep-null-key", "rel", &[("Chart.yaml", CHART), t("kind: A\nspec:\n  ? \n")]),
        case("deep-list-key", "rel", &[("Chart.yaml", CHART), t("kind: A\nspec:\n  ? [1]\n  : 2\n")]),
        case("deep-merge-of-a-number", "rel", &[("Chart.yaml", CHART), t("kind: A\nspec:\n  <<: 1\n")]),
        case("deep-infinity", "rel", &[("Chart.yaml", CHART), t("kind: A\nspec:\n  x: [.inf]\n")]),
        case("unknown-alias-before-parse-error", "rel", &[("Chart.yaml", CHART), t("kind: A\nx: [0,*b x]\n")]),
        case("raw-bytes-after-document-end", "rel", &[("Chart.yaml", CHART), ("files/x", b"\xff\xc3"),
            t("kind: A\n...\n{{ .Files.Get \"files/x\" }}\n")]),
        // The chart's kubeVersion is checked in renderResources, after the
        // values are validated against the schema and dependencies checked;
        // a constraint that does not parse is "incompatible" (IsCompatibleRange).
        case("kube-version-and-schema", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\nkubeVersion: '>=99.0.0'\n"),
            ("values.yaml", b"a: 1\n"), ("values.schema.json", SCHEMA), t("kind: ConfigMap\n")]),
        case("kube-version-schema-met", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\nkubeVersion: '>=99.0.0'\n"),
            ("values.yaml", b"a: s\n"), ("values.schema.json", SCHEMA), t("kind: ConfigMap\n")]),
        case("kube-version-unparsable", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\nkubeVersion: not a constraint\n"),
            t("kind: ConfigMap\n")]),
        case("kube-version-unparsable-and-schema", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\nkubeVersion: '~> 1'\n"),
            ("values.yaml", b"a: [1]\n"), ("values.schema.json", SCHEMA), t("kind: ConfigMap\n")]),
        case("kube-version-and-missing-dependency", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\nkubeVersion: '<1.0.0'\ndependencies:\n- name: sub\n  version: 0.1.0\n"),
            ("values.yaml", b"a: 1\n"), ("values.schema.json", SCHEMA), t("kind: ConfigMap\n")]),
        case("kube-version-and-template-error", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\nkubeVersion: '<1.0.0'\n"),
            t("{{ fail \"boom\" }}\n")]),
        case("kube-version-met", "rel", &[
            ("Chart.yaml", b"apiVersion: v2\nname: mychart\nversion: 0.1.0\nkubeVersion: '>= 1.20.0-0'\n"),
            t("kind: ConfigMap\n")]),
    ];
    // Chart archives as Helm's archive.LoadArchiveFiles reads them: every
    // entry that is not a directory is a file (links, devices and FIFOs
    // with no data), the first path element is dropped, and the rest is
    // refused when it is outside the chart's folder, above it, absolute or
    // a drive path.
    let chart_yaml = ("c/Chart.yaml", b'0', CHART);
    let tmpl = (
        "c/templates/t.yaml",
        b'0',
        &b"kind: ConfigMap\nx: {{ .Files.Get \"l\" | quote }}|{{ len (.Files.Glob \"**\") }}\n"[..],
    );
    for (name, entries) in [
        (
            "tgz-symlink-is-empty-file",
            vec![chart_yaml, tmpl, ("c/l", b'2', &b""[..])],
        ),
        (
            "tgz-hardlink-is-empty-file",
            vec![chart_yaml, tmpl, ("c/l", b'1', &b""[..])],
        ),
        ("tgz-char-device-only", vec![("dev/null", b'3', &b""[..])]),
        ("tgz-fifo", vec![chart_yaml, tmpl, ("c/l", b'6', &b""[..])]),
        (
            "tgz-entry-without-folder",
            vec![chart_yaml, tmpl, ("README", b'0', &b"x"[..])],
        ),
        ("tgz-chart-yaml-at-top", vec![("Chart.yaml", b'0', CHART)]),
        (
            "tgz-chart-yaml-folder",
            vec![chart_yaml, tmpl, ("Chart.yaml/x", b'0', &b"x"[..])],
        ),
        (
            "tgz-dot-entry",
            vec![chart_yaml, tmpl, ("c/.", b'0', &b"x"[..])],
        ),
        (
            "tgz-parent",
            vec![chart_yaml, tmpl, ("c/../x", b'0', &b"x"[..])],
        ),
        (
            "tgz-dotdot-prefix",
            vec![chart_yaml, tmpl, ("c/..x", b'0', &b"x"[..])],
        ),
        (
            "tgz-drive-path",
            vec![chart_yaml, tmpl, ("c/C:/x", b'0', &b"x"[..])],
        ),
        (
            "tgz-backslashes",
            vec![
                ("c\\Chart.yaml", b'0', CHART),
                ("c\\templates\\t.yaml", b'0', &b"kind: ConfigMap\n"[..]),
            ],
        ),
        (
            "tgz-bom",
            vec![
                (
                    "c/Chart.yaml",
                    b'0',
                    &b"\xef\xbb\xbfapiVersion: v2\nname: mychart\nversion: 0.1.0\n"[..],
                ),
                tmpl,
                ("c/l", b'0', &b"\xef\xbb\xbfhi"[..]),
            ],
        ),
        (
            "tgz-dir-entries",
            vec![
                ("c/", b'5', &b""[..]),
                chart_yaml,
                ("c/templates/", b'5', &b""[..]),
                tmpl,
            ],
        ),
        ("tgz-v7-dir", vec![("c/d/", 0, &b""[..]), chart_yaml, tmpl]),
    ] {
        v.push(Case {
            name,
            release: "rel".into(),
            files: vec![("mychart.tgz", tgz(&entries))],
        });
    }
    // Release names.
    for name in [
        "Foo",
        "a-",
        "a..b",
        "a.-b",
        "a_b",
        "1.2.3",
        "x.y-z",
        &"a".repeat(53),
        &"a".repeat(54),
        "ä",
    ] {
        v.push(Case {
            name: "release-name",
            release: name.to_string(),
            files: vec![
                ("Chart.yaml", CHART.to_vec()),
                ("templates/t.yaml", b"kind: ConfigMap\n".to_vec()),
            ],
        });
    }
    v
}

/// A gzipped ustar archive of (name, type flag, data) entries.
fn tgz(entries: &[(&str, u8, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut tar = Vec::new();
    for (name, kind, data) in entries {
        let mut h = [0u8; 512];
        h[..name.len()].copy_from_slice(name.as_bytes());
        h[100..107].copy_from_slice(b"0000644");
        h[108..115].copy_from_slice(b"0000000");
        h[116..123].copy_from_slice(b"0000000");
        h[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
        h[136..147].copy_from_slice(b"00000000000");
        h[156] = *kind;
        h[257..263].copy_from_slice(b"ustar\0");
        h[263..265].copy_from_slice(b"00");
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        tar.extend_from_slice(&h);
        tar.extend_from_slice(data);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    tar.resize(tar.len() + 1024, 0);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&tar).unwrap();
    e.finish().unwrap()
}

fn write_chart(root: &Path, i: usize, c: &Case) -> PathBuf {
    if let [("mychart.tgz", data)] = &c.files[..] {
        let dir = root.join(format!("c{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("mychart.tgz");
        std::fs::write(&f, data).unwrap();
        return f;
    }
    let dir = root.join(format!("c{i}")).join("mychart");
    for (p, b) in &c.files {
        let f = dir.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, b).unwrap();
    }
    dir
}

fn helm(cases: &[(String, String)]) -> Option<Vec<serde_json::Value>> {
    let input = serde_json::to_string(
        &cases
            .iter()
            .map(|(d, n)| serde_json::json!({"dir": d, "name": n}))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mut child = Command::new("python3")
        .args(["-c", HELM_INSTALL])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named 'helm_python'")
            && std::env::var("CI").as_deref() != Ok("true")
        {
            eprintln!("skipping: helm-python-sdk is not installed");
            return None;
        }
        panic!("helm: {err}");
    }
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn template_matches_helm_install() {
    let root = std::env::temp_dir().join(format!("navique-helm-install-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let cases = cases();
    let dirs: Vec<(String, String)> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                write_chart(&root, i, c).display().to_string(),
                c.release.clone(),
            )
        })
        .collect();
    let Some(want) = helm(&dirs) else { return };
    let mut failures = Vec::new();
    for ((c, (dir, _)), want) in cases.iter().zip(&dirs).zip(want) {
        let out = Command::new(env!("CARGO_BIN_EXE_navique-operator"))
            .args(["template", &c.release, dir, "-n", "ns", "--no-hooks"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let got = if out.status.success() {
            Ok(stdout)
        } else {
            // The command ends its error with one newline of its own.
            Err(stderr
                .strip_suffix('\n')
                .unwrap_or(&stderr)
                .strip_prefix("Error: ")
                .unwrap_or(&stderr)
                .to_string())
        };
        let expected = match (want.get("manifest"), want.get("error")) {
            (Some(m), _) => Ok(format!("{}\n", m.as_str().unwrap().trim())),
            (_, Some(e)) => {
                let e = e.as_str().unwrap();
                Err(match e.strip_prefix(SDK_DEPS) {
                    Some(rest) => format!("{CLI_DEPS}{rest}"),
                    None => e.to_string(),
                })
            }
            _ => panic!("{want}"),
        };
        let same = match (&expected, &got) {
            (Ok(a), Ok(b)) => a == b,
            // Render errors carry the --debug hint in the template command.
            (Err(a), Err(b)) => a == b || b.strip_suffix(DEBUG_HINT) == Some(a),
            _ => false,
        };
        if !same {
            failures.push(format!(
                "--- {} ({:?})\n want {expected:?}\n  got {got:?}",
                c.name, c.release
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from Helm:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
