//! A small flag parser with Helm's conventions: `--flag value`,
//! `--flag=value`, short `-f value`, repeatable flags, boolean switches.

pub struct Args {
    pub positional: Vec<String>,
    pub pairs: Vec<(String, String)>,
    pub switches: Vec<String>,
}

/// Flags that take no value.
const SWITCHES: &[&str] = &[
    "--include-crds",
    "--platform",
    "--skip-crds",
    "--no-hooks",
    "--is-upgrade",
    "--skip-tests",
    "--skip-schema-validation",
    "--validate",
    "--debug",
    "--generate-name",
    "-g",
    "--wait",
    "--wait-for-jobs",
    "--atomic",
    "--rollback-on-failure",
    "--create-namespace",
    "--force-conflicts",
    "--install",
    "--keep-history",
    "--all-namespaces",
    "-A",
    "--all",
    "-a",
    "--help",
    "-h",
    "--keep",
    "--plain-http",
    "--by-tag",
    "--check",
    "--only-charts",
    "--rbac",
];

impl Args {
    pub fn parse(raw: &[String]) -> Result<Args, String> {
        Args::parse_with(raw, &[])
    }

    /// `parse` for a command where some short switches of other commands
    /// take a value (`template -a` is `--api-versions`, `list -a` is `--all`).
    pub fn parse_with(raw: &[String], valued: &[&str]) -> Result<Args, String> {
        let mut a = Args {
            positional: Vec::new(),
            pairs: Vec::new(),
            switches: Vec::new(),
        };
        let mut i = 0;
        while i < raw.len() {
            let s = &raw[i];
            if s == "--" {
                a.positional.extend(raw[i + 1..].iter().cloned());
                break;
            }
            if s.starts_with('-') && s.len() > 1 {
                if let Some((k, v)) = s.split_once('=') {
                    if SWITCHES.contains(&k) && !valued.contains(&k) {
                        if v != "false" {
                            a.switches.push(k.to_string());
                        }
                    } else {
                        a.pairs.push((k.to_string(), v.to_string()));
                    }
                } else if SWITCHES.contains(&s.as_str()) && !valued.contains(&s.as_str()) {
                    a.switches.push(s.clone());
                } else {
                    let v = raw
                        .get(i + 1)
                        .ok_or_else(|| format!("flag needs an argument: {s}"))?;
                    a.pairs.push((s.clone(), v.clone()));
                    i += 1;
                }
            } else {
                a.positional.push(s.clone());
            }
            i += 1;
        }
        Ok(a)
    }

    pub fn all(&self, names: &[&str]) -> Vec<String> {
        self.pairs
            .iter()
            .filter(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, v)| v.clone())
            .collect()
    }

    pub fn one(&self, names: &[&str]) -> Option<String> {
        self.all(names).pop()
    }

    pub fn flag(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s == name)
    }
}
