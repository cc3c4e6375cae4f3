// Package screen is termkeep's screen model: a headless terminal that a
// session's output is fed into, so that the server knows what every viewer
// should see and can send a viewer that comes back a correct screen instead
// of a backlog.
//
// What it guarantees:
//
//   - It reads output as the xterm.js in termkeep's browser viewers does
//     (version 6 with the Unicode 11 addon, TERM=xterm-256color): the same
//     characters in the same columns (widths generated from the addon
//     itself, see gen/), the same wrapping, erasing, scrolling, modes,
//     resize reflow, and the same reading of malformed input. xterm.js is
//     what the differential tests hold it to, quirks included: where
//     xterm.js departs from a VT (relative moves in origin mode, the saved
//     cursor's row counting from the top of the scrollback, SD filling with
//     the default colors, ...), so does the model.
//   - Write takes any bytes, split anywhere: a UTF-8 character or an escape
//     sequence cut by the end of one Write continues in the next. It never
//     fails and never panics.
//   - Snapshot returns bytes that rebuild the screen in a freshly reset
//     terminal of the same size: scrollback, both screens, styles,
//     hyperlinks, cursor, modes, title, working directory; the snapshot
//     followed by the rest of the output gives what the whole output gives.
//     It asks the terminal nothing.
//   - MarshalBinary is a versioned checkpoint of the whole model;
//     UnmarshalBinary restores it exactly, and rejects (never panics on)
//     anything else.
//   - Memory is bounded: 8 bytes per screen cell; scrollback packed (trailing
//     blanks dropped, styles inline, about one byte per character of plain
//     text) and capped in lines and bytes; the style, string and hyperlink
//     tables are collected when they outgrow what the screen uses. Writing is
//     allocation-free once the scrollback is full.
//
// It does no I/O, starts no goroutines and reads no clock: its state
// depends on its input only. A Screen is not safe for concurrent use.
//
// Not emulated, as xterm.js with its default options does not act on
// them either: answers to queries (DA, DSR, DECRQM, DECRQSS), window
// operations and title stacking (CSI t), palette and color changes (OSC 4,
// 10-12, 104, 110-112), sixel and other DCS strings. OSC 7 (working
// directory) and OSC 133 (shell marks) are kept, though xterm.js ignores
// them.
package screen
