"""Template conformance cases: inputs only. Expected outputs come from real Helm
through regenerate.py and live in expected/<area>.json.

Each case renders templates/t.yaml of a chart named `mychart` (release `rel`,
namespace `ns`) with the given values.yaml text, optional user values (given to
Helm as JSON, so numbers are float64), optional extra files and optional extra
binary files (bytes, stored base64 in expected/ under "binfiles").
"""
import base64

CASES = []


def c(area, name, template, values="", user=None, files=None, tz=None, binfiles=None, tzif=None):
    CASES.append({"area": area, "name": name, "template": template, "values": values, "user": user, "files": files,
                  "tz": tz,
                  "tzif": base64.b64encode(tzif).decode() if tzif is not None else None,
                  "binfiles": {k: base64.b64encode(v).decode() for k, v in binfiles.items()} if binfiles else None})


def many(area, prefix, templates, values=""):
    for i, t in enumerate(templates):
        c(area, f"{prefix}-{i:03d}", t, values)


# ---------------------------------------------------------------- actions
A = "actions"
many(A, "trim", [
    "x {{- 1 -}} y  {{ 2 }}   z",
    "a\n{{- /* c */}}\nb\n  {{- \"x\" }}\n{{ \"y\" -}}\n\n  c",
    "{{-3}}",
    "a  {{- 3 }}",
    "a\t\n {{- 3 -}} \n\tb",
    "{{ 1 -}}\n\n\n{{- 2 }}",
    "x{{/* only comment */}}y",
    "x {{- /* trimmed comment */ -}} y",
    "{{- \"lead\" }}",
    "line1\n  {{- if true }}\n  yes\n  {{- end }}\nline2",
    "a\r\n{{- 1 }}",
    "{{ 1 }}{{- 2 -}}{{ 3 }}",
])
many(A, "if", [
    "{{ if true }}T{{ end }}",
    "{{ if false }}T{{ else }}F{{ end }}",
    "{{ if 0 }}T{{ else if 1 }}one{{ else }}F{{ end }}",
    "{{ if \"\" }}T{{ else }}empty{{ end }}",
    "{{ if \"0\" }}T{{ end }}",
    "{{ if .Values.list }}T{{ else }}F{{ end }}",
    "{{ if .Values.emptyList }}T{{ else }}F{{ end }}",
    "{{ if .Values.emptyMap }}T{{ else }}F{{ end }}",
    "{{ if .Values.missing }}T{{ else }}F{{ end }}",
    "{{ if .Values.zero }}T{{ else }}F{{ end }}",
    "{{ if .Values.f }}T{{ else }}F{{ end }}",
    "{{ if .Values.nul }}T{{ else }}F{{ end }}",
    "{{ if and .Values.list .Values.str }}both{{ end }}",
    "{{ if or .Values.zero .Values.str }}either{{ end }}",
    "{{ if not .Values.zero }}not{{ end }}",
    "{{ if (list 0) }}T{{ end }}",
    "{{ if 0.0 }}T{{ else }}F{{ end }}",
    "{{ if eq 1 1 }}a{{ else if eq 1 2 }}b{{ else if eq 1 3 }}c{{ end }}",
], values="list: [1]\nemptyList: []\nemptyMap: {}\nzero: 0\nf: false\nnul: null\nstr: s\n")
many(A, "with", [
    "{{ with .Values.m }}{{ .a }}{{ end }}",
    "{{ with .Values.missing }}x{{ else }}none{{ end }}",
    "{{ with .Values.missing }}x{{ else with .Values.m }}{{ .a }}{{ end }}",
    "{{ with $x := .Values.m }}{{ $x.a }}{{ .a }}{{ end }}",
    "{{ with .Values.s }}{{ . }}{{ end }}",
    "{{ with .Values.zero }}x{{ else }}zero{{ end }}",
    "{{ with .Values.m }}{{ $.Values.s }}{{ end }}",
    "{{ with .Values.m.a }}{{ . }}{{ else with 2 }}{{ . }}{{ else }}no{{ end }}",
], values="m: {a: 1}\ns: str\nzero: 0\n")
many(A, "range", [
    "{{ range .Values.l }}[{{ . }}]{{ end }}",
    "{{ range $i, $v := .Values.l }}{{ $i }}={{ $v }};{{ end }}",
    "{{ range $v := .Values.l }}{{ $v }}{{ end }}",
    "{{ range .Values.m }}{{ . }},{{ end }}",
    "{{ range $k, $v := .Values.m }}{{ $k }}:{{ $v }} {{ end }}",
    "{{ range .Values.empty }}x{{ else }}empty{{ end }}",
    "{{ range .Values.missing }}x{{ else }}missing{{ end }}",
    "{{ range 3 }}{{ . }}{{ end }}",
    "{{ range $i := 4 }}{{ $i }}{{ end }}",
    "{{ range $i, $v := 3 }}{{ $i }}{{ end }}",
    "{{ range .Values.l }}{{ if eq . 2.0 }}{{ break }}{{ end }}{{ . }}{{ end }}",
    "{{ range .Values.l }}{{ if eq . 2.0 }}{{ continue }}{{ end }}{{ . }}{{ end }}",
    "{{ range .Values.s }}x{{ end }}",
    "{{ range .Values.n }}x{{ end }}",
    "{{ range $k, $v := .Values.nested }}{{ $k }}={{ range $v }}{{ . }}{{ end }};{{ end }}",
    "{{ range until 3 }}{{ . }}{{ end }}",
    "{{ range (list \"b\" \"a\") }}{{ . }}{{ end }}",
    "{{ range $x := .Values.l }}{{ end }}{{ $x }}",
    "{{ range .Values.keys }}{{ . }} {{ end }}",
    "{{ range $k, $_ := .Values.keys }}{{ $k }} {{ end }}",
    "{{ range 0 }}x{{ else }}none{{ end }}",
    "{{ break }}",
    "{{ range .Values.l }}{{ range $.Values.l }}{{ break }}{{ end }}{{ . }}{{ end }}",
], values="l: [1, 2, 3]\nm: {b: 2, a: 1, c: 3}\nempty: []\ns: str\nn: 5\nnested: {x: [1, 2], y: [3]}\nkeys: {s10: a, s2: b, S1: c, _u: d, '1': e}\n")
many(A, "define", [
    "{{ define \"x\" }}X{{ end }}{{ template \"x\" }}",
    "{{ define \"x\" }}[{{ . }}]{{ end }}{{ template \"x\" 5 }}",
    "{{ define \"x\" }}{{ .a }}{{ end }}{{ template \"x\" .Values }}",
    "{{ block \"b\" . }}default {{ .Values.a }}{{ end }}",
    "{{ define \"x\" }}1{{ end }}{{ define \"x\" }}2{{ end }}",
    "{{ define \"x\" }}{{ end }}{{ define \"x\" }}2{{ end }}{{ template \"x\" }}",
    "{{ template \"nope\" }}",
    "{{ define \"r\" }}{{ if gt . 0 }}{{ . }}{{ template \"r\" (sub . 1 | int) }}{{ end }}{{ end }}{{ template \"r\" 3 }}",
    "{{ define \"v\" }}{{ $ }}{{ end }}{{ template \"v\" \"dollar\" }}",
    "{{ define \"x\" }}in{{ end }}out{{ include \"x\" . }}",
    "{{ define \"x\" }}{{ $.Values.a }}{{ end }}{{ include \"x\" . }}",
    "{{ define \"n\" }}{{ . | upper }}{{ end }}{{ include \"n\" \"abc\" | quote }}",
    "{{ define \"r\" }}{{ template \"r\" (sub . 1 | int) }}{{ end }}{{ template \"r\" 310 }}",
    "{{ define \"i\" }}{{ include \"i\" . }}{{ end }}{{ include \"i\" . }}",
], values="a: 1\n")
many(A, "vars", [
    "{{ $x := 1 }}{{ $x }}",
    "{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}",
    "{{ $x := 1 }}{{ if true }}{{ $x := 2 }}{{ $x }}{{ end }}{{ $x }}",
    "{{ $x = 1 }}",
    "{{ $y }}",
    "{{ omit $ \"Capabilities\" }}",
    "{{ $.Values.a }}",
    "{{ $x := .Values.m }}{{ $x.b.c }}",
    "{{ $x := \"s\" }}{{ $x.foo }}",
    "{{ $x := .Values.missing }}{{ $x.foo }}",
    "{{ $a, $b := 1 }}",
    "{{ range $a, $b, $c := .Values.l }}{{ end }}",
    "{{ $x := 1 }}{{ $x := 2 }}{{ $x }}",
    "{{ $x := list 1 2 }}{{ len $x }}",
], values="a: 1\nm: {b: {c: deep}}\nl: [1]\n")
many(A, "pipelines", [
    "{{ \"abc\" | upper }}",
    "{{ \"abc\" | upper | lower | title }}",
    "{{ 3 | add 1 2 }}",
    "{{ (1) }}",
    "{{ (add 1 2) | add 3 }}",
    "{{ (dict \"a\" (dict \"b\" 5)).a.b }}",
    "{{ (list 1 2).foo }}",
    "{{ 1 | 2 }}",
    "{{ \"x\" | printf \"%s-%s\" \"y\" }}",
    "{{ .Values.a | default \"d\" }}",
    "{{ .Values.missing | default \"d\" }}",
    "{{ nil }}",
    "{{ $x := nil }}",
    "{{ .Values | typeOf }}",
    "{{ . | typeOf }}",
    "{{ .Values.a.b }}",
    "{{ .Values.missing.deep }}",
    "{{ (.Values.missing).deep }}",
    "{{ .Values.m.b }}",
    "{{ .Values.m.missing }}",
    "{{ index .Values \"a\" }}",
    "{{ .Values.a 1 }}",
    "{{ (nil).a }}",
    "{{ true.x }}",
    "{{ upper }}",
    "{{ upper 1 }}",
    "{{ upper \"a\" \"b\" }}",
    "{{ print }}",
    "{{ call .Values.a }}",
    "{{ notAFunction 1 }}",
], values="a: 1\nm: {b: x}\n")
many(A, "literals", [
    "{{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 017 }} {{ 0b101 }} {{ -5 }} {{ +5 }}",
    "{{ 1.5 }} {{ .5 }} {{ 1e3 }} {{ 1E-3 }} {{ 1_0.5 }} {{ 0x1p4 }}",
    "{{ 'a' }} {{ '\\n' }} {{ '\\x41' }} {{ '\\u00e9' }} {{ 'é' }}",
    "{{ \"tab\\tq\\\"\" }} {{ `raw\\n` }} {{ \"\\u00e9\\x41\\101\" }}",
    "{{ true }} {{ false }}",
    "{{ 9223372036854775807 }}",
    "{{ 9223372036854775808 }}",
    "{{ 18446744073709551615 }}",
    "{{ 1e500 }}",
    "{{ typeOf 1 }} {{ typeOf 1.0 }} {{ typeOf 1e3 }} {{ typeOf 'a' }} {{ typeOf 0x10 }} {{ typeOf \"s\" }} {{ typeOf true }}",
    "{{ 3.0 | typeOf }}",
    "{{ 1i }}",
    "{{ 0x }}",
    "{{ 1__0 }}",
    "{{ \"unterminated }}",
    "{{ 'ab' }}",
    "{{ `multi\nline` }}",
    "{{ -0 }} {{ -0.0 }}",
    "{{ 100000 }} {{ 1000000.0 }} {{ 123456.7 }} {{ 0.0001 }} {{ 0.00001 }}",
])
many(A, "parse-errors", [
    "{{ if }}",
    "{{ if true }}",
    "{{ end }}",
    "{{ else }}",
    "{{ range }}{{ end }}",
    "{{ with }}{{ end }}",
    "{{ define }}{{ end }}",
    "{{ template }}",
    "{{ /* bad */ }}",
    "{{/* unclosed",
    "{{ \"a\" ",
    "{{ ( 1 }}",
    "{{ ) }}",
    "{{ 1 2 }}",
    "{{ . | 1 }}",
    "{{ $x := }}",
    "{{ @ }}",
    "{{ .a.\"b\" }}",
    "line1\nline2\n{{ if true }}\nx",
    "{{ if true }}{{ else }}{{ else }}{{ end }}",
    "{{ continue }}",
    "{{ range .Values.l }}{{ break 1 }}{{ end }}",
    "{{ define \"a\" }}{{ define \"b\" }}{{ end }}{{ end }}",
    "{{ env \"HOME\" }}",
    "{{ expandenv \"$HOME\" }}",
    "{{\n  if\n}}",
    "{{ 3.x }}",
    "{{ $x.y := 1 }}",
])

# ---------------------------------------------------------------- builtins
B = "builtins"
many(B, "cmp", [
    "{{ eq 1 1 }} {{ eq 1 2 }} {{ eq \"a\" \"a\" }} {{ eq 1 2 3 1 }}",
    "{{ eq .Values.i 1 }}",
    "{{ eq .Values.i 1.0 }}",
    "{{ eq (int .Values.i) 1 }}",
    "{{ eq .Values.missing \"x\" }} {{ eq .Values.missing nil }} {{ ne .Values.m nil }}",
    "{{ eq (list 1) (list 1) }}",
    "{{ eq .Values.m .Values.m }}",
    "{{ lt 1 2 }} {{ le 2 2 }} {{ gt 3 2 }} {{ ge 1 2 }}",
    "{{ lt \"a\" \"b\" }} {{ lt 1.5 2.5 }}",
    "{{ lt 1 2.5 }}",
    "{{ lt \"a\" 1 }}",
    "{{ lt nil 1 }}",
    "{{ lt true false }}",
    "{{ eq true true }} {{ ne true false }}",
    "{{ eq \"1\" 1 }}",
    "{{ eq 1 }}",
    "{{ ne 1 }}",
    "{{ eq (add 1 1) 2 }}",
    "{{ eq (len .Values.l) 2 }}",
    "{{ gt (len .Values.l) 1 }}",
    "{{ eq .Values.s \"str\" }} {{ ne .Values.s \"x\" }}",
    "{{ lt .Values.i .Values.j }}",
    "{{ eq nil nil }}",
    "{{ ge (int64 5) 5 }}",
], values="i: 1\nj: 2\nm: {a: 1}\nl: [1, 2]\ns: str\n")
many(B, "logic", [
    "{{ and 1 0 2 }}|{{ or 0 \"\" \"x\" }}|{{ or 0 \"\" }}|{{ and 1 2 }}",
    "{{ and }}",
    "{{ or }}",
    "{{ not 0 }} {{ not 1 }} {{ not \"\" }} {{ not .Values.missing }}",
    "{{ and false (fail \"not evaluated\") }}",
    "{{ or true (fail \"not evaluated\") }}",
    "{{ and .Values.a .Values.b | quote }}",
    "{{ 0 | and 1 }}",
    "{{ 0 | or 1 }}",
    "{{ typeOf (and 1 2.5) }}",
    "{{ not }}",
    "{{ not 1 2 }}",
], values="a: x\nb: y\n")
many(B, "len-index", [
    "{{ len \"héllo\" }} {{ len .Values.l }} {{ len .Values.m }}",
    "{{ len nil }}",
    "{{ len 3 }}",
    "{{ len .Values.missing }}",
    "{{ index .Values.l 1 }} {{ index .Values.m \"a\" }} {{ index .Values.nested \"x\" 0 }}",
    "{{ index \"abc\" 1 }}",
    "{{ index .Values.l 5 }}",
    "{{ index .Values.l -1 }}",
    "{{ index .Values.l 1.0 }}",
    "{{ index nil 1 }}",
    "{{ index 3 1 }}",
    "{{ index .Values.m \"missing\" }}",
    "{{ index .Values.m 1 }}",
    "{{ index .Values.l }}",
    "{{ index .Values \"with-dash\" }}",
    "{{ index .Values.missing \"a\" }}",
    "{{ typeOf (index \"abc\" 0) }}",
    "{{ slice .Values.l 1 }}",
    "{{ slice .Values.l 0 1 }}",
    "{{ slice \"abc\" 1 }}",
    "{{ slice (list) 0 }}",
], values="l: [1, 2, 3]\nm: {a: 1}\nnested: {x: [7]}\nwith-dash: d\n")
many(B, "print", [
    "{{ print 1 2 \"a\" \"b\" 3 }}",
    "{{ print \"a\" nil 1 }}",
    "{{ println 1 \"a\" }}",
    "{{ print .Values.l .Values.m }}",
    "{{ print 1.5 1e6 1e-5 100000.0 }}",
    "{{ print true nil }}",
    "{{ print (list) (dict) }}",
    "{{ print .Values.missing }}",
    "{{ .Values.big }} {{ .Values.small }} {{ .Values.int }} {{ .Values.f }}",
    "{{ .Values.m }}",
    "{{ .Values.l }}",
    "{{ .Values.mixed }}",
    "{{ .Values.nul }}",
    "{{ \"<no value>\" }}x",
    "{{ .Chart }}",
    "{{ .Release }}",
    "{{ .Template }}",
    "{{ .Capabilities.KubeVersion }} {{ .Capabilities.KubeVersion.Major }} {{ .Capabilities.KubeVersion.Minor }} {{ .Capabilities.KubeVersion.GitVersion }}",
    "{{ .Capabilities.APIVersions.Has \"apps/v1\" }} {{ .Capabilities.APIVersions.Has \"monitoring.coreos.com/v1\" }}",
    "{{ .Capabilities.HelmVersion }}",
    "{{ .Release.Name }} {{ .Release.Namespace }} {{ .Release.IsInstall }} {{ .Release.IsUpgrade }} {{ .Release.Revision }} {{ .Release.Service }}",
    "{{ .Chart.Name }} {{ .Chart.Version }} {{ .Chart.AppVersion }} {{ .Chart.IsRoot }} {{ .Chart.Description }}",
    "{{ .Chart.name }}",
    "{{ .Template.Name }} {{ .Template.BasePath }}",
    "{{ typeOf .Release.Revision }} {{ typeOf .Chart.Annotations }} {{ typeOf .Chart.Keywords }}",
], values="l: [1, a, null]\nm: {b: 2, a: 1}\nbig: 1000000\nsmall: 0.00001\nint: 42\nf: 3.25\nmixed: [1, {a: [2]}, s]\nnul: null\n")
many(B, "printf", [
    "{{ printf \"%d\" 42 }} {{ printf \"%5d|%-5d|%05d\" 42 42 42 }} {{ printf \"%+d %x %X %o %b\" 42 255 255 8 5 }}",
    "{{ printf \"%d\" .Values.f }}",
    "{{ printf \"%s\" 1 }}",
    "{{ printf \"%v %+v\" .Values.m .Values.l }}",
    "{{ printf \"%q\" \"a\\\"b\\n\" }} {{ printf \"%q\" 65 }}",
    "{{ printf \"%f %.2f %8.3f %e %g\" 3.14159 3.14159 3.14159 1234.5678 0.000012 }}",
    "{{ printf \"%t %t\" true false }}",
    "{{ printf \"%T %T %T %T %T\" 1 1.5 \"s\" .Values.m .Values.l }}",
    "{{ printf \"%s %s\" \"a\" }}",
    "{{ printf \"%s\" \"a\" \"b\" }}",
    "{{ printf \"%%\" }}",
    "{{ printf \"%x\" \"hi\" }} {{ printf \"% x\" \"hi\" }}",
    "{{ printf \"%-4s|%4s|\" \"ab\" \"cd\" }}",
    "{{ printf \"%c\" 65 }} {{ printf \"%U\" 65 }}",
    "{{ printf \"%v\" nil }} {{ printf \"%d\" nil }}",
    "{{ printf \"%5.1f\" .Values.f }}",
    "{{ printf \"%s\" .Values.l }}",
    "{{ printf \"%d\" .Values.l }}",
    "{{ printf \"%v\" 1e21 }} {{ printf \"%v\" 123456789.0 }}",
    "{{ printf \"%g %G\" 1e-7 1e20 }}",
    "{{ printf \"%.3s\" \"abcdef\" }}",
    "{{ printf \"%*d\" 5 3 }}",
    "{{ printf \"%z\" 1 }}",
    "{{ printf \"%!\" }}",
    "{{ printf \"%v\" .Values.missing }}",
    "{{ printf 1 }}",
], values="f: 42\nm: {a: 1}\nl: [1, 2]\n")
many(B, "escape", [
    "{{ html \"<a href='x'>&\\\"\" }}",
    "{{ js \"it's <b> \\\"x\\\" \\\\ \\n\" }}",
    "{{ urlquery \"a b&c=d/é\" }}",
    "{{ js nil }}",
    "{{ html 1 2 }}",
    "{{ urlquery \"a\" 1 }}",
    "{{ js \"=\\t\\u2028\" }}",
    "{{ html .Values.missing }}",
])

# ---------------------------------------------------------------- values (YAML)
V = "values"
yaml_docs = [
    "a: 1000000\nb: 1.5\nc: 12345678\nd: 0.1\ne: -3\n",
    "y: 1\nn: 2\nyes: 3\nno: 4\non: 5\noff: 6\ntrue: 7\nFalse: 8\n",
    "a: yes\nb: No\nc: ON\nd: off\ne: y\nf: N\ng: 'yes'\nh: \"on\"\n",
    "a: 0x1F\nb: 0o17\nc: 017\nd: 1_000\ne: 0b11\nf: +12\ng: -0x10\n",
    "a: ~\nb: null\nc: Null\nd:\ne: NULL\n",
    "a: 2001-12-14\nb: 1:20\nc: 12:30:45\nd: 2001-12-14T21:59:43.10-05:00\ne: 1e3\nf: .5\n",
    "a: !!str 12\nb: !!int \"3\"\nc: !!float 1\nd: !!bool yes\ne: !!null ''\n",
    "base: &b {x: 1, y: 2}\nder:\n  <<: *b\n  y: 3\nlist: &l [1, 2]\nother: *l\n",
    "a: 1\na: 2\n",
    "a: 1\n---\nb: 2\n---\na: 3\n",
    "lit: |\n  line1\n  line2\nfold: >\n  a\n  b\n\n  c\nkeep: |+\n  x\n\nstrip: |-\n  y\n",
    "1: a\n2.5: b\ntrue: c\n",
    "s: 'it''s'\nd: \"tab\\there\\u00e9\"\nu: plain text with spaces\n",
    "a: [1, 2, {b: 3}]\nc: {d: [e, f]}\n",
    "",
    "# only a comment\n",
    "big: 12345678901234567890\nneg: -9223372036854775808\nf: 1.0e+25\n",
    "a: .inf\n",
    "a: [1,\nb: 2\n",
    "a: b: c\n",
    "- 1\n- 2\n",
    "just a string\n",
    "a:\n  - 1\n - 2\n",
    "a: *missing\n",
    "merge:\n  <<: [{a: 1}, {a: 2, b: 2}]\n  c: 3\n",
    "dot.key: 1\n\"quoted key\": 2\n'single': 3\n",
    "a: 'multi\n  line single'\nb: \"multi\n  line double\"\n",
    "emptystr: ''\nspace: ' '\n",
    "x: 0.0000001\ny: 100000000000000000000\nz: -0.0\n",
    "a: 1.10\nb: 10.0\nc: 0.50\n",
    "t: \"\\ttab\"\n",
    "envVars: {\n    # comment\n}\nlist: [\n]\n",
]
for i, y in enumerate(yaml_docs):
    c(V, f"yaml-{i:03d}", "{{ toJson .Values }}\n---\n{{ toYaml .Values }}", y)
many(V, "numbers", [
    "{{ .Values.a }} {{ .Values.b }} {{ .Values.c }} {{ .Values.d }} {{ .Values.e }}",
    "{{ typeOf .Values.a }} {{ typeOf .Values.b }}",
    "{{ int .Values.a }} {{ int64 .Values.c }} {{ float64 .Values.b }}",
    "{{ .Values.a | toString }} {{ .Values.c | toString }}",
    "{{ add .Values.a 1 }} {{ mul .Values.b 2 }}",
    "{{ .Values.a | quote }} {{ .Values.c | quote }}",
    "{{ printf \"%d\" (int .Values.c) }} {{ printf \"%v\" .Values.c }}",
    "{{ until .Values.n }}",
    "{{ until (int .Values.n) }}",
    "{{ has 3 .Values.l }} {{ has 3.0 .Values.l }}",
], values="a: 1000000\nb: 1.5\nc: 12345678\nd: 0.1\ne: -3\nn: 3\nl: [1, 2, 3]\n")
c(V, "user-json-numbers", "{{ .Values.a }} {{ typeOf .Values.a }} {{ .Values.b }}", "", {"a": 5, "b": 1000000})
c(V, "coalesce-null-deletes", "{{ toJson .Values }}", "a: 1\nb: {x: 1, y: 2}\n", {"a": None, "b": {"x": None, "z": 3}})
c(V, "coalesce-nested-nil", "{{ toJson .Values }}", "nested: {keep: 1, drop: null}\n")
c(V, "coalesce-table-over-scalar", "{{ toJson .Values }}", "a: 1\nb: {x: 1}\n", {"a": {"m": 1}, "b": "scalar"})
c(V, "coalesce-deep", "{{ toJson .Values }}", "b: {x: 1}\n", {"b": {"x": {"deep": 1}}})
c(V, "coalesce-user-null-no-default", "{{ toJson .Values }} {{ hasKey .Values \"y\" }}", "", {"y": None})
c(V, "lists-replaced", "{{ toJson .Values }}", "l: [1, 2, 3]\nm: {l: [a]}\n", {"l": [9], "m": {"l": []}})

# ---------------------------------------------------------------- toYaml / toJson
Y = "toyaml"
yaml_values = """b1: true
e1: []
e2: {}
f1: 1.5
f2: 1000000
f3: 1e+21
f4: 0.0001
f5: 1e-07
f6: 12345678901234567890
f7: 1e20
i1: 42
l:
- 1
- a
- k: [1, 2]
- [3, 4]
n1: null
nested: {a: {b: 3, "y": 2}, z: 1}
s1: hello
s2: "it's"
s3: 'say "hi"'
s4: "key:value"
s5: "a#b"
s6: "multi\\nline\\n"
s7: "multi\\nline"
s8: "a: b"
s9: "a #b"
s10: "abc:"
s11: " lead"
s12: "trail "
s13: "true"
s14: "yes"
s15: "123"
s16: "1.5"
s17: "0777"
s18: "0x1F"
s19: "1:20"
s20: "2001-01-01"
s21: "~"
s22: ""
s23: "- x"
s24: "*star"
s25: "@at"
s26: "x\\n\\n"
s27: "tab\\there"
s28: "a \\nb"
s29: "{a}"
s30: "[1]"
s31: "%pct"
s32: "!bang"
s33: "&amp"
s34: "?"
s35: "|"
s36: ">"
s37: "-"
s38: "--- x"
s39: "..."
s40: "#hash"
s41: "日本"
s42: "é"
s43: "x\\U0001F600"
s44: "a\\x01b"
s45: "  lead\\nx"
s46: "\\nleading newline"
s47: "null"
s48: "Null"
s49: ".inf"
s50: ".5"
s51: "1."
s52: "+.5"
s53: "1e3"
s54: "0o17"
s55: "0b1"
s56: "1_0"
s57: "+1"
s58: "=";
s59: "0x"
s60: "on"
s61: "N"
s62: "a\\r\\nb"
s63: "it's a 'quoted' thing: yes"
s64: "trailing\\n  spaces  \\n"
s65: "-1"
s66: "- "
s67: ":"
s68: "a: "
"1": one
"01": zero-one
"9": nine
"10": ten
A1b: x
B: x
Z: x
"a b": x
a-b: x
a.b: x
a_b: x
a1: x
a01: x
a001: x
a9: x
a10: x
aB: x
ab: x
z: x
_x: x
"y": yes-key
""".replace('s58: "=";', 's58: "="')
c(Y, "reference", "{{ toYaml .Values }}", yaml_values)
c(Y, "reference-json", "{{ toJson .Values }}", yaml_values)
c(Y, "reference-pretty", "{{ toYamlPretty .Values }}", yaml_values)
c(Y, "reference-rawjson", "{{ toRawJson .Values }}", yaml_values)
c(Y, "reference-prettyjson", "{{ toPrettyJson .Values }}", yaml_values)
long_words = " ".join(["word"] * 25)
c(Y, "fold-plain", "{{ toYaml .Values }}", f"long: {long_words}\nnested:\n  deeper:\n    long: {long_words}\nlist:\n- {long_words}\n")
c(Y, "fold-quoted", "{{ toYaml .Values }}", "a: \"" + " ".join(["yes"] * 30) + " : x\"\nb: \"" + " ".join(["w#"] * 40) + " #x\"\nc: \"" + "x" * 100 + " y\"\n")
c(Y, "fold-double", "{{ toYaml .Values }}", "a: \"tab\\t" + " ".join(["word"] * 30) + "\"\n")
c(Y, "fold-spaces", "{{ toYaml .Values }}", "a: \"" + "word  " * 20 + "end\"\n")
many(Y, "scalars", [
    "{{ toYaml nil }}|{{ toYaml \"str\" }}|{{ toYaml 1.5 }}|{{ toYaml 1 }}|{{ toYaml true }}|{{ toYaml (list) }}|{{ toYaml (dict) }}",
    "{{ toYaml \"multi\\nline\" }}",
    "{{ toYaml \"x\\n\\n\" }}",
    "{{ toYaml (list \"a\" (list 1 2) (dict \"k\" (list 1))) }}",
    "{{ toYaml (dict \"k\" \"  lead\\nx\") }}",
    "{{ toYaml (dict \"e\" \"\" \"n\" nil \"t\" \"\\ttab\") }}",
    "{{ toYaml 1e6 }} {{ toYaml 1e21 }} {{ toYaml -0.0 }} {{ toYaml 0.1 }}",
    "{{ toYaml (int64 5) }} {{ toYaml (list 1.0 2.5) }}",
    "{{ toYaml .Values.m | indent 2 }}",
    "{{ .Values.m | toYaml | nindent 4 }}",
    "{{ toJson nil }}|{{ toJson \"<&>\" }}|{{ toJson 1e21 }}|{{ toJson 0.00001 }}|{{ toJson 1e-7 }}|{{ toJson 1000000.0 }}|{{ toJson -0.0 }}",
    "{{ toJson .Values.m }} {{ toRawJson (dict \"h\" \"<b>\") }}",
    "{{ toPrettyJson (dict \"a\" (list 1 2) \"b\" (dict)) }}",
    "{{ toJson (dict \"s10\" 1 \"s2\" 2 \"s1\" 3) }} {{ toYaml (dict \"s10\" 1 \"s2\" 2 \"s1\" 3) }}",
    "{{ toJson (list) }} {{ toJson (dict) }}",
    "{{ toJson .Values.f }}",
    "{{ toYaml .Values.f }}",
    "{{ mustToJson (dict \"a\" 1) }} {{ mustToYaml (dict \"a\" 1) }}",
    "{{ toYaml (dict \"a\" \"b\\u2028c\") }}",
    "{{ toYaml (dict \"key with spaces\" 1 \"key: colon\" 2 \"-dash\" 3) }}",
    "{{ toYaml (dict \"l\" (list (dict \"a\" 1 \"b\" (dict \"c\" 2)) (list))) }}",
    "{{ toYaml (dict \"a\" (dict \"b\" (dict \"c\" (list 1 (dict \"d\" \"e\"))))) }}",
    "{{ toToml (dict \"a\" 1 \"b\" (dict \"c\" \"d\") \"e\" (list 1 2) \"f\" 1.5 \"g\" true) }}",
    "{{ toToml .Values }}",
    "{{ toYaml (semver \"1.2.3\") }}",
], values="m: {b: 2, a: [1, {c: 3}]}\nf: 1.0e+25\n")

# ---------------------------------------------------------------- fromYaml / fromJson
F = "fromyaml"
many(F, "from", [
    "{{ fromYaml \"a: 1\\nb: [x, y]\" | toJson }}",
    "{{ fromYaml \"- 1\" | toJson }}",
    "{{ fromYaml \"a: [\" | toJson }}",
    "{{ fromYaml \"\" | toJson }}",
    "{{ (fromYaml \"a: {b: c}\").a.b }}",
    "{{ fromYamlArray \"- 1\\n- a\" | toJson }}",
    "{{ fromYamlArray \"a: 1\" | toJson }}",
    "{{ fromJson \"{\\\"a\\\": 1, \\\"b\\\": [true, null]}\" | toJson }}",
    "{{ fromJson \"bad\" | toJson }}",
    "{{ fromJson \"[1]\" | toJson }}",
    "{{ fromJson \"{\\\"a\\\": 1,}\" | toJson }}",
    "{{ fromJsonArray \"[1, \\\"a\\\", {\\\"b\\\": 2}]\" | toJson }}",
    "{{ fromJsonArray \"{}\" | toJson }}",
    "{{ mustFromJson \"[1, 2]\" | toJson }}",
    "{{ mustFromJson \"{\" }}",
    "{{ (fromYaml (toYaml .Values)).m.a }}",
    "{{ typeOf (fromYaml \"a: 1\").a }}",
    "{{ fromYaml \"y: n\" | toJson }}",
    "{{ fromJson \"{\\\"a\\\": 1e400}\" | toJson }}",
    "{{ fromJson \"\\\"str\\\"\" | toJson }}",
    "{{ fromYaml \"a: 1\\n---\\nb: 2\" | toJson }}",
    "{{ fromYaml \"a: .inf\" | toJson }}",
], values="m: {a: 7}\n")

# ---------------------------------------------------------------- sprig strings
S = "strings"
many(S, "basic", [
    "{{ trim \"  a b  \" }}|{{ trimAll \"$\" \"$$x$\" }}|{{ trimall \"ab\" \"abxba\" }}|{{ trimPrefix \"ab\" \"abab\" }}|{{ trimSuffix \"b\" \"abb\" }}",
    "{{ upper \"héllo\" }} {{ lower \"HÉLLO\" }} {{ title \"hello wORLD-foo_bar baz.qux\" }} {{ untitle \"Hello World\" }}",
    "{{ repeat 3 \"ab\" }} {{ repeat 0 \"x\" }}",
    "{{ repeat -1 \"x\" }}",
    "{{ substr 1 3 \"abcdef\" }}|{{ substr -1 2 \"abcdef\" }}|{{ substr 2 -1 \"abcdef\" }}|{{ substr 2 99 \"abcdef\" }}",
    "{{ substr 5 2 \"abcdef\" }}",
    "{{ trunc 3 \"abcdef\" }}|{{ trunc -2 \"abcdef\" }}|{{ trunc -10 \"abc\" }}|{{ trunc 10 \"abc\" }}|{{ trunc 0 \"abc\" }}",
    "{{ abbrev 5 \"hello world\" }}|{{ abbrev 3 \"hello\" }}|{{ abbrev 20 \"short\" }}",
    "{{ abbrevboth 5 10 \"1234 5678 9123 4567\" }}|{{ abbrevboth 0 10 \"1234 5678 9123\" }}",
    "{{ initials \"First Try\" }} {{ initials \"  spaced   words \" }}",
    "{{ wrap 5 \"hello world how are you\" }}",
    "{{ wrapWith 5 \"\\t\" \"hello world\" }}|{{ wrapWith 3 \"|\" \"abcdefgh ij\" }}",
    "{{ contains \"b\" \"abc\" }} {{ \"abc\" | contains \"z\" }} {{ hasPrefix \"ab\" \"abc\" }} {{ hasSuffix \"bc\" \"abc\" }}",
    "{{ quote \"a\\\"b\" }}|{{ quote nil }}|{{ quote 1 \"x\" nil 2.5 }}|{{ squote \"it's\" }}|{{ squote nil 1 }}",
    "{{ quote .Values.l }} {{ quote .Values.m }} {{ quote true }}",
    "{{ cat \"a\" 1 nil (list 2) }}",
    "{{ indent 2 \"a\\nb\\n\" }}|{{ nindent 2 \"a\" }}|{{ indent 2 \"\" }}|{{ indent 0 \"x\" }}",
    "{{ replace \"a\" \"b\" \"banana\" }} {{ replace \"\" \"-\" \"abc\" }}",
    "{{ plural \"one\" \"many\" 1 }} {{ plural \"one\" \"many\" 2 }} {{ plural \"one\" \"many\" 0 }}",
    "{{ snakecase \"FooBar\" }} {{ snakecase \"HTTPServer\" }} {{ snakecase \"fooBarBaz\" }} {{ snakecase \"foo-bar baz\" }}",
    "{{ camelcase \"foo_bar\" }} {{ camelcase \"foo-bar baz\" }} {{ camelcase \"fooBar\" }} {{ camelcase \"_lead\" }}",
    "{{ kebabcase \"FooBar\" }} {{ kebabcase \"fooBarBaz\" }} {{ kebabcase \"foo_bar\" }}",
    "{{ swapcase \"Hello World\" }} {{ nospace \" a b\\tc\\n\" }}",
    "{{ toString 1000000.0 }}|{{ toString nil }}|{{ toString (list 1 2) }}|{{ toString (dict \"a\" 1) }}|{{ toString true }}",
    "{{ toStrings (list 1 \"a\" nil 2.5) }} {{ typeOf (toStrings \"x\") }} {{ toStrings nil }}",
    "{{ join \",\" (list 1 \"a\" nil 2.5) }}|{{ join \"-\" \"plain\" }}|{{ join \",\" .Values.l }}",
    "{{ split \",\" \"a,b,c\" }} {{ (split \",\" \"a,b\")._1 }}",
    "{{ splitn \",\" 2 \"a,b,c\" }}",
    "{{ splitList \",\" \"a,b,c\" }} {{ splitList \"\" \"abc\" }} {{ typeOf (splitList \",\" \"a\") }}",
    "{{ sortAlpha (list \"b\" \"a\" 10 9) }} {{ sortAlpha \"x\" }}",
    "{{ hello }}",
    "{{ upper .Values.missing }}",
    "{{ upper .Values.n }}",
    "{{ trunc .Values.n \"abc\" }}",
    "{{ title \"ǆungla\" }}",
    "{{ shuffle \"\" }}",
    "{{ \"abc\" | upper | repeat 2 }}",
], values="l: [1, a]\nm: {a: 1}\nn: 2\n")
many(S, "regex", [
    "{{ regexMatch \"^[a-z]+$\" \"abc\" }} {{ regexMatch \"(\" \"x\" }}",
    "{{ regexFind \"[0-9]+\" \"ab12cd34\" }}|{{ regexFind \"z\" \"abc\" }}",
    "{{ regexFindAll \"[0-9]\" \"a1b2c3\" -1 }} {{ regexFindAll \"[0-9]\" \"a1b2c3\" 2 }} {{ regexFindAll \"[0-9]\" \"a1\" 0 }}",
    "{{ regexReplaceAll \"a(x*)b\" \"-ab-axxb-\" \"${1}W\" }}|{{ regexReplaceAll \"a(x*)b\" \"-ab-axxb-\" \"$1W\" }}",
    "{{ regexReplaceAllLiteral \"a(x*)b\" \"-ab-axxb-\" \"${1}\" }}",
    "{{ regexSplit \"z+\" \"pizza\" -1 }} {{ regexSplit \"z+\" \"pizza\" 1 }} {{ regexSplit \"\" \"abc\" -1 }}",
    "{{ regexQuoteMeta \"1.5+[x]\" }}",
    "{{ mustRegexMatch \"(\" \"x\" }}",
    "{{ regexFind \"(\" \"x\" }}",
    "{{ regexReplaceAll \"(?i)HELLO\" \"hello Hello\" \"bye\" }}",
    "{{ regexReplaceAll \"(?P<first>\\\\w+) (?P<last>\\\\w+)\" \"John Smith\" \"${last}, ${first}\" }}",
    "{{ regexSplit \",\" \"\" -1 }}",
    "{{ mustRegexFindAll \"a\" \"aaa\" -1 }} {{ mustRegexSplit \"a\" \"bab\" -1 }}",
])
many(S, "encoding", [
    "{{ b64enc \"hello\" }} {{ b64dec \"aGVsbG8=\" }} {{ b64dec \"YQ\" }} {{ b64dec \"!!\" }}",
    "{{ b32enc \"hello\" }} {{ b32dec \"NBSWY3DP\" }} {{ b32dec \"x\" }}",
    "{{ sha1sum \"abc\" }} {{ sha256sum \"abc\" }}",
    "{{ sha512sum \"abc\" }}",
    "{{ adler32sum \"abc\" }}",
    "{{ b64enc \"\" }}|{{ b64dec \"\" }}|{{ b64dec \"YWJj\\nZA==\" }}",
    "{{ urlParse \"https://user:pw@example.com:8080/p/a?x=1&y=2#frag\" | toJson }}",
    "{{ urlParse \"mailto:a@b.c\" | toJson }}",
    "{{ urlJoin (dict \"scheme\" \"https\" \"host\" \"h:1\" \"path\" \"/p\" \"query\" \"a=b\" \"fragment\" \"f\") }}",
    "{{ base \"a/b/c.txt\" }} {{ dir \"a/b/c.txt\" }} {{ ext \"b.tar.gz\" }} {{ clean \"a//b/../c\" }} {{ isAbs \"/x\" }} {{ base \"\" }} {{ dir \"x\" }}",
    "{{ osBase \"/a/b/\" }} {{ osDir \"/a\" }} {{ osClean \"../../x\" }} {{ osExt \"noext\" }} {{ osIsAbs \"rel\" }}",
])
many(S, "reflect", [
    "{{ typeOf 1 }} {{ typeOf 1.5 }} {{ typeOf \"s\" }} {{ typeOf true }} {{ typeOf nil }} {{ typeOf (list) }} {{ typeOf (dict) }} {{ typeOf .Values }} {{ typeOf (int64 1) }}",
    "{{ kindOf 1 }} {{ kindOf (list) }} {{ kindOf (dict) }} {{ kindOf nil }} {{ kindOf \"s\" }} {{ kindOf .Values }} {{ kindOf 1.5 }}",
    "{{ typeIs \"int\" 1 }} {{ typeIs \"string\" 1 }} {{ typeIsLike \"int\" 1 }} {{ kindIs \"map\" .Values }} {{ kindIs \"slice\" (list) }}",
    "{{ deepEqual (list 1 2) (list 1 2) }} {{ deepEqual (dict \"a\" 1) (dict \"a\" 2) }} {{ deepEqual 1 1.0 }}",
    "{{ typeOf (until 2) }} {{ typeOf (semver \"1.0.0\") }} {{ typeOf (split \",\" \"a\") }} {{ typeOf .Files }}",
])
many(S, "defaults", [
    "{{ default \"d\" 0 }}|{{ default \"d\" \"\" }}|{{ default \"d\" false }}|{{ default \"d\" (list) }}|{{ default \"d\" (dict) }}|{{ default \"d\" nil }}|{{ default \"d\" .Values.missing }}",
    "{{ default \"d\" 1.5 }}|{{ default \"d\" \"0\" }}|{{ default 5 .Values.zero | typeOf }}",
    "{{ default \"d\" }}",
    "{{ empty 0 }} {{ empty \"\" }} {{ empty \"0\" }} {{ empty (list) }} {{ empty (dict) }} {{ empty nil }} {{ empty false }} {{ empty 0.0 }} {{ empty .Values }}",
    "{{ coalesce 0 \"\" \"x\" \"y\" }}|{{ coalesce 0 nil }}|{{ coalesce .Values.missing .Values.zero 7 }}",
    "{{ all 1 \"a\" true }} {{ all 1 0 }} {{ all }} {{ any 0 \"\" nil }} {{ any 0 1 }} {{ any }}",
    "{{ ternary \"y\" \"n\" true }} {{ ternary \"y\" \"n\" false }} {{ true | ternary 1 2 }}",
    "{{ ternary 1 2 .Values.zero }}",
    "{{ .Values.zero | default 9 }} {{ .Values.str | default \"x\" }}",
], values="zero: 0\nstr: s\n")

# ---------------------------------------------------------------- lists
L = "lists"
many(L, "list", [
    "{{ list 1 \"a\" nil }} {{ tuple 1 2 }} {{ list }}",
    "{{ append (list 1) 2 }} {{ push (list) 1 }} {{ prepend (list 1) 0 }}",
    "{{ $l := list 1 }}{{ $_ := append $l 2 }}{{ $l }}",
    "{{ first (list 1 2) }} {{ last (list 1 2) }} {{ first (list) }} {{ last (list) }}",
    "{{ rest (list 1 2 3) }} {{ initial (list 1 2 3) }} {{ rest (list) }} {{ initial (list) }}",
    "{{ reverse (list 1 2 3) }} {{ reverse (list) }}",
    "{{ uniq (list 1 1 2 \"1\" 2) }}",
    "{{ without (list 1 2 3 2) 2 }} {{ without (list 1 2 3) 1 3 }}",
    "{{ has 2 (list 1 2) }} {{ has 3 (list 1 2) }} {{ has 1 nil }} {{ has \"a\" (list \"a\") }}",
    "{{ compact (list 0 1 \"\" \"a\" nil false (list) (dict) 2) }}",
    "{{ slice (list 1 2 3 4) 1 3 }} {{ slice (list 1 2 3) 1 }} {{ slice (list 1 2 3) }}",
    "{{ slice (list 1 2 3) 2 1 }}",
    "{{ concat (list 1) (list 2 3) (list) }}",
    "{{ concat (list 1) 2 }}",
    "{{ chunk 2 (list 1 2 3 4 5) }} {{ chunk 3 (list) }}",
    "{{ sortAlpha (list \"c\" \"a\" \"B\") }}",
    "{{ append \"x\" 1 }}",
    "{{ append nil 1 }}",
    "{{ first \"abc\" }}",
    "{{ mustFirst (list 9) }} {{ mustLast (list 9 8) }} {{ mustRest (list 1 2) }} {{ mustInitial (list 1 2) }} {{ mustReverse (list 1 2) }} {{ mustUniq (list 1 1) }} {{ mustWithout (list 1 2) 1 }} {{ mustHas 1 (list 1) }} {{ mustCompact (list 0 1) }} {{ mustSlice (list 1 2) 1 }} {{ mustChunk 1 (list 1 2) }} {{ mustAppend (list) 1 }} {{ mustPush (list) 2 }} {{ mustPrepend (list 2) 1 }}",
    "{{ mustCompact \"x\" }}",
    "{{ until 3 }} {{ until 0 }} {{ until -3 }} {{ untilStep 0 10 3 }} {{ untilStep 10 0 -4 }} {{ untilStep 0 10 -1 }}",
    "{{ seq 3 }}|{{ seq 2 5 }}|{{ seq 5 2 }}|{{ seq 0 2 10 }}|{{ seq 0 }}|{{ seq }}|{{ seq 1 2 3 4 }}|{{ seq 10 -2 4 }}|{{ seq 10 2 4 }}",
    "{{ has 3 .Values.l }} {{ has 3.0 .Values.l }} {{ len (uniq .Values.l) }}",
    "{{ index (list (list 1 2) (list 3)) 0 1 }}",
    "{{ range $i, $e := (list \"a\" \"b\") | reverse }}{{ $i }}{{ $e }}{{ end }}",
    "{{ last .Values.l | typeOf }}",
    "{{ without .Values.l 3.0 }}",
    "{{ reverse \"x\" }}",
], values="l: [1, 2, 3, 3]\n")

# ---------------------------------------------------------------- dicts
D = "dicts"
many(D, "dict", [
    "{{ dict \"a\" 1 \"b\" \"x\" }} {{ dict \"k\" }} {{ dict }} {{ dict 1 2 }}",
    "{{ get (dict \"a\" 1) \"a\" }}|{{ get (dict \"a\" 1) \"z\" }}",
    "{{ $d := dict \"a\" 1 }}{{ $_ := set $d \"b\" 2 }}{{ $d }}",
    "{{ $d := dict \"a\" 1 \"b\" 2 }}{{ $_ := unset $d \"a\" }}{{ $d }}",
    "{{ hasKey (dict \"a\" nil) \"a\" }} {{ hasKey (dict) \"a\" }}",
    "{{ pluck \"a\" (dict \"a\" 1) (dict \"b\" 2) (dict \"a\" 3) }}",
    "{{ keys (dict \"b\" 1 \"a\" 2) | sortAlpha }} {{ keys (dict \"x\" 1) (dict \"y\" 2) | sortAlpha }}",
    "{{ values (dict \"a\" 1) }}",
    "{{ pick (dict \"a\" 1 \"b\" 2 \"c\" 3) \"a\" \"c\" \"z\" }} {{ omit (dict \"a\" 1 \"b\" 2) \"a\" }}",
    "{{ $d := dict \"a\" 1 \"n\" (dict \"x\" 1) }}{{ $m := merge $d (dict \"a\" 2 \"b\" 3 \"n\" (dict \"y\" 2)) }}{{ toJson $d }} {{ toJson $m }}",
    "{{ toJson (merge (dict \"b\" false \"z\" 0 \"e\" \"\") (dict \"b\" true \"z\" 5 \"e\" \"x\")) }}",
    "{{ toJson (mergeOverwrite (dict \"a\" 1 \"b\" 2 \"l\" (list 1 2)) (dict \"a\" 0 \"b\" false \"l\" (list 3)) (dict \"c\" nil)) }}",
    "{{ $d := dict \"a\" 1 }}{{ $_ := mergeOverwrite $d (dict \"a\" 2) }}{{ $d.a }}",
    "{{ toJson (merge (dict) .Values.a .Values.b) }}",
    "{{ toJson (mustMerge (dict \"x\" 1) (dict \"y\" 2)) }} {{ toJson (mustMergeOverwrite (dict \"x\" 1) (dict \"x\" 2)) }}",
    "{{ dig \"a\" \"b\" \"def\" (dict \"a\" (dict \"b\" 5)) }} {{ dig \"a\" \"z\" \"def\" (dict \"a\" (dict \"b\" 5)) }} {{ dig \"x\" \"def\" (dict) }}",
    "{{ dig \"m\" \"a\" \"d\" .Values }}",
    "{{ dig \"a\" \"def\" .Values.m }}",
    "{{ dig \"a\" \"b\" \"def\" (dict \"a\" 1) }}",
    "{{ dig \"a\" (dict) }}",
    "{{ $c := deepCopy .Values.m }}{{ $_ := set $c \"a\" 9 }}{{ .Values.m.a }} {{ $c.a }} {{ typeOf (deepCopy .Values) }}",
    "{{ hasKey .Chart.Annotations \"a\" }}",
    "{{ get (split \",\" \"a,b\") \"_0\" }}",
    "{{ hasKey .Values.missing \"a\" }}",
    "{{ set nil \"a\" 1 }}",
    "{{ $d := dict }}{{ $_ := set $d \"k\" (list 1) }}{{ toYaml $d }}",
    "{{ $_ := set .Values \"added\" 1 }}{{ .Values.added }}",
    "{{ keys .Values | sortAlpha }}",
    "{{ toJson (merge .Values.a .Values.b) }} {{ toJson .Values.a }}",
    "{{ dict \"a\" 1 | toJson }}",
], values="m: {a: 1}\na: {x: 1, n: {p: 1}}\nb: {y: 2, n: {q: 2}, x: 9}\n")

# ---------------------------------------------------------------- math
M = "math"
many(M, "int", [
    "{{ add 1 2 3 }} {{ add }} {{ add 1.9 2.9 }} {{ add \"3\" 4 }} {{ typeOf (add 1 2) }}",
    "{{ add1 1 }} {{ add1 1.5 }} {{ sub 5 3 }} {{ sub 1 2.9 }} {{ mul 2 3 4 }} {{ mul 2 }}",
    "{{ div 7 2 }} {{ div -7 2 }} {{ mod 7 3 }} {{ mod -7 3 }}",
    "{{ div 1 0 }}",
    "{{ mod 1 0 }}",
    "{{ max 1 5 3 }} {{ min 4 2 8 }} {{ max 2.5 3 }} {{ biggest 1 2 }} {{ max 7 }}",
    "{{ int \"12\" }} {{ int \"1.5\" }} {{ int \"1.0\" }} {{ int \"0x1F\" }} {{ int \"010\" }} {{ int \"1_000\" }} {{ int \" 5\" }} {{ int 3.9 }} {{ int -3.9 }} {{ int true }} {{ int nil }}",
    "{{ int64 \"42\" }} {{ int64 2.5 }} {{ typeOf (int64 1) }} {{ typeOf (int 1) }}",
    "{{ float64 \"0x10\" }} {{ float64 \"1e3\" }} {{ float64 3 }} {{ float64 \"abc\" }} {{ float64 true }} {{ typeOf (float64 1) }}",
    "{{ atoi \"42\" }} {{ atoi \"4.2\" }} {{ atoi \"x\" }} {{ atoi \"-7\" }} {{ typeOf (atoi \"1\") }}",
    "{{ toDecimal \"0777\" }} {{ toDecimal 777 }} {{ toDecimal \"9\" }} {{ toDecimal \"x\" }}",
    "{{ add .Values.a .Values.b }} {{ mul .Values.a 1000000 }}",
    "{{ int .Values.big }} {{ int64 .Values.big }}",
    "{{ add 9223372036854775807 1 }}",
    "{{ randInt 5 6 }}",
], values="a: 2\nb: 3.5\nbig: 1e10\n")
many(M, "float", [
    "{{ addf 1.1 2.2 }} {{ addf 1 2 }} {{ addf }} {{ add1f 1.5 }} {{ subf 10 2.5 0.5 }} {{ mulf 1.1 3 }} {{ divf 10 4 }} {{ divf 1 3 }}",
    "{{ divf 1 0 }}",
    "{{ maxf 1 2.5 -1 }} {{ minf 1 2.5 -1 }}",
    "{{ ceil 1.2 }} {{ floor 1.8 }} {{ ceil -1.2 }} {{ floor \"2.7\" }}",
    "{{ round 2.5 0 }} {{ round 1.2345 2 }} {{ round 1.2355 3 }} {{ round -2.5 0 }} {{ round 2.4 0 0.4 }}",
    "{{ typeOf (addf 1 2) }} {{ addf 0.1 0.2 }} {{ mulf 0.1 0.2 }} {{ subf 0.3 0.1 }}",
    "{{ divf 2 3 }} {{ divf 10 3 }} {{ mulf 1e20 10 }}",
    "{{ addf .Values.b 1 }}",
], values="b: 3.5\n")

# ---------------------------------------------------------------- semver, dates (deterministic)
SV = "semver"
many(SV, "semver", [
    "{{ semver \"v1.2\" }} {{ (semver \"v1.2\").Original }} {{ (semver \"1.2.3-beta.1+build\").Prerelease }} {{ (semver \"1.2.3+build\").Metadata }}",
    "{{ (semver \"1.2.3\").Major }} {{ (semver \"1.2.3\").Minor }} {{ (semver \"1.2.3\").Patch }}",
    "{{ (semver \"1.2.3\").Compare (semver \"1.3.0\") }} {{ (semver \"2.0.0\").GreaterThan (semver \"1.0.0\") }} {{ (semver \"1.0.0\").LessThan (semver \"1.0.0-rc1\") }}",
    "{{ semver \"bad\" }}",
    "{{ semverCompare \">=1.2.0\" \"1.3.0\" }} {{ semverCompare \"^1.2\" \"2.0.0\" }} {{ semverCompare \"~1.2.3\" \"1.2.9\" }} {{ semverCompare \"~1.2.3\" \"1.3.0\" }}",
    "{{ semverCompare \">=1.20.0\" \"v1.30.2-gke.100\" }} {{ semverCompare \">=1.20.0-0\" \"v1.30.2-gke.100\" }}",
    "{{ semverCompare \"1.2.x\" \"1.2.7\" }} {{ semverCompare \"1.x\" \"1.9.0\" }} {{ semverCompare \"*\" \"3.0.0\" }} {{ semverCompare \"!=1.2.3\" \"1.2.3\" }}",
    "{{ semverCompare \"1.2 - 1.4.5\" \"1.4.0\" }} {{ semverCompare \">1.0, <2.0\" \"1.5.0\" }} {{ semverCompare \"<1.0 || >=3.0\" \"3.1.0\" }}",
    "{{ semverCompare \">=1.2\" \"bad\" }}",
    "{{ semverCompare \"bad constraint\" \"1.0.0\" }}",
    "{{ semverCompare \"^0.2.3\" \"0.2.9\" }} {{ semverCompare \"^0.2.3\" \"0.3.0\" }} {{ semverCompare \"^0.0.3\" \"0.0.4\" }}",
    "{{ semverCompare \">=1.25-0\" .Capabilities.KubeVersion.GitVersion }} {{ semverCompare \"<1.19\" .Capabilities.KubeVersion.Version }}",
    "{{ semverCompare \"> 1.2\" \"1.3.0\" }} {{ semverCompare \"=1.2.3\" \"1.2.3\" }} {{ semverCompare \"<=1.2.x\" \"1.2.9\" }}",
])
DT = "dates"
many(DT, "dates", [
    "{{ date \"2006-01-02 15:04:05\" 0 }}",
    "{{ date \"Mon Jan 2 15:04:05 MST 2006\" 86400 }}",
    "{{ htmlDate 1700000000 }} {{ dateInZone \"2006-01-02T15:04:05Z07:00\" 1700000000 \"UTC\" }}",
    "{{ date \"02/01/06 3:04PM .000\" 1700000123 }}",
    "{{ toDate \"2006-01-02\" \"2024-03-05\" }}",
    "{{ toDate \"2006-01-02\" \"bad\" }}",
    "{{ toDate \"2006-01-02\" \"2024-03-05\" | date \"Jan 2, 2006\" }}",
    "{{ (toDate \"2006-01-02\" \"2024-03-05\").Unix }} {{ toDate \"2006-01-02\" \"2024-03-05\" | unixEpoch }}",
    "{{ dateModify \"1h30m\" (toDate \"2006-01-02\" \"2024-03-05\") }}",
    "{{ dateModify \"bad\" (toDate \"2006-01-02\" \"2024-03-05\") }}",
    "{{ duration 95 }} {{ duration \"95\" }} {{ duration (int64 3700) }} {{ duration \"0\" }}",
    "{{ durationRound \"25h\" }} {{ durationRound \"48h\" }} {{ durationRound \"61s\" }} {{ durationRound \"1s\" }} {{ durationRound \"2160h\" }} {{ durationRound \"9000h\" }}",
    "{{ mustToDate \"2006-01-02\" \"2024-13-01\" }}",
    "{{ typeOf (toDate \"2006-01-02\" \"2024-03-05\") }}",
    "{{ date \"2006\" 1.5e9 | len }}",
])

# ---------------------------------------------------------------- helm functions
H = "helm"
helpers = {"templates/_helpers.tpl": "{{- define \"h.name\" -}}{{ .Chart.Name }}-{{ .Release.Name }}{{- end -}}\n{{- define \"h.dict\" -}}{{ .a }}/{{ .b }}{{- end -}}\n{{- define \"h.fail\" -}}{{ fail \"from helper\" }}{{- end -}}\n{{- define \"h.err\" -}}{{ .x.y }}{{- end -}}\n{{- define \"h.div\" -}}{{ div 1 0 }}{{- end -}}\n{{- define \"h.tpl\" -}}{{ .Template.Name }}{{- end -}}\n"}
for i, t in enumerate([
    "{{ include \"h.name\" . }}",
    "{{ include \"h.dict\" (dict \"a\" 1 \"b\" 2) }}",
    "{{ include \"h.name\" . | upper | quote }}",
    "{{ include \"nope\" . }}",
    "{{ include \"h.fail\" . }}",
    "{{ include \"h.err\" (dict \"x\" 1) }}",
    "{{ include \"h.div\" . }}",
    "{{ include \"h.tpl\" . }}",
    "{{ template \"h.name\" . }}",
    "{{ tpl \"{{ .Values.a }}-{{ .Release.Name }}\" . }}",
    "{{ tpl \"{{ .x }}\" (dict \"x\" 5) }}",
    "{{ tpl .Values.t . }}",
    "{{ tpl \"{{ include \\\"h.name\\\" . }}\" . }}",
    "{{ tpl \"{{ if }}\" . }}",
    "{{ tpl \"{{ .a.b }}\" (dict \"a\" 1) }}",
    "{{ tpl \"{{ define \\\"inner\\\" }}I{{ end }}{{ template \\\"inner\\\" }}\" . }}",
    "{{ tpl \"{{ fail \\\"tplfail\\\" }}\" . }}",
    "{{ tpl \"{{ .Values.missing }}\" . }}x",
    "{{ required \"need it\" .Values.missing }}",
    "{{ required \"need it\" \"\" }}",
    "{{ required \"need it\" 0 }}|{{ required \"x\" false }}|{{ required \"x\" (list) }}",
    "{{ required \"need it\" .Values.a }}",
    "line1\n{{ fail \"boom\" }}",
    "{{ fail \"multi\\nline\" }}",
    "{{ lookup \"v1\" \"Secret\" \"ns\" \"x\" }}|{{ len (lookup \"v1\" \"Pod\" \"\" \"\") }}",
    "{{ getHostByName \"example.com\" }}|",
    "{{ .Files.Get \"files/a.txt\" }}|{{ .Files.Get \"missing\" }}",
    "{{ .Files.GetBytes \"files/b.txt\" }}",
    "{{ .Files.Lines \"files/a.txt\" }} {{ len (.Files.Lines \"files/a.txt\") }} {{ .Files.Lines \"missing\" }}",
    "{{ (.Files.Glob \"files/*.txt\").AsConfig }}",
    "{{ (.Files.Glob \"files/*\").AsSecrets }}",
    "{{ range $path, $_ := .Files.Glob \"**.txt\" }}{{ $path }} {{ end }}",
    "{{ range $path, $_ := .Files }}{{ $path }} {{ end }}",
    "{{ (.Files.Glob \"nomatch/*\").AsConfig }}",
    "{{ .Files.Glob \"files/{a,b}.txt\" | len }}",
    "{{ .Subcharts }}",
    "{{ include \"h.name\" . | nindent 2 }}",
    "{{- define \"local\" -}}L{{- end -}}{{ include \"local\" . }}",
    "{{ .Values.t }}",
]):
    c(H, f"helm-{i:03d}", t, "a: 1\nt: \"{{ .Values.a }}!\"\n", None, dict(helpers, **{"files/a.txt": "line1\nline2\n", "files/b.txt": "bee", "files/sub/c.txt": "c", "README.md": "readme"}))

# ---------------------------------------------------------------- exec errors
E = "errors"
many(E, "exec", [
    "{{ .Values.missing.deep }}",
    "{{ .Values.a.b }}",
    "{{ upper 1 }}",
    "{{ upper .Values.a }}",
    "{{ until .Values.n }}",
    "{{ until (add 1 2) }}",
    "{{ genSelfSignedCert \"x\" nil (splitList \",\" \"a,b\") 3 }}",
    "{{ hasKey .Chart.Annotations \"a\" }}",
    "line1\nline2\n  {{ .Values.m.x.y }}",
    "{{ if .Values.a.b }}x{{ end }}",
    "{{ range .Values.a.b }}x{{ end }}",
    "{{ with .Values.a.b }}x{{ end }}",
    "{{ $x := .Values.a.b }}",
    "{{ template \"missing\" }}",
    "{{ index .Values.l 9 }}",
    "{{ printf \"%s\" (index .Values.l 9) }}",
    "{{ add1 (index .Values.l 9) }}",
    "{{ nindent \"2\" \"x\" }}",
    "{{ indent 2 }}",
    "{{ indent 2 3 }}",
    "{{ trunc 2.5 \"abc\" }}",
    "{{ trunc 2.0 \"abc\" }}",
    "{{ ternary 1 2 \"true\" }}",
    "{{ .Values.m.x | upper }}",
    "{{ (dict \"a\" 1).a.b }}",
    "{{ .Release.Name.foo }}",
    "{{ .Capabilities.KubeVersion.Nope }}",
    "{{ .Capabilities.APIVersions.Has }}",
    "{{ .Capabilities.APIVersions.Has 1 }}",
    "{{ .Files.Get }}",
    "{{ (list 1).x }}",
    "{{ $ := 1 }}",
    "{{ eq .Values.a \"1\" }}",
    "{{ range $i, $v := 5 }}{{ end }}",
    "{{ range 1.5 }}{{ end }}",
    "{{ \"s\".x }}",
], values="a: 1\nn: 3\nl: [1]\nm: {x: {z: 1}}\n")

# ---------------------------------------------------------------- crypto (deterministic parts)
CR = "crypto"
many(CR, "crypto", [
    "{{ derivePassword 1 \"long\" \"password\" \"user\" \"example.com\" }}",
    "{{ derivePassword 2 \"maximum\" \"pw\" \"me\" \"site.io\" }}|{{ derivePassword 3 \"medium\" \"pw\" \"me\" \"site.io\" }}|{{ derivePassword 4 \"short\" \"pw\" \"me\" \"site.io\" }}",
    "{{ derivePassword 1 \"basic\" \"x\" \"y\" \"z\" }}|{{ derivePassword 1 \"pin\" \"x\" \"y\" \"z\" }}|{{ derivePassword 1 \"nope\" \"x\" \"y\" \"z\" }}",
    "{{ encryptAES \"k\" \"hello\" | decryptAES \"k\" }}|{{ encryptAES \"k\" \"\" }}|{{ decryptAES \"k\" \"\" }}",
    "{{ encryptAES \"a-very-long-password-longer-than-32-bytes\" \"multi\\nline\" | decryptAES \"a-very-long-password-longer-than-32-bytes\" }}",
    "{{ genPrivateKey \"bogus\" }}",
    "{{ htpasswd \"a:b\" \"x\" }}",
    "{{ $ca := genCA \"c\" 1 }}{{ hasPrefix \"-----BEGIN CERTIFICATE-----\" $ca.Cert }} {{ hasPrefix \"-----BEGIN RSA PRIVATE KEY-----\" $ca.Key }} {{ typeOf $ca }}",
    "{{ $k := genPrivateKey \"ecdsa\" }}{{ hasPrefix \"-----BEGIN EC PRIVATE KEY-----\" $k }}",
    "{{ len (bcrypt \"x\") }} {{ hasPrefix \"$2a$10$\" (bcrypt \"x\") }}",
    "{{ genSignedCert \"x\" nil nil 1 \"notacert\" }}",
    "{{ buildCustomCert \"bad\" \"bad\" }}",
    "{{ len (randAlphaNum 7) }} {{ len uuidv4 }} {{ len (randBytes 4) }}",
])
# genPrivateKey "dsa": Sprig's pemBlockForKey writes a DSA PRIVATE KEY
# (SEQUENCE { 0, P, Q, G, Y, X }); Go reads it back, yet cannot make a
# certificate with it (no crypto.Signer, no DSA public keys in x509).
many(CR, "dsa", [
    '{{ $k := genPrivateKey "dsa" }}{{ hasPrefix "-----BEGIN DSA PRIVATE KEY-----\\n" $k }} {{ hasSuffix "\\n-----END DSA PRIVATE KEY-----\\n" $k }}',
    '{{ $k := genPrivateKey "dsa" }}{{ genCAWithKey "x" 1 $k }}',
    '{{ $k := genPrivateKey "dsa" }}{{ genSelfSignedCertWithKey "x" nil nil 1 $k }}',
    '{{ $k := genPrivateKey "dsa" }}{{ $ca := genCA "ca" 1 }}{{ genSignedCertWithKey "x" nil nil 1 $ca $k }}',
    '{{ $k := genPrivateKey "dsa" }}{{ $ca := genCA "ca" 1 }}{{ $c := buildCustomCert ($ca.Cert | b64enc) ($k | b64enc) }}{{ eq $c.Key $k }} {{ genSignedCert "x" nil nil 1 $c }}',
])

# ---------------------------------------------------------------- TOML
T = "toml"
many(T, "toml", [
    "{{ fromToml \"a = 1\\nb = \\\"x\\\"\\n[c]\\nd = [1, 2]\\n\" | toJson }}",
    "{{ (fromToml \"a = 1\").a | typeOf }} {{ (fromToml \"f = 1.5\").f | typeOf }}",
    "{{ fromToml \"t = true\\n[s.u]\\nv = 'lit'\" | toYaml }}",
    "{{ toToml (fromToml \"a = 1\\n[b]\\nc = 'd'\") }}",
    "{{ hasKey (fromToml \"a = [\") \"Error\" }}",
])

def go_quote(b):
    """A Go template string literal holding exactly the bytes b."""
    out = []
    for x in b:
        ch = chr(x)
        if ch == '"' or ch == '\\':
            out.append('\\' + ch)
        elif 0x20 <= x < 0x7f:
            out.append(ch)
        else:
            out.append('\\x%02x' % x)
    return '"' + ''.join(out) + '"'


def toml_case(doc):
    # %v shows Go's types (time zones, nested maps); toJson the JSON view.
    return "{{ $m := fromToml " + go_quote(doc) + " }}{{ $m }}|{{ toJson $m }}"


# Documents BurntSushi/toml (Helm's fromToml) decodes: integers, floats,
# strings, datetimes, tables, arrays of tables, inline tables, key order.
TOML_VALUES = [
    b'a = 1\nb = -2\nc = +3\nd = 1_000\ne = 0xDEAD_beef\nf = 0o755\ng = 0b1101\nh = 9223372036854775807\ni = -9223372036854775808',
    b'a = 1.5\nb = -0.0\nc = 1e10\nd = 6.626e-34\ne = 1_000.5\nf = inf\ng = -inf\nh = nan\ni = +nan\nj = 5E+22\nk = 3.0\nl = -nan\nm = 1e-400',
    b'a = "tab\\there"\nb = \'lit\\n\'\nc = """\nmulti\nline"""\nd = ' + b"'''\nraw\nml'''" + b'\ne = "\\u00e9\\U0001F600"\nf = "\\e\\x41"\ng = """a \\\n   b"""\nh = """q"\\""""\n',
    b'a = 1979-05-27T07:32:00Z\nb = 1979-05-27T00:32:00-07:00\nc = 1979-05-27T00:32:00.999999+05:30\nd = 1979-05-27T07:32:00\ne = 1979-05-27\nf = 07:32:00\ng = 1979-05-27 07:32:00Z\nh = 1979-05-27t07:32:00z\n',
    b'i = 07:32\nj = 1979-05-27T07:32\nk = 1979-05-27T07:32Z\nl = 00:00:00.123456789123\nm = 2024-02-29T23:59:59+00:00\nn = 1979-05-27T07:32:00.5-00:00',
    b'[a.b]\nc = 1\n[a]\nd = 2\n[[arr]]\nx = 1\n[[arr]]\nx = 2\n[[arr.sub]]\ny = 3\n',
    b'p = { x = 1, y = { z = "a" } }\nq = [ { a = 1 }, { b = 2 } ]\nr = { a.b.c = 1 }\n',
    b'm = [1, "a", 2.5, true, [1, 2], { x = 1 }, 1979-05-27]\ne = []\nn = [\n  1, # c\n  2,\n]\n',
    b'"quoted key" = 1\n' + b"'lit key' = 2\n" + b'a.b.c = 3\na . d = 4\n"" = 5\n3.14 = "pi"\n-_ = 6\n"a\\"b" = 7\n',
    b'\xef\xbb\xbfa = 1\r\nb = "x"\r\n# c\r\n',
    b'',
    b'# only\n\n  # c\n',
    b'z = 1\nB = 2\na = 3\n_ = 4\n"\xc3\xa9" = 5\n10 = 6\n9 = 7\n',
    b'[a.b.c]\nx = 1\n[a]\ny = 2\n',
    b'a = { x = 1, }\nb = {}\nc = {\n  x = 1,\n  y = 2 # c\n}\n',
    b'[[a]]\n[[a]]\nb = [[1], [2, [3]]]\n',
    b'a = true\nb = false\nc = "\\"\\\\\\b\\f\\n\\r\\t"\n',
    b'[a]\nb.c = 1\nb.d = 2\n[a.e]\n',
    b'"\xe2\x82\xac" = "\xe2\x82\xac"\n' + b"'x y'.z = 1\n",
]

# Documents it rejects, with its error texts and line numbers.
TOML_ERRORS = [
    b'a = "unterminated', b'a = "line\nnext"', b"a = 'raw", b'a = """open', b"a = '''open",
    b'a = "bad \\q escape"', b'a = "\\x4"', b'a = "\\u12"', b'a = "\\UFFFFFFFF"', b'a = "\\uD800"',
    b'a = """x \\ y"""', b'\n\nx = 1\na = "\\',
    b'= 1', b'.a = 1', b'a.=1', b'a b = 1', b'a = 1 b = 2', b'[]', b'[a.]', b'[a', b'[[a]', b'a\n= 1', b'a',
    b'[a b]', b'[[a] ]', b'a.."b" = 1',
    b'a = 1\na = 2', b'[a]\n[a]', b'a = 1\n[a]', b'[a]\nb=1\n[[a]]', b'a = [1]\n[[a]]', b'a.b = 1\na.b.c = 2',
    b'[x]\ny = 1\n[x.y]\n', b'a = {b = 1}\na.c = 2', b'[[a]]\n[a]', b'a = {b = 1, b = 2}', b'[t]\nx.y = 1\n[t.x]\n',
    b'a = 1979-13-27', b'a = 1979-02-30', b'a = 1979-05-27T25:00:00', b'a = 1979-5-27', b'a = 7:32:00',
    b'a = 1979-05-27T07:32:00+25:00', b'a = 1979-05-27T07:32:60', b'a = 1979-05-27X', b'a = 12:3',
    b'a = 1__0', b'a = _1', b'a = 1_', b'a = 01', b'a = -01', b'a = 0x', b'a = 0b2', b'a = 0o8', b'a = +0x1',
    b'a = 9223372036854775808', b'a = 1.', b'a = .5', b'a = 1e', b'a = 1.5.3', b'a = 1e400', b'a = 00.5',
    b'a = 1_.5', b'a = -i', b'a = +nax', b'a = inx', b'a = nope', b'a = 0x_1', b'a = 1.e5', b'a = -', b'a =',
    b'a = [1,,2]', b'a = [1 2]', b'a = [1', b'a = [,]', b'a = [\n1,\n2', b'a = ]',
    b'a = {x = 1 y = 2}', b'a = {x = 1,,}', b'a = {', b'a = {x.y = 1, x = 2}', b'a = {,}',
    b'a = "x\x01y"', b'a = 1\x7f', b'a\x00 = 1', b'a = "long enough\x00"', b'a = 1\rb = 2', b'# c\x08\n',
    b'a = "\xff"', b'\xc3 = 1', b'a = """x\xe2\x82"""', b'# \xfe\n',
    b'a = 1 # ok\nb = 2 x', b'[a] x', b'[[a]] ]', b'a = """x""""""', b"a = '''x''''''",
    b'[tbl.sub]\nkey = 1\nother = "\\q"', b'[tbl]\n[tbl.sub]\nk = {a = 1}\nk.b = 2', b'\xff\xfea = 1\x00',
]

many(T, "value", [toml_case(d) for d in TOML_VALUES])
many(T, "error", [toml_case(d) for d in TOML_ERRORS])
many(T, "types", [
    '{{ $m := fromToml "a = 1\\nb = 1.5\\nc = 1979-05-27\\nd = [1]\\n[[e]]\\n[f]\\ng = {}" }}{{ range $k, $v := $m }}{{ $k }}={{ typeOf $v }};{{ end }}',
    '{{ $m := fromToml "t = 1979-05-27T07:32:00+01:00" }}{{ $m.t.Year }} {{ $m.t.Unix }} {{ $m.t.UTC }} {{ $m.t | date "2006-01-02 MST" }}',
    '{{ $m := fromToml "a = [\\n" }}{{ $m.Error }}',
    '{{ fromToml "[a]\\nb = 1\\n[[c]]\\nd = 2" | toYaml }}',
])


# Local datetimes take the process's zone offset (zones without DST, so
# the offset does not depend on when Helm ran); an offset equal to the
# zone's own reads as time.Local.
for label, tz in [("kolkata", "Asia/Kolkata"), ("saopaulo", "America/Sao_Paulo"), ("utc", "UTC")]:
    for i, doc in enumerate([
        b'a = 1979-05-27T07:32:00\nb = 1979-05-27\nc = 07:32:00\nd = 1979-05-27T07:32:00+05:30\ne = 2024-05-27T07:32:00-03:00\nf = 1979-05-27T07:32:00Z\ng = 1979-05-27T07:32:00+00:00',
        b'a = 2024-01-15T12:00\nb = 12:00\nc = 2024-01-15T12:00-03:00\nd = 2024-01-15T12:00+05:30',
    ]):
        c(T, f"tz-{label}-{i:03d}", toml_case(doc) + "|{{ range $k, $v := $m }}{{ $v.Unix }},{{ end }}", tz=tz)

# toToml of what fromToml decoded: datetimes in BurntSushi's own layouts,
# -nan, strings and keys quoted with its replacer (not Go's %q).
many(T, "roundtrip", [
    "{{ $m := fromToml " + go_quote(d) + " }}{{ toToml $m }}" for d in [TOML_VALUES[1], TOML_VALUES[2], TOML_VALUES[3], TOML_VALUES[4], TOML_VALUES[7], TOML_VALUES[8], TOML_VALUES[16]]
] + [
    '{{ toToml (dict "a\\x07b" "\\x07\\x0b\\x7f\\u200b\\ufeff" "k" (list "\\x1b")) }}',
])

# ---------------------------------------------------------------- --set parsing (Helm's strvals)
# (mode, expression): mode is set, string, json or literal.
STRVALS = [
    ("set", "a=1,b.c=two,ports={80,443}"), ("set", "a=true,b=FALSE,c=null,d=0,e=007,f=-5,g=1.5,h=+3"),
    ("set", "a.b.c=d"), ("set", "a[0]=x,a[2]=z"), ("set", "a[0].b=1,a[0].c=2"), ("set", "a[0][1]=q"),
    ("set", "a\\.b=1"), ("set", "a=b\\,c"), ("set", "name=value,other=x=y"), ("set", "a="), ("set", "a"),
    ("set", "a,b=1"), ("set", "a.=1"), ("set", "a[x]=1"), ("set", "a[-1]=1"), ("set", "a={b,c"),
    ("set", "a={}"), ("set", "a={,}"), ("set", "list={a,b},x=1"), ("set", "a.b=1,a.c=2"), ("set", "a=1,a.b=2"),
    ("set", "a.b=2,a=1"), ("set", "a[0]=1,a.b=2"), ("set", "nested.list[1].name=n"), ("set", "a=9223372036854775808"),
    ("set", "a=1e3"), ("set", "a=0x10"), ("set", "a= spaced "), ("set", "a=é"), ("set", "a[100000]=1"),
    ("string", "a=1,b=true,c=null"), ("string", "a={1,2}"), ("string", "a.b=007"),
    ("json", "a={\"b\":[1,2]}"), ("json", "a=1,b=\"x\""), ("json", "a=[1,{\"c\":null}]"), ("json", "a=bad"), ("json", "a.b=true"),
    ("literal", "a=b,c=d"), ("literal", "a.b=x=y"), ("literal", "a"),
    # Expressions that end inside an index or a list.
    ("set", "a[0"), ("set", "a["), ("set", "a[1]"), ("set", "a[1]."), ("set", "a[0]=1,b["), ("set", "a[x"),
    ("set", "a[0]b=1"), ("set", "a[0]="), ("set", "a[0].b"), ("set", "a[0][1"), ("set", "a={b"), ("set", "a[01]=2"),
    ("string", "a[0"), ("string", "a[1]"), ("json", "a[0"), ("json", "a[0]={\"b\":1}"), ("literal", "a[0"), ("literal", "a[1]=x"),
]

# ------------------------------------------------------- Helm objects as Go values
# .Capabilities.APIVersions is a chartutil.VersionSet ([]string): Sprig's
# list functions reach it through reflection as any slice.
H = "helmobjects"
many(H, "versionset", [
    "{{ has \"apps/v1\" .Capabilities.APIVersions }} {{ has \"monitoring.coreos.com/v1/ServiceMonitor\" .Capabilities.APIVersions }}",
    "{{ mustHas \"v1\" .Capabilities.APIVersions }}",
    "{{ first .Capabilities.APIVersions }} {{ last .Capabilities.APIVersions }}",
    "{{ len .Capabilities.APIVersions | toString | len | lt 0 }}",
    "{{ index .Capabilities.APIVersions 0 }}",
    "{{ range $i, $v := .Capabilities.APIVersions }}{{ if lt $i 3 }}{{ $v }};{{ end }}{{ end }}",
    "{{ without .Capabilities.APIVersions \"v1\" | len | lt 1 }}",
    "{{ slice .Capabilities.APIVersions 0 2 }}",
    "{{ uniq .Capabilities.APIVersions | len | lt 1 }}",
    "{{ compact .Capabilities.APIVersions | first }}",
    "{{ sortAlpha .Capabilities.APIVersions | first }}",
    "{{ rest .Capabilities.APIVersions | first }} {{ initial .Capabilities.APIVersions | last }}",
    "{{ reverse .Capabilities.APIVersions | last }}",
    "{{ join \",\" (slice .Capabilities.APIVersions 0 2) }}",
    "{{ kindOf .Capabilities.APIVersions }} {{ typeOf .Capabilities.APIVersions }}",
    "{{ .Capabilities.APIVersions | toJson | fromJsonArray | first }}",
    "{{ concat (list \"x\") (slice .Capabilities.APIVersions 0 1) }}",
    "{{ chunk 2 (slice .Capabilities.APIVersions 0 3) }}",
    "{{ append (slice .Capabilities.APIVersions 0 1) \"z\" }}",
    "{{ empty .Capabilities.APIVersions }} {{ empty (slice .Capabilities.APIVersions 0 0) }}",
    "{{ has 1 .Capabilities.APIVersions }}",
])

# ------------------------------------------------------- Go's RE2 syntax
# Where Go's regexp/syntax differs from Rust's regex crate: ASCII Perl
# classes, class punctuation read literally, `{` as a literal, \Q...\E,
# and Go's errors (mustRegex* report them; regexMatch turns them into false).
G = "goregex"
many(G, "syntax", [
    r'{{ regexMatch "^[\\w-\\.]+$" "a-b.c" }} {{ regexMatch "^[\\w-\\.]+$" "a b" }}',
    r'{{ regexMatch "^\\w+$" "é" }} {{ regexMatch "^\\d$" "٣" }} {{ regexMatch "^\\s$" " " }} {{ regexMatch "^\\W$" "é" }}',
    r'{{ regexMatch "^[a&&b]$" "&" }} {{ regexMatch "^[~~a]$" "~" }} {{ regexMatch "^[[]$" "[" }}',
    r'{{ regexMatch "^a{,2}$" "a{,2}" }} {{ regexMatch "x{2" "x{2" }} {{ regexMatch "^x{2}$" "xx" }}',
    r'{{ regexMatch "\\Qa.b\\E" "a.b" }} {{ regexMatch "^\\Qa.b\\E$" "axb" }}',
    r'{{ regexMatch "^[a-]$" "-" }} {{ regexMatch "^[\\d-z]$" "-" }} {{ regexMatch "^[^\\W]$" "a" }}',
    r'{{ regexMatch "\\bé" "xé" }} {{ regexMatch "x\\b" "xé" }}',
    r'{{ regexMatch "^[[:alpha:]]+$" "abc" }} {{ regexMatch "(?i)É" "é" }} {{ regexMatch "(?P<n>a)(?<m>b)" "ab" }}',
    r'{{ regexFindAll "[\\w-]+" "a-b c_d é" -1 }}',
    r'{{ regexReplaceAll "(\\w+)@(\\w+)" "me@host you@there" "${2}:${1}" }}',
    r'{{ regexSplit "[\\s,]+" "a, b  c,d" -1 }}',
    r'{{ mustRegexMatch "\\Z" "" }}',
    r'{{ mustRegexMatch "a{1001}" "" }}',
    r'{{ mustRegexMatch "^[a--b]$" "-" }}',
    r'{{ mustRegexMatch "^[a-\\d]$" "-" }}',
    r'{{ mustRegexMatch "[z-a]" "-" }}',
    r'{{ regexMatch "\\Z" "" }} {{ regexMatch "[z-a]" "" }}',
])

# ------------------------------------------------------- fmt and numbers at the edges
F = "fmtedges"
many(F, "verbs", [
    '{{ printf "%f" 255 }}|{{ printf "%e" 3 }}|{{ printf "%g" 7 }}|{{ printf "%.2f" 1 }}',
    '{{ printf "%d" 2.5 }}|{{ printf "%x" 3.5 }}|{{ printf "%d" "s" }}',
    '{{ printf "%x" "hi" }}|{{ printf "%X" (list 1 2) }}|{{ printf "%q" 65 }}|{{ printf "%c" 66 }}',
    '{{ printf "%v|%+v|%#v" (dict "a" 1) (dict "a" 1) (dict "a" 1) }}',
    '{{ printf "%v|%#v" (list 1 "a") (list 1 "a") }}',
    '{{ printf "%T %T %T %T" 1 1.5 "s" (list) }}',
    '{{ printf "%d %d" 1 }}|{{ printf "%d" 1 2 }}|{{ printf "%!" }}|{{ printf "%z" 1 }}',
    '{{ printf "%8.3f|%-8d|%+d|%08.2f" 3.14159 42 5 -1.5 }}',
    '{{ printf "%s" 1 }}|{{ printf "%s" nil }}|{{ printf "%d" nil }}',
    '{{ print 1 2 "a" "b" 3 }}|{{ print "a" 1 }}|{{ println 1 "x" }}',
    '{{ printf "%x|%X|%x|%x|%.1x|%.0x|%.3x|%+x" 1.0 255.5 -0.1 0.0 1.96875 1.5 0.1 2.0 }}',
    '{{ printf "%x|%x|%8.2f|%-6.1e|" .Values.tiny .Values.neg 2.0 12345.678 }}',
])
many(F, "numbers", [
    '{{ .Values.big }} {{ .Values.big | int64 }} {{ .Values.big | toString }}',
    '{{ .Values.huge | int64 }} {{ .Values.huge | int }}',
    '{{ .Values.negzero }} {{ .Values.negzero | toString }} {{ .Values.exp }} {{ .Values.exp | int }}',
    '{{ atoi "12a" }} {{ atoi "-7" }} {{ float64 "1e3" }} {{ int "0x1F" }}',
    '{{ toDecimal "0777" }} {{ toDecimal "9" }}',
    '{{ 1e3 }} {{ 1.5e-7 }} {{ 100000000 | float64 }}',
], values="big: 9007199254740993\nhuge: 1e20\nnegzero: -0.0\nexp: 1.5e3\n")
c(F, "verbs-hexfloat-values", '{{ printf "%x|%x|%x" .Values.tiny .Values.neg .Values.huge }}', values="tiny: 5e-324\nneg: -1e-300\nhuge: 1e300\n")
many(F, "case", [
    '{{ upper "ß" }} {{ lower "ẞ" }} {{ title "ǆemal" }} {{ upper "ǆ" }}',
    '{{ camelcase "hello_wörld" }} {{ snakecase "HelloWörld" }} {{ kebabcase "HelloWörld" }} {{ swapcase "Héllo" }}',
    '{{ initials "élan vital" }} {{ abbrev 5 "héllo wörld" }} {{ abbrevboth 5 10 "1234 5678 9123 öö" }}',
    '{{ substr 1 3 "héllo" }} {{ trunc 2 "héllo" }} {{ trunc -2 "héllo" }} {{ nospace "h é l" }}',
    '{{ wrap 5 "héllo wörld again" }}|{{ wrapWith 5 "|" "héllo wörld" }}',
])

# ------------------------------------------------------- toYaml, toToml, case functions
Y = "yamledges"
many(Y, "toyaml", [
    '{{ toYaml (list "yes" "no" "on" "off" "y" "n" "true" "null" "~" "" "1e3" "0x1F" "012" "1_000" ".inf" "-.nan") }}',
    '{{ toYaml (list "a: b" "- x" "#c" "x #c" "&a" "*a" "!t" "|" ">" "@" "`" "%" "\'q\'" "\\"d\\"" " lead" "trail " "tab\\there") }}',
    '{{ toYaml (list "multi\\nline" "2001-12-14" "12:30" "1:20:30" "+12" "-0" "0o17" "0b101" "=" "<<" "?" "-" ":" ",") }}',
    '{{ toYaml (dict "yes" 1 "1" 2 "a b" 3 "null" 4) }}',
    '{{ toToml (dict "a" 1 "b" (dict "c" "x" "d" (list 1 2)) "e" (list (dict "f" 1) (dict "f" 2)) "g" 1.5 "h" true) }}',
    '{{ toToml (dict "mixed" (list 1 "a") "empty" (list) "nested" (dict "deep" (dict "x" "y"))) }}',
    '{{ float64 "NaN" | toYaml }}|{{ float64 "+Inf" | toYaml }}|{{ float64 "NaN" | toJson }}|',
    '{{ float64 "NaN" | mustToYaml }}',
    '{{ float64 "-Inf" | mustToJson }}',
    '{{ camelcase "hello_wörld_x" }} {{ snakecase "HelloWörld" }} {{ kebabcase "HelloWörld" }} {{ swapcase "Héllo Wörld" }}',
    '{{ title "héllo wörld" }} {{ untitle "Héllo Wörld" }} {{ plural "one" "many" 1 }} {{ substr 0 2 "日本語" }} {{ abbrev 4 "日本語日本語" }}',
])
# json.Marshal meets map keys sorted: the first non-finite value is the one
# under the smallest key, whatever the document order.
c(Y, "values-nonfinite-order", "x", values="nan: .nan\ninf: .inf\n")
c(Y, "values-nonfinite-nested", "x", values="z: 1\nb:\n  y: .nan\n  a: -.inf\n")

# ------------------------------------------------------- named time zones
Z = "zones"
many(Z, "dateinzone", [
    '{{ dateInZone "2006-01-02 15:04:05 MST -0700" (toDate "2006-01-02T15:04:05Z07:00" "2024-01-15T12:00:00Z") "Europe/Rome" }}',
    '{{ dateInZone "2006-01-02 15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T12:00:00Z") "Europe/Rome" }}',
    '{{ dateInZone "15:04 MST Z07:00" (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T12:00:00Z") "America/New_York" }}',
    '{{ dateInZone "2006-01-02 15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-03-10T06:59:00Z") "America/New_York" }}|{{ dateInZone "15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-03-10T07:01:00Z") "America/New_York" }}',
    '{{ dateInZone "15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T12:00:00Z") "Asia/Kolkata" }} {{ dateInZone "15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T12:00:00Z") "America/Sao_Paulo" }}',
    '{{ dateInZone "15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T12:00:00+02:00") "Nowhere/City" }} {{ dateInZone "15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T12:00:00+02:00") "UTC" }}',
    '{{ htmlDateInZone (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T23:30:00Z") "Asia/Tokyo" }} {{ htmlDateInZone (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T23:30:00Z") "America/Los_Angeles" }}',
    '{{ dateInZone "Mon Jan 2 15:04:05 MST 2006" 1700000000 "Australia/Sydney" }}',
])

# ------------------------------------------------ the process's own zone (TZ)
# Rendered by Helm in a process whose TZ is the case's `tz` ("" is TZ set
# empty, which Go reads as UTC; an unknown name falls back to UTC too).
LZ = "localzone"
LOCAL_TEMPLATES = [
    '{{ date "2006-01-02 15:04:05 MST -0700" (toDate "2006-01-02T15:04:05Z07:00" "2024-01-15T12:00:00Z") }}',
    '{{ date "15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T12:00:00+02:00") }}',
    '{{ toDate "2006-01-02 15:04" "2024-07-15 12:00" }}',
    '{{ toDate "2006-01-02 15:04 -0700" "2024-07-15 12:00 +0200" }}|{{ toDate "2006-01-02 15:04 -0700" "2024-07-15 12:00 +0900" }}',
    '{{ toDate "2006-01-02 15:04" "2024-07-15 12:00" | unixEpoch }}',
    '{{ htmlDate (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T23:30:00Z") }}',
    '{{ date "2006-01-02 15:04 MST" 1700000000 }}',
    '{{ dateInZone "15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2024-07-15T12:00:00Z") "Local" }}',
    '{{ dateModify "2h" (toDate "2006-01-02 15:04" "2024-03-31 01:30") }}',
    '{{ toDate "2006-01-02 15:04 MST" "2024-07-15 12:00 CEST" }}|{{ toDate "2006-01-02 15:04 MST" "2024-07-15 12:00 PDT" }}',
    '{{ (toDate "2006-01-02 15:04" "2024-07-15 12:00").UTC }}',
    '{{ mustToDate "2006-01-02" "2024-07-15" }}',
    '{{ htmlDateInZone (toDate "2006-01-02 15:04" "2024-07-15 00:30") "UTC" }}',
]
for label, tz in [("rome", "Europe/Rome"), ("saopaulo", "America/Sao_Paulo"), ("kolkata", ":Asia/Kolkata"),
                  ("empty", ""), ("unknown", "Nowhere/City"), ("utc", "UTC")]:
    for i, t in enumerate(LOCAL_TEMPLATES):
        c(LZ, f"{label}-{i:03d}", t, tz=tz)

# A zone file that is no named zone: TZ is the path of a TZif file written
# for the case (`tzif`; "{tzif}" in `tz` stands for its path, as an
# /etc/localtime that is a copy would be read). Versions 1, 2 and 3, the
# footer's TZ rule after the last transition (month-week-day, Julian and
# day-of-year rules, southern hemisphere, version 3's hours past 24 and
# below 0), the zone before the first transition, abbreviations parsed
# back, and a file that is not TZif (UTC).
import struct


def tzif(version, zones, transitions, footer=None, v1_zones=None):
    """zones: [(offset, isdst, abbrev)]; transitions: [(when, zone index)]."""
    def block(big, zs, txs):
        abbrevs = b""
        idx = []
        for _, _, name in zs:
            n = name.encode() + b"\0"
            at = abbrevs.find(n)
            if at < 0:
                at = len(abbrevs)
                abbrevs += n
            idx.append(at)
        head = struct.pack(">6I", 0, 0, 0, len(txs), len(zs), len(abbrevs))
        body = b"".join(struct.pack(">q" if big else ">i", w) for w, _ in txs)
        body += bytes(i for _, i in txs)
        body += b"".join(struct.pack(">iBB", off, dst, idx[k]) for k, (off, dst, _) in enumerate(zs))
        return head, body + abbrevs
    ver = {1: b"\0", 2: b"2", 3: b"3"}[version]
    h1, b1 = block(False, v1_zones or zones, [] if version > 1 else transitions)
    out = b"TZif" + ver + b"\0" * 15 + h1 + b1
    if version > 1:
        h2, b2 = block(True, zones, transitions)
        out += b"TZif" + ver + b"\0" * 15 + h2 + b2 + b"\n" + (footer or "").encode() + b"\n"
    return out


TZIF_TEMPLATES = LOCAL_TEMPLATES + [
    '{{ date "2006-01-02 15:04 MST -0700" (toDate "2006-01-02T15:04:05Z07:00" "2100-07-15T12:00:00Z") }}|{{ date "2006-01-02 15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "2100-01-15T12:00:00Z") }}',
    '{{ date "2006-01-02 15:04 MST -0700" (toDate "2006-01-02T15:04:05Z07:00" "1900-07-15T12:00:00Z") }}|{{ date "2006-01-02 15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "1969-12-31T23:00:00Z") }}',
    '{{ date "2006-01-02 15:04 MST -0700" (toDate "2006-01-02T15:04:05Z07:00" "1960-07-15T12:00:00Z") }}|{{ date "2006-01-02 15:04 MST" (toDate "2006-01-02T15:04:05Z07:00" "1960-01-15T12:00:00Z") }}',
    '{{ range $d := list "2030-03-10T06:59:00Z" "2030-03-10T07:00:00Z" "2030-11-03T05:59:00Z" "2030-11-03T06:00:00Z" "2031-04-06T15:59:00Z" "2031-04-06T16:00:00Z" "2031-10-05T15:59:00Z" "2031-10-05T16:00:00Z" }}{{ date "2006-01-02 15:04 MST -0700" (toDate "2006-01-02T15:04:05Z07:00" $d) }},{{ end }}',
    '{{ toDate "2006-01-02 15:04 MST" "2030-07-15 12:00 XDT" | unixEpoch }}|{{ toDate "2006-01-02 15:04 MST" "2030-01-15 12:00 XDT" | unixEpoch }}|{{ toDate "2006-01-02 15:04 MST" "2030-07-15 12:00 XST" | unixEpoch }}|{{ toDate "2006-01-02 15:04 MST" "2030-07-15 12:00 ABC" | unixEpoch }}',
    '{{ toDate "2006-01-02 15:04" "2030-03-10 02:30" | unixEpoch }}|{{ toDate "2006-01-02 15:04" "2030-11-03 01:30" | unixEpoch }}|{{ dateModify "24h" (toDate "2006-01-02 15:04" "2030-03-09 12:00") }}',
]
_X = [(-18000, 0, "XST"), (-14400, 1, "XDT")]
_TZIFS = [
    # version 2, two transitions, the footer's US-style rule after them
    ("v2-rule", tzif(2, _X, [(1262329200, 0), (1268550000, 1)], "XST5XDT,M3.2.0,M11.1.0")),
    # version 1 only: 32-bit transitions, no footer (the last zone for ever)
    ("v1", tzif(1, _X, [(1262329200, 0), (1268550000, 1), (1289109600, 0)])),
    # version 3: hours past 24 and below 0 in the rule (as Nuuk's)
    ("v3-hours", tzif(3, [(-10800, 0, "-03"), (-7200, 1, "-02")], [(1000000000, 0)], "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1")),
    # southern hemisphere: the DST period wraps the year's end
    ("south", tzif(2, [(36000, 0, "AEST"), (39600, 1, "AEDT")], [(1000000000, 1)], "AEST-10AEDT,M10.1.0,M4.1.0/3")),
    # Julian and day-of-year rules, a named DST offset, seconds in offsets
    ("julian", tzif(2, _X, [(1000000000, 0)], "XST5:30:15XDT4:00:15,J60/1:30,300/25")),
    # no transitions at all: a fake one at the beginning of time, then the
    # footer for every instant (before 1970 too)
    ("notx", tzif(2, _X, [], "XST5XDT,M3.2.0,M11.1.0")),
    # a fixed zone, its footer with no DST
    ("fixed", tzif(2, [(19800, 0, "+0530")], [], "<+0530>-5:30")),
    # the first transition is to DST: the standard zone before it
    ("first-dst", tzif(2, [(-14400, 1, "XDT"), (-18000, 0, "XST"), (-14400, 1, "XDT")], [(1262329200, 2), (1268550000, 1)])),
    # a footer that does not parse: the last transition's zone
    ("bad-footer", tzif(2, _X, [(1262329200, 0), (1268550000, 1)], "XST5XDT,M13.2.0,M11.1.0")),
    # the version 1 block says one thing, the version 2 block another
    ("v2-over-v1", tzif(2, _X, [(1262329200, 0)], "XST5", v1_zones=[(3600, 0, "BAD")])),
    # not TZif, and TZif cut short: Go falls back to UTC
    ("not-tzif", b"Europe/Rome\n"),
    ("truncated", tzif(2, _X, [(1262329200, 0), (1268550000, 1)], "XST5XDT,M3.2.0,M11.1.0")[:60]),
]
for label, data in _TZIFS:
    for i, t in enumerate(TZIF_TEMPLATES):
        c(LZ, f"tzif-{label}-{i:03d}", t, tz="{tzif}", tzif=data)
for i, t in enumerate(TZIF_TEMPLATES):
    # ":path" reads the file the same way
    c(LZ, f"tzif-colon-{i:03d}", t, tz=":{tzif}", tzif=_TZIFS[0][1])
for label, tz in [("path-tokyo", "/usr/share/zoneinfo/Asia/Tokyo"), ("path-missing", "/nonexistent/zone"),
                  ("path-dir", "/usr/share/zoneinfo"), ("name-ny", "America/New_York"),
                  ("posix-string", "EST5EDT,M3.2.0,M11.1.0"), ("dotdot", "../zoneinfo/Asia/Tokyo")]:
    for i, t in enumerate(TZIF_TEMPLATES):
        c(LZ, f"{label}-{i:03d}", t, tz=tz)

# ------------------------------------- Helm's objects as data (toJson/toYaml)
# chart.Metadata, Capabilities, Release and Files printed whole, as Go's
# encoders see the structs behind them (field order, casing, zero values).
HO = "helmobjects"
FULL_CHART = """apiVersion: v2
name: mychart
version: 0.1.0
appVersion: "1.0"
description: conformance case
kubeVersion: ">=1.20.0-0"
type: application
keywords: [a, b]
home: https://example.com
sources: [https://example.com/src]
icon: https://example.com/i.png
deprecated: false
annotations:
  z: last
  a: first
maintainers:
  - name: jane
    email: jane@example.com
    url: https://example.com/jane
  - name: joe
dependencies:
  - name: sub
    version: 0.1.0
    repository: file://sub
    condition: sub.enabled
    tags: [t]
    import-values: [x]
    alias: s
"""
SUB_CHART = "apiVersion: v2\nname: sub\nversion: 0.1.0\n"
many(HO, "chart-data", [
    "{{ toJson .Chart }}",
    "{{ toYaml .Chart }}",
    "{{ toPrettyJson .Chart.Maintainers }}",
    "{{ .Chart.Annotations | toJson }}|{{ .Chart.Keywords | toJson }}|{{ .Chart.Dependencies | len }}",
    "{{ toJson .Capabilities.KubeVersion }}|{{ toJson .Capabilities.APIVersions | trunc 40 }}",
    "{{ toJson .Release }}",
    "{{ toJson .Template }}",
    "{{ .Chart }}",
    "{{ printf \"%v\" .Chart.Maintainers }}",
    "{{ toJson .Files }}",
    "{{ typeOf .Chart }} {{ typeOf .Chart.Maintainers }} {{ typeOf .Chart.Annotations }} {{ typeOf .Files }} {{ typeOf .Capabilities.KubeVersion }} {{ typeOf .Release }}",
    "{{ kindOf .Chart }} {{ kindOf .Chart.Keywords }} {{ kindOf .Files }} {{ kindOf .Release.IsInstall }}",
])
for i, t in enumerate([
    "{{ toJson .Chart }}",
    "{{ toYaml .Chart }}",
    "{{ toPrettyJson .Chart.Maintainers }}",
    "{{ .Chart.Annotations | toJson }}|{{ .Chart.Keywords | toJson }}|{{ .Chart.Dependencies | len }}",
    "{{ range .Chart.Dependencies }}{{ toJson . }}{{ end }}",
    "{{ toYaml .Chart.Dependencies }}",
    "{{ .Chart.Deprecated }} {{ .Chart.Type }} {{ .Chart.KubeVersion }} {{ .Chart.APIVersion }}",
    "{{ .Chart }}",
]):
    c(HO, f"chart-full-{i:03d}", t, files={"Chart.yaml": FULL_CHART, "charts/sub/Chart.yaml": SUB_CHART})

# ------------------------------------------------- more of Go's fmt and numbers
FM = "fmtmore"
many(FM, "verbs", [
    '{{ printf "%5s|%-5s|%.2s|%5.1s|" "abc" "abc" "abc" "abc" }}',
    '{{ printf "%05d|%-05d|%+05d|% d|% d" 42 42 42 42 -42 }}',
    '{{ printf "%x|%X|%#x|%#o|%o|%O|%b|%#b" -255 255 255 8 8 8 5 5 }}',
    '{{ printf "%c|%U|%#U|%q|%+q|%#q" 0x1F600 0x1F600 65 0x1F600 "é" "a`b" }}',
    '{{ printf "%q|%#q|%+q|%x|% x|%X|% X" "tab\\there" "raw" "ü" "héllo" "hé" "hi" "hi" }}',
    '{{ printf "%e|%E|%.3e|%g|%G|%.3g|%g|%g|%g" 123456.789 0.000123 1.0 100000.0 1e21 3.14159 1e-5 1e-4 123456789.0 }}',
    '{{ printf "%.0f|%.0f|%.0f|%.1f|%.2f|%.3f" 0.5 1.5 2.5 0.05 1.005 2.0005 }}',
    '{{ printf "%v|%v|%v|%v|%v|%v" 1e20 1e21 100000000.0 0.000001 0.0000001 -0.0 }}',
    '{{ printf "%6.2f|%-8.3e|%+.1e|%08.3f|%+08d|%x" -3.14159 1234.5678 0.000123 -3.5 -42 3.0 }}',
    '{{ printf "%t|%t|%v|%d" true false true true }}',
    '{{ printf "%s|%v|%d" (list 1 2) (list "a" "b") (list 1 2) }}',
    '{{ printf "%s|%v|%+v" (dict "b" 2 "a" "x") (dict "k" (list 1)) (dict "k" (dict "n" nil)) }}',
    '{{ printf "%#v|%#v|%#v|%#v|%#v" 1 1.5 "s" true nil }}',
    '{{ printf "%T|%T|%T|%T|%T|%T" (dict) true nil .Values.n .Values.f .Values.s }}',
    '{{ printf "%[2]d %[1]d|%[3]d|%[1]*d|%-*d|" 1 2 8 5 3 }}',
    '{{ printf "%d %s" 1 }}|{{ printf "%s" }}|{{ printf "x" 1 "a" }}|{{ printf "%%|%5%|%-5%" }}',
    '{{ printf "%.*f|%*s|%-*s|" 2 3.14159 6 "ab" 6 "ab" }}',
    '{{ printf "%v|%s|%d" .Values.n .Values.n .Values.f }}|{{ printf "%d|%x|%o" .Values.big .Values.big .Values.big }}',
    '{{ printf "%10.4v|%-10v|" 3.14159265 "s" }}|{{ printf "%v" (list (list 1) (dict "a" (list))) }}',
    '{{ printf "%x|%X|% x" (list "ab" "c") (list 10 11) (list 255 1) }}',
    '{{ print 1.0 2.5 }}|{{ print "a" "b" }}|{{ print 1 "a" 2 }}|{{ print nil 1 }}|{{ println }}',
    '{{ printf "%d|%5d|%-5d|%x" .Values.neg .Values.neg .Values.neg .Values.neg }}',
    '{{ printf "%!d|%-!|%z|%!(x" 1 2 3 }}',
    '{{ printf "%e|%g|%v|%f" .Values.inf .Values.ninf .Values.nan .Values.inf }}',
], values="n: 7\nf: 2.5\ns: str\nbig: 12345678901234567890\nneg: -17\ninf: .inf\nninf: -.inf\nnan: .nan\n")
many(FM, "numbers", [
    '{{ int 1e19 }}|{{ int64 1e19 }}|{{ int -1e19 }}|{{ int64 "9223372036854775808" }}|{{ int64 "-9223372036854775809" }}',
    '{{ atoi "-0" }}|{{ atoi "+5" }}|{{ atoi " 5" }}|{{ atoi "9223372036854775807" }}|{{ atoi "9223372036854775808" }}',
    '{{ float64 "1e400" }}|{{ float64 "-1e400" }}|{{ float64 "0x1p-2" }}|{{ float64 "1_000" }}|{{ float64 "inf" }}|{{ float64 "NaN" }}',
    '{{ toString 1e21 }}|{{ toString 1e20 }}|{{ toString 0.1 }}|{{ toString -0.0 }}|{{ toString .Values.big }}|{{ toString .Values.exp }}',
    '{{ toDecimal "0x1f" }}|{{ toDecimal "-0777" }}|{{ toDecimal "08" }}|{{ toDecimal "1e3" }}|{{ toDecimal "" }}',
    '{{ .Values.big }}|{{ .Values.big | int64 }}|{{ .Values.big | int }}|{{ .Values.big | float64 }}|{{ typeOf .Values.big }}',
    '{{ .Values.exp }}|{{ typeOf .Values.exp }}|{{ .Values.oct }}|{{ typeOf .Values.oct }}|{{ .Values.hex }}|{{ .Values.under }}',
    '{{ .Values.negzero }}|{{ .Values.negzero | int }}|{{ .Values.negzero | float64 }}|{{ mul .Values.negzero 1 }}',
    '{{ add 1 1.9 }}|{{ sub 5 2.5 }}|{{ mul 2 2.5 }}|{{ div 7 2 }}|{{ div 7.0 2 }}|{{ mod 7 -3 }}|{{ mod -7 3 }}',
    '{{ addf 1 1.9 }}|{{ subf 5 2.5 }}|{{ mulf 2 2.5 }}|{{ divf 7 2 }}|{{ maxf 1 2.5 }}|{{ minf 1 2.5 }}',
    '{{ max 1 2.9 }}|{{ min 3 1.5 }}|{{ max "3" 2 }}|{{ floor 2.7 }}|{{ ceil 2.1 }}|{{ round 2.555 2 }}|{{ round -2.5 0 }}',
    '{{ int .Values.f }}|{{ int64 .Values.f }}|{{ int "2.5" }}|{{ int64 "2.9" }}|{{ float64 .Values.n }}|{{ int true }}',
    '{{ 12345678901234567890 }}',
    '{{ 0x10 }}|{{ 0o17 }}|{{ 0b101 }}|{{ 1_000 }}|{{ 1e2 }}|{{ .5 }}|{{ 1. }}|{{ -0 }}|{{ 0x1p4 }}',
    '{{ len (seq 3) }}|{{ seq 1 0.5 2 }}|{{ until 3 }}|{{ untilStep 0 10 3 }}|{{ untilStep 5 0 -2 }}',
    '{{ toJson .Values.big }}|{{ toJson .Values.exp }}|{{ toJson .Values.negzero }}|{{ toYaml .Values.big }}|{{ toJson 1e21 }}',
], values="big: 12345678901234567890\nexp: 1.5e3\nnegzero: -0.0\noct: 0o17\nhex: 0x1F\nunder: 1_000\nn: 7\nf: 2.5\n")

# ---------------------------------------------------------------- bytes
# Go strings hold arbitrary bytes: files that are not UTF-8 (compressed
# dashboards, keystores) must reach b64enc, the checksums and len intact.
import bz2 as _bz2, gzip as _gzip  # noqa: E402

_DASH = ("{\"title\": \"dashboard\", \"panels\": [" + ", ".join("{\"id\": %d}" % i for i in range(40)) + "]}\n").encode()
BIN = {
    "files/dash.json.bz2": _bz2.compress(_DASH, 9),
    "files/dash.json.gz": _gzip.compress(_DASH, 9, mtime=0),
    "files/raw.bin": b"BZh\xff\xe2\x82A\xc3\xa9\x00\x80\xfe\n\xf0\x9f\x98\x80\xed\xa0\x80end\n",
    "files/latin1.txt": "caf\xe9 cr\xe8me\nna\xefve\n".encode("latin-1"),
}
B = "bytes"
for i, t in enumerate([
    '{{ .Files.Get "files/dash.json.bz2" | b64enc }}',
    '{{ .Files.Get "files/dash.json.gz" | b64enc }}',
    '{{ .Files.Get "files/dash.json.gz" | sha256sum }}|{{ .Files.Get "files/dash.json.gz" | sha1sum }}|{{ .Files.Get "files/dash.json.gz" | adler32sum }}',
    '{{ .Files.Get "files/raw.bin" | len }}|{{ .Files.Get "files/dash.json.bz2" | len }}|{{ .Files.GetBytes "files/raw.bin" | len }}',
    '{{ .Files.Get "files/raw.bin" | b64enc }}|{{ .Files.Get "files/raw.bin" | b32enc }}|{{ .Files.Get "files/raw.bin" | sha512sum }}',
    '{{ .Files.GetBytes "files/raw.bin" | toString | b64enc }}|{{ printf "%s" (.Files.GetBytes "files/raw.bin") | b64enc }}',
    '{{ (.Files.Glob "files/*").AsSecrets }}',
    '{{ (.Files.Glob "files/*.txt").AsConfig }}',
    '{{ .Files.Get "files/raw.bin" | quote }}|{{ .Files.Get "files/raw.bin" | squote }}',
    '{{ printf "%q|%+q|%#q|%x|% X|%.3q|%10.2q" (.Files.Get "files/raw.bin") (.Files.Get "files/raw.bin") (.Files.Get "files/latin1.txt") (.Files.Get "files/raw.bin") (.Files.Get "files/latin1.txt") (.Files.Get "files/raw.bin") (.Files.Get "files/latin1.txt") }}',
    '{{ .Files.Get "files/raw.bin" | toJson }}|{{ dict "k" (.Files.Get "files/latin1.txt") | toJson }}|{{ .Files.Get "files/latin1.txt" | toRawJson }}',
    '{{ dict "k" (.Files.Get "files/latin1.txt") | toYaml }}',
    'raw: {{ .Files.Get "files/raw.bin" }}',
    'latin: {{ .Files.Get "files/latin1.txt" | indent 2 }}',
    '{{ range .Files.Lines "files/latin1.txt" }}[{{ . | b64enc }}:{{ len . }}]{{ end }}',
    '{{ $b := .Files.Get "files/raw.bin" | b64enc }}{{ $b | b64dec | b64enc }}|{{ $b | b64dec | len }}|{{ "/w==" | b64dec | len }}|{{ "/w==" | b64dec | sha256sum }}',
    '{{ substr 0 4 (.Files.Get "files/raw.bin") | b64enc }}|{{ trunc 5 (.Files.Get "files/raw.bin") | b64enc }}|{{ trunc -3 (.Files.Get "files/latin1.txt") | b64enc }}',
    '{{ typeOf (.Files.Get "files/raw.bin") }}|{{ kindOf (.Files.Get "files/raw.bin") }}|{{ eq (.Files.Get "files/raw.bin") (.Files.Get "files/latin1.txt") }}|{{ eq (.Files.Get "files/raw.bin") (.Files.Get "files/raw.bin") }}|{{ empty (.Files.Get "files/raw.bin") }}',
    '{{ define "raw" }}{{ .Files.Get "files/raw.bin" }}{{ end }}{{ include "raw" . | b64enc }}|{{ include "raw" . | len }}',
    '{{ cat (.Files.Get "files/latin1.txt") "x" | b64enc }}|{{ print (.Files.Get "files/raw.bin") 1 | b64enc }}|{{ list (.Files.Get "files/raw.bin") | toJson }}',
    '{{ .Files.Get "files/raw.bin" | upper | b64enc }}|{{ .Files.Get "files/latin1.txt" | replace "\\n" "," | b64enc }}|{{ .Files.Get "files/latin1.txt" | trim | b64enc }}',
    '{{ index (.Files.Get "files/raw.bin") 3 }}|{{ printf "%v" (.Files.GetBytes "files/latin1.txt") }}|{{ .Files.Get "files/latin1.txt" | nospace | b64enc }}',
    '{{ regexFind "caf." (.Files.Get "files/latin1.txt") | b64enc }}|{{ splitList " " (.Files.Get "files/latin1.txt") | len }}|{{ .Files.Get "files/latin1.txt" | contains "na" }}',
]):
    c(B, f"files-{i:03d}", t, binfiles=BIN)
c(B, "rune-functions", '{{ $r := .Files.Get "files/raw.bin" }}{{ swapcase $r | b64enc }}|{{ untitle $r | b64enc }}|{{ shuffle $r | len }}|{{ abbrev 6 $r | b64enc }}|{{ wrap 4 $r | b64enc }}', binfiles=BIN)
c(B, "rune-functions-2", '{{ $r := .Files.Get "files/raw.bin" }}{{ camelcase $r | b64enc }}|{{ snakecase $r | b64enc }}|{{ kebabcase $r | b64enc }}|{{ initials $r | b64enc }}', binfiles=BIN)
# Each function that walks runes, on bytes that are not UTF-8 at every
# place a word can start, end or be cut (xstrings skips them with
# nextValidRune, goutils reads bytes as Latin-1, strings.Map writes U+FFFD),
# and on a genuine U+FFFD, which Go cannot tell from a bad byte.
RUNEBIN = {
    "files/r1": b"\xffabc",
    "files/r2": b"ab\xff_cd",
    "files/r3": b"HTTP\xffServer\xfe",
    "files/r4": b"_\xff-\xfe x",
    "files/r5": b"\xff\xfe",
    "files/r6": b"a1\xff2b Bld4\xffFloor3rd",
    "files/r7": b"Abc\xc3\xa9D\xe2\x82 \xa0x\x85y",
    "files/r8": "a\ufffdB \ufffd".encode(),
    "files/r9": b"\xe2\x82HTTP20xOK \xf0\x9f\x98 go-PATH\xff",
    "files/ra": b"  \xc3\x28 \xe9t\xe9 \xcc\x88a  ",
}
for i, fn in enumerate(["camelcase", "snakecase", "kebabcase", "initials", "swapcase", "untitle", "title",
                        "upper", "lower", "nospace", "trim", "shuffle | len", "wrap 3", "wrapWith 4 \"/\"",
                        "abbrev 5", "abbrevboth 5 9", "substr 1 4", "trunc 3", "trunc -3", "replace \"\" \".\"",
                        "indent 2", "repeat 2", "quote", "cat \"x\"", "trimAll \"_\"", "splitList \"\" | join \",\"",
                        "toJson", "toYaml"]):
    c(B, f"rune-invalid-{i:03d}", '{{ range $p, $_ := .Files.Glob "files/r*" }}{{ $.Files.Get $p | ' + fn +
      ' | toString | b64enc }}|{{ end }}', binfiles=RUNEBIN)
c(B, "template-text", "{{ .Release.Name }}\n", binfiles={"templates/b.yaml": b"a: \xff\xfe{{ \"x\" | b64enc }}\xe9\n"})
c(B, "secret-data", 'data:\n{{- range $p, $_ := .Files.Glob "files/*.{gz,bz2}" }}\n  {{ base $p }}: {{ $.Files.Get $p | b64enc | quote }}\n{{- end }}\n', binfiles=BIN)

# ---------------------------------------------------------------- fmtfidelity
# fmt details found out of sample: precision on %q, explicit argument
# indexes, nil inside lists, negative zero, toToml of a non-map, Sprig's
# regex functions with no match (nil slices), invalid UTF-8 under %q.
many("fmtfidelity", "q", [
    '{{ printf "%.3q|%.0q|%10.2q|%-8.1q|%.2+q|%#.2q" "abcdef" "abc" "hello" "xyz" "é€x" "a`b" }}',
    '{{ printf "%q|%+q|%#q|%#q|%#+q" "tab\\there" "é" "back`tick" "plain" "ü" }}',
    '{{ printf "%.2s|%.1v|%5.1s|%x|%X|% x|%#x|% #x|%.2x" "héllo" "xyz" "abc" "hi" "hi" "hi" "hi" "hi" "hello" }}',
    '{{ printf "%q" (list "a" 1 nil) }}|{{ printf "%.1q" (list "ab" "cd") }}|{{ printf "%x" "" }}|{{ printf "%5x|" "" }}',
])
many("fmtfidelity", "index", [
    '{{ printf "%[2]d %[1]d" 1 2 }}|{{ printf "%[3]v %v" 1 2 3 }}|{{ printf "%[1]s %[1]q" "x" }}',
    '{{ printf "%[5]d" 1 2 }}|{{ printf "%[0]d" 1 }}|{{ printf "%[x]d" 1 }}|{{ printf "%[2]*[1]d|" 12 5 }}|{{ printf "%[1]d %d %d" 1 2 3 }}',
    '{{ printf "%[2]s" "a" }}|{{ printf "%.[2]f" 3.14159 2 }}|{{ printf "%[1]d %[1]d %[1]d" 7 }}|{{ printf "%[-1]d" 1 }}',
])
many("fmtfidelity", "nil", [
    '{{ printf "%s" (list nil 1 "a") }}|{{ printf "%d" (list nil 1 "a") }}|{{ printf "%v" (list nil) }}|{{ printf "%q" (list nil) }}',
    '{{ printf "%s" (dict "a" nil) }}|{{ printf "%d" (dict "a" nil "b" 2) }}|{{ printf "%x" (list nil 255) }}|{{ printf "%5s|" (list nil) }}',
    '{{ printf "%s|%d|%v|%q|%x|%t" nil nil nil nil nil nil }}|{{ print nil }}|{{ println nil nil }}',
    '{{ printf "%s" .Values.l }}|{{ printf "%d" .Values.l }}|{{ printf "%v" .Values.m }}|{{ printf "%s" .Values.m }}',
], values="l: [null, 1, x, ~]\nm: {a: null, b: [null]}\n")
many("fmtfidelity", "negzero", [
    '{{ .Values.z }}|{{ .Values.z | toString }}|{{ .Values.z | toJson }}|{{ .Values.z | toYaml }}|{{ printf "%v|%g|%f|%e|%.1f|%+v" .Values.z .Values.z .Values.z .Values.z .Values.z .Values.z }}',
    '{{ .Values.z | int }}|{{ .Values.z | int64 }}|{{ .Values.z | float64 }}|{{ mulf .Values.z 1 }}|{{ addf .Values.z 0 }}|{{ .Values.z | quote }}|{{ max .Values.z 0 }}',
    '{{ .Values.zl }}|{{ toJson .Values.zl }}|{{ .Values.zs }}|{{ typeOf .Values.zs }}|{{ eq .Values.z 0.0 }}|{{ toString .Values.zi }}',
], values="z: -0.0\nzl: [-0.0, -0, 0.0]\nzs: '-0'\nzi: -0\n")
many("fmtfidelity", "toml", [
    '{{ toToml "x" }}|{{ toToml 1 }}|{{ toToml (list 1 2) }}|{{ toToml true }}|{{ toToml (list (dict "a" 1)) }}',
    '{{ toToml nil }}',
    '{{ toToml (dict) }}|{{ toToml (dict "a" nil) }}|{{ toToml (dict "a" (list 1 "x")) }}|{{ toToml .Values }}',
], values="a: 1\nb: {c: [1, 2]}\n")
many("fmtfidelity", "regex", [
    '{{ regexFindAll "z" "abc" -1 | toJson }}|{{ regexFindAll "b" "abc" 0 | toJson }}|{{ regexFindAll "b" "abcb" 1 | toJson }}|{{ mustRegexFindAll "z" "abc" -1 | toJson }}',
    '{{ regexSplit "z" "abc" -1 | toJson }}|{{ regexSplit "b" "abc" 0 | toJson }}|{{ regexSplit "" "abc" -1 | toJson }}|{{ mustRegexSplit "z" "" -1 | toJson }}',
    '{{ regexFind "z" "abc" | toJson }}|{{ regexReplaceAll "z" "abc" "x" }}|{{ regexFindAll "z" "abc" -1 | len }}|{{ regexFindAll "z" "abc" -1 | typeOf }}|{{ regexFindAll "z" "abc" -1 | toYaml }}',
    '{{ splitList "," "" | toJson }}|{{ split "," "" | toJson }}|{{ regexFindAll "a*" "baaab" -1 | toJson }}|{{ empty (regexFindAll "z" "abc" -1) }}',
])
many("fmtfidelity", "quote", [
    '{{ printf "%q" .Values.s }}|{{ quote .Values.s }}|{{ squote .Values.s }}|{{ .Values.s | toJson }}',
    '{{ quote "\\u00e9\\u200b" }}|{{ printf "%q|%+q" "\\u200b\\ufeff" "\\u200b" }}|{{ quote "\\x7f" }}|{{ printf "%#q" "\\ufeff" }}',
], values="s: \"a\\x01b\\tc\\u2028d\"\n")

# ---------------------------------------------------------------- valuesdocs
# values.yaml with several YAML documents: Helm v4's LoadValues reads them
# with Kubernetes' YAMLReader (a `---` line may only be followed by a
# comment) and merges them; each document parses on its own.
for i, v in enumerate([
    "a: {b: 1}\n---\na: {c: 2}\n--- # comment\nd: 3\n",
    "a: 1\n---\nb: [\n",
    "a: 1\n---x\nb: 2\n",
    "a: 1\n---\n- x\n",
    "---\n---\na: 1\n---\n",
    "a: 1\n--- \nb: 2\n---\t# c\nc: 3\n",
    "a: [1, 2]\n---\na: [3]\nb: null\n---\nb: {x: 1}\n",
    "a: 1\n----\nb: 2\n",
    "a: |\n  text\n  --- not a separator\nb: 2\n",
    "a: 1\n---\nb: 2\n  c: 3\n",
    "x: 1\n...\n---\ny: 2\n",
]):
    c("valuesdocs", f"docs-{i:03d}", "{{ toJson .Values }}", values=v)

# ---------------------------------------------------------------- unicode
# Go's unicode tables (Unicode 15.0.0 in Go 1.26): categories (Lu, Ll, Lt,
# L, N, P, White_Space) and the simple one-rune case mappings behind upper,
# lower, title, swapcase, untitle and the xstrings case converters.
U = "unicode"
many(U, "case", [
    '{{ upper "ß ǰ ŉ ᾀ ᾳ ᾈ ﬀ ΐ ǆ ǅ İ ı ſ ẞ K Å µ" }}|{{ lower "ß ǰ ŉ ᾀ ᾳ ᾈ ﬀ ΐ Ǆ ǅ İ I K Å Ω ẞ" }}',
    '{{ title "ǆemal ᾀx ßx ﬀx ŉx ǰx ǳ ᾳ ı i" }}|{{ title "a_b a-b a.b a\\u00a0b a\\u2003b a\\u00adb 1a ½a a·b" }}',
    '{{ swapcase "ǅ ǆ ǆǆ Ǆ ᾈ ᾀ ß ǰ İ ı Ⅰ ⅰ Ⓐ ⓐ ª ʰ" }}|{{ untitle "Ǆ ǅ İ Ⅰ Ⓐ ᾈ ÉCOLE" }}',
    '{{ camelcase "ǆ_ǅ-Ǆ ﬀ_ß ᾀ_ᾈ ⅰ_ⓐ ª_ʰ" }}|{{ camelcase "_" }}|{{ camelcase "__" }}|{{ camelcase "a" }}|{{ camelcase "-a_" }}|{{ camelcase " " }}|{{ camelcase "HTTPServer_x" }}',
    '{{ snakecase "ǅemalǄX ⅠⅡ ⒶⒷ ªBc ʰA ÉcoleNormale 日本Go語 Ⅻ½3x ١٢٣a" }}|{{ kebabcase "a«b»C¿D¡e — F‿g ⁅h⁆" }}',
    '{{ snakecase "α1Β2γΔ ΣΊΣΥΦΟΣ Ꭰꭰ ႠⴀᲐა 𐐀𐐨" }}|{{ kebabcase "HTTP20xOK Bld4Floor3rd Duration2m3s http2xx FOO_bar--Baz  x" }}',
    '{{ initials "ábc déf\\u00a0ghi" }}|{{ nospace "a\\u00a0b\\u3000c\\u2003d" }}|{{ nospace "café" }}|{{ nospace "日本" }}|{{ initials "日本 語" }}',
    '{{ upper "ａｂｃ ⓐ ⅰ ꭰ ა ᲀ" }}|{{ lower "ＡＢＣ Ⓐ Ⅰ Ꭰ Ა Ᲊ" }}|{{ title "ⓐⓑ ⅰⅱ ꭰx აბ" }}',
])
# Every rune of the blocks that have cased letters, through each case
# function: the tables must agree rune by rune.
_CASED_BLOCKS = [(0xA0, 0x58F), (0x10A0, 0x10FF), (0x13A0, 0x13FF), (0x1C80, 0x1CBF), (0x1D00, 0x1FFF),
                 (0x2100, 0x218F), (0x24B0, 0x24FF), (0x2C00, 0x2D2F), (0xA640, 0xA7FF), (0xAB30, 0xABBF),
                 (0xFB00, 0xFB4F), (0xFF20, 0xFF5A), (0x10400, 0x104FF), (0x10570, 0x105BF), (0x10C80, 0x10CFF),
                 (0x118A0, 0x118FF), (0x16E40, 0x16E9F), (0x1E900, 0x1E95F)]
_CASED = "".join(chr(x) for lo, hi in _CASED_BLOCKS for x in range(lo, hi + 1))
c(U, "cased-all", '{{ $s := .Files.Get "files/cased.txt" }}{{ $w := .Files.Get "files/cased-words.txt" }}'
  '{{ upper $s }}\n{{ lower $s }}\n{{ title $w }}\n{{ swapcase $s }}\n{{ swapcase $w }}\n{{ untitle $w }}\n',
  files={"files/cased.txt": _CASED, "files/cased-words.txt": " ".join(_CASED)})
c(U, "cased-all-xstrings", '{{ $s := .Files.Get "files/cased.txt" }}{{ $w := .Files.Get "files/cased-words.txt" }}'
  '{{ camelcase $w }}\n{{ snakecase $s }}\n{{ kebabcase $w }}\n',
  files={"files/cased.txt": _CASED, "files/cased-words.txt": "_".join(_CASED)})
# text/template names: `_`, unicode.IsLetter, unicode.IsDigit (Nd only).
many(U, "ident", [
    '{{ $aⅰ := 1 }}{{ $aⅰ }}',
    '{{ $a١٢ := 2 }}{{ $a١٢ }}',
    '{{ $aা := 3 }}{{ $aা }}',
    '{{ $ªʰ := 4 }}{{ $ªʰ }}',
    '{{ $a½ := 5 }}{{ $a½ }}',
    '{{ $日本 := 6 }}{{ $日本 }}|{{ .Values.ünï }}',
], values="ünï: 7\n")

# ---------------------------------------------------------------- chartmeta
# Chart.yaml's strings after Validate's sanitizeString: unicode.IsSpace
# becomes a space, what unicode.IsPrint refuses goes; version, apiVersion,
# type, annotations and a dependency's alias are left alone.
CM = "chartmeta"
_CM_HEAD = "apiVersion: v2\nname: mychart\nversion: 0.1.0\n"
for i, chart in enumerate([
    _CM_HEAD + 'description: "a\\tb\\nc\\u00a0d\\u200be\\x01f\\u0378g\\ue000h\\U000E0001i\\u00adj\\u2028k\\x85l\\ufeffm\\u08e2n\\u1c89o"\n',
    _CM_HEAD + 'description: "x\\u3000y\\u1680z\\u205f\\u202f\\u2000\\u200a.\\u180e\\u061c\\u0600\\U0001d173\\U000F0000\\ufff9\\ufffd\\u0300\\u20ac\\U0001F600"\n',
    _CM_HEAD + 'appVersion: "1.0\\t\\u200b"\nkubeVersion: ">=1.0\\u200b"\nhome: "h\\u200b"\nicon: "i\\u200b"\nsources: ["s\\u200b\\t"]\nkeywords: ["k\\u200b\\n"]\nmaintainers: [{name: "n\\u200b", email: "e\\u200b", url: "u\\u200b"}]\nannotations: {a: "x\\u200b\\t"}\ncondition: "c\\u200b"\ntags: "t\\u200b"\n',
    'apiVersion: "v2\\u200b"\nname: mychart\nversion: 0.1.0\n',
    'apiVersion: v2\nname: "my\\u200bchart\\u00ad"\nversion: 0.1.0\n',
    _CM_HEAD + 'description: |\n  line one\n  line two\n\n  after a blank\n',
    _CM_HEAD + 'description: >-\n  folded\n  text\n',
]):
    c(CM, f"sanitize-{i:03d}", '{{ toJson .Chart }}|{{ .Chart.Description | b64enc }}', files={"Chart.yaml": chart})
for i, chart in enumerate([
    'apiVersion: v2\nname: mychart\nversion: "0.1.0\\t"\n',
    'apiVersion: v2\nname: mychart\nversion: "0.1.0\\u200b"\n',
    _CM_HEAD + 'type: "application\\u200b"\n',
    _CM_HEAD + 'type: "application "\n',
    'apiVersion: v2\nname: "\\u200b"\nversion: 0.1.0\n',
    'apiVersion: v2\nname: "a/\\u200bb"\nversion: 0.1.0\n',
    'apiVersion: v2\nname: ".\\u200b."\nversion: 0.1.0\n',
    _CM_HEAD + 'dependencies: [{name: "d\\u200b", version: "1", alias: "a\\u200b"}]\n',
    _CM_HEAD + 'dependencies: [{name: "d\\u00e9\\t", version: "1", alias: "a b"}]\n',
    _CM_HEAD + 'dependencies: [{name: "d\\u200b", version: "1"}, {name: "d", version: "2"}]\n',
]):
    c(CM, f"validate-{i:03d}", '{{ toJson .Chart }}', files={"Chart.yaml": chart})

# ---------------------------------------------------------------- yamlerrors
# go-yaml's scanner and parser errors (go.yaml.in/yaml/v2, a port of
# libyaml, under sigs.k8s.io/yaml), worded and numbered as Helm prints
# them: values.yaml (and so -f files), Chart.yaml. A scanner error gives
# the 1-based line of where it stopped, a parser error the 0-based line of
# its problem (or of its context), and none shows line 0.
YE = "yamlerrors"
for i, v in enumerate([
    "a: b: c\n",
    "x: 1\na: b: c\n",
    "a:\n  - 1\n - 2\n",
    "a: 'unterminated\n",
    "a: \"unterminated\n",
    "x: 1\ny: \"abc\n",
    "a: 1\n\tb: 2\n",
    "\ta: 1\n",
    "a:\n\t- 1\n",
    "a: [1, 2\n",
    "a: {b: 1\n",
    "a: [1, 2}\n",
    "a: {b: 1]\n",
    "a: @x\n",
    "a: `x\n",
    "x: 1\na: %x\n",
    "a: 1\n b: 2\n",
    "a: 1\n  b: 2\n",
    "- a\nb: 1\n",
    "a: 1\n- b\n",
    "a: *x\n",
    "a: &x\n",
    "a: &\n",
    "a: !<x\n",
    "a: !x!y z\n",
    "a: \"\\q\"\n",
    "a: \"\\x4\"\n",
    "a: \"\\ud800\"\n",
    "a: |\n  x\n y\n",
    "a: |0\n  x\n",
    "a: |x\n",
    "a: >2-x\n",
    "? a\n? b\n: c\n",
    "a: b\nc\n",
    "a\nb: c\n",
    "%YAML 1.1\n%YAML 1.1\n---\na: 1\n",
    "%FOO\n---\na: 1\n",
    "%TAG ! !x\n%TAG ! !y\n---\na: 1\n",
    "a: !e!x y\n",
    "--- a\n--- b: c\n",
    "a: 1\n...\nb\n: 2\n",
    "a: [b: c: d]\n",
    "a: {b: c: d}\n",
    "[a, b]: c\n",
    "a: -\n",
    "a: - b\n",
    "a:\n- b\n - c\n",
    "a: 'x'y\n",
    "a: \"x\"y\n",
    "'a' b: c\n",
    "a: b #c\nd: e f: g\n",
    "key: value\n  extra: 1\n",
    "list:\n  - a\n  b: 1\n",
    "a: 1\nb:\n  c: 2\n d: 3\n",
    "a: |\n\tx\n",
    "a:\n  b: 1\n\t c: 2\n",
    "a: b\n\t\n",
    "a: 'x\n\n",
    "a: \"x\n---\n",
    "a: 'x\n...\n",
    "a: [\n",
    "a: {\n",
    "a: [1,,2]\n",
    "a: {,}\n",
    "a: ]\n",
    "a: }\n",
    "a: ,b\n",
    "a: b,c\n",
    "a: -b\n",
    "a: ?b\n",
    "a: :b\n",
    "!!\n",
    "&a &b c: d\n",
    "a: *a *b\n",
    "a:\n  - b\n  -c\n",
    "a:\n   b: 1\n  c: 2\n",
    "a: 1\n\n\n  b: 2\n",
    "a: 1\r\n b: 2\r\n",
    "a: \"\\\n",
    "- - - a\n - b\n",
    "a: 'don''t' x\n",
    "x:\n  y: [a, b\n  z: 1\n",
    "{a: 1}}\n",
    "[1]]\n",
    "a: b\n---\nc: d: e\n",
    "a: 1 # x\n# y\n b: 2\n",
    "a: \"\\U0011FFFF\"\n",
    "a: !<tag:yaml.org,2002:str> x\n",
    "a: !!str\n",
    "a:\n  - x\n  - y: 1\n   z: 2\n",
    "a: >\n  x\n\ty\n",
    "a: b\n c\n",
    "a:\n  b\n  c: d\n",
    "a: -1\n- 2\n",
    "a: 1\n? b\n",
    "? a\n",
    ": a\n",
    "- ? a\n  : b\n - c\n",
]):
    c(YE, f"values-{i:03d}", "x", values=v)
# Found by comparing random inputs with real Helm: empty block scalars,
# anchors' characters, '-' and '#' where libyaml takes them, a tab after
# '- ', a block scalar's blank lines indented deeper than its text.
for i, v in enumerate([
    "k: |\n", "k: |+\n", "k: |\n\n\n", "k: |+\n\n\n", "k: >\n", "k: |\n  \n", "k: |+\n  \n", "k: |2\n",
    "k: >+\n\n", "k: |\nn: 1\n", "k: |+\n    \n\n  *al\n", "k: |\n   \n  x\nn: 1\n",
    "- &a\t{#c\n", "]#c\n", "a: [x, - y]\n", "a: [-]\n", "- \tx\n", "-\tx\n", "a: \"x\"#c\n",
    "a: *b:\n", "a: &x1 1\nb: *x1\n", "a: &x.y 1\n", "a: [1,2]#c\n", "a: 1\n|\n*ab\n",
    "a: 1\n\"q\"    ,>\n", "[true{>~\n", "a: 1\n[-}\n", "a:\tb\n", "a: [1,\t2]\n", "a: 1\t# c\n",
    "a: 1\n \tb: 2\n", "a:\n  b: 1\n  \tc: 2\n", "a: |\n  x\n \ty\n", "a: \"x\n\ty\"\n", "a: x\n\t# c\n",
    "\t# c\na: 1\n", "? \ta\n: b\n", "a:\n  - b\n\t- c\n", "{a: 1}: x\n", "[1, 2.5, true, null, [x], {b: c}]: x\n",
    "a: {[1]: 2}\n",
]):
    c(YE, f"found-{i:03d}", "{{ toJson .Values }}", values=v)
for i, chart in enumerate([
    "apiVersion: v2\nname: mychart\nversion: 0.1.0\ndescription: a: b\n",
    "apiVersion: v2\nname: mychart\nversion: 0.1.0\nkeywords:\n  - a\n - b\n",
    "apiVersion: v2\nname: mychart\nversion: 0.1.0\n\tdescription: x\n",
    "apiVersion: v2\nname: 'mychart\nversion: 0.1.0\n",
    "apiVersion: v2\nname: mychart\nversion: 0.1.0\nmaintainers: [{name: a}\n",
    "apiVersion: v2\nname: mychart\nversion: 0.1.0\nannotations:\n  a: @b\n",
]):
    c(YE, f"chart-{i:03d}", "x", files={"Chart.yaml": chart})
# Texts that read differently before go-yaml v2's reader, scanner and
# parser were ported (found by scripts/yaml_random.py), read by fromYaml:
# directives, tags with odd characters ('!t!!str', a quote in a suffix,
# %-escapes), a stream starting with '...', self-referencing anchors,
# tagged scalars the decoder refuses, line breaks NEL/LS, BOMs, bytes that
# are not UTF-8 and control characters.
for i, b64 in enumerate([
    "JVlBTUwgMS4yCg==",
    "JVlBTUwgMS4yCg0KCi0tLQp9",
    "fw==",
    "AA==",
    "LfSQgIA=",
    "e/SQgIA=",
    "fC3AgCZiIA==",
    "wIAmYiB8MCw=",
    "IScsIC0gYHwtYCcKICAhYSdiIA==",
    "ISF0aW1lc3RhbXAgISFiaW5hcnkg",
    "/zE=",
    "/go=",
    "IQ==",
    "ISA=",
    "/v9cXHUwMGU5",
    "//5rMTAwOiB7YTogMH0K",
    "PisywoUhIXN0ciAhJWZmICAJCg==",
    "woU=",
    "4oCo",
    "4oCo",
    "4oIlGw==",
    "YCEnCsMtIA==",
    "IXQhIXN0ciA=",
    "IXQhIXN0ciAxLjU=",
    "Li4u",
    "Li4uCgo=",
    "JnggWyp4XVs=",
    "IWEnYiAhISElNDEgIg==",
    "IiZ4IFsqeF3ml6XmnKzigKh8",
    "IXQhIXN0ciAhYSdiIA0mLSElNDEgLi4uCsOp",
    "ISFib29sIFxuCiAgKmEhIW51bGwgKiEhbnVsbCAjYyEg",
    "Ci0gMWUzCiFmb28gCiAgI2MxZTMhIWJvb2wg",
    "azEwMDogfArigKggIHRleHQgMAprMTAxOgogIC0gMQoqYg==",
    "azEwMDogdjAKISEjIGNvbW1lbnQgMTAxIDEKazEwMjogWzIsIHhdCg==",
    "CiEhYmluYXJ5IFx1MDBlOQ==",
    "azEwMDogISFiaW5hcnkgdjAKazEwMTogfAogIHRleHQgMQo=",
    "azEwOiAhIWludCB2MAo=",
    "ISFudWxsIC0tLSB9ICAK",
    "ISFudWxsIC4uLgpccT4rMuaXpeacrA==",
    "ez8JJmIgPyA=",
    "ISFmbG9hdCAyMDAxLTEyLTE0",
    "ISFudWxsIOKAqCVGT08KCiAgICAlVEFHICF0ISB0YWc6eCwyMDAwOgpbw6k=",
    "JnggWyp4XSEhYmluYXJ5IG5vLS0tIDw8OiAqYQomeCBbKnhdfCVGT08KLSA=",
    "ISF0aW1lc3RhbXAgDQrDqQ==",
    "IXQhIXN0ciAgID4rMj4q",
    "IXQhISdudWxswqDvu78=",
    "bm9ceDTml6XmnKzCheKC",
    "ISFib29sIA==",
    "CiAgICAhIWJvb2wgLCAKLSAt",
    "woVgfQo=",
    "IXQhfiFmb28gJUZPTwos",
    "JnggWyp4XSF0ISFzdHIgIXgheSAKJQotLS0KDS0K",
    "JmEgJ+KAqC4uLgphIXgheSB7PDw6ICph",
    "dHJ1ZcKFCg==",
    "XHg0JVlBTUwgMS4yCizChVw6Cg==",
    "ISFpbnQg",
    "woUtIA==",
    "4oCoPDw6IAo=",
    "woUiISFzdHIgMS41ISU0MSBceDQ=",
    "azEwMDoKICAtIDAKazEwMTogWzEsICF4XQo=",
    "woUhPHRhZzp5YW1sLm9yZywyMDAyOmludD4gMS41CQ==",
    "77u/Pwo=",
]):
    c(YE, f"ported-{i:03d}", '{{ fromYaml (b64dec "%s") | toJson }}' % b64)
# The same classes, written out, through values.yaml.
for i, v in enumerate([
    "a: !t!!str x\n", "a: !t!a x\n", "a: !a'b c\n", "a: !<x'y> z\n", "a: !%41 x\n", "a: !%ff x\n",
    "a: !!int foo\n", "a: !!null x\n", "a: !!float 1\n", "a: !!float x\n", "a: !!timestamp 1\n",
    "a: !!timestamp 2001-12-14\n", "a: !!binary '!!!'\n", "a: !!binary aGk=\n", "a: !!binary |\n  aG\n  k=\n",
    "a: !!bool yes\n", "a: !!int 0x1F\n", "a: !!str 1\n", "a: ! 1\n", "a: !foo 1\n", "b: {a: 1}\na:\n  ! <<: {c: 2}\n",
    "a:\n  !!merge <<: {c: 2}\n", "a: 1e400\n", "a: -1e400\n", "a: .5e999\n", "a: 1e-400\n",
    "...\na: 1\n", "... \na: 1\n", "...\n---\na: 1\n", "...\n...\n", "--- ...\n", "... # c\na: 1\n",
    "a: {b: 1,\n  c: 2\n", "a: {b: 1,\nc: 2\n", "x: 1\na: {b: 1,\n\n\n  c\n", "a: {b: [1,\n  2}\n",
    "a: {\n  b: 1\n  c: 2\n}\n", "a: {b\n  : c}\n", "a: [b,\n  c: d,\n  e\n",
    "a: &x [*x]\n", "a: &x {b: *x}\n", "<<: &x [*x]\n", "a: &x {<<: *x}\n", "a: &x [1, &x 2, *x]\n",
    "? \n: 1\n", "? \n: [1]\n", "%YAML 1.2\n---\na: 1\n", "%TAG !t! tag:x,2000:\n--- !t!a\nb: 1\n",
    "--- \n\n!t!!str x\n", "---\n--- !t!a\n", "---\na: 1\n---\nb: [\n", "a: 1\r\n---\r\nb: 'x\r\n  y'\r\n",
    "a: \u2028b\n", "a: 1\u2028b: 2\n", "a: 1\u0085b: 2\n", "\ufeffa: 1\n", "a: 1\n\ufeffb: 2\n",
]):
    c(YE, f"classes-{i:03d}", "{{ toJson .Values }}", values=v)
# decode.go's check against alias bombs (aliasCount against decodeCount).
_laugh = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
for lvl in "bcdef":
    prev = chr(ord(lvl) - 1)
    _laugh += f"{lvl}: &{lvl} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
for i, v in enumerate([
    "\n".join(_laugh.split("\n")[:3]) + "\n",
    "\n".join(_laugh.split("\n")[:4]) + "\n",
    _laugh,
    "a: &a {k: v}\n" + "".join(f"b{j}: *a\n" for j in range(150)),
    "a: &a {k: v}\n" + "".join(f"b{j}: *a\n" for j in range(600)),
    "a: &a [" + ", ".join(["1"] * 1100) + "]\nb: [" + ", ".join(["*a"] * 3) + "]\n",
    "a: &a [" + ", ".join(["1"] * 300) + "]\nb: [" + ", ".join(["*a"] * 4) + "]\nc: !!int x\n",
]):
    c(YE, f"aliases-{i:03d}", "{{ toJson .Values | sha256sum }}", values=v)

# decode.go's order: go-yaml parses the whole document into nodes first,
# then decodes them in document order (a merge's list from its end),
# expanding each alias where it stands, counting every node for the
# alias-bomb check, and stopping at the first failure: a tag it refuses, an
# alias met inside its own expansion, a merge of what is not a map, a key
# that is a list or a map, excessive aliasing. A map printed in an error
# shows the value set last for a key, merges applied.
_DECODER_TEXTS = [
    "a: &a {x: 1}\nb: {*a : 1, c: !!int x}\n",
    "a: &a [1]\nb: {c: !!int x, *a : 1}\n",
    "b: {<<: [{x: !!int y}, &a {[1]: 2}], c: 1}\n",
    "b: {<<: [&a {[1]: 2}, {x: !!int y}], c: 1}\n",
    "b: {<<: [&a {x: !!int y}, *a], c: 1}\n",
    "b: {<<: [&a {[1]: 1, x: !!int y}, *a]}\n",
    "b: {<<: [&a {x: !!int y, [1]: 1}, *a]}\n",
    "a: &a {k: [1]}\nb: {<<: *a, ? [2] : 1}\n",
    "a: &x [1, *x, !!int y]\n",
    "a: &x {b: [*x], c: !!int y}\n",
    "<<: [&x {a: 1}, *x]\n",
    "<<: [&x {a: *x}, *x]\n",
    "<<: [&x {a: 1, [1]: 2}, &y {b: *x}]\n",
    "a: &x {<<: [*x]}\n",
    "? &k [1]\n: *k\n",
    "a: &a {b: 1}\n? *a\n: !!int x\n",
    "x: {<<: [&a 1]}\n",
    "x: {<<: [&a [1]]}\n",
    "x: {<<: [{}, &a 1, *b]}\n",
    "a: &b {x: 1}\nx: {<<: [*b, &a 1]}\n",
    "x: {<<: &a [{a: 1}, 2]}\ny: {<<: *a}\n",
    "a: &a {x: 1}\nb: {<<: *a, x: 2}\nc: {x: 2, <<: *a}\n",
    "a: &a {x: 1, x: 3}\nb: {? {x: 1, x: 2} : 1}\n",
    "b: {? {x: 1, y: 2, x: 3} : 1}\n",
    "b: {? {<<: {n: 2}, x: 1} : 1}\n",
    "b: {? {<<: [{n: 2}, {n: 3, m: 1}], n: 4} : 1}\n",
    "a: &a <<\nb: {*a : {x: 1}}\n",
    "b: {! <<: {x: 1}}\n",
    "b: {'<<': {x: 1}}\n",
    "b: {!!merge '<<': {x: 1}}\n",
    "b: {!!str <<: {x: 1}}\n",
    "a: &a !!int x\nb: *a\n",
    "a: &a {x: 1}\na2: &a {y: !!int z}\nb: *a\n",
    "a: &a [1]\nb: [*a, &a [!!float q], *a]\n",
    "a: &a {<<: {k: [1]}}\n? *a\n: 1\n",
    "a: [&a {}, *a]\n? *a\n: 1\nc: !!int x\n",
]
for i, v in enumerate(_DECODER_TEXTS):
    c(YE, f"decoder-{i:03d}", '{{ fromYaml (b64dec "%s") | toJson }}' % base64.b64encode(v.encode()).decode())
for i, v in enumerate(t for t in _DECODER_TEXTS if not t.startswith("<<")):
    c(YE, f"decoder-values-{i:03d}", "{{ toJson .Values }}", values=v)
# A failure inside an alias's expansion against the alias-bomb check: a
# merge's list is decoded from its end, so the alias is expanded before the
# anchor's own node, and the check may stop it before or after the refused
# tag inside. Built with `repeat` so the texts stay small here.
_BOMB_MERGE = ('{{ $t := printf "p: [%%s1]\\nm:\\n  <<: [&a {%%sbad: !!int x, %%sz: 1}, *a]\\n" (repeat %d "1, ") '
               '(repeat %d "k: 1, ") (repeat %d "k: 1, ") }}{{ $v := fromYaml $t }}{{ $v.Error }}|{{ len ($v.m | default dict) }}')
_BOMB_LIST = ('{{ $t := printf "p: [%%s1]\\nm: [&a [%%s!!int x, %%s1]]\\nq: {<<: [*a]}\\n" (repeat %d "1, ") '
              '(repeat %d "1, ") (repeat %d "1, ") }}{{ $v := fromYaml $t }}{{ $v.Error }}|{{ len ($v.m | default list) }}')
for pad, n, pos in [(20, 600, 10), (20, 2000, 10), (20, 2000, 1000), (20, 2000, 1500), (20, 2000, 1900),
                    (20, 3000, 1950), (20, 3000, 2050), (5, 1200, 700), (200, 9000, 4000), (200, 30000, 20000)]:
    c(YE, f"bomb-merge-{pad}-{n}-{pos}", _BOMB_MERGE % (pad, pos, n - pos))
    c(YE, f"bomb-list-{pad}-{n}-{pos}", _BOMB_LIST % (pad, pos, n - pos))
for n, pos in [(2000, 1500), (2000, 1900)]:
    c(YE, f"bomb-merge-values-{n}-{pos}", "{{ toJson .Values | sha256sum }}",
      values="p: [" + "1, " * 20 + "1]\nm:\n  <<: [&a {" + "k: 1, " * pos + "bad: !!int x, " + "k: 1, " * (n - pos) + "z: 1}, *a]\n")
# Past 400,000 nodes the allowed ratio of aliased nodes falls as the
# document grows, so a plain node after the aliases can be the one the
# check stops at (decode.go checks at every node).
_BOMB_LATE = ('{{ $t := printf "a: &a [%%s1]\\nb: [*a,*a,*a,*a,*a]\\nc: [%%s1]\\n" (repeat 99999 "1,") (repeat %d "1,") }}'
              '{{ $v := fromYaml $t }}{{ $v.Error }}|{{ len ($v.c | default list) }}')
for t in [3_283_715, 3_283_716]:
    c(YE, f"bomb-late-{t}", _BOMB_LATE % t)

# ---------------------------------------------------------------- engine
# The templates of Helm's own pkg/engine/engine_test.go (v4.2.3), as cases:
# include and tpl with their template names and base paths, defines that
# tpl adds, recursion, required and the rendering of partials.
EN = "engine"
for name, tmpl, files, values in [
    ("title-lower", "{{.Values.outer | title }} {{.Values.inner | title}}|{{.Values.global.callme | lower }}|{{.noValue}}|{{toJson .Values}}",
     None, "outer: spouter\ninner: inn\nglobal:\n  callme: Ishmael\n"),
    ("tpl-include-parent", '{{ tpl "{{ include \\"test\\" . }}" . }}', {"templates/_helpers.tpl": '{{- define "test" -}}parent value{{- end -}}'}, ""),
    ("isroot", "{{.Chart.IsRoot}}|{{.Template.Name}}{{.Chart.Name}}{{.Release.Name}}", None, ""),
    ("files-author", '{{.Files.author | printf "%s"}} {{.Files.Get "book/title.txt"}}', {"author": "Virgil", "book/title.txt": "Aeneid"}, ""),
    ("include-partial-indent", '{{include "mychart/templates/_partial" . | indent 2}} dead.', {"templates/_partial": "{{.Release.Name}} - he"}, ""),
    ("required-missing", 'All your base are belong to {{ required "A valid \'who\' is required" .Values.who }}', None, ""),
    ("required-present", 'All {{ required "A valid \'bases\' is required" .Values.bases }} of them!', None, "bases: 2\n"),
    ("tpl-value", 'Evaluate tpl {{tpl "Value: {{ .Values.value}}" .}}', None, "value: myvalue\n"),
    ("tpl-value-quote", 'Evaluate tpl {{tpl "Value: {{ .Values.value | quote}}" .}}', None, "value: myvalue\n"),
    ("tpl-include-template-name", '{{ tpl "{{include `mychart/templates/_partial` .  | quote }}" .}}', {"templates/_partial": "{{.Template.Name}}"}, ""),
    ("include-recursion", '{{include "recursion" . }}', {"templates/recursion": '{{define "recursion"}}{{include "recursion" . }}{{end}}'}, ""),
    ("tpl-files-defines", "{{ tpl (.Files.Get .Values.filename) . }}",
     {"templates/_function": '{{define "test-function"}}test-function{{end}}', "test": "{{ tpl (.Files.Get .Values.filename2) .}}",
      "test2": '{{include "test-function" .}}{{define "nested-define"}}nested-define-content{{end}} {{include "nested-define" .}}'},
     "filename: test\nfilename2: test2\n"),
    ("tpl-empty", '{{tpl "" .}}|{{tpl "{{ \\"\\"}}" .}}|{{tpl "{{define \\"not-invoked\\"}}not-rendered{{end}}" .}}', None, ""),
    ("tpl-template-fields", '{{tpl "{{ .Template.BasePath }}" .}}|{{tpl "{{ .Template.Name }}" .}}|{{tpl "{{ .Template.BasePath }}" .Values.dot}}|{{tpl "{{ .Template.Name }}" .Values.dot}}|{{tpl "{{ .Template.Field }}" .Values.dot}}',
     None, "dot:\n  Template:\n    BasePath: path/to/template\n    Name: name-of-template\n    Field: extra-field\n"),
    ("tpl-redefines-partial", '{{tpl "{{define \\"partial\\"}}overridden-in-tpl{{end}}{{include \\"partial\\" .}}" .}}|{{include "partial" .}}',
     {"templates/_partials": '{{define "partial"}}original-in-partial{{end}}'}, ""),
    ("tpl-undefined-in-tpl", '{{tpl "{{include \\"nope\\" .}}" .}}', None, ""),
    ("fail-in-include", '{{ include "f" . }}', {"templates/_f.tpl": '{{ define "f" }}{{ fail "boom" }}{{ end }}'}, ""),
]:
    c(EN, name, tmpl, values=values, files=files)
# pkg/engine/funcs_test.go's templates, their data given as values.
for i, (tmpl, values) in enumerate([
    ("{{ toYaml .Values.v }}", "v: {foo: bar}\n"),
    ("{{ toYamlPretty .Values.v }}", "v: {baz: [1, 2, 3]}\n"),
    ("{{ toToml .Values.v }}", "v: {foo: bar}\n"),
    ("{{ fromToml .Values.v }}", 'v: hello = "world"\n'),
    ("{{ fromToml .Values.v }}", 'v: "\\n[table]\\nkeyInTable = \\"valueInTable\\"\\n[table.subtable]\\nkeyInSubtable = \\"valueInSubTable\\""\n'),
    ("{{ fromToml .Values.v }}", 'v: "\\n[[tableArray]]\\nkeyInElement0 = \\"valueInElement0\\"\\n[[tableArray]]\\nkeyInElement1 = \\"valueInElement1\\""\n'),
    ("{{ fromToml .Values.v }}", "v: one\n"),
    ("{{ toJson .Values.v }}", "v: {foo: bar}\n"),
    ("{{ fromYaml .Values.v }}", "v: 'hello: world'\n"),
    ("{{ fromYamlArray .Values.v }}", 'v: "- one\\n- 2\\n- name: helm\\n"\n'),
    ("{{ fromYamlArray .Values.v }}", "v: '[\"one\", 2, { \"name\": \"helm\" }]'\n"),
    ("{{ toToml .Values.v }}", "v: {mast: {sail: white}}\n"),
    ("{{ fromYaml .Values.v }}", 'v: "- one\\n- two\\n"\n'),
    ("{{ fromJson .Values.v }}", "v: '{\"hello\":\"world\"}'\n"),
    ("{{ fromJson .Values.v }}", "v: '[\"one\", \"two\"]'\n"),
    ("{{ fromJsonArray .Values.v }}", "v: '[\"one\", 2, { \"name\": \"helm\" }]'\n"),
    ("{{ fromJsonArray .Values.v }}", "v: '{\"hello\": \"world\"}'\n"),
    ("{{ merge .Values.dict (fromYaml .Values.yaml) }}", "dict: {a: {b: c}}\nyaml: '{\"a\":{\"b\":\"d\"}}'\n"),
    ("{{ merge (fromYaml .Values.yaml) .Values.dict }}", "dict: {a: {b: c}}\nyaml: '{\"a\":{\"b\":\"d\"}}'\n"),
    ("{{ fromYaml .Values.v }}", "v: '[\"one\", \"two\"]'\n"),
    ("{{ fromYamlArray .Values.v }}", "v: 'hello: world'\n"),
    ('{{ lookup "v1" "Namespace" "" "unlikelynamespace99999999" }}', ""),
    ("{{ mustToToml (dict \"foo\" \"bar\") }}", ""),
]):
    c(EN, f"funcs-{i:03d}", tmpl, values=values)

# ---------------------------------------------------------------- schema
# values.schema.json as Helm v4 checks it (santhosh-tekuri/jsonschema v6):
# the error tree (a schema's several errors grouped as "validation failed",
# the root's group lifted, a $ref shown only when it holds more than one
# cause), each keyword's words, and the draft `$schema` names ($ref alone
# before 2019-09, exclusiveMinimum a boolean in draft 4). Go visits an
# object's properties in map order (random), so no case has two failing
# properties at one level. (Keys such as `n` and `y` are YAML 1.1 booleans:
# `num` below.) Invalid schemas (Helm checks each against its draft's
# metaschema) and `format` (asserted before 2019-09) are not here: see
# DIFFERENCES.md.
import json as _json
SC = "schema"
D7 = "http://json-schema.org/draft-07/schema#"
D4 = "http://json-schema.org/draft-04/schema#"
D6 = "http://json-schema.org/draft-06/schema#"
D2019 = "https://json-schema.org/draft/2019-09/schema"
D2020 = "https://json-schema.org/draft/2020-12/schema"


def schema_case(name, schema, values, draft=D7, sub=None):
    if draft is not None:
        schema = dict({"$schema": draft}, **schema)
    files = {"values.schema.json": _json.dumps(schema)}
    if sub is not None:
        files.update({"charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
                      "charts/sub/values.schema.json": _json.dumps(sub[0]), "charts/sub/values.yaml": sub[1]})
    c(SC, name, "ok", values=values, files=files)


_obj = {"type": "object", "properties": {"a": {"type": "string"}, "num": {"type": "number", "minimum": 0}}}
for draft_name, draft in [("d7", D7), ("d4", D4), ("d6", D6), ("d2019", D2019), ("d2020", D2020), ("none", None)]:
    schema_case(f"{draft_name}-type", _obj, "a: 1\n", draft)
    schema_case(f"{draft_name}-root-group", dict(_obj, required=["b"]), "a: x\nnum: -1\n", draft)
    schema_case(f"{draft_name}-nested-group", {"properties": {"o": {"type": "object", "required": ["x", "y"], "properties": {"z": {"maxLength": 1}}}}}, "o:\n  z: abc\n", draft)
    schema_case(f"{draft_name}-ref-one", {"$ref": "#/definitions/v", "definitions": {"v": _obj}}, "num: -2\n", draft)
    schema_case(f"{draft_name}-ref-many", {"$ref": "#/definitions/v", "definitions": {"v": dict(_obj, required=["q"])}}, "num: -2\n", draft)
    schema_case(f"{draft_name}-ref-siblings", {"$ref": "#/definitions/v", "required": ["zz"], "definitions": {"v": _obj}}, "a: x\n", draft)
    if draft == D4:
        schema_case(f"{draft_name}-exclusive", {"properties": {"num": {"minimum": 5, "exclusiveMinimum": True, "maximum": 3, "exclusiveMaximum": True}}}, "num: 5\n", draft)
    else:
        schema_case(f"{draft_name}-exclusive", {"properties": {"num": {"exclusiveMinimum": 5, "exclusiveMaximum": 3}}}, "num: 5\n", draft)
    schema_case(f"{draft_name}-const", {"properties": {"c": {"const": "x"}, "d": {"const": [1]}}}, "c: z\n", draft)
    schema_case(f"{draft_name}-const-list", {"properties": {"d": {"const": [1]}}}, "d: [2]\n", draft)
    schema_case(f"{draft_name}-if", {"if": {"properties": {"k": {"const": 1}}}, "then": {"required": ["t"]}, "else": {"required": ["e"]}}, "k: 1\n", draft)
    if draft in (D4, D6, D7, D2019):
        schema_case(f"{draft_name}-items", {"properties": {"l": {"items": [{"type": "string"}, {"type": "number"}], "additionalItems": False}}}, "l: [a, b, c, d]\n", draft)
        schema_case(f"{draft_name}-items-more", {"properties": {"l": {"items": [{"type": "string"}], "additionalItems": {"type": "number"}}}}, "l: [a, b, c]\n", draft)
    schema_case(f"{draft_name}-prefix", {"properties": {"l": {"prefixItems": [{"type": "string"}], "items": {"type": "number"}}}}, "l: [a, b, c]\n", draft)
    schema_case(f"{draft_name}-contains", {"properties": {"l": {"contains": {"type": "string"}, "minContains": 2, "maxContains": 1}}}, "l: [1, a, 2]\n", draft)
    schema_case(f"{draft_name}-deps", {"dependencies": {"a": ["b", "c"]}, "dependentRequired": {"a": ["d"]}, "propertyNames": {"maxLength": 3}}, "a: 1\nlong: 2\n", draft)
for i, (schema, values) in enumerate([
    ({"type": "object", "required": ["a", "b", "c"]}, "x: 1\n"),
    ({"required": ["a"]}, "{}\n"),
    ({"properties": {"e": {"enum": ["a", "b", 3, None, True]}}}, "e: z\n"),
    ({"properties": {"e": {"enum": ["only"]}}}, "e: z\n"),
    ({"properties": {"e": {"enum": [[1], {"a": 1}]}}}, "e: z\n"),
    ({"properties": {"e": {"enum": [1.5, 2]}}}, "e: 1\n"),
    ({"properties": {"t": {"type": ["string", "null", "integer", "array"]}}}, "t: 1.5\n"),
    ({"properties": {"t": {"type": "integer"}}}, "t: 1.0\n"),
    ({"properties": {"t": {"type": "integer"}}}, "t: 2.5\n"),
    ({"properties": {"t": {"type": "object"}}}, "t: [1]\n"),
    ({"properties": {"t": {"type": "boolean"}}}, "t: ~\n"),
    ({"additionalProperties": False, "properties": {"a": {}}}, "a: 1\nb: 2\n"),
    ({"patternProperties": {"^x": {"type": "string"}}, "additionalProperties": {"type": "number"}}, "xa: 1\n"),
    ({"patternProperties": {"^x": {"type": "string"}}, "additionalProperties": {"type": "number"}}, "y: s\n"),
    ({"properties": {"s": {"pattern": "^a+$", "minLength": 5}}}, "s: \"it's \\\"b\\\"\"\n"),
    ({"properties": {"s": {"maxLength": 2}}}, "s: héllo\n"),
    ({"properties": {"num": {"multipleOf": 0.1}}}, "num: 0.3\n"),
    ({"properties": {"num": {"multipleOf": 0.1}}}, "num: 0.35\n"),
    ({"properties": {"num": {"multipleOf": 3, "maximum": 2}}}, "num: 4\n"),
    ({"properties": {"num": {"exclusiveMaximum": 1e21}}}, "num: 1e22\n"),
    ({"properties": {"l": {"uniqueItems": True, "minItems": 5, "maxItems": 1}}}, "l: [1, a, 1.0, a]\n"),
    ({"properties": {"l": {"uniqueItems": True}}}, "l: [{a: 1}, {a: 1.0}]\n"),
    ({"properties": {"o": {"minProperties": 3, "maxProperties": 0}}}, "o: {a: 1}\n"),
    ({"properties": {"v": {"allOf": [{"type": "string"}, {"minimum": 1}, {"maximum": 0}]}}}, "v: 5\n"),
    ({"properties": {"v": {"anyOf": [{"type": "string"}, {"type": "array", "minItems": 1}]}}}, "v: 5\n"),
    ({"properties": {"v": {"oneOf": [{"type": "string"}, {"maxLength": 1}]}}}, "v: abc\n"),
    ({"properties": {"v": {"oneOf": [{"type": "string"}, {"maxLength": 5}]}}}, "v: abc\n"),
    ({"properties": {"v": {"oneOf": [{"type": "number"}, {"type": "boolean"}]}}}, "v: abc\n"),
    ({"properties": {"v": {"not": {"type": "string"}}}}, "v: abc\n"),
    ({"properties": {"a/b": {"properties": {"c~d": {"type": "string"}}}}}, "a/b:\n  c~d: 1\n"),
    ({"properties": {"it's": {"type": "string"}}}, "\"it's\": 1\n"),
    ({"properties": {"f": False}}, "f: 1\n"),
    ({"properties": {"o": {"properties": {"p": {"properties": {"q": {"required": ["r", "s"], "minProperties": 9}}}}}}}, "o: {p: {q: {}}}\n"),
    ({"properties": {"o": {"$ref": "#/definitions/d"}}, "definitions": {"d": {"required": ["x"], "minProperties": 2}}}, "o: {}\n"),
    ({"properties": {"o": {"$ref": "#/definitions/d"}}, "definitions": {"d": {"$ref": "#/definitions/e"}, "e": {"type": "string"}}}, "o: {}\n"),
    ({"properties": {"num": {"multipleOf": 0.01}}}, "num: 1.23\n"),
    ({"properties": {"num": {"multipleOf": 7}}}, "num: -21\n"),
    ({"properties": {"num": {"minimum": -1.5, "maximum": 1e300}}}, "num: -2\n"),
    ({"properties": {"e": {"enum": ["a"]}, "c": {"const": None}}}, "c: 1\n"),
    ({"properties": {"l": {"contains": {"const": 5}}}}, "l: [1, 2]\n"),
    ({"properties": {"o": {"anyOf": [{"required": ["a"]}, {"required": ["b"], "minProperties": 3}]}}}, "o: {c: 1}\n"),
    ({"properties": {"o": {"allOf": [{"$ref": "#/definitions/r"}]}}, "definitions": {"r": {"required": ["x"], "properties": {"p": {"type": "string"}}}}}, "o: {p: 1}\n"),
    ({"properties": {"o": {"additionalProperties": {"type": "string"}, "propertyNames": {"pattern": "^[a-z]+$"}}}}, "o: {B: x, c: 1}\n"),
    # Numbers in messages as golang.org/x/text/message prints them (English).
    ({"properties": {"num": {"minimum": 1234.5}}}, "num: 1000\n"),
    ({"properties": {"num": {"maximum": -1234567.25}}}, "num: 1e6\n"),
    ({"properties": {"num": {"maximum": 0.000001}}}, "num: 0.00002\n"),
    ({"properties": {"num": {"maximum": 123456789012}}}, "num: 1.5e15\n"),
    ({"properties": {"num": {"multipleOf": 1000}}}, "num: 1234\n"),
    ({"properties": {"num": {"maximum": 0.0001}}}, "num: 0.00015\n"),
    ({"properties": {"s": {"minLength": 1500}}}, "s: abc\n"),
    ({"properties": {"l": {"minItems": 2000}}}, "l: [1]\n"),
    ({"properties": {"num": {"enum": [1500, 2.5e30, 1e-7]}}}, "num: 1\n"),
    ({"properties": {"num": {"const": 123456}}}, "num: 1\n"),
    ({"properties": {"num": {"exclusiveMinimum": 100000}}}, "num: 100000\n"),
]):
    schema_case(f"keyword-{i:03d}", schema, values)
# A schema that is not valid against its draft's metaschema: Helm refuses
# it before reading any value, the chart's error without a newline of its
# own (2019-09 and 2020-12, the default, through their vocabularies).
for draft_name, draft in [("d7", D7), ("d4", D4), ("d6", D6), ("d2019", D2019), ("d2020", D2020), ("none", None)]:
    for i, sch in enumerate([
        {"properties": {"a": {"type": "string", "required": True}}},
        {"properties": {"a": {"minimum": "x"}}},
        {"type": "objekt"},
        {"properties": 5},
        {"properties": {"a": {"minLength": -1}}},
        {"properties": {"a": {"minLength": 1.5}}},
        {"properties": {"a": {"enum": []}}},
        {"properties": {"a": {"items": [5]}}},
        {"properties": {"a": {"allOf": []}}},
        {"definitions": {"x": {"type": ["string", "string"]}}},
        {"properties": {"a": {"multipleOf": 0}}},
        {"properties": {"a": {"dependencies": {"b": 5}}}},
    ]):
        schema_case(f"meta-{draft_name}-{i:03d}", sch, "a: x\n", draft)
schema_case("meta-then-subchart", {"properties": 5}, "sub:\n  n: x\n", sub=({"required": ["m"]}, "n: 1\n"))
schema_case("meta-https-no-hash", dict({"$schema": "https://json-schema.org/draft-07/schema"}, properties=5), "a: 1\n", None)
schema_case("subchart-one", {"type": "object"}, "sub:\n  n: x\n", sub=({"properties": {"n": {"type": "number"}}, "required": ["m"]}, "n: 1\n"))
schema_case("subchart-both", {"required": ["top"]}, "sub:\n  n: x\n", sub=({"properties": {"n": {"type": "number"}}}, "n: 1\n"))
schema_case("subchart-not-a-map", {"type": "object"}, "sub: 5\n", sub=({"type": "object"}, "n: 1\n"))

# ---------------------------------------------------------------- yamlreader
# go-yaml's reader decodes 512 bytes at a time, when the scanner needs more
# characters: a control character or bytes that are not UTF-8 are refused
# only when their chunk is decoded, so a scanner error earlier in a long
# text can win. BOMs (UTF-8, UTF-16 LE and BE) choose the encoding.
YR = "yamlreader"


def _head(size):
    out, i = "", 0
    while len(out) < size:
        out += f"k{i}: v{i}\n"
        i += 1
    return out


_reader_texts = []
for bad in [b"\x01", b"\xff", b"\xe2\x82", b"\xc0\x80", b"\xed\xa0\x80"]:
    for at in [100, 490, 505, 508, 509, 510, 511, 512, 513, 1020, 1023, 1024, 1030]:
        # The damage at byte `at`, after a scanner error at about 300.
        head = (_head(290) + "a: b: c\n").encode()
        text = head + _head(at - len(head)).encode()[: max(0, at - len(head))] + bad + b"\nz: 1\n" if at > len(head) else bad + head
        _reader_texts.append(text)
for at in [200, 505, 509, 510, 511, 512, 513, 1023]:
    # A damage first, the scanner error after it.
    head = _head(at).encode()[:at]
    _reader_texts.append(head + b"\x07x\n" + _head(700).encode() + b"a: b: c\n")
    _reader_texts.append(head + b"\xff\n" + _head(700).encode() + b"a: [1\n")
for at in [509, 510, 511, 512]:
    # Characters of two to four bytes across the chunk's end: valid.
    for ch in ["\u00e9", "\u20ac", "\U0001F600"]:
        _reader_texts.append(_head(at).encode()[:at - 3] + b"x: " + ch.encode() + b"\n")
for t in [b"", b"\n", b"a: 1", b"\xef\xbb\xbfa: 1\n", b"\xef\xbb\xbf", b"\xef\xbb", b"a: 1\n\xef\xbb\xbfb: 2\n",
          b"\xef\xbb\xbf\xef\xbb\xbfa: 1\n", b"a: \xef\xbb\xbf\n",
          b"\xff\xfe" + "a: 1\nb: [\u00e9, \U0001F600]\n".encode("utf-16-le"),
          b"\xfe\xff" + "a: 1\nb: [\u00e9, \U0001F600]\n".encode("utf-16-be"),
          b"\xff\xfe" + "a: 1\n".encode("utf-16-le") + b"x",
          b"\xff\xfe" + "a: 1\n".encode("utf-16-le") + b"\x00\xdc",
          b"\xff\xfe" + "a: ".encode("utf-16-le") + b"\x3d\xd8",
          b"\xff\xfe" + "a: ".encode("utf-16-le") + b"\x3d\xd8a\x00",
          b"\xfe\xff" + "a: \x01\n".encode("utf-16-be"),
          b"\xff\xfe" + ("k: v\n" * 200).encode("utf-16-le") + b"\x01\x00",
          b"a: \x00\n", b"a: \x7f\n", b"a: \xc2\x80\n", b"a: \xc2\x85\n", b"a: \xef\xbf\xbe\n",
          b"a: \xf4\x90\x80\x80\n", b"a: \xe2\x82", b"a: \xe2\x82\n", b"a: \xe0\x80\x80\n", b"a: \xf8\x88\x80\x80\x80\n"]:
    _reader_texts.append(t)
for i, t in enumerate(_reader_texts):
    c(YR, f"fromyaml-{i:03d}", '{{ fromYaml (b64dec "%s") | toJson }}' % base64.b64encode(t).decode())
for i, t in enumerate(_reader_texts[::3]):
    # values.yaml itself (Helm cuts it into documents at '---' lines first).
    c(YR, f"values-{i:03d}", "{{ toJson .Values }}", binfiles={"values.yaml": t})
