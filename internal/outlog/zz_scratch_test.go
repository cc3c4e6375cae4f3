package outlog

import (
	"math/rand/v2"
	"testing"
)

func TestScratchFuzz(t *testing.T) {
	seg := validSegment(t)
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 3000; i++ {
		b := append([]byte(nil), seg...)
		switch r.IntN(3) {
		case 0:
			b = b[:r.IntN(len(b))]
		case 1:
			for k := 0; k < 1+r.IntN(4); k++ {
				b[r.IntN(len(b))] = byte(r.Uint32())
			}
		case 2:
			b = b[r.IntN(len(b)):]
		}
		t.Logf("iter %d len %d", i, len(b))
		fuzzOpenBody(t, b, uint8(r.Uint32()))
	}
}
