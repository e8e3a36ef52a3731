from wolfeclick.cli import run

raise SystemExit(run())
