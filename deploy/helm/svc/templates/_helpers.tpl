{{/* The chart name, or nameOverride. */}}
{{- define "svc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: the prefix of every object name. */}}
{{- define "svc.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "svc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "svc.name" . }}
{{- end -}}

{{/* Labels shared by every pod of the release: what NetworkPolicies admit. */}}
{{- define "svc.releaseSelectorLabels" -}}
app.kubernetes.io/name: {{ include "svc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The object name of one service: (dict "root" $ "name" "mailbox-svc"). */}}
{{- define "svc.componentName" -}}
{{- printf "%s-%s" (include "svc.fullname" .root) .name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of one service's pods: (dict "root" $ "name" "mailbox-svc"). */}}
{{- define "svc.selectorLabels" -}}
{{ include "svc.releaseSelectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/* All labels of one service's objects: (dict "root" $ "name" "mailbox-svc"). */}}
{{- define "svc.componentLabels" -}}
{{ include "svc.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "svc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "svc.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "svc.secretName" -}}
{{- default (include "svc.fullname" .) .Values.secret.existingSecret -}}
{{- end -}}

{{/* Image of one service: (dict "root" $ "name" "mailbox-svc" "svc" $entry). */}}
{{- define "svc.image" -}}
{{- $image := .svc.image | default dict -}}
{{- $repository := default (printf "%s/%s" .root.Values.image.repository .name) $image.repository -}}
{{- $tag := default (default .root.Chart.AppVersion .root.Values.image.tag) $image.tag -}}
{{- printf "%s:%s" $repository $tag -}}
{{- end -}}

{{/* The environment variable holding a service's URL: context-svc → CONTEXT_URL. */}}
{{- define "svc.urlEnvName" -}}
{{- printf "%s_URL" (. | trimSuffix "-svc" | upper | replace "-" "_") -}}
{{- end -}}

{{/* The in-cluster URL of one service: (dict "root" $ "name" "identity-svc"). */}}
{{- define "svc.url" -}}
{{- printf "http://%s:%v" (include "svc.componentName" .) .root.Values.service.port -}}
{{- end -}}

{{/* The Ingress host: ingress.host, else the host of config.baseURL. */}}
{{- define "svc.ingressHost" -}}
{{- default (urlParse .Values.config.baseURL).hostname .Values.ingress.host -}}
{{- end -}}

{{/* Environment variables read from the Secret, and the services that receive each: [] is every
service, "!name" every service but that one. Only the gateway holds the key that signs principals. */}}
{{- define "svc.secretEnv" -}}
GATEWAY_JWT_KEY: [gateway]
GATEWAY_JWT_PUBLIC_KEY: ["!gateway"]
SERVICE_JWT_KEY: ["!gateway"]
MONGO_URI: ["!gateway"]
KAFKA_BROKERS: ["!gateway"]
REDIS_URL: []
PAYMENT_VOUCHER_SECRET: [identity-svc]
SIGNING_KEYS_SECRET: [identity-svc]
SIGNING_KEYS_SECRETS_OLD: [identity-svc]
{{- end -}}

{{/* The variables of svc.secretEnv that a Secret need not hold: the pods start without them.
SIGNING_KEYS_SECRETS_OLD is set only while SIGNING_KEYS_SECRET is being rotated. */}}
{{- define "svc.optionalSecretEnv" -}}
[SIGNING_KEYS_SECRETS_OLD]
{{- end -}}

{{/* Refuse values that cannot work, before any object is rendered. */}}
{{- define "svc.validate" -}}
{{- $base := urlParse .Values.config.baseURL -}}
{{- if or (not (has $base.scheme (list "http" "https"))) (not $base.hostname) -}}
{{- fail (printf "config.baseURL %q must be an absolute http(s) URL" .Values.config.baseURL) -}}
{{- end -}}
{{- if not (has .Values.config.logLevel (list "debug" "info" "warn" "error")) -}}
{{- fail (printf "config.logLevel %q must be one of debug, info, warn, error" .Values.config.logLevel) -}}
{{- end -}}
{{- $drain := add .Values.pod.preStopSleepSeconds .Values.config.shutdownTimeoutSeconds -}}
{{- if le (int .Values.pod.terminationGracePeriodSeconds) (int $drain) -}}
{{- fail (printf "pod.terminationGracePeriodSeconds (%v) must exceed pod.preStopSleepSeconds + config.shutdownTimeoutSeconds (%v), or pods are killed while draining" .Values.pod.terminationGracePeriodSeconds $drain) -}}
{{- end -}}
{{- $secretEnv := include "svc.secretEnv" . | fromYaml -}}
{{- range $name, $s := .Values.services -}}
{{- range $key, $_ := $s.env -}}
{{- if hasKey $secretEnv $key -}}
{{- fail (printf "services.%s.env.%s: %s comes from the Secret (secret.* or secret.existingSecret)" $name $key $key) -}}
{{- end -}}
{{- end -}}
{{- if and $s.enabled $s.autoscaling.enabled (not (dig "requests" "cpu" "" ($s.resources | default dict))) -}}
{{- fail (printf "services.%s: autoscaling needs resources.requests.cpu" $name) -}}
{{- end -}}
{{- end -}}
{{- $hooks := index .Values.services "webhook-svc" -}}
{{- $partitions := int .Values.config.kafkaTopicPartitions -}}
{{- if and $hooks.enabled $hooks.autoscaling.enabled (gt $partitions 0) (gt (int $hooks.autoscaling.maxReplicas) $partitions) -}}
{{- fail (printf "services.webhook-svc.autoscaling.maxReplicas (%v) is above config.kafkaTopicPartitions (%v): a consumer group uses one replica per partition, the others sit idle; add partitions first (docs/operations.md, Kafka topics)" $hooks.autoscaling.maxReplicas $partitions) -}}
{{- end -}}
{{- end -}}
