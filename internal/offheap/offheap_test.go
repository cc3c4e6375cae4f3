package offheap

import (
	"bytes"
	"runtime"
	"testing"
)

// Pages handed back read as zeros; those before from keep their bytes.
func TestHandBack(t *testing.T) {
	b := New(64 << 10)
	defer b.Free()
	if !b.Mapped || runtime.GOOS != "linux" {
		t.Skip("no anonymous mapping handed back here")
	}
	for i := range b.B {
		b.B[i] = 'x'
	}
	b.HandBack(16 << 10)
	if !bytes.Equal(b.B[:16<<10], bytes.Repeat([]byte("x"), 16<<10)) {
		t.Fatal("the pages before from changed")
	}
	if !bytes.Equal(b.B[16<<10:], make([]byte, 48<<10)) {
		t.Fatal("the pages from from on were not handed back")
	}
}
