from qosbound.cli import main

raise SystemExit(main())
