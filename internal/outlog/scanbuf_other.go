//go:build !unix

package outlog

func newScanBuf() *scanBuf { return &scanBuf{b: make([]byte, scanBufSize)} }

func (sb *scanBuf) handBack() {}
