//! Health and readiness and the metrics, over HTTP: `/metrics` (Prometheus
//! text), `/healthz`, `/readyz`, served by a small hyper server on the binds
//! of `run`.

use crate::operator::reconcile::metrics::Metrics;
use std::sync::atomic::Ordering;
use std::sync::Arc;

type Body = http_body_util::Full<bytes::Bytes>;

fn respond(code: u16, text: String) -> hyper::Response<Body> {
    hyper::Response::builder()
        .status(code)
        .header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        .body(Body::new(text.into()))
        .expect("response")
}

/// Serves `/metrics`, `/healthz` and `/readyz` on `bind` until the process ends.
pub async fn serve(
    bind: std::net::SocketAddr,
    metrics: Arc<Metrics>,
) -> std::io::Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(bind).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let metrics = metrics.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let metrics = metrics.clone();
                        async move {
                            Ok::<_, std::convert::Infallible>(match req.uri().path() {
                                "/metrics" => respond(200, metrics.encode()),
                                "/healthz" | "/livez" => respond(200, "ok\n".into()),
                                "/readyz" if metrics.ready.load(Ordering::Relaxed) => {
                                    respond(200, "ok\n".into())
                                }
                                "/readyz" => respond(503, "not ready\n".into()),
                                _ => respond(404, "not found\n".into()),
                            })
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(addr)
}
