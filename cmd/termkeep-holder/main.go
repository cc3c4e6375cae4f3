// Command termkeep-holder is the small process that owns one session's pty.
// The server starts it; people never run it by hand. It is a binary of its
// own, beside termkeep, so that an idle holder carries only the code it needs
// and its private memory stays near the Go runtime's floor.
package main

import (
	"os"

	"termkeep/internal/holder"
)

func main() { os.Exit(holder.Main()) }
