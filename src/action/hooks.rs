//! Chart hooks, run as Helm v4 runs them (`pkg/action/hooks.go`,
//! `execHookWithDelayedShutdown`): the hooks of one event in weight order,
//! each created and, for Jobs and Pods, waited for; `hook-succeeded`
//! deletions only once every hook of the event has succeeded, in reverse
//! order, because a later hook may still need an earlier one (cert-manager's
//! startupapicheck Job runs as the ServiceAccount its weight -5 hooks made).

use super::{now_text, ActionError, Context};
use crate::apply::objects::{parse_manifest, Object};
use crate::release::{Hook, HookExecution, Release};
use std::time::Duration;

const BEFORE_HOOK_CREATION: &str = "before-hook-creation";
const HOOK_SUCCEEDED: &str = "hook-succeeded";
const HOOK_FAILED: &str = "hook-failed";

/// The release's record of the chart's hooks.
pub fn records(hooks: &[crate::chart::manifest::Hook]) -> Vec<Hook> {
    hooks
        .iter()
        .map(|h| Hook {
            name: h.name.clone(),
            kind: h.kind.clone(),
            path: h.path.clone(),
            manifest: h.manifest.clone(),
            events: h.events.clone(),
            last_run: HookExecution::default(),
            weight: h.weight,
            delete_policies: h.delete_policies.clone(),
            output_log_policies: h.output_log_policies.clone(),
        })
        .collect()
}

/// The hooks of `event` in the order Helm runs them: by weight, then name;
/// the records are already in Helm's kind order, which the stable sort keeps
/// for hooks of equal weight and name.
pub fn execution_order(hooks: &[Hook], event: &str) -> Vec<usize> {
    let mut order: Vec<usize> = (0..hooks.len())
        .filter(|i| hooks[*i].events.iter().any(|e| e == event))
        .collect();
    order.sort_by(|a, b| {
        (hooks[*a].weight, &hooks[*a].name).cmp(&(hooks[*b].weight, &hooks[*b].name))
    });
    order
}

fn has_policy(h: &Hook, policy: &str) -> bool {
    h.delete_policies.iter().any(|p| p == policy)
}

/// Runs the hooks of `event` (e.g. "pre-install") of `rel`, recording each
/// run in the release as Helm does: the record is written when a hook
/// starts, and the phases it ends with are written by the caller with the
/// release's outcome.
pub async fn run(
    ctx: &Context,
    rel: &mut Release,
    event: &str,
    timeout: Duration,
) -> Result<(), ActionError> {
    if ctx.no_hooks {
        return Ok(());
    }
    let order = execution_order(&rel.hooks, event);
    // Each hook's objects, built once for its creation and its deletions.
    let mut built: Vec<Vec<Object>> = Vec::with_capacity(order.len());
    for (done, &i) in order.iter().enumerate() {
        // Helm writes the default into the release record too.
        if rel.hooks[i].delete_policies.is_empty() {
            rel.hooks[i].delete_policies = vec![BEFORE_HOOK_CREATION.to_string()];
        }
        built.push(hook_objects(ctx, &rel.hooks[i]).await?);
        let objects = &built[done];
        delete_by_policy(ctx, &rel.hooks[i], objects, BEFORE_HOOK_CREATION, timeout).await?;
        rel.hooks[i].last_run = HookExecution {
            started_at: now_text(),
            completed_at: String::new(),
            phase: "Running".into(),
        };
        // A failed write of the record is not the hook's failure (Helm logs it).
        let _ = ctx.storage.update(rel).await;
        rel.hooks[i].last_run.phase = "Unknown".into();
        if let Err(source) = ctx
            .cluster
            .apply_all(objects, &ctx.apply_options(&rel.name))
            .await
        {
            rel.hooks[i].last_run.completed_at = now_text();
            rel.hooks[i].last_run.phase = "Failed".into();
            return Err(ActionError::HookCreate {
                event: event.to_string(),
                path: rel.hooks[i].path.clone(),
                source: Box::new(source),
            });
        }
        let waited = if matches!(rel.hooks[i].kind.as_str(), "Job" | "Pod") {
            ctx.cluster.wait_ready(objects, timeout).await
        } else {
            Ok(())
        };
        rel.hooks[i].last_run.completed_at = now_text();
        if let Err(e) = waited {
            rel.hooks[i].last_run.phase = "Failed".into();
            // Helm only logs what goes wrong while cleaning up after a failure.
            let _ = delete_by_policy(ctx, &rel.hooks[i], objects, HOOK_FAILED, timeout).await;
            for (&earlier, objects) in order[..done].iter().zip(&built) {
                delete_by_policy(ctx, &rel.hooks[earlier], objects, HOOK_SUCCEEDED, timeout)
                    .await?;
            }
            return Err(e.into());
        }
        rel.hooks[i].last_run.phase = "Succeeded".into();
    }
    for (&i, objects) in order.iter().zip(&built).rev() {
        delete_by_policy(ctx, &rel.hooks[i], objects, HOOK_SUCCEEDED, timeout).await?;
    }
    Ok(())
}

async fn hook_objects(ctx: &Context, hook: &Hook) -> Result<Vec<Object>, ActionError> {
    let mut objects = parse_manifest(&hook.manifest, &ctx.namespace)?;
    ctx.cluster.resolve_scopes(&mut objects).await?;
    Ok(objects)
}

/// Deletes the hook's `objects` and waits until they are gone, when its
/// policies name `policy`. CustomResourceDefinitions are never deleted: the
/// cascade would take every object of the type with them.
async fn delete_by_policy(
    ctx: &Context,
    hook: &Hook,
    objects: &[Object],
    policy: &str,
    timeout: Duration,
) -> Result<(), ActionError> {
    if hook.kind == "CustomResourceDefinition" || !has_policy(hook, policy) {
        return Ok(());
    }
    ctx.cluster.delete_hook_objects(objects).await?;
    ctx.cluster.wait_deleted(objects, timeout).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(name: &str, kind: &str, weight: i64, events: &[&str]) -> Hook {
        Hook {
            name: name.into(),
            kind: kind.into(),
            weight,
            events: events.iter().map(|e| e.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn order_is_weight_then_name_keeping_kind_order_for_equals() {
        // Records arrive in Helm's kind order (ServiceAccount before Role ...).
        let hooks = vec![
            hook("startupapicheck", "ServiceAccount", -5, &["post-install"]),
            hook("startupapicheck:create-cert", "Role", -5, &["post-install"]),
            hook(
                "startupapicheck:create-cert",
                "RoleBinding",
                -5,
                &["post-install"],
            ),
            hook("startupapicheck", "Job", 1, &["post-install"]),
            hook("a-upgrade-only", "Job", -10, &["pre-upgrade"]),
            hook("aaa", "ConfigMap", 1, &["post-install", "post-upgrade"]),
        ];
        let names: Vec<(&str, &str)> = execution_order(&hooks, "post-install")
            .into_iter()
            .map(|i| (hooks[i].kind.as_str(), hooks[i].name.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("ServiceAccount", "startupapicheck"),
                ("Role", "startupapicheck:create-cert"),
                ("RoleBinding", "startupapicheck:create-cert"),
                ("ConfigMap", "aaa"),
                ("Job", "startupapicheck"),
            ]
        );
        assert_eq!(execution_order(&hooks, "pre-upgrade"), vec![4]);
        assert!(execution_order(&hooks, "pre-delete").is_empty());
    }
}
