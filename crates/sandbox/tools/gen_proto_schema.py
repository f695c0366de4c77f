#!/usr/bin/env python3
"""Writes crates/sandbox/src/proto_schema.rs: the protobuf field tables of every
built-in Kubernetes kind, so the embedded API server can read what typed
client-go clients (kubectl create deployment|job|service|role..., controllers)
send as `application/vnd.kubernetes.protobuf`.

Field numbers and types come from the prost code of the `k8s-pb` crate (the
kube-rs project's build of Kubernetes' .proto files), JSON names from
`k8s-openapi` (prost renames `hostIPC` to `host_ipc`; k8s-openapi keeps the
JSON name beside it). Both are read from cargo's registry:

    cargo fetch --manifest-path crates/sandbox/tools/Cargo.toml  # once
    python3 crates/sandbox/tools/gen_proto_schema.py

Only `api/` and `apimachinery/` are read: CRDs and APIServices (whose JSON
has custom forms) reach the server as JSON from every client.
"""
import glob
import os
import re
import sys

K8S_PB = "0.9.0"
K8S_OPENAPI = "0.29.0"
OPENAPI_MODULE = "v1_37"


def registry_dir(name, version):
    pattern = os.path.expanduser(f"~/.cargo/registry/src/*/{name}-{version}")
    hits = sorted(glob.glob(pattern))
    if not hits:
        sys.exit(f"{name} {version} is not in cargo's registry ({pattern}); "
                 "run: cargo fetch --manifest-path crates/sandbox/tools/Cargo.toml")
    return hits[-1]


def json_names(openapi_src):
    """rust field name -> JSON names k8s-openapi gives it, and
    (module, struct) -> its rust field names."""
    names, structs = {}, {}
    root = f"{openapi_src}/src/{OPENAPI_MODULE}"
    for path in glob.glob(f"{root}/**/*.rs", recursive=True):
        with open(path) as f:
            text = f.read()
        fields = {}
        for js, rust in re.findall(r'"([A-Za-z$-]+)" => Field::Key_([a-z0-9_]+)', text):
            names.setdefault(rust, set()).add(js)
            fields[normalized(rust)] = js
        module = tuple(os.path.relpath(os.path.dirname(path), root).split(os.sep))
        for struct in re.findall(r"^pub struct (\w+) \{", text, re.M):
            structs[(module, struct)] = fields
    return names, structs


def normalized(rust):
    """prost and k8s-openapi split acronyms differently (`non_resource_ur_ls`
    and `non_resource_urls`, `r#type` and `type_`): compare without case or
    underscores."""
    return rust.removeprefix("r#").replace("_", "").lower()


def camel(snake):
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def json_name(rust, names):
    rust = rust.removeprefix("r#")
    guess = camel(rust)
    known = names.get(rust, set())
    if guess in known or not known:
        return guess
    if len(known) == 1:
        return next(iter(known))
    sys.exit(f"field {rust}: several JSON names {sorted(known)}")


FIELD = re.compile(
    r"#\[prost\((?P<ty>[a-z0-9_]+)(?: = \"(?P<map>[^\"]+)\")?(?:, (?P<label>optional|repeated|required))?,"
    r" tag = \"(?P<tag>\d+)\"\)\]\s*pub (?P<name>[a-z0-9_#]+):",
    re.S,
)
STRUCT = re.compile(r"pub struct (\w+) \{(\}|.*?\n\})", re.S)
RESOURCE = re.compile(
    r"impl crate::Resource for (\w+) \{\s*const API_VERSION: &'static str = \"([^\"]+)\";"
    r".*?const KIND: &'static str = \"([^\"]+)\";",
    re.S,
)


def field_type(body, start):
    """The Rust type from start to the comma that ends the field."""
    depth = 0
    for i in range(start, len(body)):
        c = body[i]
        depth += {"<": 1, ">": -1}.get(c, 0)
        if (c == "," and depth == 0) or depth < 0:
            return body[start:i]
    return body[start:]


def resolve(module, rtype):
    """The module path and name of the message a field's Rust type names."""
    # The innermost type argument: Option<..>, Vec<..>, BTreeMap<String, ..>
    # and Box<..> wrap the message (a generic split over lines may lack its
    # closing bracket here).
    inner = re.sub(r"\s+", "", rtype).rsplit("<", 1)[-1].strip(">,").rsplit(",", 1)[-1]
    parts = inner.split("::")
    path = list(module)
    if parts[0] == "crate":
        path, parts = [], parts[1:]
    while parts and parts[0] == "super":
        path.pop()
        parts = parts[1:]
    return tuple(path + parts[:-1]), parts[-1]


# Messages whose JSON is not their fields (Kubernetes' custom marshallers).
SPECIAL = {
    (("apimachinery", "pkg", "apis", "meta", "v1"), "Time"): "Kind::Time",
    (("apimachinery", "pkg", "apis", "meta", "v1"), "MicroTime"): "Kind::MicroTime",
    (("apimachinery", "pkg", "apis", "meta", "v1"), "FieldsV1"): "Kind::RawJson",
    (("apimachinery", "pkg", "runtime"), "RawExtension"): "Kind::RawJson",
    (("apimachinery", "pkg", "util", "intstr"), "IntOrString"): "Kind::IntOrString",
    (("apimachinery", "pkg", "api", "resource"), "Quantity"): "Kind::Quantity",
}
SCALARS = {
    "string": "Kind::Str",
    "bytes": "Kind::Bytes",
    "int32": "Kind::Int",
    "int64": "Kind::Int",
    "bool": "Kind::Bool",
}


def main():
    pb = registry_dir("k8s-pb", K8S_PB)
    names, structs = json_names(registry_dir("k8s-openapi", K8S_OPENAPI))
    messages = {}  # (module, name) -> [(tag, json, type, label, map, module, rtype)]
    kinds = []
    for top in ("api", "apimachinery"):
        for path in sorted(glob.glob(f"{pb}/src/{top}/**/mod.rs", recursive=True)):
            module = tuple(os.path.relpath(os.path.dirname(path), f"{pb}/src").split(os.sep))
            with open(path) as f:
                text = f.read()
            for name, body in STRUCT.findall(text):
                fields = []
                for m in FIELD.finditer(body):
                    field = m.groupdict()
                    field["rtype"] = field_type(body, m.end())
                    fields.append(field)
                messages[(module, name)] = fields
            for name, api_version, kind in RESOURCE.findall(text):
                kinds.append((api_version, kind, (module, name)))
    # Bodies of subresources and of delete, which have no Resource impl.
    meta = ("apimachinery", "pkg", "apis", "meta", "v1")
    kinds += [
        ("meta.k8s.io/v1", "DeleteOptions", (meta, "DeleteOptions")),
        ("autoscaling/v1", "Scale", (("api", "autoscaling", "v1"), "Scale")),
        ("policy/v1", "Eviction", (("api", "policy", "v1"), "Eviction")),
        ("authentication.k8s.io/v1", "TokenRequest", (("api", "authentication", "v1"), "TokenRequest")),
    ]
    order = sorted(k for k in messages if k not in SPECIAL)
    index = {k: i for i, k in enumerate(order)}

    inline = set()

    def kind_of(module, owner, field):
        ty = field["ty"]
        if ty in ("btree_map", "map"):
            value = field["map"].split(",")[1].strip()
            if value in SCALARS:
                return f"Kind::Map(&{SCALARS[value]})"
            target = resolve(module, field["rtype"])
            if target in SPECIAL:
                return f"Kind::Map(&{SPECIAL[target]})"
            return f"Kind::Map(&Kind::Msg({index[target]}))"
        if ty == "message":
            target = resolve(module, field["rtype"])
            if target in SPECIAL:
                return SPECIAL[target]
            # Go structs embedded with `json:",inline"` (IngressRuleValue,
            # VolumeSource, ProbeHandler...) are a field in protobuf and
            # flattened in JSON: k8s-openapi's struct has their fields, not them.
            known = structs.get((module, owner))
            # (an inline struct may itself inline one: RuleWithOperations)
            inner = [normalized(f["name"]) for f in messages.get(target, []) if f["ty"] != "message"]
            inner = inner or [normalized(f["name"]) for f in messages.get(target, [])]
            if (known is not None and normalized(field["name"]) not in known
                    and inner and all(n in known for n in inner)):
                inline.add(f"{'.'.join(target[0])}.{target[1]}")
                return f"Kind::Inline({index[target]})"
            return f"Kind::Msg({index[target]})"
        return SCALARS[ty]

    out = [
        "// @generated by crates/sandbox/tools/gen_proto_schema.py from k8s-pb "
        f"{K8S_PB} (field numbers) and k8s-openapi {K8S_OPENAPI} (JSON names). Do not edit.",
        "",
        "use super::{Field, Kind};",
        "",
        "const fn f(num: u32, name: &'static str, kind: Kind) -> Field {",
        "    Field { num, name, kind, repeated: false }",
        "}",
        "",
        "const fn r(num: u32, name: &'static str, kind: Kind) -> Field {",
        "    Field { num, name, kind, repeated: true }",
        "}",
        "",
        "pub(super) static MESSAGES: &[&[Field]] = &[",
    ]
    for key in order:
        module, name = key
        out.append(f"    // {index[key]}: {'.'.join(module)}.{name}")
        out.append("    &[")
        for field in messages[key]:
            ctor = "r" if field["label"] == "repeated" else "f"
            known = structs.get(key, {})
            js = known.get(normalized(field["name"])) or json_name(field["name"], names)
            out.append(f"        {ctor}({field['tag']}, \"{js}\", {kind_of(module, name, field)}),")
        out.append("    ],")
    out.append("];")
    out.append("")
    out.append("/// (apiVersion, kind, message) of every kind a client can send.")
    out.append("pub(super) static KINDS: &[(&str, &str, u16)] = &[")
    for api_version, kind, key in sorted(set(kinds)):
        out.append(f"    (\"{api_version}\", \"{kind}\", {index[key]}),")
    out.append("];")
    target = os.path.join(os.path.dirname(__file__), "..", "src", "proto_schema.rs")
    with open(target, "w") as f:
        f.write("\n".join(out) + "\n")
    print("inline:", ", ".join(sorted(inline)))
    print(f"{len(order)} messages, {len(set(kinds))} kinds -> {os.path.normpath(target)}")


if __name__ == "__main__":
    main()
