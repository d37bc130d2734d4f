#!/bin/bash

set -ex

exec /usr/bin/runsvdir /etc/service
