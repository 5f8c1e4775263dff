{{/* The whole pod template, shared with a future StatefulSet variant. */}}
{{- define "inference.podTemplate" -}}
metadata:
  labels:
    app.kubernetes.io/name: {{ .Chart.Name }}
spec:
  containers:
    - name: server
      image: {{ .Values.image }}
      args: ["--tensor-parallel-size={{ .Values.gpus }}"]
      resources:
        limits:
          nvidia.com/gpu: {{ .Values.gpus }}
{{- end }}
