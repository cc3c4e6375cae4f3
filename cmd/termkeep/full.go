//go:build !lean

package main

import "termkeep/internal/holder"

// holderMain runs this process as a holder (the hidden mode).
func holderMain() int { return holder.Main() }
