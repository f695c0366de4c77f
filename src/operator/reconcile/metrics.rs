//! What the controllers record: the contract's metrics (and the API
//! request counts that prove a converged operator only watches), and the
//! readiness `/readyz` reports. `crate::operator::runtime::telemetry` serves
//! them.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReconcileLabels {
    pub kind: String,
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReconcileErrorLabels {
    pub kind: String,
    pub error: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CapabilityInfoLabels {
    pub capability: String,
    pub chart_version: String,
    pub provenance: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CapabilityLabels {
    pub capability: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReleaseActionLabels {
    pub release: String,
    pub action: String,
    pub result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ApiRequestLabels {
    pub verb: String,
    pub resource: String,
}

pub struct Metrics {
    registry: Registry,
    /// Requests the operator sent to the API server, by Kubernetes verb and
    /// resource: what a reconcile costs the cluster, and proof that a
    /// converged operator only watches.
    pub api_requests_total: Family<ApiRequestLabels, Counter>,
    pub reconcile_total: Family<ReconcileLabels, Counter>,
    /// Failed reconciles by kind and the error's variant.
    pub reconcile_errors_total: Family<ReconcileErrorLabels, Counter>,
    pub reconcile_duration: Family<KindLabels, Histogram>,
    pub capability_info: Family<CapabilityInfoLabels, Gauge>,
    pub capability_ready: Family<CapabilityLabels, Gauge>,
    pub release_action_total: Family<ReleaseActionLabels, Counter>,
    /// Objects we own put back after someone changed or deleted them, by kind.
    pub drift_corrections_total: Family<KindLabels, Counter>,
    /// The info labels last set per capability, to drop them when they change.
    info_now: Mutex<HashMap<String, CapabilityInfoLabels>>,
    /// Caches synced and, with leader election, the lease held or followed.
    pub ready: AtomicBool,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

impl Metrics {
    pub fn new() -> Arc<Metrics> {
        let mut registry = Registry::default();
        let reconcile_total = Family::<ReconcileLabels, Counter>::default();
        let reconcile_errors_total = Family::<ReconcileErrorLabels, Counter>::default();
        let reconcile_duration = Family::<KindLabels, Histogram>::new_with_constructor(
            duration_histogram as fn() -> Histogram,
        );
        let capability_info = Family::<CapabilityInfoLabels, Gauge>::default();
        let capability_ready = Family::<CapabilityLabels, Gauge>::default();
        let release_action_total = Family::<ReleaseActionLabels, Counter>::default();
        let api_requests_total = Family::<ApiRequestLabels, Counter>::default();
        registry.register(
            "navique_api_requests",
            "Requests sent to the Kubernetes API by verb and resource",
            api_requests_total.clone(),
        );
        registry.register(
            "navique_reconcile",
            "Reconciles by kind and result",
            reconcile_total.clone(),
        );
        registry.register(
            "navique_reconcile_errors",
            "Failed reconciles by kind and error",
            reconcile_errors_total.clone(),
        );
        registry.register(
            "navique_reconcile_duration_seconds",
            "Reconcile duration by kind",
            reconcile_duration.clone(),
        );
        registry.register(
            "navique_capability_info",
            "Each capability's chart version and provenance (value 1)",
            capability_info.clone(),
        );
        registry.register(
            "navique_capability_ready",
            "1 when the capability is Ready",
            capability_ready.clone(),
        );
        registry.register(
            "navique_release_action",
            "Release actions by release, action and result",
            release_action_total.clone(),
        );
        let drift_corrections_total = Family::<KindLabels, Counter>::default();
        registry.register(
            "navique_drift_corrections",
            "Objects we own put back after they drifted, by kind of object",
            drift_corrections_total.clone(),
        );
        Arc::new(Metrics {
            registry,
            drift_corrections_total,
            api_requests_total,
            reconcile_total,
            reconcile_errors_total,
            reconcile_duration,
            capability_info,
            capability_ready,
            release_action_total,
            info_now: Mutex::new(HashMap::new()),
            ready: AtomicBool::new(false),
        })
    }

    pub fn reconciled(&self, kind: &str, ok: bool, seconds: f64) {
        self.reconcile_total
            .get_or_create(&ReconcileLabels {
                kind: kind.into(),
                result: if ok { "success" } else { "error" }.into(),
            })
            .inc();
        self.reconcile_duration
            .get_or_create(&KindLabels { kind: kind.into() })
            .observe(seconds);
    }

    pub fn reconcile_failed(&self, kind: &str, error: &str) {
        self.reconcile_errors_total
            .get_or_create(&ReconcileErrorLabels {
                kind: kind.into(),
                error: error.into(),
            })
            .inc();
    }

    pub fn api_request(&self, method: &hyper::Method, uri: &hyper::Uri) {
        let (verb, resource) = crate::apply::client::verb_and_resource(method, uri);
        self.api_requests_total
            .get_or_create(&ApiRequestLabels {
                verb: verb.into(),
                resource,
            })
            .inc();
    }

    /// API requests so far other than watches: those a cache could not spare.
    pub fn api_requests_beyond_watches(&self) -> u64 {
        // Family has no iteration: read the encoded text back.
        let text = self.encode();
        text.lines()
            .filter(|l| {
                l.starts_with("navique_api_requests_total{") && !l.contains("verb=\"watch\"")
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    }

    /// Reconciles of `kind` so far, whatever their result.
    pub fn reconciles(&self, kind: &str) -> u64 {
        ["success", "error"]
            .iter()
            .map(|r| {
                self.reconcile_total
                    .get_or_create(&ReconcileLabels {
                        kind: kind.into(),
                        result: r.to_string(),
                    })
                    .get()
            })
            .sum()
    }

    pub fn drift_corrected(&self, kind: &str) {
        self.drift_corrections_total
            .get_or_create(&KindLabels { kind: kind.into() })
            .inc();
    }

    pub fn release_action(&self, release: &str, action: &str, ok: bool) {
        self.release_action_total
            .get_or_create(&ReleaseActionLabels {
                release: release.into(),
                action: action.into(),
                result: if ok { "success" } else { "error" }.into(),
            })
            .inc();
    }

    pub fn capability(&self, name: &str, chart_version: &str, provenance: &str, ready: bool) {
        let labels = CapabilityInfoLabels {
            capability: name.into(),
            chart_version: chart_version.into(),
            provenance: provenance.into(),
        };
        let mut now = self.info_now.lock().expect("lock");
        if let Some(old) = now.insert(name.into(), labels.clone()) {
            if old != labels {
                self.capability_info.remove(&old);
            }
        }
        self.capability_info.get_or_create(&labels).set(1);
        self.capability_ready
            .get_or_create(&CapabilityLabels {
                capability: name.into(),
            })
            .set(ready as i64);
    }

    pub fn encode(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("text encoding");
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_contract_metric_names_are_exported() {
        let m = super::Metrics::new();
        m.reconciled("PostgresCluster", true, 0.01);
        m.reconcile_failed("PostgresCluster", "conflict");
        m.release_action("cert-manager", "install", true);
        m.capability("cert-manager", "v1.21.1", "owned", true);
        m.capability("cert-manager", "v1.21.1", "adopted", true);
        let text = m.encode();
        for name in [
            "navique_reconcile_total{kind=\"PostgresCluster\",result=\"success\"} 1",
            "navique_reconcile_duration_seconds_bucket{",
            "navique_reconcile_errors_total{kind=\"PostgresCluster\",error=\"conflict\"} 1",
            "navique_capability_ready{capability=\"cert-manager\"} 1",
            "navique_release_action_total{release=\"cert-manager\",action=\"install\",result=\"success\"} 1",
            "navique_capability_info{capability=\"cert-manager\",chart_version=\"v1.21.1\",provenance=\"adopted\"} 1",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
        assert!(
            !text.contains("provenance=\"owned\""),
            "stale info labels are dropped:\n{text}"
        );
    }
}
