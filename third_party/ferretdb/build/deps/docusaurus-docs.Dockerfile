FROM ghcr.io/ferretdb/docusaurus-docs:3.5.2-2
