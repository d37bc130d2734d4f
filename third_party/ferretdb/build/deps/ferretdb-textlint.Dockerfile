FROM ghcr.io/ferretdb/ferretdb-textlint:14.0.4-1
