//! `navique-operator run` and `navique-operator plan`: the operator process,
//! and the same observe-and-decide path read-only.

use super::args::Args;
use crate::operator::model::catalog::Catalog;
use crate::operator::runtime::process::{self, RunOptions};
use std::path::PathBuf;

pub const DEFAULT_CHARTS_DIR: &str = "/charts";

/// `--catalog FILE` (`--pins FILE` for the charts commands), else the
/// catalog this binary was built with.
pub fn catalog(a: &Args) -> Result<Catalog, String> {
    match a.one(&["--catalog", "--pins"]) {
        Some(p) => Catalog::load(std::path::Path::new(&p)).map_err(|e| e.to_string()),
        None => Ok(Catalog::built_in()),
    }
}

/// `--namespace` (where the license is) and `--license-public-key`.
fn licensing(a: &Args) -> Result<crate::operator::model::licensing::Licensing, String> {
    let namespace = a
        .one(&["--namespace", "-n"])
        .unwrap_or_else(|| "navique-system".into());
    let mut l = crate::operator::model::licensing::Licensing::built_in(&namespace);
    if let Some(path) = a.one(&["--license-public-key"]) {
        let pem = std::fs::read_to_string(&path)
            .map_err(|e| format!("--license-public-key {path}: {e}"))?;
        l.key = crate::operator::model::licensing::public_key_from_pem(&pem)
            .map_err(|e| format!("--license-public-key {path}: {e}"))?;
    }
    Ok(l)
}

pub fn init_logs(json: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("NAVIQUE_LOG")
        .unwrap_or_else(|_| EnvFilter::new("info,kube=warn,kube_lease_manager=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

fn bind(a: &Args, flag: &str, default: &str) -> Result<Option<std::net::SocketAddr>, String> {
    let v = a.one(&[flag]).unwrap_or_else(|| default.to_string());
    if v.is_empty() || v == "0" {
        return Ok(None);
    }
    v.parse()
        .map(Some)
        .map_err(|e| format!("{flag} {v:?}: {e}"))
}

pub fn run_options(a: &Args) -> Result<RunOptions, String> {
    let mut o = RunOptions::new(DEFAULT_CHARTS_DIR);
    let dirs = a.all(&["--charts-dir"]);
    if !dirs.is_empty() {
        o.charts_dirs = dirs.into_iter().map(PathBuf::from).collect();
    }
    o.kubeconfig = a.one(&["--kubeconfig"]).map(PathBuf::from);
    if let Some(ns) = a.one(&["--namespace", "-n"]) {
        o.namespace = ns;
    }
    o.catalog = catalog(a)?;
    o.metrics_bind = bind(a, "--metrics-bind", "0.0.0.0:8080")?;
    o.health_bind = bind(a, "--health-bind", "0.0.0.0:8081")?;
    o.leader_elect = match a.one(&["--leader-elect"]).as_deref() {
        None | Some("true") => true,
        Some("false") => false,
        Some(v) => return Err(format!("--leader-elect {v:?}: want true or false")),
    };
    if let Some(id) = a.one(&["--identity"]) {
        o.identity = id;
    }
    if let Some(s) = a.one(&["--lease-seconds"]) {
        o.lease_seconds = s
            .parse()
            .map_err(|e| format!("--lease-seconds {s:?}: {e}"))?;
    }
    if let Some(ms) = a.one(&["--poll-ms"]) {
        o.poll = std::time::Duration::from_millis(
            ms.parse().map_err(|e| format!("--poll-ms {ms:?}: {e}"))?,
        );
    }
    if let Some(s) = a.one(&["--resync-seconds"]) {
        o.resync = std::time::Duration::from_secs(
            s.parse()
                .map_err(|e| format!("--resync-seconds {s:?}: {e}"))?,
        );
    }
    if let Some(s) = a.one(&["--api-timeout-seconds"]) {
        o.api_timeout =
            std::time::Duration::from_secs(s.parse().ok().filter(|n: &u64| *n > 0).ok_or_else(
                || format!("--api-timeout-seconds {s:?}: a whole number of seconds above 0"),
            )?);
    }
    o.license_key = Some(licensing(a)?.key);
    o.mirrors =
        crate::oci::Mirrors::parse(&a.all(&["--registry-mirror"])).map_err(|e| e.to_string())?;
    o.image_pull_secrets = image_pull_secrets(a)?;
    Ok(o)
}

/// Where OLM passes `--image-pull-secret` (a Subscription's `config.env`
/// sets variables, never arguments): names separated by commas.
pub const IMAGE_PULL_SECRETS_ENV: &str = "NAVIQUE_IMAGE_PULL_SECRETS";

/// `--image-pull-secret NAME`, repeatable, and those of
/// `NAVIQUE_IMAGE_PULL_SECRETS`: each a Secret's name (checked here, so a
/// typo fails at start instead of as a condition everywhere).
fn image_pull_secrets(a: &Args) -> Result<Vec<String>, String> {
    let from_env = std::env::var(IMAGE_PULL_SECRETS_ENV).unwrap_or_default();
    let listed = from_env
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string);
    let pattern = regex::Regex::new(crate::operator::api::NAME_PATTERN).expect("the name pattern");
    let mut names: Vec<String> = Vec::new();
    for name in a.all(&["--image-pull-secret"]).into_iter().chain(listed) {
        let valid = !name.is_empty() && name.len() <= 253 && pattern.is_match(&name);
        if !valid {
            return Err(format!(
                "--image-pull-secret {name:?}: not a Secret name (lower-case letters, digits, '-' and '.')"
            ));
        }
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

pub fn run(a: &Args) -> Result<(), String> {
    init_logs(a.one(&["--log-format"]).as_deref() == Some("json"));
    let opts = run_options(a)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(crate::memory::on_park)
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let mut stopped = stop_rx.clone();
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("SIGTERM handler");
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            tracing::info!("stopping: finishing the reconciles in flight");
            let _ = stop_tx.send(true);
        });
        // Within a pod's grace period (30 s by default), even if a reconcile
        // in flight is stuck: whatever it left half done, the next start
        // recovers, as after a kill.
        let overdue = async move {
            let _ = stopped.wait_for(|s| *s).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        };
        // On a worker, not on this thread: the controllers' futures run
        // where the operator is polled, and only a worker gives back what
        // it freed when it parks (crate::memory).
        let running = tokio::spawn(process::run(opts, stop_rx));
        tokio::spawn(crate::memory::trim_when_idle());
        tokio::select! {
            result = running => match result {
                Ok(result) => result.map_err(|e| e.to_string()),
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => Err(e.to_string()),
            },
            _ = overdue => {
                tracing::warn!(grace = ?SHUTDOWN_GRACE, "reconciles still in flight after the grace period; exiting without them");
                Ok(())
            }
        }
    })
}

const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(20);

/// `navique-operator plan [--kubeconfig F] [--charts-dir DIR]
/// [--image-pull-secret NAME]... [-o json]`.
pub fn plan(a: &Args) -> Result<(), String> {
    let catalog = catalog(a)?;
    // As `run` would be given them: they are an input of every release.
    let pull_secrets = image_pull_secrets(a)?;
    let licensing = licensing(a)?;
    let kubeconfig = a.one(&["--kubeconfig"]).map(PathBuf::from);
    let dirs = a.all(&["--charts-dir"]);
    let charts = (!dirs.is_empty()).then(|| {
        crate::operator::model::catalog::ChartStore::with_dirs(
            dirs.into_iter().map(PathBuf::from).collect(),
        )
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let report = rt.block_on(async {
        let client = process::client(kubeconfig.as_deref())
            .await
            .map_err(|e| e.to_string())?;
        let mut snap = crate::operator::model::gather::gather(&client, &catalog, &licensing)
            .await
            .map_err(|e| e.to_string())?;
        snap.pull_secrets = pull_secrets;
        Ok::<_, String>(crate::operator::decide::report::with_chart_problems(
            &catalog,
            &snap,
            charts.as_ref(),
        ))
    })?;
    if a.one(&["-o", "--output"]).as_deref() == Some("json") {
        println!(
            "{}",
            serde_json::to_string_pretty(&report.to_json()).expect("json")
        );
    } else {
        print!("{}", report.to_text());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(raw: &[&str]) -> Args {
        Args::parse(&raw.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn image_pull_secrets_are_repeatable_names_each_kept_once() {
        let a = args(&[
            "--image-pull-secret",
            "mirror-creds",
            "--image-pull-secret=other",
            "--image-pull-secret",
            "mirror-creds",
        ]);
        assert_eq!(image_pull_secrets(&a).unwrap(), ["mirror-creds", "other"]);
        let bad = image_pull_secrets(&args(&["--image-pull-secret", "Not_A_Name"]));
        assert!(bad.unwrap_err().contains("Not_A_Name"));
    }
}
