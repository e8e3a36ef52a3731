from wolfeclick.cli import main

raise SystemExit(main())
