"""``python -m benchmarks [--check]``: docs/benchmarks.md's sections rendered from the newest results."""

from benchmarks.harness import main

raise SystemExit(main())
