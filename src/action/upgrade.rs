//! upgrade: render the next revision, apply it, delete what the new
//! manifest dropped, supersede the previous revision.

use super::render::{capabilities, render, Pending, Request};
use super::{record_failure, run_hooks, ActionError, Context};
use crate::apply::objects::{parse_manifest, removed, Object};
use crate::chart::Chart;
use crate::release::{Release, Status};
use crate::value::Map;

pub async fn upgrade(
    ctx: &Context,
    name: &str,
    chart: &Chart,
    values: &Map,
    install: bool,
) -> Result<Release, ActionError> {
    // Helm's Upgrade.prepareUpgrade words it differently from install.
    if crate::chart::validate_release_name(name).is_err() {
        return Err(ActionError::Invalid(format!(
            "release name is invalid: {name}"
        )));
    }
    crate::chart::check_dependencies(chart)
        .map_err(|e| ActionError::Dependencies(crate::chart::DependencyError(e)))?;
    let mut history = ctx.storage.history(name).await?;
    if history.is_empty() || history.iter().all(|r| r.info.status == Status::Uninstalled) {
        if install {
            return super::install::install(ctx, name, chart, values).await;
        }
        return Err(ActionError::Invalid(format!(
            "{name:?} has no deployed releases"
        )));
    }
    // An interrupted operation left a pending revision: it failed.
    for r in history.iter_mut().filter(|r| r.info.status.is_pending()) {
        let err = ActionError::Invalid("the operation was interrupted".into());
        record_failure(ctx, r, &err).await;
    }
    let last_version = history.iter().map(|r| r.version).max().unwrap_or(0);
    let current = history
        .iter()
        .filter(|r| r.info.status == Status::Deployed)
        .max_by_key(|r| r.version)
        .or_else(|| history.iter().max_by_key(|r| r.version))
        .cloned()
        .expect("history is not empty");
    let caps = capabilities(&ctx.cluster.client).await?;
    let revision = last_version + 1;
    let mut rendered = render(Request {
        chart,
        values,
        name,
        namespace: &ctx.namespace,
        revision,
        is_upgrade: true,
        capabilities: caps,
    })?;
    let mut rel = rendered.pending_release(Pending {
        name,
        namespace: &ctx.namespace,
        revision,
        values,
        status: Status::PendingUpgrade,
        description: "Preparing upgrade",
        first_deployed: Some(current.info.first_deployed.clone()),
        labels: if ctx.labels.is_empty() {
            current.labels.clone()
        } else {
            ctx.labels.clone()
        },
    });
    let record = crate::release::storage::secret_for(&rel, true, &ctx.storage.annotations)?;
    super::install::install_crds(ctx, &rendered.crds).await?;
    let mut objects = rendered.objects;
    ctx.cluster.resolve_scopes(&mut objects).await?;
    let mut old = parse_manifest(&current.manifest, &ctx.namespace)?;
    let _ = ctx.cluster.resolve_scopes(&mut old).await;
    let fresh: Vec<Object> = objects
        .iter()
        .filter(|o| !old.iter().any(|x| x.key() == o.key()))
        .cloned()
        .collect();
    ctx.cluster
        .check_ownership(&fresh, &ctx.apply_options(name), "update")
        .await?;
    ctx.storage.create_secret(&record).await?;
    drop(record);
    match deploy(ctx, &mut rel, &objects, &old, "upgrade").await {
        Ok(()) => {
            let mut prev = current.clone();
            prev.info.status = Status::Superseded;
            ctx.storage.update(&prev).await?;
            rel.info.status = Status::Deployed;
            rel.info.description = "Upgrade complete".into();
            ctx.storage.update(&rel).await?;
            ctx.storage.prune_history(name, ctx.max_history).await?;
            Ok(rel)
        }
        Err(e) => {
            record_failure(ctx, &mut rel, &e).await;
            if ctx.atomic && current.info.status == Status::Deployed {
                let rolled = super::rollback::rollback(ctx, name, current.version).await;
                return Err(ActionError::Invalid(match rolled {
                    Ok(_) => format!("release {name} failed, and has been rolled back due to rollback-on-failure being set: {e}"),
                    Err(re) => format!("an error occurred while rolling back the release. original upgrade error: {e}: {re}"),
                }));
            }
            Err(e)
        }
    }
}

/// Applies `objects`, removes what `old` had and they do not, with hooks of
/// `event` ("upgrade" or "rollback") around it.
pub async fn deploy(
    ctx: &Context,
    rel: &mut Release,
    objects: &[Object],
    old: &[Object],
    event: &str,
) -> Result<(), ActionError> {
    let name = rel.name.clone();
    let timeout = ctx.timeout;
    run_hooks(ctx, rel, &format!("pre-{event}"), timeout).await?;
    ctx.cluster
        .apply_all(objects, &ctx.apply_options(&name))
        .await?;
    let mut gone: Vec<Object> = removed(old, objects).into_iter().cloned().collect();
    crate::chart::manifest::sort_by_kind(
        &mut gone,
        |o| o.kind.as_str(),
        crate::chart::manifest::UNINSTALL_ORDER,
    );
    ctx.cluster.delete_all(&gone).await?;
    if ctx.wait {
        ctx.cluster
            .wait_ready(&super::to_wait_for(ctx, objects), timeout)
            .await?;
    }
    run_hooks(ctx, rel, &format!("post-{event}"), timeout).await?;
    Ok(())
}
