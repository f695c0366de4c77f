//! The command line: thin wrappers over the library layers.

pub mod args;
pub mod bench;
pub mod demo;
pub mod template;

const HELP: &str = "navique-operator: Helm charts without Helm

Commands:
  demo                      render the embedded demo chart (the README's first command)
  template [NAME] CHART     render a chart like `helm template` (-f, --set*, -n, --include-crds, --no-hooks, ...)
  bench-render CHART        time load+render of a chart (JSON; see benches/compare_helm.py)
  bench-templates CHART...  parse throughput over the largest templates
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
        "template" => args::Args::parse(rest).and_then(|a| template::run(&a)),
        "demo" => demo::run(),
        "bench-render" => args::Args::parse(rest).and_then(|a| bench::render(&a)),
        "bench-templates" => args::Args::parse(rest).and_then(|a| bench::templates(&a)),
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
