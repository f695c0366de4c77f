//! Licensing, as decisions: the license Secret's bytes and the time in, the
//! tier out; the tier and the resources in, each resource's verdict out.
//! Nothing here can fail the operator: whatever is wrong with a license is
//! the free tier, with the reason in words. Nothing is ever deleted because
//! of licensing: a rejected resource stops being updated, that is all.

use super::observe::Resource;
use base64::Engine;
use ed25519_dalek::pkcs8::DecodePublicKey;
use ed25519_dalek::{Signature, VerifyingKey};
use serde::Deserialize;
use std::collections::BTreeMap;

pub const SECRET_NAME: &str = "navique-license";
pub const PAYLOAD_KEY: &str = "license.json";
pub const SIGNATURE_KEY: &str = "license.sig";

/// The vendor's license signing key; its private half is not in this
/// repository. `--license-public-key` replaces it.
pub const BUILT_IN_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAEbEiKaBriiANmPzlAbSwZxf7692zad30VIx56mTUsbI=
-----END PUBLIC KEY-----
";

/// The features a license can include, by the names payloads use.
pub const FEATURE_OBSERVABILITY: &str = "Observability";
pub const FEATURE_SECRETS_MANAGEMENT: &str = "SecretsManagement";
pub const FEATURE_ALTINITY: &str = "altinity";

pub fn public_key_from_pem(pem: &str) -> Result<VerifyingKey, String> {
    VerifyingKey::from_public_key_pem(pem)
        .map_err(|e| format!("not a PEM Ed25519 PUBLIC KEY (SubjectPublicKeyInfo): {e}"))
}

pub fn built_in_key() -> VerifyingKey {
    public_key_from_pem(BUILT_IN_PUBLIC_KEY).expect("the built-in key parses")
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Payload {
    pub licensee: String,
    #[serde(default)]
    pub tier: String,
    pub expires: chrono::DateTime<chrono::Utc>,
    #[serde(default)]
    pub limits: BTreeMap<String, u32>,
    #[serde(default)]
    pub features: Vec<String>,
}

/// What the operator may do, and why.
#[derive(Clone, Debug, PartialEq)]
pub enum Tier {
    Licensed(Payload),
    /// No license, or one that does not count: the reason, in words.
    Free {
        reason: String,
        expired: bool,
    },
}

impl Tier {
    /// A kind's instance limit; `None` is no limit. A license limits the
    /// kinds it names; the others are not limited by it.
    pub fn limit(&self, kind: &str) -> Option<u32> {
        match self {
            Tier::Licensed(p) => p.limits.get(kind).copied(),
            Tier::Free { .. } => Some(match kind {
                "PostgresCluster" => 2,
                "ClickHouseCluster" | "Gateway" | "ChatUI" | "MeilisearchInstance" => 1,
                _ => 0,
            }),
        }
    }

    pub fn has_feature(&self, feature: &str) -> bool {
        match self {
            Tier::Licensed(p) => p.features.iter().any(|f| f == feature),
            Tier::Free { .. } => false,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Tier::Licensed(p) => format!(
                "licensed to {} ({} tier) until {}",
                p.licensee,
                if p.tier.is_empty() {
                    "unnamed"
                } else {
                    &p.tier
                },
                p.expires.to_rfc3339()
            ),
            Tier::Free { reason, .. } => format!("free tier: {reason}"),
        }
    }
}

/// The tier a license Secret's data gives at `now` (`None`: no Secret).
pub fn tier(
    data: Option<&BTreeMap<String, Vec<u8>>>,
    key: &VerifyingKey,
    now: chrono::DateTime<chrono::Utc>,
) -> Tier {
    let free = |reason: String| Tier::Free {
        reason,
        expired: false,
    };
    let Some(data) = data else {
        return free(format!("no Secret {SECRET_NAME}"));
    };
    let (Some(payload), Some(sig)) = (data.get(PAYLOAD_KEY), data.get(SIGNATURE_KEY)) else {
        return free(format!(
            "Secret {SECRET_NAME} needs keys {PAYLOAD_KEY} and {SIGNATURE_KEY}"
        ));
    };
    let sig_text = String::from_utf8_lossy(sig);
    let Ok(sig_bytes) = base64::engine::general_purpose::STANDARD.decode(sig_text.trim()) else {
        return free(format!("{SIGNATURE_KEY} is not base64"));
    };
    let Ok(signature) = Signature::from_slice(&sig_bytes) else {
        return free(format!("{SIGNATURE_KEY} is not an Ed25519 signature"));
    };
    if key.verify_strict(payload, &signature).is_err() {
        return free(format!(
            "the signature in {SIGNATURE_KEY} does not match {PAYLOAD_KEY} and the license key"
        ));
    }
    let payload: Payload = match serde_json::from_slice(payload) {
        Ok(p) => p,
        Err(e) => {
            return free(format!(
                "{PAYLOAD_KEY} line {} column {}: {e}",
                e.line(),
                e.column()
            ))
        }
    };
    if payload.expires <= now {
        return Tier::Free {
            reason: format!(
                "the license of {} expired at {}",
                payload.licensee,
                payload.expires.to_rfc3339()
            ),
            expired: true,
        };
    }
    Tier::Licensed(payload)
}

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

    pub fn reason(&self) -> &'static str {
        match self {
            Verdict::Licensed => "Licensed",
            Verdict::FeatureSkipped { .. } => "LicenseSkipped",
            Verdict::OverLimit { .. } => "InstanceLimitExceeded",
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
    match r.kind.as_str() {
        "Observability" => Some(FEATURE_OBSERVABILITY),
        "SecretsManagement" => Some(FEATURE_SECRETS_MANAGEMENT),
        "ClickHouseCluster" if r.field("type") == Some("altinity") => Some(FEATURE_ALTINITY),
        _ => None,
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
        by_kind.entry(&r.kind).or_default().push(r);
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

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};
    use serde_json::json;

    fn signed(key: &SigningKey, payload: &serde_json::Value) -> BTreeMap<String, Vec<u8>> {
        let bytes = serde_json::to_vec(payload).unwrap();
        let sig = key.sign(&bytes);
        BTreeMap::from([
            (PAYLOAD_KEY.to_string(), bytes),
            (
                SIGNATURE_KEY.to_string(),
                base64::engine::general_purpose::STANDARD
                    .encode(sig.to_bytes())
                    .into_bytes(),
            ),
        ])
    }

    fn key() -> SigningKey {
        SigningKey::from_bytes(&[7; 32])
    }

    fn now() -> chrono::DateTime<chrono::Utc> {
        "2026-12-01T00:00:00Z".parse().unwrap()
    }

    fn enterprise() -> serde_json::Value {
        json!({"licensee": "Acme", "tier": "enterprise", "expires": "2027-01-01T00:00:00Z",
               "limits": {"PostgresCluster": 10}, "features": ["Observability", "altinity"]})
    }

    fn resource(kind: &str, name: &str, created: &str) -> Resource {
        let mut r = Resource::for_test(kind, name, name, json!({}));
        r.created = created.into();
        r
    }

    #[test]
    fn a_signed_license_in_date_is_its_tier() {
        let data = signed(&key(), &enterprise());
        let t = tier(Some(&data), &key().verifying_key(), now());
        let Tier::Licensed(p) = &t else {
            panic!("{t:?}")
        };
        assert_eq!(p.licensee, "Acme");
        assert_eq!(t.limit("PostgresCluster"), Some(10));
        assert_eq!(
            t.limit("Gateway"),
            None,
            "a license limits only what it names"
        );
        assert!(t.has_feature("altinity") && !t.has_feature("SecretsManagement"));
    }

    #[test]
    fn anything_wrong_is_the_free_tier_with_the_reason() {
        let k = key().verifying_key();
        let free = |t: Tier| match t {
            Tier::Free { reason, expired } => (reason, expired),
            t => panic!("{t:?}"),
        };
        assert!(free(tier(None, &k, now())).0.contains("no Secret"));
        let mut tampered = signed(&key(), &enterprise());
        tampered.insert(
            PAYLOAD_KEY.into(),
            serde_json::to_vec(&json!({"licensee": "Acme", "expires": "2099-01-01T00:00:00Z"}))
                .unwrap(),
        );
        assert!(free(tier(Some(&tampered), &k, now()))
            .0
            .contains("does not match"));
        let other = SigningKey::from_bytes(&[9; 32]);
        assert!(free(tier(Some(&signed(&other, &enterprise())), &k, now()))
            .0
            .contains("does not match"));
        let mut garbage = signed(&key(), &enterprise());
        garbage.insert(SIGNATURE_KEY.into(), b"%%%".to_vec());
        assert!(free(tier(Some(&garbage), &k, now()))
            .0
            .contains("not base64"));
        let (reason, expired) = free(tier(
            Some(&signed(&key(), &enterprise())),
            &k,
            "2027-02-01T00:00:00Z".parse().unwrap(),
        ));
        assert!(expired && reason.contains("expired"), "{reason}");
        // Signed but not a payload: named by line and column.
        let bad = signed(&key(), &json!({"licensee": "Acme"}));
        let (reason, expired) = free(tier(Some(&bad), &k, now()));
        assert!(
            !expired && reason.contains("line 1 column") && reason.contains("expires"),
            "{reason}"
        );
        let t = Tier::Free {
            reason: String::new(),
            expired: false,
        };
        assert_eq!(t.limit("PostgresCluster"), Some(2));
        assert_eq!(t.limit("Observability"), Some(0));
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
            "InstanceLimitExceeded"
        );
        let mut altinity = resource("ClickHouseCluster", "ch", "2026-01-01T00:00:00Z");
        altinity.spec = json!({"type": "altinity"});
        assert_eq!(
            judge(&free, &[altinity.clone()])["ch"].reason(),
            "LicenseSkipped"
        );
        let data = signed(&key(), &enterprise());
        let licensed = tier(Some(&data), &key().verifying_key(), now());
        assert!(judge(&licensed, &[altinity])["ch"].is_licensed());
    }
}
