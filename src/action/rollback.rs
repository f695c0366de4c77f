//! rollback: a new revision carrying an earlier revision's chart, values
//! and manifest.

use super::{now_text, record_failure, ActionError, Context};
use crate::apply::objects::parse_manifest;
use crate::release::{Release, Status};

/// `revision` 0 means the one before the current.
pub async fn rollback(ctx: &Context, name: &str, revision: i64) -> Result<Release, ActionError> {
    let history = ctx.storage.history(name).await?;
    let last = history
        .iter()
        .max_by_key(|r| r.version)
        .cloned()
        .ok_or_else(|| ActionError::Invalid("release: not found".into()))?;
    let target_version = if revision > 0 {
        revision
    } else {
        last.version - 1
    };
    if target_version < 1 {
        return Err(ActionError::Invalid("no revision to roll back to".into()));
    }
    let target = history
        .iter()
        .find(|r| r.version == target_version)
        .cloned()
        .ok_or_else(|| ActionError::Invalid(format!("release has no {target_version} version")))?;
    let current = history
        .iter()
        .filter(|r| r.info.status == Status::Deployed)
        .max_by_key(|r| r.version)
        .cloned()
        .unwrap_or_else(|| last.clone());
    let mut rel = target.clone();
    rel.version = last.version + 1;
    rel.info.status = Status::PendingRollback;
    rel.info.description = format!("Rollback to {target_version}");
    rel.info.last_deployed = now_text();
    rel.info.first_deployed = current.info.first_deployed.clone();
    rel.info.deleted.clear();
    rel.apply_method = "ssa".into();
    let mut objects = parse_manifest(&target.manifest, &ctx.namespace)?;
    ctx.cluster.resolve_scopes(&mut objects).await?;
    let mut old = parse_manifest(&current.manifest, &ctx.namespace)?;
    let _ = ctx.cluster.resolve_scopes(&mut old).await;
    ctx.storage.create(&rel).await?;
    match super::upgrade::deploy(ctx, &mut rel, &objects, &old, "rollback").await {
        Ok(()) => {
            let mut prev = current.clone();
            prev.info.status = Status::Superseded;
            ctx.storage.update(&prev).await?;
            rel.info.status = Status::Deployed;
            ctx.storage.update(&rel).await?;
            ctx.storage.prune_history(name, ctx.max_history).await?;
            Ok(rel)
        }
        Err(e) => {
            record_failure(ctx, &mut rel, &e).await;
            Err(e)
        }
    }
}
