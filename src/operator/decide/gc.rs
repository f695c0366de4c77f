//! Migration GC: what a resource's status says we created, against what its
//! spec wants now, gives what to delete. Pure; the controller deletes only
//! objects that are still ours (our label and an ownerReference to it).

use crate::operator::api::{self, OwnedObject};
use serde_json::Value;

/// Objects recorded as ours that the spec no longer asks for, in the order
/// they were recorded.
pub fn unwanted(recorded: &[OwnedObject], wanted: &[OwnedObject]) -> Vec<OwnedObject> {
    recorded
        .iter()
        .filter(|o| !wanted.contains(o))
        .cloned()
        .collect()
}

/// Whether the object is ours to delete for the resource with `uid`.
pub fn is_ours(existing: &Value, uid: &str) -> bool {
    let labelled = existing
        .pointer("/metadata/labels")
        .and_then(|l| l.get(api::MANAGED_BY_LABEL))
        .and_then(Value::as_str)
        == Some(api::MANAGED_BY);
    let owned = existing
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r.get("uid").and_then(Value::as_str) == Some(uid))
        });
    labelled && owned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(name: &str) -> OwnedObject {
        OwnedObject {
            api_version: "postgresql.cnpg.io/v1".into(),
            kind: "Cluster".into(),
            namespace: "team-a".into(),
            name: name.into(),
        }
    }

    #[test]
    fn what_the_spec_no_longer_wants_is_collected() {
        let recorded = [cluster("app-db"), cluster("old")];
        assert_eq!(unwanted(&recorded, &[cluster("app-db")]), [cluster("old")]);
        // managed -> external: nothing is wanted any more.
        assert_eq!(unwanted(&recorded, &[]), recorded);
        assert!(unwanted(&[], &[cluster("app-db")]).is_empty());
    }
}
