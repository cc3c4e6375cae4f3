package wire

import "encoding/binary"

// The output lane between a viewer and the server (version 8; the holder's
// half is version 7: TypeLane, TypeLaneOff, TypeLaneEnd). A viewer whose
// terminal the server may hand to the holder (`termkeep attach` on the
// same machine) reuses those frames toward and from the server:
//
//   - TypeLane, viewer → server: offset uint64, sent with the viewer's
//     terminal (SCM_RIGHTS) the first time: the viewer has written every
//     byte below offset to its terminal and writes nothing of its own
//     until told the lane has ended; the server may open a lane there.
//   - TypeLaneOff, viewer → server: the viewer needs its terminal back
//     (a notice, a detach); the server answers with TypeLaneEnd.
//   - TypeLaneWritten, server → viewer: offset uint64, then bytes the
//     lane has already written to the viewer's terminal: the viewer
//     follows them (its modes, its screen model) and does not write them.
//   - TypeLaneEnd, server → viewer: offset uint64: no lane runs; the
//     output goes on from offset in Output frames, and the viewer may
//     write again. It follows the TypeLaneWritten frames of a lane that
//     ended, and answers every TypeLaneOff.
const TypeLaneWritten Type = 0x50

// LaneWritten writes a TypeLaneWritten frame for the bytes at
// [off, off+len(parts...)); they must fit in one frame.
func (w *Writer) LaneWritten(off uint64, parts [][]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := w.begin(TypeLaneWritten, 8+n)
	b = binary.BigEndian.AppendUint64(b, off)
	for _, p := range parts {
		b = append(b, p...)
	}
	return w.flush(b)
}

// ViewerLanes reports whether a peer of version (a viewer, or the server
// in its Welcome) speaks the lane frames between viewer and server.
func ViewerLanes(version int) bool { return version >= 8 }
