"""WolfeClick Arena: `python app.py` (or `wolfeclick app`) serves the app (Live, Replays, Compare, Leaderboard) on
GRADIO_SERVER_NAME:GRADIO_SERVER_PORT.

Defaults to 127.0.0.1:7860 on a workstation; the Docker image sets GRADIO_SERVER_NAME=0.0.0.0 for Spaces.
Recordings live in $WOLFECLICK_RECORDINGS (default ./recordings), comparisons in $WOLFECLICK_RESULTS (./results).
Models load on first use, never at start.
"""

from wolfeclick.ui.app_process import serve

if __name__ == "__main__":
    serve()
