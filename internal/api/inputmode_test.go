package api

import (
	"encoding/json"
	"testing"
)

// A running session's input_mode is the pty's echo and line editing, or
// "unknown" (a holder before protocol 7): the page predicts no echo then.
func TestInputModeJSON(t *testing.T) {
	for _, tc := range []struct {
		m    InputMode
		want string
	}{
		{InputMode{Known: true, Echo: true, Canonical: true}, `{"echo":true,"canonical":true}`},
		{InputMode{Known: true, Echo: false, Canonical: true}, `{"echo":false,"canonical":true}`},
		{InputMode{Known: true}, `{"echo":false,"canonical":false}`},
		{InputMode{}, `"unknown"`},
		{InputMode{Echo: true}, `"unknown"`}, // flags without a report mean nothing
	} {
		b, err := json.Marshal(tc.m)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.m, b, err, tc.want)
		}
		var back InputMode
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		if want := tc.m; !want.Known {
			if back != (InputMode{}) {
				t.Errorf("%s read back as %+v", b, back)
			}
		} else if back != want {
			t.Errorf("%s read back as %+v, want %+v", b, back, want)
		}
	}
	var s Session
	if err := json.Unmarshal([]byte(`{"input_mode":{"echo":false,"canonical":true}}`), &s); err != nil || s.InputMode == nil || s.InputMode.Echo || !s.InputMode.Canonical {
		t.Fatalf("a session's input_mode read as %+v, %v", s.InputMode, err)
	}
	for _, bad := range []string{`"known"`, `1`, `[]`, `{"echo":"yes"}`, `{"echo":true}`, `{"canonical":true}`, `""`} {
		var m InputMode
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", bad, m)
		}
	}
}

// FuzzInputMode: whatever it is given, Unmarshal errs or yields a mode
// that marshals and reads back the same.
func FuzzInputMode(f *testing.F) {
	f.Add([]byte(`"unknown"`))
	f.Add([]byte(`{"echo":true,"canonical":false}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var m InputMode
		if json.Unmarshal(in, &m) != nil {
			return
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back InputMode
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Fatalf("%s → %+v → %s → %+v, %v", in, m, b, back, err)
		}
	})
}
