//! The charts of `../shared/charts/extra/` have no committed renders: each is
//! rendered by real Helm v4.2.3 (helm-python-sdk) in the test and by our
//! renderer, template by template, with its default values and with every
//! values file of its own `ci/` directory.

use navique_ai_core_operator::chart::load::load_chart;
use navique_ai_core_operator::chart::render::{render_chart, ReleaseOptions, RenderOptions};
use navique_ai_core_operator::goyaml::parse::parse_values;
use std::path::{Path, PathBuf};
use std::process::Command;

const HELM_RENDER: &str = "import json, sys, helm_python
chart = helm_python.Chart.load(sys.argv[1])
values = helm_python.values_from_yaml(sys.stdin.read()) if sys.argv[2] == 'file' else None
try:
    json.dump({'files': chart.render(values, name='rel', namespace='default')}, sys.stdout)
except (helm_python.HelmValuesError, helm_python.HelmRenderError) as e:
    json.dump({'error': str(e)}, sys.stdout)
";

/// What real Helm made of a chart: its templates, or the error it gave.
type HelmRender = Result<serde_json::Map<String, serde_json::Value>, String>;

/// Real Helm's render, or None where helm-python-sdk is missing outside CI.
fn helm_render(chart: &Path, values: Option<&str>) -> Option<HelmRender> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .args(["-c", HELM_RENDER])
        .arg(chart)
        .arg(if values.is_some() { "file" } else { "defaults" })
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(values.unwrap_or("").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named 'helm_python'") {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "helm-python-sdk is not installed and CI=true"
            );
            eprintln!("skipping: helm-python-sdk is not installed");
            return None;
        }
        panic!("real Helm failed on {}: {err}", chart.display());
    }
    let out: serde_json::Value = serde_json::from_slice(&out.stdout).expect("Helm's JSON");
    Some(match (out.get("files"), out.get("error")) {
        (Some(serde_json::Value::Object(files)), _) => Ok(files.clone()),
        (_, Some(e)) => Err(e.as_str().unwrap_or_default().to_string()),
        _ => panic!("unexpected output of real Helm: {out}"),
    })
}

fn extra_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/charts/extra");
    if dir.exists() {
        return Some(dir);
    }
    assert_ne!(
        std::env::var("CI").as_deref(),
        Ok("true"),
        "../shared/charts is missing and CI=true"
    );
    eprintln!("skipping: ../shared/charts is missing");
    None
}

/// The chart's `ci/*.yaml` files (the loader keeps them among its files).
fn ci_values(tarball: &Path) -> Vec<(String, String)> {
    let chart = load_chart(tarball).expect("load");
    let mut out: Vec<(String, String)> = chart
        .files
        .iter()
        .filter(|f| f.name.starts_with("ci/") && f.name.ends_with(".yaml"))
        .map(|f| {
            (
                f.name.clone(),
                String::from_utf8_lossy(&f.data).into_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Equal, but for quoted strings of the same length on the same line: what
/// `randAlphaNum` and friends make (postgresql's generated passwords).
fn same_but_random(ours: &str, helm: &str) -> bool {
    fn masked(line: &str) -> String {
        let mut out = String::new();
        for (i, part) in line.split('"').enumerate() {
            if i % 2 == 1 {
                out.push_str(&format!("\"{}\"", part.len()));
            } else {
                out.push_str(part);
            }
        }
        out
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), helm.lines().collect());
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x == y || masked(x) == masked(y))
}

/// Compares one render, template by template (or the error, when Helm
/// refuses the values); returns how many templates.
fn compare(tarball: &Path, values: Option<(&str, &str)>) -> Option<usize> {
    let label = format!(
        "{} with {}",
        tarball.file_name().unwrap().to_string_lossy(),
        values.map_or("default values", |(name, _)| name)
    );
    let helm = helm_render(tarball, values.map(|(_, text)| text))?;
    let loaded = load_chart(tarball).expect("load");
    let user = match values {
        Some((name, text)) => parse_values(text).unwrap_or_else(|e| panic!("{name}: {e:?}")),
        None => Default::default(),
    };
    let opts = RenderOptions {
        release: ReleaseOptions {
            name: "rel".into(),
            namespace: "default".into(),
            ..Default::default()
        },
        ..Default::default()
    };
    let ours = render_chart(&loaded, &user, &opts);
    let helm = match (helm, ours) {
        (Err(want), Err(got)) => {
            assert_eq!(got.to_string(), want, "{label}: error");
            return Some(0);
        }
        (Err(want), Ok(_)) => panic!("{label}: Helm failed ({want}) and we rendered"),
        (Ok(_), Err(got)) => panic!("{label}: we failed: {}", got),
        (Ok(helm), Ok(ours)) => (helm, ours),
    };
    let (helm, ours) = helm;
    for (name, text) in &helm {
        let mine = ours
            .files
            .get(name)
            .unwrap_or_else(|| panic!("{label}: {name} not rendered"));
        let theirs = text.as_str().unwrap();
        assert!(
            same_but_random(mine, theirs),
            "{label}: {name} differs\n--- ours\n{mine}\n--- Helm's\n{theirs}"
        );
    }
    assert_eq!(
        helm.len(),
        ours.files.len(),
        "{label}: we rendered templates Helm did not"
    );
    Some(helm.len())
}

#[test]
fn extra_charts_render_like_helm_with_defaults_and_their_ci_values() {
    let Some(dir) = extra_dir() else { return };
    let mut tarballs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tgz"))
        .collect();
    tarballs.sort();
    assert!(tarballs.len() >= 7, "{tarballs:?}");
    let (mut renders, mut templates) = (0, 0);
    for tarball in &tarballs {
        let Some(n) = compare(tarball, None) else {
            return;
        };
        templates += n;
        renders += 1;
        for (name, text) in ci_values(tarball) {
            templates += compare(tarball, Some((&name, &text))).unwrap();
            renders += 1;
        }
    }
    eprintln!("{renders} renders, {templates} templates identical to Helm's");
    assert!(renders >= 11);
}

#[test]
fn external_secrets_the_operator_bundles_renders_its_webhook() {
    let Some(dir) = extra_dir() else { return };
    let tarball = dir.join("external-secrets-2.9.0.tgz");
    let Some(helm) = helm_render(&tarball, None) else {
        return;
    };
    let helm = helm.expect("Helm renders external-secrets with its defaults");
    assert!(helm.keys().any(|k| k.ends_with("webhook-deployment.yaml")));
    assert!(compare(&tarball, None).unwrap() > 10);
}
