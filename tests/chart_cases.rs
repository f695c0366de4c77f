//! The shared corpus of real upstream charts (../shared/charts): every case
//! must render to the manifest real Helm v4.2.3 produced, or fail with the
//! same message. Runs the real binary, as `helm template` would be run.
//! Under CI (`CI=true`) a missing ../shared is a failure, not a skip.

use navique_ai_core_operator::goyaml::json;
use navique_ai_core_operator::value::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shared_charts() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/charts");
    if p.join("cases").is_dir() {
        return Some(p);
    }
    if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
        panic!("../shared/charts is missing; CI requires it");
    }
    eprintln!("skipping: ../shared/charts not found (set CI=true to make this fatal)");
    None
}

/// Split a manifest into (source, text) documents at `---` lines, as
/// check_chart_cases.py does.
fn docs(manifest: &str) -> Vec<(String, String)> {
    let mut parts: Vec<String> = vec![String::new()];
    for line in manifest.split_inclusive('\n') {
        if line == "---\n" {
            parts.push(String::new());
        } else {
            parts.last_mut().unwrap().push_str(line);
        }
    }
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let src = p
                .lines()
                .find_map(|l| l.strip_prefix("# Source: "))
                .unwrap_or("")
                .to_string();
            (src, p.trim_end_matches('\n').to_string())
        })
        .collect()
}

fn obj(v: &Value, k: &str) -> Option<Value> {
    match v {
        Value::Map(m, _) => m.borrow().get(k).cloned(),
        _ => None,
    }
}

fn first_line(msg: &str) -> String {
    msg.lines()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

#[test]
fn shared_chart_cases_render_like_helm() {
    let Some(root) = shared_charts() else { return };
    let bin = env!("CARGO_BIN_EXE_navique-operator");
    let mut charts: Vec<_> = std::fs::read_dir(root.join("cases"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    charts.sort();
    let (mut total, mut passed) = (0, 0);
    let mut failures = Vec::new();
    for dir in charts {
        let meta = json::decode(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let chart_file = root.join(obj(&meta, "chart_file").unwrap().as_str().unwrap());
        let Some(Value::Map(variants, _)) = obj(&meta, "variants") else {
            panic!("no variants")
        };
        for (variant, info) in variants.borrow().iter() {
            total += 1;
            let case = format!("{}/{}", dir.file_name().unwrap().to_string_lossy(), variant);
            let base = dir.join(variant);
            let out = Command::new(bin)
                .args(["template", "rel"])
                .arg(&chart_file)
                .args(["-n", "ns", "-f"])
                .arg(base.with_extension("values.json"))
                .arg("--no-hooks")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            let stderr = String::from_utf8_lossy(&out.stderr).to_string();
            let render = obj(info, "render")
                .and_then(|v| v.as_str().map(|s| s.to_string()))
                .unwrap_or_default();
            let install = obj(info, "install").and_then(|v| v.as_str().map(|s| s.to_string()));
            let want_err = if render == "error" {
                let e = json::decode(
                    &std::fs::read_to_string(base.with_extension("expected.json")).unwrap(),
                )
                .unwrap();
                Some(obj(&e, "error").unwrap().as_str().unwrap().to_string())
            } else if install.as_deref().map(|s| s != "ok").unwrap_or(false) {
                let e = json::decode(
                    &std::fs::read_to_string(base.with_extension("manifest.error.json")).unwrap(),
                )
                .unwrap();
                Some(obj(&e, "error").unwrap().as_str().unwrap().to_string())
            } else {
                None
            };
            if let Some(want) = want_err {
                let line = first_line(&want);
                if out.status.success() || !stderr.contains(&line) {
                    failures.push(format!(
                        "{case}: want error {line:?}, got {:?}",
                        first_line(&stderr)
                    ));
                } else {
                    passed += 1;
                }
                continue;
            }
            if !out.status.success() {
                failures.push(format!("{case}: failed: {}", first_line(&stderr)));
                continue;
            }
            let want_text = std::fs::read_to_string(base.with_extension("manifest.yaml")).unwrap();
            let want = docs(&format!("{}\n", want_text.trim()));
            let got = docs(&stdout);
            let loose: Vec<String> = match obj(info, "nondeterministic") {
                Some(Value::List(l, _)) => l
                    .iter()
                    .filter_map(|v| v.as_str().map(|s| s.to_string()))
                    .collect(),
                _ => Vec::new(),
            };
            let ws: Vec<&String> = want.iter().map(|(s, _)| s).collect();
            let gs: Vec<&String> = got.iter().map(|(s, _)| s).collect();
            if ws != gs {
                failures.push(format!(
                    "{case}: document sources differ: want {ws:?}, got {gs:?}"
                ));
                continue;
            }
            let diff: Vec<&String> = want
                .iter()
                .zip(got.iter())
                .filter(|((s, w), (_, g))| !loose.contains(s) && w != g)
                .map(|((s, _), _)| s)
                .collect();
            if diff.is_empty() {
                passed += 1;
            } else {
                failures.push(format!(
                    "{case}: {} documents differ, first {}",
                    diff.len(),
                    diff[0]
                ));
            }
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    eprintln!("charts: {passed}/{total}");
    assert!(total >= 67, "expected the 67 shared cases, found {total}");
    assert!(
        failures.is_empty(),
        "{} chart cases differ from Helm",
        failures.len()
    );
}
