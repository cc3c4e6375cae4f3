package server

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// queryBool takes 0 and 1 (false and true) and nothing else: any other
// value of the parameter, however encoded, is an error naming it, and an
// absent or empty one is the default.
func FuzzQueryBool(f *testing.F) {
	for _, s := range []string{"", "force=1", "force=0", "force=true", "force=false", "force=", "force",
		"force=yes", "force=1&force=0", "force=%31", "force=%00", "force=+1", "force=TRUE", "other=1", "force=1;x", "%zz"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, rawQuery string, def bool) {
		r := httptest.NewRequest("DELETE", "http://termkeep/v1/sessions/x", nil)
		r.URL.RawQuery = rawQuery
		got, err := queryBool(r, "force", def)
		q, _ := url.ParseQuery(rawQuery)
		switch v := q.Get("force"); v {
		case "":
			if err != nil || got != def {
				t.Fatalf("%q: %v %v, want the default %v", rawQuery, got, err, def)
			}
		case "1", "true":
			if err != nil || !got {
				t.Fatalf("%q: %v %v, want true", rawQuery, got, err)
			}
		case "0", "false":
			if err != nil || got {
				t.Fatalf("%q: %v %v, want false", rawQuery, got, err)
			}
		default:
			if err == nil || got || !strings.Contains(err.Error(), "force must be 0 or 1") {
				t.Fatalf("%q (force=%q): %v %v, want an error", rawQuery, v, got, err)
			}
		}
	})
}
