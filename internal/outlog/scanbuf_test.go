package outlog

import (
	"bytes"
	"runtime"
	"testing"
)

// A scan's buffer hands its pages back when the scan ends: on Linux they
// read as zeros next time, and a scan that follows reads the file as
// before.
func TestScanBufHandsPagesBack(t *testing.T) {
	sb := scanBufs.Get().(*scanBuf)
	if !sb.Mapped || runtime.GOOS != "linux" {
		t.Skip("no anonymous mapping handed back here")
	}
	for i := range sb.B {
		sb.B[i] = 'x'
	}
	sb.HandBack(0)
	if !bytes.Equal(sb.B, make([]byte, scanBufSize)) {
		t.Fatal("the pages a scan touched were not handed back")
	}
	scanBufs.Put(sb)
	r := bytes.NewReader(bytes.Repeat([]byte("y"), 3*scanBufSize))
	s := newScanner(r, 0, false)
	defer s.release()
	if got := s.window(scanBufSize, 10); string(got) != "yyyyyyyyyy" {
		t.Fatalf("window after a hand-back = %q", got)
	}
}
