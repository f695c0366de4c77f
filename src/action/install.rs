//! install: render, record the release as pending, create CRDs, run
//! pre-install hooks, apply, wait, run post-install hooks, mark deployed.

use super::render::{capabilities, render, Pending, Request};
use super::{record_failure, run_hooks, validate_name, ActionError, Context};
use crate::apply::objects::Object;
use crate::chart::Chart;
use crate::release::{Release, Status};
use crate::value::Map;
use kube::api::PostParams;

/// CRDs from `crds/` are created when absent and, as Helm does, never
/// updated, unless `ctx.upgrade_crds` (the operator's releases): then they are
/// server-side applied. Then discovery is refreshed so custom resources can
/// be addressed.
pub async fn install_crds(ctx: &Context, crds: &[Object]) -> Result<(), ActionError> {
    if crds.is_empty() {
        return Ok(());
    }
    for crd in crds {
        let api = ctx.cluster.api_for(crd).await?;
        if crate::apply::retry_transient(|| api.get_opt(&crd.name))
            .await
            .map_err(|e| kube_err(crd, e))?
            .is_some()
        {
            if ctx.upgrade_crds {
                let mut pp = kube::api::PatchParams::apply(&ctx.field_manager);
                pp.force = true;
                let patch = kube::api::Patch::Apply(&crd.body);
                crate::apply::retry_transient(|| api.patch(&crd.name, &pp, &patch))
                    .await
                    .map_err(|e| kube_err(crd, e))?;
            }
            continue;
        }
        let obj: kube::api::DynamicObject = serde_json::from_value(crd.body.clone())
            .map_err(|e| ActionError::Invalid(e.to_string()))?;
        match api
            .create(
                &PostParams {
                    field_manager: Some(ctx.field_manager.clone()),
                    ..Default::default()
                },
                &obj,
            )
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(kube_err(crd, e)),
        }
    }
    ctx.cluster.wait_ready(crds, ctx.timeout).await?;
    ctx.cluster.refresh();
    Ok(())
}

fn kube_err(o: &Object, e: kube::Error) -> ActionError {
    ActionError::Apply(crate::apply::ApplyError::Kube {
        object: o.describe(),
        error: e,
    })
}

pub async fn install(
    ctx: &Context,
    name: &str,
    chart: &Chart,
    values: &Map,
) -> Result<Release, ActionError> {
    crate::chart::check_dependencies(chart)
        .map_err(|e| ActionError::Dependencies(crate::chart::DependencyError(e)))?;
    validate_name(name)?;
    let history = ctx.storage.history(name).await?;
    if history
        .iter()
        .any(|r| !matches!(r.info.status, Status::Uninstalled | Status::Failed))
    {
        return Err(ActionError::Invalid(
            "cannot re-use a name that is still in use".into(),
        ));
    }
    let revision = history.iter().map(|r| r.version).max().unwrap_or(0) + 1;
    let caps = capabilities(&ctx.cluster.client).await?;
    let mut rendered = render(Request {
        chart,
        values,
        name,
        namespace: &ctx.namespace,
        revision,
        is_upgrade: false,
        capabilities: caps,
    })?;
    let mut rel = rendered.pending_release(Pending {
        name,
        namespace: &ctx.namespace,
        revision,
        values,
        status: Status::PendingInstall,
        description: "Initial install underway",
        first_deployed: None,
        labels: ctx.labels.clone(),
    });
    // Too large for a Secret: refused here, before anything is applied.
    let record = crate::release::storage::secret_for(&rel, true, &ctx.storage.annotations)?;
    install_crds(ctx, &rendered.crds).await?;
    let mut objects = rendered.objects;
    ctx.cluster.resolve_scopes(&mut objects).await?;
    ctx.cluster
        .check_ownership(&objects, &ctx.apply_options(name), "install")
        .await?;
    ctx.storage.create_secret(&record).await?;
    drop(record);
    let outcome = deploy(ctx, &mut rel, &objects).await;
    match outcome {
        Ok(()) => {
            rel.info.status = Status::Deployed;
            rel.info.description = "Install complete".into();
            ctx.storage.update(&rel).await?;
            Ok(rel)
        }
        Err(e) => {
            record_failure(ctx, &mut rel, &e).await;
            if ctx.atomic {
                let _ = super::uninstall::uninstall(ctx, name, false).await;
                return Err(ActionError::Invalid(format!("release {name} failed, and has been uninstalled due to rollback-on-failure being set: {e}")));
            }
            Err(e)
        }
    }
}

async fn deploy(ctx: &Context, rel: &mut Release, objects: &[Object]) -> Result<(), ActionError> {
    let timeout = ctx.timeout;
    let name = rel.name.clone();
    run_hooks(ctx, rel, "pre-install", timeout).await?;
    ctx.cluster
        .apply_all(objects, &ctx.apply_options(&name))
        .await?;
    if ctx.wait {
        ctx.cluster
            .wait_ready(&super::to_wait_for(ctx, objects), timeout)
            .await?;
    }
    run_hooks(ctx, rel, "post-install", timeout).await?;
    Ok(())
}
