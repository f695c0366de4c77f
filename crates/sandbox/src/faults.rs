//! Fault injection, off by default: a share of the requests that match a
//! rule (by verb and resource) is answered with an error, delayed, or, for
//! watches, cut mid-stream or refused with 410 Gone on resume. For tests of
//! clients that must survive a flaky API server.
//!
//! A rule as a flag (`--fault`, repeatable): `KIND@SHARE[:verbs=V,...][:resources=R,...][:agents=UA,...]`
//! where KIND is `500`, `503`, `429` (with Retry-After: 1), `409` (updates
//! and patches only), `delay=MS` (held before the work), `late=MS` (the
//! work done, the answer held: a client that times out first never learns
//! that its write happened), `cut-watch` (the stream ends after a few
//! events) or `gone` (a watch resuming from a resourceVersion gets 410);
//! SHARE is between 0 and 1. Example: `500@0.05:verbs=create,patch`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub enum Fault {
    Status(u16),
    TooManyRequests,
    Conflict,
    Delay(Duration),
    Late(Duration),
    CutWatch,
    GoneOnResume,
}

impl Fault {
    /// The kind as the flag names it (`500`, `delay`, `late`, ...).
    pub fn name(&self) -> String {
        match self {
            Fault::Status(code) => code.to_string(),
            Fault::TooManyRequests => "429".into(),
            Fault::Conflict => "409".into(),
            Fault::Delay(_) => "delay".into(),
            Fault::Late(_) => "late".into(),
            Fault::CutWatch => "cut-watch".into(),
            Fault::GoneOnResume => "gone".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct FaultRule {
    pub fault: Fault,
    pub share: f64,
    /// get, list, watch, create, update, patch, delete; empty: every verb.
    pub verbs: Vec<String>,
    /// Resource plurals; empty: every resource.
    pub resources: Vec<String>,
    /// User-Agent prefixes (`navique-operator`); empty: every client.
    pub agents: Vec<String>,
}

impl FaultRule {
    pub fn parse(text: &str) -> Result<FaultRule, String> {
        let mut parts = text.split(':');
        let head = parts.next().unwrap_or_default();
        let (kind, share) = head
            .split_once('@')
            .ok_or_else(|| format!("fault {text:?}: expected KIND@SHARE"))?;
        let share: f64 = share
            .parse()
            .ok()
            .filter(|s: &f64| (0.0..=1.0).contains(s))
            .ok_or_else(|| format!("fault {text:?}: SHARE must be between 0 and 1"))?;
        let fault = match kind {
            "500" | "502" | "503" | "504" => Fault::Status(kind.parse().unwrap()),
            "429" => Fault::TooManyRequests,
            "409" => Fault::Conflict,
            "cut-watch" => Fault::CutWatch,
            "gone" => Fault::GoneOnResume,
            k if k.starts_with("delay=") => Fault::Delay(Duration::from_millis(
                k["delay=".len()..]
                    .parse()
                    .map_err(|_| format!("fault {text:?}: delay=MS"))?,
            )),
            k if k.starts_with("late=") => Fault::Late(Duration::from_millis(
                k["late=".len()..]
                    .parse()
                    .map_err(|_| format!("fault {text:?}: late=MS"))?,
            )),
            other => return Err(format!("fault {text:?}: unknown kind {other:?}")),
        };
        let mut rule = FaultRule {
            fault,
            share,
            verbs: Vec::new(),
            resources: Vec::new(),
            agents: Vec::new(),
        };
        for p in parts {
            let list = |v: &str| {
                v.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            };
            match p.split_once('=') {
                Some(("verbs", v)) => rule.verbs = list(v),
                Some(("resources", v)) => rule.resources = list(v),
                Some(("agents", v)) => rule.agents = list(v),
                _ => return Err(format!("fault {text:?}: unknown part {p:?}")),
            }
        }
        Ok(rule)
    }

    fn matches(&self, verb: &str, resource: &str, agent: &str) -> bool {
        (self.verbs.is_empty() || self.verbs.iter().any(|v| v == verb))
            && (self.resources.is_empty() || self.resources.iter().any(|r| r == resource))
            && (self.agents.is_empty() || self.agents.iter().any(|a| agent.starts_with(a.as_str())))
    }
}

/// The rules and a seeded generator, so a run can be repeated.
pub struct Faults {
    rules: Vec<FaultRule>,
    rng: Mutex<u64>,
    pub injected: AtomicU64,
    /// Injected, by kind name.
    by_kind: Mutex<std::collections::BTreeMap<String, u64>>,
}

impl Faults {
    pub fn new(rules: Vec<FaultRule>, seed: u64) -> Faults {
        Faults {
            rules,
            rng: Mutex::new(seed | 1),
            injected: AtomicU64::new(0),
            by_kind: Mutex::new(Default::default()),
        }
    }

    fn roll(&self) -> f64 {
        // xorshift64*: plenty for picking a share of requests.
        let mut s = self.rng.lock().expect("lock");
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        (s.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn injected_by_kind(&self) -> std::collections::BTreeMap<String, u64> {
        self.by_kind.lock().expect("lock").clone()
    }

    /// The faults that strike this request (at most one of each kind).
    pub fn pick(&self, verb: &str, resource: &str, agent: &str, resuming: bool) -> Vec<Fault> {
        let mut out = Vec::new();
        for r in &self.rules {
            let applies = match r.fault {
                Fault::Conflict => matches!(verb, "update" | "patch"),
                Fault::CutWatch => verb == "watch",
                Fault::GoneOnResume => verb == "watch" && resuming,
                _ => true,
            };
            if applies
                && r.matches(verb, resource, agent)
                && self.roll() < r.share
                && !out.contains(&r.fault)
            {
                self.injected.fetch_add(1, Ordering::Relaxed);
                *self
                    .by_kind
                    .lock()
                    .expect("lock")
                    .entry(r.fault.name())
                    .or_default() += 1;
                out.push(r.fault.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_strike_about_their_share() {
        let r = FaultRule::parse("500@0.25:verbs=create,patch:resources=deployments").unwrap();
        assert_eq!(
            (r.fault.clone(), r.share, r.verbs.len()),
            (Fault::Status(500), 0.25, 2)
        );
        assert_eq!(
            FaultRule::parse("delay=1500@1").unwrap().fault,
            Fault::Delay(Duration::from_millis(1500))
        );
        assert_eq!(
            FaultRule::parse("late=2500@0.1").unwrap().fault,
            Fault::Late(Duration::from_millis(2500))
        );
        assert!(FaultRule::parse("500@2").is_err() && FaultRule::parse("418@0.1").is_err());
        let f = Faults::new(vec![r, FaultRule::parse("409@1").unwrap()], 7);
        let hits = (0..4000)
            .filter(|_| {
                f.pick("create", "deployments", "", false)
                    .contains(&Fault::Status(500))
            })
            .count();
        assert!((800..1200).contains(&hits), "{hits}");
        assert!(
            f.pick("create", "services", "", false).is_empty(),
            "another resource"
        );
        assert_eq!(
            f.pick("patch", "services", "", false),
            vec![Fault::Conflict]
        );
        assert!(
            f.pick("get", "services", "", false).is_empty(),
            "no 409 on a read"
        );
        let only = Faults::new(
            vec![FaultRule::parse("500@1:agents=navique-operator").unwrap()],
            3,
        );
        assert_eq!(
            only.pick("get", "pods", "navique-operator/0.1.0", false),
            vec![Fault::Status(500)]
        );
        assert!(only.pick("get", "pods", "kubectl/v1.32", false).is_empty());
    }
}
