// prefsctl: the administrator's tool for RVS_PersistentPrefs domains (SPEC §13). Everything is in the
// PrefsTool target, which `harness defaults` runs too; this file only starts it.

import Glibc
import PrefsTool

// A reader that went away (`prefsctl read … | head`) must be reported by the write, not kill the process.
signal(SIGPIPE, SIG_IGN)
exit(Program.run(Array(CommandLine.arguments.dropFirst())))
