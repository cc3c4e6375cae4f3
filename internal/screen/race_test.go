//go:build race

package screen

// raceEnabled: the race detector drops a quarter of what goes into a
// sync.Pool, so a pooled buffer is sometimes allocated anew.
const raceEnabled = true
