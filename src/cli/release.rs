//! `navique-operator install|upgrade|rollback|uninstall|list|history|status|get`:
//! Helm's release commands over our own release and apply layers.

use super::args::Args;
use crate::action::{self, Context};
use crate::release::Release;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Go durations as Helm's --timeout takes them: 300s, 5m, 1m30s, 1h.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let mut total = 0f64;
    let mut num = String::new();
    let mut chars = s.chars().peekable();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let mut unit = c.to_string();
        if c == 'm' && chars.peek() == Some(&'s') {
            unit.push(chars.next().unwrap());
        }
        let n: f64 = num
            .parse()
            .map_err(|_| format!("time: invalid duration {s:?}"))?;
        total += n * match unit.as_str() {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return Err(format!("time: unknown unit {unit:?} in duration {s:?}")),
        };
        num.clear();
    }
    if !num.is_empty() {
        return Err(format!("time: missing unit in duration {s:?}"));
    }
    Ok(Duration::from_secs_f64(total))
}

fn labels(a: &Args) -> Result<std::collections::BTreeMap<String, String>, String> {
    let mut out = std::collections::BTreeMap::new();
    for spec in a.all(&["--labels", "-l"]) {
        for pair in spec.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("invalid label {pair:?}: expected key=value"))?;
            out.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    Ok(out)
}

async fn context(a: &Args) -> Result<Context, String> {
    let kubeconfig = a.one(&["--kubeconfig"]);
    let kube_context = a.one(&["--kube-context", "--context"]);
    let client = crate::apply::client::connect(
        kubeconfig.as_deref().map(Path::new),
        kube_context.as_deref(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let namespace = a
        .one(&["-n", "--namespace"])
        .unwrap_or_else(|| client.default_namespace().to_string());
    let mut ctx = Context::new(client, &namespace);
    if let Some(m) = a.one(&["--field-manager"]) {
        ctx.field_manager = m;
    }
    ctx.force_conflicts = a.flag("--force-conflicts");
    ctx.wait = a.flag("--wait") || a.one(&["--wait"]).is_some_and(|w| w != "false");
    ctx.wait_for_jobs = a.flag("--wait-for-jobs");
    if let Some(t) = a.one(&["--timeout"]) {
        ctx.timeout = parse_duration(&t)?;
    }
    ctx.labels = labels(a)?;
    ctx.max_history = match a.one(&["--max-history"]) {
        Some(m) => m
            .parse()
            .map_err(|_| format!("invalid --max-history {m:?}"))?,
        None => 10,
    };
    ctx.atomic = a.flag("--atomic") || a.flag("--rollback-on-failure");
    ctx.no_hooks = a.flag("--no-hooks");
    Ok(ctx)
}

async fn ensure_namespace(ctx: &Context) -> Result<(), String> {
    action::ensure_namespace(&ctx.cluster.client, &ctx.namespace)
        .await
        .map_err(|e| e.to_string())
}

fn print_release_summary(r: &Release) {
    println!("NAME: {}", r.name);
    println!("LAST DEPLOYED: {}", ansic(&r.info.last_deployed));
    println!("NAMESPACE: {}", r.namespace);
    println!("STATUS: {}", r.info.status.as_str());
    println!("REVISION: {}", r.version);
    println!("DESCRIPTION: {}", r.info.description);
    if !r.info.notes.is_empty() {
        println!("NOTES:\n{}", r.info.notes.trim_end());
    }
}

/// Go's ANSIC layout ("Mon Jan _2 15:04:05 2006"), Helm's table time format.
fn ansic(t: &str) -> String {
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|d| {
            d.with_timezone(&chrono::Utc)
                .format("%a %b %e %H:%M:%S %Y")
                .to_string()
        })
        .unwrap_or_else(|_| "-".into())
}

/// Go's time.Time String() ("2006-01-02 15:04:05.999999999 -0700 MST").
fn go_time_string(t: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(t) {
        Ok(d) => {
            let d = d.with_timezone(&chrono::Utc);
            let nanos = d.timestamp_subsec_nanos();
            let frac = if nanos == 0 {
                String::new()
            } else {
                format!(".{}", format!("{nanos:09}").trim_end_matches('0'))
            };
            format!("{}{} +0000 UTC", d.format("%Y-%m-%d %H:%M:%S"), frac)
        }
        Err(_) => "-".into(),
    }
}

fn chart_label(r: &Release) -> String {
    format!("{}-{}", r.chart_name(), r.chart_version())
}

fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}\t", w = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn output(format: &str, v: &Value, text: impl FnOnce() -> String) -> Result<(), String> {
    match format {
        "json" => println!("{}", serde_json::to_string(v).expect("json")),
        "yaml" => {
            let gv = crate::goyaml::json::decode(&v.to_string()).map_err(|e| e.to_string())?;
            print!("{}", crate::goyaml::emit::to_yaml(&gv).map_err(|e| e.0)?);
        }
        "table" | "" => print!("{}", text()),
        other => return Err(format!("invalid format type {other:?}")),
    }
    Ok(())
}

fn values_yaml(v: &Value) -> Result<String, String> {
    if v.as_object().is_none_or(|m| m.is_empty()) {
        return Ok("null\n".into());
    }
    let gv = crate::goyaml::json::decode(&v.to_string()).map_err(|e| e.to_string())?;
    let mut y = crate::goyaml::emit::to_yaml(&gv).map_err(|e| e.0)?;
    if !y.ends_with('\n') {
        y.push('\n');
    }
    Ok(y)
}

fn two(a: &Args, what: &str) -> Result<(String, String), String> {
    match a.positional.as_slice() {
        [n, c] => Ok((n.clone(), c.clone())),
        _ => Err(format!("\"navique-operator {what}\" requires 2 arguments\n\nusage: navique-operator {what} NAME CHART [flags]")),
    }
}

fn one_name(a: &Args, what: &str) -> Result<String, String> {
    a.positional
        .first()
        .cloned()
        .ok_or_else(|| format!("\"navique-operator {what}\" requires a release name\n\nusage: navique-operator {what} NAME [flags]"))
}

pub fn install(a: &Args) -> Result<(), String> {
    let (name, chart_path) = two(a, "install")?;
    let chart = crate::chart::load_chart(Path::new(&chart_path)).map_err(|e| e.to_string())?;
    let values = super::template::user_values(a)?;
    runtime().block_on(async {
        let ctx = context(a).await?;
        if a.flag("--create-namespace") {
            ensure_namespace(&ctx).await?;
        }
        let r = action::install::install(&ctx, &name, &chart, &values)
            .await
            .map_err(|e| format!("INSTALLATION FAILED: {e}"))?;
        print_release_summary(&r);
        Ok(())
    })
}

pub fn upgrade(a: &Args) -> Result<(), String> {
    let (name, chart_path) = two(a, "upgrade")?;
    let chart = crate::chart::load_chart(Path::new(&chart_path)).map_err(|e| e.to_string())?;
    let values = super::template::user_values(a)?;
    runtime().block_on(async {
        let ctx = context(a).await?;
        if a.flag("--create-namespace") && a.flag("--install") {
            ensure_namespace(&ctx).await?;
        }
        let r = action::upgrade::upgrade(&ctx, &name, &chart, &values, a.flag("--install"))
            .await
            .map_err(|e| format!("UPGRADE FAILED: {e}"))?;
        println!("Release {:?} has been upgraded. Happy Helming!", r.name);
        print_release_summary(&r);
        Ok(())
    })
}

pub fn rollback(a: &Args) -> Result<(), String> {
    let name = one_name(a, "rollback")?;
    let revision: i64 = match a.positional.get(1) {
        Some(r) => r.parse().map_err(|_| format!("invalid revision {r:?}"))?,
        None => 0,
    };
    runtime().block_on(async {
        let ctx = context(a).await?;
        action::rollback::rollback(&ctx, &name, revision)
            .await
            .map_err(|e| format!("ROLLBACK FAILED: {e}"))?;
        println!("Rollback was a success! Happy Helming!");
        Ok(())
    })
}

pub fn uninstall(a: &Args) -> Result<(), String> {
    let name = one_name(a, "uninstall")?;
    runtime().block_on(async {
        let ctx = context(a).await?;
        let out = action::uninstall::uninstall(&ctx, &name, a.flag("--keep-history"))
            .await
            .map_err(|e| e.to_string())?;
        if !out.kept.is_empty() {
            println!("These resources were kept due to the resource policy:");
            for k in &out.kept {
                println!("[{k}]");
            }
        }
        println!("release {:?} uninstalled", name);
        Ok(())
    })
}

pub fn list(a: &Args) -> Result<(), String> {
    runtime().block_on(async {
        let ctx = context(a).await?;
        let all_ns = a.flag("-A") || a.flag("--all-namespaces");
        let all_states = a.flag("-a") || a.flag("--all");
        // The newest revision of each release; deployed or failed unless --all.
        let shown_state = |status: &str| all_states || matches!(status, "deployed" | "failed");
        let latest = ctx
            .storage
            .latest(all_ns, shown_state)
            .await
            .map_err(|e| e.to_string())?;
        let shown: Vec<&Release> = latest.iter().collect();
        let v = Value::Array(
            shown
                .iter()
                .map(|r| {
                    json!({"name": r.name, "namespace": r.namespace, "revision": r.version.to_string(),
                        "updated": go_time_string(&r.info.last_deployed), "status": r.info.status.as_str(),
                        "chart": chart_label(r), "app_version": r.app_version()})
                })
                .collect(),
        );
        output(&a.one(&["-o", "--output"]).unwrap_or_default(), &v, || {
            let mut rows = vec![["NAME", "NAMESPACE", "REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION"].map(String::from).to_vec()];
            for r in &shown {
                rows.push(vec![
                    r.name.clone(),
                    r.namespace.clone(),
                    r.version.to_string(),
                    go_time_string(&r.info.last_deployed),
                    r.info.status.as_str().into(),
                    chart_label(r),
                    r.app_version(),
                ]);
            }
            table(&rows)
        })
    })
}

pub fn history(a: &Args) -> Result<(), String> {
    let name = one_name(a, "history")?;
    runtime().block_on(async {
        let ctx = context(a).await?;
        let mut h = ctx.storage.history(&name).await.map_err(|e| e.to_string())?;
        if h.is_empty() {
            return Err("release: not found".into());
        }
        if let Some(max) = a.one(&["--max"]).and_then(|m| m.parse::<usize>().ok()) {
            let skip = h.len().saturating_sub(max);
            h.drain(..skip);
        }
        let v = Value::Array(
            h.iter()
                .map(|r| {
                    json!({"revision": r.version, "updated": r.info.last_deployed, "status": r.info.status.as_str(),
                        "chart": chart_label(r), "app_version": r.app_version(), "description": r.info.description})
                })
                .collect(),
        );
        output(&a.one(&["-o", "--output"]).unwrap_or_default(), &v, || {
            let mut rows = vec![["REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION", "DESCRIPTION"].map(String::from).to_vec()];
            for r in &h {
                rows.push(vec![
                    r.version.to_string(),
                    ansic(&r.info.last_deployed),
                    r.info.status.as_str().into(),
                    chart_label(r),
                    r.app_version(),
                    r.info.description.clone(),
                ]);
            }
            table(&rows)
        })
    })
}

async fn pick(ctx: &Context, name: &str, a: &Args) -> Result<Release, String> {
    match a.one(&["--revision"]).and_then(|r| r.parse::<i64>().ok()) {
        Some(v) => ctx.storage.get(name, v).await.map_err(|e| e.to_string()),
        None => ctx
            .storage
            .last(name)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "release: not found".to_string()),
    }
}

pub fn status(a: &Args) -> Result<(), String> {
    let name = one_name(a, "status")?;
    runtime().block_on(async {
        let ctx = context(a).await?;
        let r = pick(&ctx, &name, a).await?;
        let format = a.one(&["-o", "--output"]).unwrap_or_default();
        if format == "json" || format == "yaml" {
            let v: Value = serde_json::from_str(&r.to_json()).expect("release JSON");
            return output(&format, &v, String::new);
        }
        print_release_summary(&r);
        Ok(())
    })
}

pub fn get(a: &Args) -> Result<(), String> {
    let what = a.positional.first().cloned().unwrap_or_default();
    let name = a
        .positional
        .get(1)
        .cloned()
        .ok_or("usage: navique-operator get values|manifest|notes|hooks NAME [flags]")?;
    runtime().block_on(async {
        let ctx = context(a).await?;
        let r = pick(&ctx, &name, a).await?;
        match what.as_str() {
            "values" => {
                let format = a.one(&["-o", "--output"]).unwrap_or_default();
                let values = if a.flag("--all") || a.flag("-a") {
                    let mut defaults = crate::release::record::values_from_json(
                        r.chart.get("values").unwrap_or(&Value::Null),
                    );
                    crate::chart::values::merge_maps(
                        &mut defaults,
                        crate::release::record::values_from_json(&r.config),
                    );
                    crate::release::record::values_to_json(&defaults)
                } else {
                    r.config.clone()
                };
                match format.as_str() {
                    "json" => println!("{}", serde_json::to_string(&values).expect("json")),
                    "yaml" => print!("{}", values_yaml(&values)?),
                    _ => {
                        println!(
                            "{}",
                            if a.flag("--all") {
                                "COMPUTED VALUES:"
                            } else {
                                "USER-SUPPLIED VALUES:"
                            }
                        );
                        print!("{}", values_yaml(&values)?);
                    }
                }
                Ok(())
            }
            "manifest" => {
                print!("{}", r.manifest);
                Ok(())
            }
            "notes" => {
                println!("NOTES:\n{}", r.info.notes);
                Ok(())
            }
            "hooks" => {
                for h in &r.hooks {
                    print!("---\n# Source: {}\n{}\n", h.path, h.manifest);
                }
                Ok(())
            }
            other => Err(format!(
                "unknown get subcommand {other:?}: values, manifest, notes or hooks"
            )),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn go_durations() {
        assert_eq!(parse_duration("5m0s").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert!(parse_duration("10").is_err());
    }
}
