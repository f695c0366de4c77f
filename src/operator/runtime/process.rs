//! `navique-operator run`: the operator process. Telemetry endpoints, Lease
//! leader election (only the leader reconciles; a follower waits), and a
//! stop that lets the reconciles in flight finish.

use crate::apply::client::ConnectError;
use crate::operator::model::catalog::{Catalog, ChartStore};
use crate::operator::reconcile::metrics::Metrics;
use crate::operator::reconcile::{self, Operator};
use crate::operator::runtime::telemetry;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct RunOptions {
    pub kubeconfig: Option<PathBuf>,
    pub namespace: String,
    pub charts_dirs: Vec<PathBuf>,
    pub catalog: Catalog,
    pub metrics_bind: Option<SocketAddr>,
    pub health_bind: Option<SocketAddr>,
    pub leader_elect: bool,
    /// This instance in the Lease (the pod name in a cluster).
    pub identity: String,
    /// Seconds a Lease stays held without renewal.
    pub lease_seconds: u64,
    pub poll: Duration,
    /// How often a settled object is looked at again (changes are watched;
    /// this catches drift in what is not, such as the objects we emitted).
    pub resync: Duration,
    /// How long one API request may wait for its answer to start; past it
    /// the request fails and is retried like any other error (so a hung
    /// connection cannot hold a reconcile forever).
    pub api_timeout: Duration,
    /// Metrics to report into (tests read them); fresh ones when None.
    pub metrics: Option<Arc<Metrics>>,
    /// The key licenses must be signed with; the built-in one when None.
    pub license_key: Option<ed25519_dalek::VerifyingKey>,
    /// `--registry-mirror SRC=DST` rules.
    pub mirrors: crate::oci::Mirrors,
    /// `--image-pull-secret NAME` Secrets, in `namespace`.
    pub image_pull_secrets: Vec<String>,
}

impl RunOptions {
    pub fn new(charts_dir: impl Into<PathBuf>) -> RunOptions {
        RunOptions {
            kubeconfig: None,
            namespace: "navique-system".into(),
            charts_dirs: vec![charts_dir.into()],
            catalog: Catalog::built_in(),
            metrics_bind: None,
            health_bind: None,
            leader_elect: false,
            identity: std::env::var("POD_NAME")
                .unwrap_or_else(|_| format!("{}-{}", hostname(), std::process::id())),
            lease_seconds: 15,
            poll: Duration::from_secs(2),
            resync: reconcile::DEFAULT_RESYNC,
            api_timeout: DEFAULT_API_TIMEOUT,
            metrics: None,
            license_key: None,
            mirrors: Default::default(),
            image_pull_secrets: Vec::new(),
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "navique".into())
}

pub const DEFAULT_API_TIMEOUT: Duration = Duration::from_secs(30);

pub const USER_AGENT: &str = concat!("navique-operator/", env!("CARGO_PKG_VERSION"));

/// Why the operator could not start, or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Connect(#[from] ConnectError),
    /// No kubeconfig was given and the pod's own configuration is missing.
    #[error("in-cluster config: {0}")]
    InCluster(#[source] kube::config::InferConfigError),
    #[error("listening on {bind}: {source}")]
    Listen {
        bind: std::net::SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// Creating the namespace the lease lives in.
    #[error("{0}")]
    Namespace(#[source] kube::Error),
    #[error("leader election: {0}")]
    LeaderElection(#[source] kube_lease_manager::LeaseManagerError),
    #[error("{0}")]
    Controllers(#[source] reconcile::Error),
}

pub async fn client(kubeconfig: Option<&std::path::Path>) -> Result<kube::Client, RunError> {
    kube::Client::try_from(config(kubeconfig).await?)
        .map_err(|e| RunError::Connect(ConnectError::Client(e)))
}

/// The kubeconfig's cluster, or the pod's own when there is none, as the operator.
async fn config(kubeconfig: Option<&std::path::Path>) -> Result<kube::Config, RunError> {
    match kubeconfig {
        Some(p) => Ok(crate::apply::client::config_for(Some(p), None, Some(USER_AGENT)).await?),
        None => {
            let mut config = kube::Config::infer().await.map_err(RunError::InCluster)?;
            config.headers.push((
                hyper::header::USER_AGENT,
                hyper::header::HeaderValue::from_static(USER_AGENT),
            ));
            Ok(config)
        }
    }
}

/// Runs until `stop` turns true: the controllers at once, or while this
/// process holds the lease.
pub async fn run(
    opts: RunOptions,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<(), RunError> {
    let metrics = opts.metrics.clone().unwrap_or_else(Metrics::new);
    let counted = metrics.clone();
    let client = crate::apply::client::observed_client(
        config(opts.kubeconfig.as_deref()).await?,
        Arc::new(move |method, uri| counted.api_request(method, uri)),
        opts.api_timeout,
    )?;
    for bind in [opts.metrics_bind, opts.health_bind].into_iter().flatten() {
        let addr = telemetry::serve(bind, metrics.clone())
            .await
            .map_err(|source| RunError::Listen { bind, source })?;
        tracing::info!(%addr, "serving /metrics, /healthz and /readyz");
    }
    let op = Arc::new(operator(&opts, client.clone(), metrics.clone()));
    if !opts.leader_elect {
        return reconcile::run_controllers(op, stop)
            .await
            .map_err(RunError::Controllers);
    }
    lead_or_follow(&opts, client, metrics, op, stop).await
}

/// The operator the controllers share, from the options.
fn operator(opts: &RunOptions, client: kube::Client, metrics: Arc<Metrics>) -> Operator {
    let charts = ChartStore::with_dirs(opts.charts_dirs.clone());
    for problem in charts.verify_all(&opts.catalog) {
        // Reported on the capability when it is needed; the others still work.
        tracing::warn!(error = %problem, "a bundled chart cannot be used");
    }
    let mut op = Operator::new(
        client,
        opts.catalog.clone(),
        charts,
        &opts.namespace,
        metrics,
    );
    op.poll = opts.poll;
    op.resync = opts.resync;
    op.images = Arc::new(super::images::image_map(
        &opts.catalog,
        opts.mirrors.clone(),
    ));
    op.pull_secrets = reconcile::pull_secrets::PullSecrets::new(opts.image_pull_secrets.clone());
    if let Some(key) = opts.license_key.clone() {
        op.licensing.key = key;
    }
    op
}

/// Leader election: run the controllers while holding the lease, follow
/// otherwise, until `stop`; the lease is released on the way out.
async fn lead_or_follow(
    opts: &RunOptions,
    client: kube::Client,
    metrics: Arc<Metrics>,
    op: Arc<Operator>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<(), RunError> {
    crate::action::ensure_namespace(&client, &opts.namespace)
        .await
        .map_err(RunError::Namespace)?;
    let manager = kube_lease_manager::LeaseManagerBuilder::new(client, reconcile::LEASE_NAME)
        .with_namespace(&opts.namespace)
        .with_identity(&opts.identity)
        .with_duration(opts.lease_seconds)
        .with_grace((opts.lease_seconds / 3).max(1))
        .build()
        .await
        .map_err(RunError::LeaderElection)?;
    let (mut leading, task) = manager.watch().await;
    // Following the lease counts as ready: the leader does the work.
    metrics.ready.store(true, Ordering::Relaxed);
    let mut stop = stop;
    loop {
        tokio::select! {
            _ = leading.wait_for(|l| *l) => {}
            _ = stop.wait_for(|s| *s) => break,
        }
        tracing::info!(identity = %opts.identity, "leading: reconciling");
        let result = reconcile::run_controllers(op.clone(), until_lost(&leading, &stop)).await;
        metrics.ready.store(true, Ordering::Relaxed);
        if let Err(e) = result {
            tracing::error!(error = %e, "controllers stopped");
        }
        if *stop.borrow() {
            break;
        }
        tracing::info!(identity = %opts.identity, "lost the lease: following");
    }
    drop(leading);
    // The manager releases the lease once its channel is closed.
    let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    Ok(())
}

/// A stop signal for one term of leadership: true once the lease is lost or
/// the process stops.
fn until_lost(
    leading: &tokio::sync::watch::Receiver<bool>,
    stop: &tokio::sync::watch::Receiver<bool>,
) -> tokio::sync::watch::Receiver<bool> {
    let (lost_tx, lost_rx) = tokio::sync::watch::channel(false);
    let (mut lead, mut stop) = (leading.clone(), stop.clone());
    tokio::spawn(async move {
        tokio::select! {
            _ = lead.wait_for(|l| !*l) => {}
            _ = stop.wait_for(|s| *s) => {}
            // Nobody listens any more: this term ended some other way.
            _ = lost_tx.closed() => return,
        }
        let _ = lost_tx.send(true);
    });
    lost_rx
}
