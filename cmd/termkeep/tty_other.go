//go:build !linux

package main

import "os"

// openTerminal is attach's own non-blocking file of its terminal where the
// terminal's path can be found (Linux); elsewhere attach uses stdin and
// stdout as they are.
func openTerminal(in, out *os.File) *os.File { return nil }

// ttyName is how attach is shown to the session's other viewers.
func ttyName(in *os.File) string { return in.Name() }
