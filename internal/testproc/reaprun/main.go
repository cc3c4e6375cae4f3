// Command reaprun runs a test command that is no Go test binary (make
// test-web runs the browser tests' node with it) as package testproc runs
// a Go test binary: in a run directory of its own under TMPDIR, with the
// user's TERMKEEP_ variables and XDG directories out of its environment,
// and every server, holder and browser it leaves ended when it ends, or
// when it or this process is killed.
//
//	reaprun COMMAND [ARG...]
package main

import (
	"os"

	"termkeep/internal/testproc"
)

func main() {
	os.Exit(testproc.Wrap(os.Args[1:]))
}
