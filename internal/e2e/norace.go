//go:build !race

package e2e

// RaceEnabled says whether the tests (and the binaries Main builds) have
// the race detector.
const RaceEnabled = false
