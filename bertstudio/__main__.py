from bertstudio.launch import main

raise SystemExit(main())
