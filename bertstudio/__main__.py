from bertstudio.cli import main

raise SystemExit(main())
