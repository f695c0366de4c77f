//! uninstall: delete hooks around deleting the release's objects in
//! uninstall order (keeping `helm.sh/resource-policy: keep`), then drop the
//! release history or keep it as uninstalled.

use super::{now_text, run_hooks, ActionError, Context};
use crate::apply::objects::parse_manifest;
use crate::release::{Release, Status};

pub struct Uninstalled {
    pub release: Release,
    /// Objects left in place by their resource policy.
    pub kept: Vec<String>,
}

pub async fn uninstall(
    ctx: &Context,
    name: &str,
    keep_history: bool,
) -> Result<Uninstalled, ActionError> {
    let history = ctx.storage.history(name).await?;
    let Some(mut rel) = history.iter().max_by_key(|r| r.version).cloned() else {
        return Err(ActionError::Invalid(format!(
            "uninstall: Release not loaded: {name}: release: not found"
        )));
    };
    if rel.info.status == Status::Uninstalled {
        if !keep_history {
            for r in &history {
                ctx.storage.delete(&r.name, r.version).await?;
            }
        }
        return Ok(Uninstalled {
            release: rel,
            kept: Vec::new(),
        });
    }
    rel.info.status = Status::Uninstalling;
    rel.info.deleted = now_text();
    ctx.storage.update(&rel).await?;
    let timeout = ctx.timeout;
    run_hooks(ctx, &mut rel, "pre-delete", timeout).await?;
    let mut objects = parse_manifest(&rel.manifest, &ctx.namespace)?;
    let mut known = Vec::new();
    for o in objects.drain(..) {
        // Kinds the cluster no longer serves have nothing left to delete.
        if ctx.cluster.resource(&o.api_version, &o.kind).await.is_ok() {
            known.push(o);
        }
    }
    ctx.cluster.resolve_scopes(&mut known).await?;
    crate::chart::manifest::sort_by_kind(
        &mut known,
        |o| o.kind.as_str(),
        crate::chart::manifest::UNINSTALL_ORDER,
    );
    let kept = ctx.cluster.delete_all(&known).await?;
    if ctx.wait {
        ctx.cluster.wait_deleted(&known, timeout).await?;
    }
    run_hooks(ctx, &mut rel, "post-delete", timeout).await?;
    rel.info.status = Status::Uninstalled;
    rel.info.description = "Uninstallation complete".into();
    if keep_history {
        ctx.storage.update(&rel).await?;
    } else {
        for r in &history {
            ctx.storage.delete(&r.name, r.version).await?;
        }
    }
    Ok(Uninstalled { release: rel, kept })
}
