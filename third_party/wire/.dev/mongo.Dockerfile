FROM mongo:7.0.12
