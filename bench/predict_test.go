package main

import (
	"slices"
	"strings"
	"testing"
)

// The driver's output is read line by line; a line that is not one
// shell's object is an error, never a shell with made-up figures.
func TestParsePredict(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		shells int
		err    bool
	}{
		{"none", "", 0, false},
		{"two shells", `{"shell":"bash","typed":3,"editing":2,"latencies":[1,2],"shown":2,"wrong":0}` + "\n\n" + `{"shell":"zsh","skipped":"no zsh"}` + "\n", 2, false},
		{"a cut line", `{"shell":"bash","typed":3`, 0, true},
		{"no shell named", `{"typed":3}`, 0, true},
		{"an array", `[1,2]`, 0, true},
		{"a log line", "page error: x\n", 0, true},
		{"a wrong type", `{"shell":"bash","typed":"many"}`, 0, true},
		{"a good line, then a bad one", `{"shell":"bash"}` + "\nnope", 1, true},
	}
	for _, c := range cases {
		got, err := parsePredict([]byte(c.in))
		if len(got) != c.shells || (err != nil) != c.err {
			t.Errorf("%s: %d shells, error %v; want %d, error %v", c.name, len(got), err, c.shells, c.err)
		}
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.5, 3}, {0.99, 5}, {1, 5}, {-1, 1}, {2, 5}} {
		if got := quantile(xs, c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if quantile(nil, 0.5) != 0 {
		t.Error("no samples: want 0")
	}
}

// The figures of a shell: shares over zero keys are 0, and the goals are
// decided only from shells that were measured.
func TestPredictGoals(t *testing.T) {
	rep := &report{predict: &predictReport{keys: 10, shells: []predictShell{
		{Shell: "bash", Typed: 10, Editing: 9, Latencies: []float64{2, 3, 4, 400}, Drawn: 3, Shown: 8, Wrong: 0},
		{Shell: "zsh", Skipped: "no zsh", Shown: 100, Wrong: 100},
		{Shell: "python3", Typed: 10, Editing: 9, Latencies: []float64{300}, Shown: 2, Wrong: 1},
	}}}
	if g := rep.predictP50Goal(); g.met == nil || !*g.met {
		t.Errorf("p50 goal: %+v", g)
	}
	if g := rep.predictWrongGoal(); g.met == nil || *g.met || !strings.Contains(g.figure, "1 of 10") {
		t.Errorf("wrong goal: %+v (%s)", g, g.figure)
	}
	if (predictShell{}).predictedShare() != 0 || (predictShell{}).wrongShare() != 0 {
		t.Error("shares over nothing")
	}
	rows := rep.predictRows()
	if len(rows) != 3 || !strings.HasPrefix(rows[1][1], "skipped") {
		t.Fatalf("rows %q", rows)
	}
	// The page's own count: timed keys whose first frame showed a prediction.
	if !slices.Contains(rows[0], "3 of 4 timed") {
		t.Errorf("bash's row %q: want the keys drawn predicted", rows[0])
	}
	if g := (&report{}).predictWrongGoal(); g.met != nil {
		t.Error("not run: not measured")
	}
}

func FuzzParsePredict(f *testing.F) {
	f.Add([]byte(`{"shell":"bash","typed":3,"editing":2,"latencies":[1,2],"drawn":1,"shown":2,"wrong":0,"corrections":[5]}`))
	f.Add([]byte("{\"shell\":\"x\"}\n{\"shell\":\"y\",\"skipped\":\"z\"}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		shells, _ := parsePredict(b)
		rep := &report{predict: &predictReport{shells: shells}}
		for _, s := range shells {
			if s.Shell == "" {
				t.Fatal("a shell without a name")
			}
		}
		rep.predictRows()
		rep.predictP50Goal()
		rep.predictWrongGoal()
	})
}
