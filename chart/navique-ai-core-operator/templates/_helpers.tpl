{{- define "navique-ai-core-operator.labels" -}}
app.kubernetes.io/name: navique-ai-core-operator
{{- end }}

{{- define "navique-ai-core-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}
