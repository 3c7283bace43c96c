{{/* The services, in start order, with the variable that sets each one's port. */}}
{{- define "sluice.serviceNames" -}}
ingest deliverer retry audience-sync delivery-log
{{- end }}

{{- define "sluice.portVar" -}}
{{- get (dict "ingest" "INGEST_PORT" "deliverer" "DELIVERER_PORT" "retry" "RETRY_PORT" "audience-sync" "AUDIENCE_SYNC_PORT" "delivery-log" "DELIVERY_LOG_PORT") . -}}
{{- end }}

{{- define "sluice.fullname" -}}
{{- if contains "sluice" .Release.Name }}{{ .Release.Name | trunc 40 | trimSuffix "-" }}{{ else }}{{ printf "%s-sluice" .Release.Name | trunc 40 | trimSuffix "-" }}{{ end }}
{{- end }}

{{- define "sluice.labels" -}}
app.kubernetes.io/name: sluice
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: sluice
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* Selector labels of one service: (list $ "ingest"). */}}
{{- define "sluice.selector" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: sluice
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "sluice.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The deliverer's most replicas: never more than the events topic's partitions. */}}
{{- define "sluice.delivererMaxReplicas" -}}
{{- $partitions := int (.Values.config.kafka.partitions | default 12) -}}
{{- $max := int (.Values.autoscaling.deliverer.maxReplicas | default $partitions) -}}
{{- if gt $max $partitions -}}
{{- fail (printf "autoscaling.deliverer.maxReplicas (%d) is above config.kafka.partitions (%d): the extra deliverers would sit idle" $max $partitions) -}}
{{- end -}}
{{- $max -}}
{{- end }}

{{/*
The config file: values.config with kafka.ssl and kafka.sasl from values.kafka; the SASL secret is
read from SLUICE_KAFKA_SASL_SECRET, which every Deployment gets from kafka.saslSecret.
*/}}
{{- define "sluice.configFile" -}}
{{- $config := deepCopy .Values.config -}}
{{- $kafka := deepCopy (get $config "kafka" | default dict) -}}
{{- if kindIs "map" .Values.kafka.ssl }}{{ $_ := set $kafka "ssl" .Values.kafka.ssl }}{{ end -}}
{{- if kindIs "map" .Values.kafka.sasl -}}
{{- $sasl := deepCopy .Values.kafka.sasl -}}
{{- if .Values.kafka.saslSecret.name -}}
{{- $secret := dict "env" "SLUICE_KAFKA_SASL_SECRET" -}}
{{- if eq .Values.kafka.saslSecret.field "oidc.clientSecret" -}}
{{- $oidc := deepCopy (get $sasl "oidc" | default dict) -}}
{{- $_ := set $oidc "clientSecret" $secret -}}
{{- $_ := set $sasl "oidc" $oidc -}}
{{- else -}}
{{- $_ := set $sasl "password" $secret -}}
{{- end -}}
{{- end -}}
{{- $_ := set $kafka "sasl" $sasl -}}
{{- end -}}
{{- $_ := set $config "kafka" $kafka -}}
{{- with .Values.runtimeDestinations.keyring -}}
{{- $ring := list -}}
{{- range $i, $key := . -}}
{{- $ring = append $ring (dict "id" $key.id "key" (dict "env" (printf "SLUICE_KEYRING_%d" $i))) -}}
{{- end -}}
{{- $_ := set $config "runtimeDestinations" (dict "keyring" $ring) -}}
{{- end -}}
{{- toYaml $config -}}
{{- end }}

{{/* The ring is values.runtimeDestinations.keyring's: one in config would reach only the pods given its variables. */}}
{{- define "sluice.checkKeyring" -}}
{{- if hasKey .Values.config "runtimeDestinations" -}}
{{- fail "config.runtimeDestinations is set by the chart: give the keys in runtimeDestinations.keyring ({ id, secretName, key } each), so that every service gets them" -}}
{{- end -}}
{{- end }}

{{/*
Secret environment of one service: (list $ "deliverer"). Its own `{ env }` secrets come from their
Kubernetes Secrets; so do the SASL secret and the keyring's keys, which every service reads. The config file is validated whole by every service, so a secret another
service reads is set to an inert placeholder here (a well-formed, never-shared `whsec_` value, or an
`https://….invalid/` URL for an entry with `placeholder: url`, such as an endpoint URL): the
Deployment never holds the real one.
*/}}
{{- define "sluice.secretEnv" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $own := (index $root.Values.services $name).secretEnv | default list -}}
{{- $ownNames := list -}}
{{- range $own }}
{{- $ownNames = append $ownNames .name }}
- name: {{ .name }}
  valueFrom:
    secretKeyRef: { name: {{ .secretName }}, key: {{ .key }} }
{{- end }}
{{- $others := list -}}
{{- $kinds := dict -}}
{{- range $other := splitList " " (include "sluice.serviceNames" $root) }}
{{- range (index $root.Values.services $other).secretEnv | default list }}
{{- if and (not (has .name $ownNames)) (not (has .name $others)) }}{{ $others = append $others .name }}{{ end }}
{{- if eq (.placeholder | default "") "url" }}{{ $_ := set $kinds .name "url" }}{{ end }}
{{- end }}
{{- end }}
{{- range $others }}
{{- $hash := printf "sluice-not-used-by-%s/%s" $name . | sha256sum }}
- name: {{ . }}
  {{- if hasKey $kinds . }}
  value: {{ printf "https://not-used-by-%s.invalid/%s" $name ($hash | trunc 16) | quote }}
  {{- else }}
  value: {{ printf "whsec_%s" ($hash | b64enc) | quote }}
  {{- end }}
{{- end }}
{{- if $root.Values.kafka.saslSecret.name }}
- name: SLUICE_KAFKA_SASL_SECRET
  valueFrom:
    secretKeyRef: { name: {{ $root.Values.kafka.saslSecret.name }}, key: {{ $root.Values.kafka.saslSecret.key }} }
{{- end }}
{{- /* The runtime destinations' keyring: every service loads it at start (all read the catalog). */}}
{{- range $i, $key := $root.Values.runtimeDestinations.keyring }}
- name: SLUICE_KEYRING_{{ $i }}
  valueFrom:
    secretKeyRef: { name: {{ $key.secretName }}, key: {{ $key.key }} }
{{- end }}
{{- end }}
