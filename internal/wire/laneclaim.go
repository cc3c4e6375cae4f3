package wire

import "encoding/binary"

// Lane claims (version 10): a lane's end survives the connection that
// opened it, so that a viewer whose connection was lost while a lane
// wrote to its terminal resumes at the exact byte after the last one its
// terminal took, through a new connection or a new server.
//
//   - Every lane carries a token: the viewer's Hello.LaneToken, a random
//     number the viewer draws for each connection. The server sends the
//     holder TypeLane with the offset and the token (16 bytes) to a
//     holder of version 10 or later.
//   - The holder remembers, for each of the last MaxLaneRecords tokens,
//     where that token's last lane ended.
//   - A viewer that lost a connection while a lane may have run names
//     that connection's token in its next Hello (Claim), with From at the
//     offset it had reached. The server sends the holder TypeLaneClaim
//     with the token: the holder ends that token's lane if it still runs,
//     refuses any later lane of it, and answers TypeLaneClaimed with the
//     token and its last lane's end (0: none), once the output below that
//     end has gone to the server. The server then sends the viewer the
//     bytes from From below the end as TypeLaneWritten (the terminal has
//     them), a TypeLaneEnd at the end, and the output from there.
const (
	TypeLaneClaim   Type = 0x11 // server → holder: token uint64
	TypeLaneClaimed Type = 0x53 // holder → server: token uint64, end uint64, then keys handed back
)

// MaxLaneRecords is how many tokens' lane ends a holder remembers: more
// than the viewers that can lose a connection at once in any real use.
const MaxLaneRecords = 64

// LaneClaims reports whether a peer of version speaks lane claims.
func LaneClaims(version int) bool { return version >= 10 }

// Lane writes a lane frame (server → holder) for a lane at off with
// token; a holder older than LaneClaims gets the offset alone.
func (w *Writer) Lane(off, token uint64, holderVersion int) error {
	if !LaneClaims(holderVersion) {
		return w.Uint64(TypeLane, off)
	}
	b := w.begin(TypeLane, 16)
	b = binary.BigEndian.AppendUint64(b, off)
	b = binary.BigEndian.AppendUint64(b, token)
	return w.flush(b)
}

// ParseLane decodes a lane frame's payload: an offset, and a token when
// the sender speaks lane claims (0 otherwise).
func ParseLane(p []byte) (off, token uint64, err error) {
	switch len(p) {
	case 8:
		return binary.BigEndian.Uint64(p), 0, nil
	case 16:
		return binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:]), nil
	}
	return 0, 0, short(TypeLane, p, 16)
}

// LaneClaimed writes a lane-claimed frame: back are keys the token's
// lane's reader handed back to a server that never answered (it may
// have died with them), which the claiming viewer takes as typed.
func (w *Writer) LaneClaimed(token, end uint64, back []byte) error {
	b := w.begin(TypeLaneClaimed, 16+len(back))
	b = binary.BigEndian.AppendUint64(b, token)
	b = binary.BigEndian.AppendUint64(b, end)
	return w.flush(append(b, back...))
}

// ParseLaneClaimed decodes a lane-claimed payload; back aliases p.
func ParseLaneClaimed(p []byte) (token, end uint64, back []byte, err error) {
	if len(p) < 16 {
		return 0, 0, nil, short(TypeLaneClaimed, p, 16)
	}
	return binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:]), p[16:], nil
}
