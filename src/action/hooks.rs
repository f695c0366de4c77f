//! Chart hooks: `helm.sh/hook` events run in weight order; Jobs and Pods are
//! waited for; `hook-delete-policy` decides what is removed when.

use super::{now_text, ActionError, Context};
use crate::apply::objects::parse_manifest;
use crate::release::{Hook, HookExecution};
use std::time::Duration;

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

fn has_policy(h: &Hook, p: &str) -> bool {
    h.delete_policies.iter().any(|x| x == p)
}

/// Runs the hooks of `event` (e.g. "pre-install"), recording each run.
pub async fn run(
    ctx: &Context,
    release: &str,
    hooks: &mut [Hook],
    event: &str,
    timeout: Duration,
) -> Result<(), ActionError> {
    if ctx.no_hooks {
        return Ok(());
    }
    let mut order: Vec<usize> = (0..hooks.len())
        .filter(|i| hooks[*i].events.iter().any(|e| e == event))
        .collect();
    order.sort_by(|a, b| {
        (hooks[*a].weight, &hooks[*a].name).cmp(&(hooks[*b].weight, &hooks[*b].name))
    });
    let opts = ctx.apply_options(release);
    for i in order {
        let mut objects =
            parse_manifest(&hooks[i].manifest, &ctx.namespace).map_err(ActionError::Invalid)?;
        ctx.cluster.resolve_scopes(&mut objects).await?;
        // before-hook-creation is the default policy.
        if hooks[i].delete_policies.is_empty() || has_policy(&hooks[i], "before-hook-creation") {
            ctx.cluster.delete_all(&objects).await?;
            ctx.cluster.wait_deleted(&objects, timeout).await?;
        }
        hooks[i].last_run = HookExecution {
            started_at: now_text(),
            completed_at: String::new(),
            phase: "Running".into(),
        };
        ctx.cluster.apply_all(&objects, &opts).await?;
        let waited = if matches!(hooks[i].kind.as_str(), "Job" | "Pod") {
            ctx.cluster.wait_ready(&objects, timeout).await
        } else {
            Ok(())
        };
        hooks[i].last_run.completed_at = now_text();
        match waited {
            Ok(()) => {
                hooks[i].last_run.phase = "Succeeded".into();
                if has_policy(&hooks[i], "hook-succeeded") {
                    ctx.cluster.delete_all(&objects).await?;
                }
            }
            Err(e) => {
                hooks[i].last_run.phase = "Failed".into();
                if has_policy(&hooks[i], "hook-failed") {
                    let _ = ctx.cluster.delete_all(&objects).await;
                }
                return Err(ActionError::Invalid(format!("{event} hooks failed: {e}")));
            }
        }
    }
    Ok(())
}
