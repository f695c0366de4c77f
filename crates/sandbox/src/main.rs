//! `navique-sandbox --kubeconfig PATH [--port N] [--no-simulate]`

use navique_sandbox::{Options, Sandbox};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::path::PathBuf;

fn usage() -> ! {
    eprintln!("usage: navique-sandbox --kubeconfig PATH [--port N] [--no-simulate] [--tls] [--require-token] [--token T] [--ready-delay-ms MS] [--fault KIND@SHARE[:verbs=..][:resources=..]]... [--fault-seed N]");
    std::process::exit(2);
}

fn main() {
    let mut opts = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("navique-sandbox: {name} needs a value");
                usage()
            })
        };
        match a.as_str() {
            "--kubeconfig" => opts.kubeconfig = Some(PathBuf::from(value("--kubeconfig"))),
            "--port" => opts.port = value("--port").parse().unwrap_or_else(|_| usage()),
            "--token" => opts.token = Some(value("--token")),
            "--ready-delay-ms" => {
                opts.ready_delay = std::time::Duration::from_millis(
                    value("--ready-delay-ms")
                        .parse()
                        .unwrap_or_else(|_| usage()),
                )
            }
            "--no-simulate" => opts.simulate = false,
            "--fault" => match navique_sandbox::faults::FaultRule::parse(&value("--fault")) {
                Ok(rule) => opts.faults.push(rule),
                Err(e) => {
                    eprintln!("navique-sandbox: {e}");
                    usage()
                }
            },
            "--fault-seed" => {
                opts.fault_seed = value("--fault-seed").parse().unwrap_or_else(|_| usage())
            }
            "--tls" => opts.tls = true,
            "--require-token" => opts.require_token = true,
            "-h" | "--help" => usage(),
            other => {
                eprintln!("navique-sandbox: unknown argument {other:?}");
                usage()
            }
        }
    }
    if opts.kubeconfig.is_none() {
        eprintln!("navique-sandbox: --kubeconfig is required");
        usage();
    }
    let sandbox = match Sandbox::start(opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("navique-sandbox: {e}");
            std::process::exit(1);
        }
    };
    eprintln!(
        "navique-sandbox: serving {} (kubeconfig {})",
        sandbox.url(),
        sandbox.kubeconfig_path().display()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("signal");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    });
    sandbox.stop();
}
