//go:build race

package server

// raceEnabled: the race detector slows everything several times over and
// adds its own memory, so timing and memory figures under it mean nothing.
const raceEnabled = true
