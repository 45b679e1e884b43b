# shellcheck shell=sh
# Where envgen puts things, for the build scripts: written from envgen/layout.py (a unit test
# compares the two). Sourced by lib.sh; a variable set beforehand wins.
: "${ENVGEN_ENV:=/opt/env}"
: "${ENVGEN_EXTRAS:=/opt/extras}"
: "${ENVGEN_BUILDTOOLS:=/opt/buildtools}"
: "${ENVGEN_WORK:=/tmp/envgen}"
: "${ENVGEN_WHEELS:=/tmp/wheels}"
: "${ENVGEN_UV_DIR:=/opt/uv}"
: "${ENVGEN_MICROMAMBA:=/opt/micromamba}"
: "${ENVGEN_SECRETS:=/run/secrets}"
: "${ENVGEN_BASE_CONSTRAINTS:=/tmp/envgen/constraints.base.txt}"
: "${ENVGEN_SECRET_CA:=ca_bundle}"
: "${ENVGEN_SECRET_PIP_CONF:=pip_conf}"
: "${ENVGEN_SECRET_NETRC:=netrc}"
