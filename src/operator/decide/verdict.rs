//! What the license allows: each resource's standing under the tier the
//! license gives (`crate::operator::model::licensing`).

use crate::operator::api::Reason;
use crate::operator::model::licensing::*;
use crate::operator::model::snapshot::{Resource, Snapshot};
use std::collections::BTreeMap;

/// A resource's standing under the tier.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Licensed,
    /// A feature outside the license: Event `LicenseSkipped`.
    FeatureSkipped {
        feature: String,
    },
    /// Past its kind's limit: Event `InstanceLimitExceeded`.
    OverLimit {
        kind: String,
        limit: u32,
    },
}

impl Verdict {
    pub fn is_licensed(&self) -> bool {
        matches!(self, Verdict::Licensed)
    }

    pub fn reason(&self) -> Reason {
        match self {
            Verdict::Licensed => Reason::Licensed,
            Verdict::FeatureSkipped { .. } => Reason::LicenseSkipped,
            Verdict::OverLimit { .. } => Reason::InstanceLimitExceeded,
        }
    }

    pub fn message(&self, tier: &Tier) -> String {
        match self {
            Verdict::Licensed => tier.describe(),
            Verdict::FeatureSkipped { feature } => format!(
                "the feature {feature} is not in the license ({}); nothing is emitted for it",
                tier.describe()
            ),
            Verdict::OverLimit { kind, limit } => format!(
                "{kind} is limited to {limit} by the license ({}); this one is past it (oldest first)",
                tier.describe()
            ),
        }
    }
}

/// The feature a resource needs beyond the free tier, if any.
pub fn feature_needed(r: &Resource) -> Option<&'static str> {
    match r.kind {
        crate::operator::api::Kind::ClickHouseCluster if r.field("type") == Some("altinity") => {
            Some(FEATURE_ALTINITY)
        }
        kind => kind.facts().feature,
    }
}

/// Every resource's verdict, by uid. Resources being deleted are not
/// counted (they hold no place) and are always let go.
pub fn judge(tier: &Tier, resources: &[Resource]) -> BTreeMap<String, Verdict> {
    let mut out = BTreeMap::new();
    let mut by_kind: BTreeMap<&str, Vec<&Resource>> = BTreeMap::new();
    for r in resources {
        if r.deleting {
            out.insert(r.uid.clone(), Verdict::Licensed);
            continue;
        }
        if let Some(f) = feature_needed(r).filter(|f| !tier.has_feature(f)) {
            out.insert(
                r.uid.clone(),
                Verdict::FeatureSkipped {
                    feature: f.to_string(),
                },
            );
            continue;
        }
        by_kind.entry(r.kind.as_str()).or_default().push(r);
    }
    for (kind, mut list) in by_kind {
        list.sort_by(|a, b| {
            (&a.created, &a.namespace, &a.name).cmp(&(&b.created, &b.namespace, &b.name))
        });
        let limit = tier.limit(kind);
        for (i, r) in list.into_iter().enumerate() {
            let verdict = match limit {
                Some(limit) if i as u32 >= limit => Verdict::OverLimit {
                    kind: kind.to_string(),
                    limit,
                },
                _ => Verdict::Licensed,
            };
            out.insert(r.uid.clone(), verdict);
        }
    }
    out
}

/// Resources the license lets the operator act for.
pub fn licensed_resources(snap: &Snapshot) -> Vec<Resource> {
    let verdicts = snap
        .tier
        .as_ref()
        .map(|t| judge(t, &snap.resources))
        .unwrap_or_default();
    snap.resources
        .iter()
        .filter(|r| verdicts.get(&r.uid).is_none_or(|v| v.is_licensed()))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::model::licensing::tests::{enterprise, key, now, signed};
    use serde_json::json;

    fn resource(kind: &str, name: &str, created: &str) -> Resource {
        let mut r = Resource::for_test(kind, name, name, json!({}));
        r.created = created.into();
        r
    }

    #[test]
    fn limits_keep_the_oldest_and_features_are_skipped() {
        let free = Tier::Free {
            reason: "x".into(),
            expired: false,
        };
        let rs = vec![
            resource("PostgresCluster", "c", "2026-01-03T00:00:00Z"),
            resource("PostgresCluster", "a", "2026-01-01T00:00:00Z"),
            resource("PostgresCluster", "b", "2026-01-01T00:00:00Z"),
            resource("Observability", "o", "2026-01-01T00:00:00Z"),
        ];
        let v = judge(&free, &rs);
        assert_eq!(v["a"], Verdict::Licensed);
        assert_eq!(v["b"], Verdict::Licensed, "same time: by namespace/name");
        assert_eq!(
            v["c"],
            Verdict::OverLimit {
                kind: "PostgresCluster".into(),
                limit: 2
            }
        );
        assert_eq!(
            v["o"],
            Verdict::FeatureSkipped {
                feature: "Observability".into()
            }
        );
        let mut deleting = resource("PostgresCluster", "0", "2025-01-01T00:00:00Z");
        deleting.deleting = true;
        let mut with_deleting = rs.clone();
        with_deleting.push(deleting);
        assert_eq!(
            judge(&free, &with_deleting)["c"].reason(),
            Reason::InstanceLimitExceeded
        );
        let mut altinity = resource("ClickHouseCluster", "ch", "2026-01-01T00:00:00Z");
        altinity.spec = json!({"type": "altinity"});
        assert_eq!(
            judge(&free, &[altinity.clone()])["ch"].reason(),
            Reason::LicenseSkipped
        );
        let data = signed(&key(), &enterprise());
        let licensed = tier(Some(&data), &key().verifying_key(), now());
        assert!(judge(&licensed, &[altinity])["ch"].is_licensed());
    }
}
