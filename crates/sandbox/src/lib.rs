//! An in-memory Kubernetes API server for tests and demos. Not for production:
//! see the crate README for what differs from a real kube-apiserver.
//!
//! ```no_run
//! let sandbox = navique_sandbox::Sandbox::start(navique_sandbox::Options::default()).unwrap();
//! println!("kubeconfig at {}", sandbox.kubeconfig_path().display());
//! sandbox.stop();
//! ```

pub mod admission;
pub mod controllers;
pub mod crd_cel;
pub mod crd_schema;
pub mod discovery;
pub mod error;
pub mod events;
pub mod faults;
pub mod jsonpath;
pub mod lists;
pub mod patch;
pub mod proto;
pub mod registry;
pub mod select;
pub mod server;
pub mod ssa;
pub mod store;
pub mod table;
pub mod tally;
pub mod tls;
pub mod yaml;

use controllers::Simulation;
use server::Shared;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Options {
    /// 0 picks a free port.
    pub port: u16,
    /// Where to write the kubeconfig; a temporary file when None.
    pub kubeconfig: Option<PathBuf>,
    /// The bearer token clients must send; random when None.
    pub token: Option<String>,
    /// Refuse requests that carry no bearer token (kubectl and Helm send
    /// none over plain HTTP, so leave this off for them).
    pub require_token: bool,
    /// Serve HTTPS with a generated CA (in the kubeconfig); tokens are then required.
    pub tls: bool,
    /// Simulated controllers (workloads become Ready, Jobs complete).
    pub simulate: bool,
    /// How long a simulated workload takes to become Ready.
    pub ready_delay: Duration,
    /// Events kept for watches that resume from a resourceVersion.
    pub event_log: usize,
    pub bookmark_interval: Duration,
    /// Fault injection (none by default): see [`faults`].
    pub faults: Vec<faults::FaultRule>,
    pub fault_seed: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            port: 0,
            kubeconfig: None,
            token: None,
            require_token: false,
            tls: false,
            simulate: true,
            ready_delay: Duration::from_millis(200),
            event_log: 50_000,
            bookmark_interval: Duration::from_secs(1),
            faults: Vec::new(),
            fault_seed: 1,
        }
    }
}

pub struct Sandbox {
    addr: SocketAddr,
    url: String,
    ca_pem: Option<String>,
    token: String,
    kubeconfig: PathBuf,
    temp_dir: Option<PathBuf>,
    shared: Arc<Shared>,
    sim: Arc<Simulation>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn random_token() -> String {
    (0..32)
        .map(|_| format!("{:x}", rand::random::<u8>() & 15))
        .collect()
}

pub fn kubeconfig_yaml(server: &str, token: &str, ca_pem: Option<&str>) -> String {
    use base64::Engine;
    let ca = ca_pem
        .map(|p| {
            format!(
                "\n    certificate-authority-data: {}",
                base64::engine::general_purpose::STANDARD.encode(p)
            )
        })
        .unwrap_or_default();
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: navique-sandbox\n  cluster:\n    server: {server}{ca}\ncontexts:\n- name: navique-sandbox\n  context:\n    cluster: navique-sandbox\n    user: navique-sandbox\n    namespace: default\ncurrent-context: navique-sandbox\nusers:\n- name: navique-sandbox\n  user:\n    token: {token}\n"
    )
}

impl Sandbox {
    /// Starts serving on its own thread; returns once requests are accepted
    /// and the kubeconfig is written.
    pub fn start(opts: Options) -> std::io::Result<Sandbox> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", opts.port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let token = opts.token.clone().unwrap_or_else(random_token);
        let tls = if opts.tls {
            Some(tls::generate().map_err(std::io::Error::other)?)
        } else {
            None
        };
        let url = format!("{}://{addr}", if tls.is_some() { "https" } else { "http" });
        let ca_pem = tls.as_ref().map(|t| t.ca_pem.clone());
        let acceptor = tls.map(|t| t.acceptor);
        let (kubeconfig, temp_dir) = match &opts.kubeconfig {
            Some(p) => (p.clone(), None),
            None => {
                let dir = std::env::temp_dir().join(format!(
                    "navique-sandbox-{}-{}",
                    std::process::id(),
                    random_token()
                ));
                std::fs::create_dir_all(&dir)?;
                (dir.join("kubeconfig"), Some(dir))
            }
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(store::State::new(opts.event_log)),
            token: token.clone(),
            require_token: opts.require_token || opts.tls,
            address: addr.to_string(),
            bookmark_interval: opts.bookmark_interval,
            wake_controllers: tokio::sync::Notify::new(),
            writes: AtomicU64::new(0),
            faults: faults::Faults::new(opts.faults.clone(), opts.fault_seed),
            requests: Default::default(),
        });
        let sim = Arc::new(Simulation {
            enabled: AtomicBool::new(opts.simulate),
            delay_ms: AtomicU64::new(opts.ready_delay.as_millis() as u64),
        });
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("navique-sandbox")
            .build()?;
        let (shared2, sim2) = (shared.clone(), sim.clone());
        let thread = std::thread::Builder::new()
            .name("navique-sandbox".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                    tokio::spawn(controllers::run(shared2.clone(), sim2));
                    serve(listener, shared2, stop_rx, acceptor).await;
                });
                runtime.shutdown_timeout(Duration::from_millis(100));
            })?;
        // Write the kubeconfig atomically, once the socket accepts.
        let tmp = kubeconfig.with_extension("tmp");
        std::fs::write(&tmp, kubeconfig_yaml(&url, &token, ca_pem.as_deref()))?;
        std::fs::rename(&tmp, &kubeconfig)?;
        Ok(Sandbox {
            addr,
            url,
            token,
            ca_pem,
            kubeconfig,
            temp_dir,
            shared,
            sim,
            shutdown: Some(stop_tx),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// The CA that signed the server certificate, when serving TLS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    pub fn kubeconfig(&self) -> String {
        kubeconfig_yaml(&self.url, &self.token, self.ca_pem.as_deref())
    }

    /// How many faults were injected so far.
    pub fn faults_injected(&self) -> u64 {
        self.shared.faults.injected.load(Ordering::Relaxed)
    }

    /// Faults injected so far, by kind (`500`, `delay`, `late`, ...).
    pub fn faults_injected_by_kind(&self) -> std::collections::BTreeMap<String, u64> {
        self.shared.faults.injected_by_kind()
    }

    /// Turns the simulated controllers on or off while running.
    pub fn set_simulate(&self, on: bool) {
        self.sim.enabled.store(on, Ordering::Relaxed);
        self.shared.wake_controllers.notify_one();
    }

    pub fn set_ready_delay(&self, d: Duration) {
        self.sim
            .delay_ms
            .store(d.as_millis() as u64, Ordering::Relaxed);
    }

    /// Number of objects stored, for load tests and benchmarks.
    /// Requests other than GET served so far (creates, updates, patches,
    /// applies, deletes), whatever their outcome.
    pub fn write_requests(&self) -> u64 {
        self.shared.writes.load(Ordering::Relaxed)
    }

    /// Requests served so far, by client, verb and resource (also served
    /// as JSON at `/sandbox/requests`, for benchmarks in other processes).
    pub fn request_counts(&self) -> Vec<tally::RequestCount> {
        self.shared.requests.snapshot()
    }

    pub fn object_count(&self) -> usize {
        self.shared.state.lock().expect("lock").object_count()
    }

    pub fn stop(mut self) {
        self.shutdown_now();
    }

    fn shutdown_now(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(d) = self.temp_dir.take() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.shutdown_now();
    }
}

async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    loop {
        tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req| server::handle(shared.clone(), req));
                    let http = hyper::server::conn::http1::Builder::new();
                    match tls {
                        Some(acceptor) => {
                            let Ok(stream) = acceptor.accept(stream).await else { return };
                            let _ = http.serve_connection(hyper_util::rt::TokioIo::new(stream), svc).await;
                        }
                        None => {
                            let _ = http.serve_connection(hyper_util::rt::TokioIo::new(stream), svc).await;
                        }
                    }
                });
            }
        }
    }
}
