package api

import (
	"bytes"
	"encoding/json"
	"errors"
)

// InputMode is a running session's pty input mode, as its holder reports
// it (protocol 7's term-mode frame): whether the terminal echoes what is
// typed (Echo) and edits it a line at a time (Canonical). Echo off with
// Canonical on is a password prompt; both off, a program that draws its
// own input (a shell's line editor, an editor). In JSON it is
// {"echo": E, "canonical": C}, or "unknown" when not Known (a holder of
// an older build, or none reported yet): nothing may be assumed then.
type InputMode struct {
	Known     bool
	Echo      bool
	Canonical bool
}

const inputModeUnknown = `"unknown"`

type inputModeJSON struct {
	Echo      *bool `json:"echo"`
	Canonical *bool `json:"canonical"`
}

// MarshalJSON writes the mode's object, or "unknown".
func (m InputMode) MarshalJSON() ([]byte, error) {
	if !m.Known {
		return []byte(inputModeUnknown), nil
	}
	return json.Marshal(inputModeJSON{Echo: &m.Echo, Canonical: &m.Canonical})
}

// UnmarshalJSON reads what MarshalJSON writes; null leaves m as it is.
func (m *InputMode) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		return nil
	case string(b) == inputModeUnknown:
		*m = InputMode{}
		return nil
	}
	var j inputModeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return errors.New(`input_mode must be {"echo": bool, "canonical": bool} or "unknown"`)
	}
	if j.Echo == nil || j.Canonical == nil {
		return errors.New(`input_mode needs both "echo" and "canonical"`)
	}
	*m = InputMode{Known: true, Echo: *j.Echo, Canonical: *j.Canonical}
	return nil
}
