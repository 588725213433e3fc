import sys

from vectorport.testing.emulators.fidelity import main

sys.exit(main())
