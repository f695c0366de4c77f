{{- define "navique-operator.labels" -}}
app.kubernetes.io/name: navique-operator
{{- end }}

{{- define "navique-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}
