"""OpenEnv's expected layout (``openenv validate``): ``server/app.py`` with ``main()``; the server is
``wolfeclick.env.server``."""
