//! Which capabilities are needed, and by whom: the reference count,
//! recomputed from the resources on every reconcile and never stored.

use crate::operator::api::capability::Consumer;
use crate::operator::model::catalog::Catalog;
use crate::operator::model::snapshot::Resource;
use std::collections::BTreeMap;

/// Capability name -> who needs it (resources, or capabilities whose
/// prerequisite it is). A capability absent from the map is not needed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Needs {
    pub by: BTreeMap<String, Vec<Consumer>>,
}

impl Needs {
    pub fn is_needed(&self, capability: &str) -> bool {
        self.by.get(capability).is_some_and(|c| !c.is_empty())
    }

    pub fn consumers(&self, capability: &str) -> &[Consumer] {
        self.by.get(capability).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// The capabilities one resource needs directly, by the catalog's
/// `needed_by` selectors (kind, and mode/type when given).
pub fn direct_needs<'a>(catalog: &'a Catalog, r: &Resource) -> Vec<&'a str> {
    catalog
        .capability
        .iter()
        .filter(|c| {
            c.needed_by.iter().any(|n| {
                n.kind == r.kind
                    && n.mode.as_deref().is_none_or(|m| r.field("mode") == Some(m))
                    && n.type_
                        .as_deref()
                        .is_none_or(|t| r.field("type") == Some(t))
            })
        })
        .map(|c| c.name.as_str())
        .collect()
}

/// Resources being deleted no longer count: their finalizer removes what
/// they emitted, and the capability is uninstalled after that is gone.
pub fn compute(catalog: &Catalog, resources: &[Resource]) -> Needs {
    let mut needs = Needs::default();
    for r in resources.iter().filter(|r| !r.deleting) {
        for cap in direct_needs(catalog, r) {
            needs.by.entry(cap.to_string()).or_default().push(Consumer {
                kind: r.kind.to_string(),
                namespace: r.namespace.clone(),
                name: r.name.clone(),
            });
        }
    }
    // Prerequisites, dependants first so a chain of them is followed.
    let order = catalog.install_order().unwrap_or_default();
    for name in order.iter().rev() {
        if !needs.is_needed(name) {
            continue;
        }
        let Some(entry) = catalog.capability(name) else {
            continue;
        };
        for p in &entry.prerequisites {
            needs.by.entry(p.clone()).or_default().push(Consumer {
                kind: "Capability".into(),
                namespace: String::new(),
                name: name.clone(),
            });
        }
    }
    for consumers in needs.by.values_mut() {
        consumers.sort_by(|a, b| {
            (&a.kind, &a.namespace, &a.name).cmp(&(&b.kind, &b.namespace, &b.name))
        });
        consumers.dedup();
    }
    needs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pg(name: &str, mode: &str) -> Resource {
        Resource::for_test("PostgresCluster", name, name, json!({"mode": mode}))
    }

    #[test]
    fn managed_postgres_needs_cnpg_and_through_it_cert_manager() {
        let c = Catalog::built_in();
        let n = compute(&c, &[pg("a", "managed"), pg("b", "external")]);
        assert_eq!(n.consumers("cloudnative-pg").len(), 1);
        assert_eq!(n.consumers("cloudnative-pg")[0].name, "a");
        assert_eq!(n.consumers("cert-manager")[0].name, "cloudnative-pg");
        assert!(!n.is_needed("litellm-operator"));
    }

    #[test]
    fn external_adopt_and_deleting_resources_need_nothing() {
        let c = Catalog::built_in();
        let mut gone = pg("c", "managed");
        gone.deleting = true;
        let n = compute(&c, &[pg("a", "adopt"), pg("b", "external"), gone]);
        assert!(n.by.is_empty(), "{n:?}");
    }

    #[test]
    fn clickhouse_type_selects_the_operator() {
        let c = Catalog::built_in();
        let mut ch = pg("x", "managed");
        ch.kind = crate::operator::api::Kind::ClickHouseCluster;
        ch.spec = json!({"mode": "managed", "type": "altinity"});
        let n = compute(&c, &[ch]);
        assert!(n.is_needed("altinity-clickhouse-operator"));
        assert!(!n.is_needed("clickhouse-operator"));
    }
}
