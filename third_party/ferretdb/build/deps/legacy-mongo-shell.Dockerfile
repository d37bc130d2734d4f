FROM ghcr.io/ferretdb/legacy-mongo-shell:7.0.8-1
