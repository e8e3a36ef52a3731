# WolfeClick Arena as a Hugging Face Docker Space (README front matter: sdk: docker, app_port: 7860).
# It installs with the README's own `make setup` (the .venv from requirements.txt, node_modules from package-lock.json),
# so the image, CI and a workstation share one install path. Spaces run the container as UID 1000.
#
#   docker build -t wolfeclick-arena .
#   docker run --rm -p 7860:7860 wolfeclick-arena              # CPU: baselines, replays, compare
#   docker run --rm --gpus all -p 7860:7860 wolfeclick-arena   # GPU: checkpoints in 4-bit nf4 (see docs/app.md)
#
# trixie's Debian packages give Node.js 20 (the README asks for >= 20).
FROM python:3.11-slim-trixie

RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm make ca-certificates \
 && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 1000 user
USER user
ENV HOME=/home/user \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    npm_config_cache=/tmp/npm-cache
WORKDIR /home/user/app

# Dependencies first: a code change does not reinstall them.
COPY --chown=user Makefile requirements.txt package.json package-lock.json ./
RUN make setup && rm -rf /tmp/npm-cache

COPY --chown=user . .

# Listen on every interface inside the container (a workstation's default is 127.0.0.1). The battle simulator is
# embedded (Node child processes on stdio); no Showdown server is started. Models load on first use, never here.
ENV GRADIO_SERVER_NAME=0.0.0.0 \
    GRADIO_SERVER_PORT=7860 \
    GRADIO_ANALYTICS_ENABLED=False \
    PYTHONUNBUFFERED=1
EXPOSE 7860
CMD [".venv/bin/python", "app.py"]
