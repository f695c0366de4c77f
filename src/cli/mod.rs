//! The command line: thin wrappers over the library layers.

pub mod args;
pub mod bench;
pub mod charts;
pub mod demo;
pub mod demo_platform;
pub mod demo_releases;
pub mod operator;
pub mod release;
pub mod template;

const HELP: &str = "navique-operator: the Navique AI Core Operator, and Helm charts without Helm

Commands:
  demo [--platform] [--keep] the operator's walk-through on an embedded API server (the README's first command);
                            --platform: every kind at once, then all deleted
  demo-releases             render the embedded demo chart, then install/upgrade/roll back/uninstall it
  template [NAME] CHART     render a chart like `helm template` (-f, --set*, -n, --include-crds, --no-hooks, ...)
  bench-render CHART        time load+render of a chart (JSON; see benches/compare_helm.py)
  bench-templates CHART...  parse throughput over the largest templates
  install NAME CHART        install a release (-n, -f, --set*, --wait, --timeout, --atomic, --create-namespace, --labels, --force-conflicts, --field-manager)
  upgrade NAME CHART        upgrade a release (--install, --max-history, and install's flags)
  rollback NAME [REVISION]  roll a release back
  uninstall NAME            uninstall a release (--keep-history, --wait)
  list                      list releases (-A, -a, -o table|json|yaml)
  history NAME              revisions of a release (-o table|json|yaml)
  status NAME               a release's status (--revision, -o)
  get values|manifest|notes|hooks NAME   parts of a release (--revision, --all, -o)
  (release commands take --kubeconfig and --kube-context/--context)
  run [flags]               run the operator (--kubeconfig, --namespace, --charts-dir (repeatable), --metrics-bind,
                            --health-bind, --leader-elect=true|false, --log-format json, --catalog FILE,
                            --resync-seconds N: how often a settled object is looked at again, 3600;
                            --api-timeout-seconds N: how long an API request may wait for its answer, 30)
  plan [flags]              what the operator would do now, read-only (--kubeconfig, --charts-dir, -o json)
  charts list|pull|verify|lock|push|images   the bundled charts' pins and OCI registries:
                            list [-o json]; pull [--dest DIR] [--by-tag]; verify DIR; lock [--only-charts] (re-resolve
                            the pins' digests, rewriting --pins); push TARBALL... oci://HOST/PATH;
                            images [--charts-dir DIR] [--check] (every image the operator can deploy); all take
                            --pins FILE, --registry-mirror SRC=DST (repeatable), --plain-http, --ca-file PEM, --registry-config FILE
  manifests [--check] [--rbac] [--operator-image REF] [--root DIR]
                            write the install paths from one source: config/ (kustomize), the chart's generated
                            templates, bundle/ (OLM) and bundle.Dockerfile; --check fails when any is stale
                            (renders the bundled charts to derive RBAC: --charts-dir DIR, default ../shared/charts);
                            --rbac prints the derived ClusterRole only
  crds [--out DIR]          write the operator's CRDs (default: crds/); --check fails when DIR is stale
  version                   print the version
";

/// Run the CLI; returns the process exit code.
pub fn main(argv: Vec<String>) -> i32 {
    let Some(cmd) = argv.first() else {
        eprint!("{HELP}");
        return 2;
    };
    let rest = &argv[1..];
    let result = match cmd.as_str() {
        "template" => args::Args::parse_with(rest, &["-a"]).and_then(|a| template::run(&a)),
        "demo" => args::Args::parse(rest).and_then(|a| demo::run(&a)),
        "demo-releases" => demo_releases::run(),
        "install" => args::Args::parse(rest).and_then(|a| release::install(&a)),
        "upgrade" => args::Args::parse(rest).and_then(|a| release::upgrade(&a)),
        "rollback" => args::Args::parse(rest).and_then(|a| release::rollback(&a)),
        "uninstall" | "delete" => args::Args::parse(rest).and_then(|a| release::uninstall(&a)),
        "list" | "ls" => args::Args::parse(rest).and_then(|a| release::list(&a)),
        "history" => args::Args::parse(rest).and_then(|a| release::history(&a)),
        "status" => args::Args::parse(rest).and_then(|a| release::status(&a)),
        "get" => args::Args::parse(rest).and_then(|a| release::get(&a)),
        "bench-render" => args::Args::parse(rest).and_then(|a| bench::render(&a)),
        "bench-templates" => args::Args::parse(rest).and_then(|a| bench::templates(&a)),
        "crds" => crds(rest),
        "charts" => charts::run(rest),
        "manifests" => args::Args::parse(rest).and_then(|a| manifests(&a)),
        "run" => args::Args::parse(rest).and_then(|a| operator::run(&a)),
        "plan" => args::Args::parse(rest).and_then(|a| operator::plan(&a)),
        "version" => {
            println!("navique-operator {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        "help" | "--help" | "-h" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}\n\n{HELP}")),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

/// `navique-operator manifests [--check] [--charts-dir DIR]... [--root DIR]`.
fn manifests(a: &args::Args) -> Result<(), String> {
    let dirs = demo::charts_dirs(a);
    let catalog = crate::operator::model::catalog::Catalog::built_in();
    let store = crate::operator::model::catalog::ChartStore::with_dirs(dirs);
    let image = a
        .one(&["--operator-image"])
        .unwrap_or_else(|| crate::packaging::shipping::DEFAULT_IMAGE.to_string());
    let files = crate::packaging::shipping::files_for(&catalog, &store, &image)
        .map_err(|e| e.to_string())?;
    if a.flag("--rbac") {
        let role = files
            .iter()
            .find(|(p, _)| p.ends_with("config/rbac/role.yaml"))
            .map(|(_, text)| text.clone())
            .unwrap_or_default();
        print!("{role}");
        return Ok(());
    }
    let root = std::path::PathBuf::from(a.one(&["--root"]).unwrap_or_else(|| ".".into()));
    if a.flag("--check") {
        let stale = crate::packaging::shipping::stale(&root, &files);
        if stale.is_empty() {
            println!("{} generated files are current", files.len());
            return Ok(());
        }
        return Err(format!(
            "stale (run `navique-operator manifests`):\n{}",
            stale
                .iter()
                .map(|p| format!("  {}", p.display()))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    for p in crate::packaging::shipping::write(&root, &files).map_err(|e| e.to_string())? {
        println!("{}", p.display());
    }
    Ok(())
}

/// `navique-operator crds [--out DIR] [--check]`.
fn crds(rest: &[String]) -> Result<(), String> {
    let mut dir = std::path::PathBuf::from("crds");
    let mut check = false;
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--out" => dir = it.next().ok_or("--out needs a directory")?.into(),
            "--check" => check = true,
            other => return Err(format!("crds: unknown flag {other:?}")),
        }
    }
    if check {
        let stale = crate::packaging::crds::stale(&dir);
        if stale.is_empty() {
            return Ok(());
        }
        return Err(format!(
            "{} is stale ({}); run `navique-operator crds --out {}`",
            dir.display(),
            stale.join(", "),
            dir.display()
        ));
    }
    for name in
        crate::packaging::crds::write(&dir).map_err(|e| format!("{}: {e}", dir.display()))?
    {
        println!("{}", dir.join(name).display());
    }
    Ok(())
}
