//go:build !linux || (!amd64 && !arm64)

package fgstate

// calls: no table here; Look answers Unknown.
var calls map[int]Call
