# WolfeClick Arena as a Hugging Face Docker Space (README front matter: sdk: docker, app_port: 7860).
#
# The base is Debian trixie with Debian's own Python 3 and Node.js 20, so the image is made of packages that can be
# had anywhere Debian's archive can (scripts/check_space_image.sh builds and starts it on a machine with no image
# registry, from a trixie base made with mmdebstrap). The package installs with pip from the wheel's own metadata,
# pinned to requirements.txt (the one lock) as constraints; the simulator's Node packages with `wolfeclick setup`.
# Spaces run the container as UID 1000.
#
# WOLFECLICK_EXTRAS picks the optional stack (a Space variable of that name is passed as this build argument):
#   ""     CPU basic: baselines, replays, compare, leaderboard (the default: a smaller image, a faster build)
#   "llm"  a GPU Space: checkpoints in 4-bit nf4 (torch with CUDA, transformers, peft, bitsandbytes) — docs/app.md
#
#   docker build -t wolfeclick-arena .
#   docker build --build-arg WOLFECLICK_EXTRAS=llm -t wolfeclick-arena:gpu .
#   docker run --rm -p 7860:7860 wolfeclick-arena
FROM debian:trixie-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 1000 user
USER user
ENV HOME=/home/user \
    PATH=/home/user/venv/bin:$PATH \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    npm_config_cache=/tmp/npm-cache
WORKDIR /home/user/app

ARG WOLFECLICK_EXTRAS=""
# A build machine behind a TLS-inspecting proxy passes its CA bundle for pip and npm (unset everywhere else, Spaces
# included): scripts/check_space_image.sh does, with the bundle mounted for the build only, never copied in.
ARG PIP_CERT
ARG npm_config_cafile
# Dependencies and the simulator first, from a skeleton of the package (its metadata, the simulator installer, what
# it imports and the npm lock): a change to the rest of the code reuses both layers (tests/test_packaging.py checks
# that the skeleton holds every module the installer imports). The full package replaces the skeleton below.
COPY --chown=user pyproject.toml requirements.txt README.md ./
COPY --chown=user wolfeclick/__init__.py wolfeclick/errors.py wolfeclick/settings.py wolfeclick/
COPY --chown=user wolfeclick/sim/__init__.py wolfeclick/sim/install.py wolfeclick/sim/
COPY --chown=user wolfeclick/sim/showdown wolfeclick/sim/showdown
RUN python3 -m venv /home/user/venv \
 && pip install -c requirements.txt ".${WOLFECLICK_EXTRAS:+[$WOLFECLICK_EXTRAS]}" \
 && python3 -c "from wolfeclick.sim.install import ensure_showdown; print(ensure_showdown())" \
 && rm -rf /tmp/npm-cache

COPY --chown=user . .
RUN pip install --no-deps --force-reinstall . && wolfeclick setup

# Listen on every interface inside the container (a workstation's default is 127.0.0.1). The battle simulator is
# embedded (Node child processes on stdio); no Showdown server is started. Models load on first use, never here.
# With Space persistent storage (/data), recordings and results live there, and the sample recordings are copied in
# once; without it they live in the container and go with it.
ENV GRADIO_SERVER_NAME=0.0.0.0 \
    GRADIO_SERVER_PORT=7860 \
    GRADIO_ANALYTICS_ENABLED=False \
    PYTHONUNBUFFERED=1
EXPOSE 7860
CMD ["sh", "scripts/space_start.sh"]
