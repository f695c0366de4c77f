//! Runs the template conformance corpus (templates-compat/expected/*.json,
//! produced by real Helm v4.2.3) through our engine and requires the same
//! output or the same error for every case.

use navique_ai_core_operator::chart::load::load_files;
use navique_ai_core_operator::chart::render::{render_chart, ReleaseOptions, RenderOptions};
use navique_ai_core_operator::chart::File;
use navique_ai_core_operator::goyaml::json;
use navique_ai_core_operator::value::gostr;
use navique_ai_core_operator::value::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

const CHART_YAML: &str = "apiVersion: v2\nname: mychart\nversion: 0.1.0\nappVersion: \"1.0\"\ndescription: conformance case\n";

fn s(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn get(m: &Map, k: &str) -> Option<Value> {
    m.get(k).cloned()
}

/// Run one case; Err carries a description of the mismatch.
fn run_case(case: &Map) -> Result<(), String> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    if let Some(Value::Map(extra, _)) = get(case, "files") {
        for (k, v) in extra.borrow().iter() {
            files.insert(k.clone(), s(v));
        }
    }
    files
        .entry("Chart.yaml".into())
        .or_insert_with(|| CHART_YAML.into());
    files.insert(
        "values.yaml".into(),
        get(case, "values").map(|v| s(&v)).unwrap_or_default(),
    );
    files.insert(
        "templates/t.yaml".into(),
        s(&get(case, "template").unwrap()),
    );
    let mut list: Vec<File> = files
        .into_iter()
        .map(|(name, text)| File {
            name,
            data: text.into_bytes().into(),
        })
        .collect();
    // Files that are not text (a gzip or bzip2 file in the chart), base64.
    if let Some(Value::Map(bin, _)) = get(case, "binfiles") {
        use base64::Engine as _;
        for (k, v) in bin.borrow().iter() {
            let data = base64::engine::general_purpose::STANDARD
                .decode(s(v))
                .expect("binfiles are base64");
            list.retain(|f| f.name != *k);
            list.push(File {
                name: k.clone(),
                data: data.into(),
            });
        }
    }
    let user: Map = match get(case, "user") {
        Some(Value::Map(m, _)) => m.borrow().clone(),
        _ => Map::new(),
    };
    let got: Result<BTreeMap<String, String>, (bool, String)> = match load_files(list) {
        Err(e) => Err((true, e.to_string())),
        Ok(chart) => {
            let opts = RenderOptions {
                release: ReleaseOptions {
                    name: "rel".into(),
                    namespace: "ns".into(),
                    ..Default::default()
                },
                ..Default::default()
            };
            // Cases Helm rendered in a process with TZ set (area localzone);
            // "{tzif}" in it is the path of the case's own zone file.
            let mut tz = get(case, "tz").map(|v| s(&v));
            let zone_file = get(case, "tzif").map(|b64| {
                use base64::Engine as _;
                let data = base64::engine::general_purpose::STANDARD
                    .decode(s(&b64))
                    .expect("tzif is base64");
                let path = std::env::temp_dir().join(format!(
                    "navique-tc-zone-{}-{}",
                    std::process::id(),
                    s(&case["name"])
                ));
                std::fs::write(&path, data).expect("write zone file");
                tz = tz
                    .as_ref()
                    .map(|t| t.replace("{tzif}", &path.to_string_lossy()));
                path
            });
            navique_ai_core_operator::gotmpl::funcs::set_local_zone(tz.as_deref());
            // Helm's output reaches the oracle through encoding/json, which
            // shows each byte that is not UTF-8 as U+FFFD.
            let out = render_chart(&chart, &user, &opts)
                .map(|r| {
                    r.files
                        .into_iter()
                        .map(|(k, v)| {
                            let v = gostr::lossy(&v).into_owned();
                            (k, v)
                        })
                        .collect()
                })
                .map_err(|e| (false, e.to_string()));
            navique_ai_core_operator::gotmpl::funcs::set_local_zone(None);
            if let Some(path) = zone_file {
                let _ = std::fs::remove_file(path);
            }
            out
        }
    };
    if let Some(Value::Str(want)) = get(case, "load_error") {
        return match got {
            Err((true, e)) if e == *want => Ok(()),
            other => Err(format!("want load error {want:?}\n got {other:?}")),
        };
    }
    if let Some(Value::Str(want)) = get(case, "error") {
        return match got {
            Err((false, e)) if e == *want => Ok(()),
            Err((_, e)) => Err(format!("error differs\n want {want:?}\n  got {e:?}")),
            Ok(out) => Err(format!("want error {want:?}\n got output {out:?}")),
        };
    }
    let Some(Value::Map(want, _)) = get(case, "output") else {
        return Err("case has no expectation".into());
    };
    let got = got.map_err(|(_, e)| format!("unexpected error: {e}"))?;
    let want: BTreeMap<String, String> = want
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), s(v)))
        .collect();
    if want != got {
        let mut msg = String::new();
        for (k, w) in &want {
            match got.get(k) {
                Some(g) if g == w => {}
                Some(g) => msg.push_str(&format!("{k}:\n want {w:?}\n  got {g:?}\n")),
                None => msg.push_str(&format!("{k}: missing\n")),
            }
        }
        for k in got.keys() {
            if !want.contains_key(k) {
                msg.push_str(&format!("{k}: unexpected\n"));
            }
        }
        return Err(msg);
    }
    Ok(())
}

/// Cases that DIFFERENCES.md declares as known differences.
fn allowed_differences() -> Vec<String> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("templates-compat/DIFFERENCES.md"),
    )
    .unwrap_or_default();
    text.lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .filter(|n| n.contains('/'))
        .map(|n| n.to_string())
        .collect()
}

#[test]
fn templates_compat_corpus() {
    let allowed = allowed_differences();
    // TC_EXPECTED_DIR: another corpus in the same format (a fuzz run's).
    let other = std::env::var_os("TC_EXPECTED_DIR").map(std::path::PathBuf::from);
    let dir = other
        .clone()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("templates-compat/expected"));
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("templates-compat/expected")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    entries.sort();
    let (mut total, mut failed) = (0, 0);
    let mut report = String::new();
    for path in entries {
        let area = path.file_stem().unwrap().to_string_lossy().to_string();
        if area == "strvals" {
            continue; // checked by strvals_corpus
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let doc = json::decode(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Value::Map(doc, _) = doc else {
            panic!("{}: not an object", path.display())
        };
        let Some(Value::List(cases, _)) = doc.borrow().get("cases").cloned() else {
            panic!("no cases")
        };
        let mut area_failed = 0;
        for c in cases.iter() {
            let Value::Map(c, _) = c else { continue };
            let c = c.borrow().clone();
            total += 1;
            let name = s(&c["name"]);
            if let Err(e) = run_case(&c) {
                if allowed.contains(&format!("{area}/{name}")) {
                    report.push_str(&format!(
                        "--- {area}/{name} (known difference, DIFFERENCES.md)\n"
                    ));
                    continue;
                }
                failed += 1;
                area_failed += 1;
                report.push_str(&format!(
                    "--- {area}/{name}\ntemplate: {:?}\n{e}\n",
                    s(&c["template"])
                ));
            }
        }
        report.push_str(&format!(
            "{area}: {}/{} pass\n",
            cases.len() - area_failed,
            cases.len()
        ));
    }
    eprintln!("{report}");
    eprintln!("templates-compat: {}/{} cases pass", total - failed, total);
    assert!(other.is_some() || total >= 600, "corpus too small: {total}");
    assert_eq!(
        failed, 0,
        "{failed} conformance cases differ from Helm (see report above)"
    );
}

/// Helm's --set parser (strvals) against real Helm's results.
#[test]
fn strvals_corpus() {
    use navique_ai_core_operator::chart::strvals::{parse_into, Mode};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates-compat/expected/strvals.json");
    let doc = json::decode(&std::fs::read_to_string(path).unwrap()).unwrap();
    let Value::Map(doc, _) = doc else { panic!() };
    let Some(Value::List(cases, _)) = doc.borrow().get("cases").cloned() else {
        panic!()
    };
    let opts = json::Opts {
        escape_html: false,
        indent: None,
    };
    let mut failures = Vec::new();
    for c in cases.iter() {
        let Value::Map(c, _) = c else { continue };
        let c = c.borrow().clone();
        let mode = match s(&c["mode"]).as_str() {
            "set" => Mode::Typed,
            "string" => Mode::String,
            "json" => Mode::Json,
            _ => Mode::Literal,
        };
        let expr = s(&c["expression"]);
        let mut m = Map::new();
        let got = parse_into(&expr, &mut m, mode)
            .map(|_| json::encode(&Value::map(m), opts).unwrap())
            .map_err(|e| e.to_string());
        let want = match c.get("output") {
            Some(o) => Ok(json::encode(&json::decode(&s(o)).unwrap(), opts).unwrap()),
            None => Err(s(&c["error"])),
        };
        if got != want {
            failures.push(format!("{expr:?}: want {want:?}, got {got:?}"));
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    assert!(cases.len() >= 40);
    assert!(
        failures.is_empty(),
        "{} --set cases differ from Helm",
        failures.len()
    );
}
