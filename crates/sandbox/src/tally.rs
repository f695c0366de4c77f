//! Requests served, by client, verb and resource: what the scale benchmark
//! reports per reconcile and what a regression test bounds (a converged
//! operator should make none beyond its watches).

use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestKey {
    /// The client's User-Agent up to its first `/` (`navique-operator`, `kubectl`, `Go-http-client`).
    pub agent: String,
    /// Kubernetes' verb: get, list, watch, create, update, patch, delete; discovery for `/api`, `/apis`, `/openapi`.
    pub verb: String,
    /// The resource's plural (`status` and other subresources after a `/`), or the discovery path.
    pub resource: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestCount {
    pub key: RequestKey,
    pub count: u64,
}

impl RequestCount {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "agent": self.key.agent,
            "verb": self.key.verb,
            "resource": self.key.resource,
            "count": self.count,
        })
    }
}

#[derive(Default)]
pub struct Tally {
    counts: Mutex<BTreeMap<RequestKey, u64>>,
}

impl Tally {
    pub fn record(&self, agent: &str, verb: &str, resource: &str) {
        let key = RequestKey {
            agent: agent_name(agent).to_string(),
            verb: verb.to_string(),
            resource: resource.to_string(),
        };
        *self.counts.lock().expect("lock").entry(key).or_insert(0) += 1;
    }

    pub fn snapshot(&self) -> Vec<RequestCount> {
        self.counts
            .lock()
            .expect("lock")
            .iter()
            .map(|(key, &count)| RequestCount {
                key: key.clone(),
                count,
            })
            .collect()
    }
}

pub fn agent_name(user_agent: &str) -> &str {
    let name = user_agent.split('/').next().unwrap_or_default().trim();
    if name.is_empty() {
        "unknown"
    } else {
        name
    }
}

/// What `counts` adds up to for one client, watches apart: the requests a
/// cache could not have answered.
pub fn non_watch_requests(counts: &[RequestCount], agent: &str) -> u64 {
    counts
        .iter()
        .filter(|c| c.key.agent == agent && c.key.verb != "watch")
        .map(|c| c.count)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_agent_name_verb_and_resource() {
        let t = Tally::default();
        t.record("navique-operator/0.1.0", "list", "deployments");
        t.record("navique-operator/0.2.0", "list", "deployments");
        t.record("navique-operator/0.1.0", "watch", "deployments");
        t.record("", "get", "secrets");
        let s = t.snapshot();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].key.agent, "navique-operator");
        assert_eq!((s[0].key.verb.as_str(), s[0].count), ("list", 2));
        assert_eq!(s[2].key.agent, "unknown");
        assert_eq!(non_watch_requests(&s, "navique-operator"), 2);
        assert_eq!(non_watch_requests(&s, "kubectl"), 0);
    }
}
