//! The license as found: the license Secret's bytes and the time in, the
//! tier out (what each resource may do under it is
//! `crate::operator::decide::verdict`'s).
//! Nothing here can fail the operator: whatever is wrong with a license is
//! the free tier, with the reason in words. Nothing is ever deleted because
//! of licensing: a rejected resource stops being updated, that is all.

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

pub use crate::operator::api::kind::{
    FEATURE_ALTINITY, FEATURE_OBSERVABILITY, FEATURE_SECRETS_MANAGEMENT,
};

/// `--license-public-key` names a file that holds no Ed25519 public key.
#[derive(Debug, thiserror::Error)]
#[error("not a PEM Ed25519 PUBLIC KEY (SubjectPublicKeyInfo): {0}")]
pub struct NotAPublicKey(#[source] ed25519_dalek::pkcs8::spki::Error);

pub fn public_key_from_pem(pem: &str) -> Result<VerifyingKey, NotAPublicKey> {
    VerifyingKey::from_public_key_pem(pem).map_err(NotAPublicKey)
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
            Tier::Free { .. } => {
                Some(crate::operator::api::Kind::parse(kind).map_or(0, |k| k.facts().free_limit))
            }
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

/// Where the license is and the key that must have signed it.
#[derive(Clone, Debug)]
pub struct Licensing {
    pub namespace: String,
    pub key: ed25519_dalek::VerifyingKey,
}

impl Licensing {
    pub fn built_in(namespace: &str) -> Licensing {
        Licensing {
            namespace: namespace.into(),
            key: built_in_key(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};
    use serde_json::json;

    pub(crate) fn signed(
        key: &SigningKey,
        payload: &serde_json::Value,
    ) -> BTreeMap<String, Vec<u8>> {
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

    pub(crate) fn key() -> SigningKey {
        SigningKey::from_bytes(&[7; 32])
    }

    pub(crate) fn now() -> chrono::DateTime<chrono::Utc> {
        "2026-12-01T00:00:00Z".parse().unwrap()
    }

    pub(crate) fn enterprise() -> serde_json::Value {
        json!({"licensee": "Acme", "tier": "enterprise", "expires": "2027-01-01T00:00:00Z",
               "limits": {"PostgresCluster": 10}, "features": ["Observability", "altinity"]})
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
}
