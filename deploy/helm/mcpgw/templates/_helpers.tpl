{{/* The chart's name, at most 63 characters (a DNS label). */}}
{{- define "mcpgw.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The objects' name: the release's, with the chart's added unless the
release's name has it already.
*/}}
{{- define "mcpgw.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "mcpgw.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcpgw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcpgw.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mcpgw.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
mcpgw.config is mcp.json: the config value (a map, or a file's JSON text)
with the team values written over its "team" block.
*/}}
{{- define "mcpgw.config" -}}
{{- $cfg := dict "mcpServers" dict }}
{{- if kindIs "string" .Values.config }}
{{- $cfg = fromJson .Values.config }}
{{- if and (eq (len $cfg) 1) (hasKey $cfg "Error") (kindIs "string" (get $cfg "Error")) }}
{{- fail (printf "config: not a JSON object (%s); mcp.json with comments goes in a ConfigMap of your own, named by existingConfigMap" (get $cfg "Error")) }}
{{- end }}
{{- else if kindIs "map" .Values.config }}
{{- $cfg = deepCopy .Values.config }}
{{- else if .Values.config }}
{{- fail "config: a map, or mcp.json's text" }}
{{- end }}
{{- $team := dict }}
{{- range $k := list "issuer" "audience" "userClaim" "groupsClaim" "store" }}
{{- with index $.Values.team $k }}
{{- $_ := set $team $k . }}
{{- end }}
{{- end }}
{{- if $team }}
{{- $own := get $cfg "team" }}
{{- if kindIs "map" $own }}
{{- $team = mergeOverwrite (deepCopy $own) $team }}
{{- end }}
{{- $_ := set $cfg "team" $team }}
{{- end }}
{{- toPrettyJson $cfg }}
{{- end }}

{{/*
mcpgw.validate fails the render for values that cannot work, saying why.
*/}}
{{- define "mcpgw.validate" -}}
{{- $t := .Values.team }}
{{- if and (not $t.issuer) (or $t.audience $t.userClaim $t.groupsClaim $t.store) }}
{{- fail "team: audience, userClaim, groupsClaim and store need team.issuer (team mode)" }}
{{- end }}
{{- if and $t.issuer (not $t.audience) }}
{{- fail "team.audience: team mode checks the tokens' audience; set the one your issuer puts in tokens for mcpgw" }}
{{- end }}
{{- if and $t.store (not (hasPrefix "redis://" $t.store)) (not (hasPrefix "rediss://" $t.store)) }}
{{- fail "team.store: a redis:// or rediss:// URL" }}
{{- end }}
{{- if and (or (gt (int .Values.replicaCount) 1) .Values.autoscaling.enabled) (not $t.store) }}
{{- fail "replicaCount above 1 (or autoscaling) needs team.store: without it each replica keeps sessions, approvals and tokens of its own" }}
{{- end }}
{{- if and (not $t.issuer) (not .Values.token.existingSecret) }}
{{- fail "token.existingSecret: outside team mode every client presents a bearer token, and mcpgw refuses to listen beyond loopback without one" }}
{{- end }}
{{- end }}
