package attach

import (
	"time"

	"termkeep/internal/predict"
	"termkeep/internal/shellmark"
	"termkeep/internal/wire"
)

// Predictive echo (package predict): over a slow link, what is typed at
// the end of a line is drawn at once, underlined, and the session's echo
// confirms or replaces it. The predictor reads the screen model, which
// outerterm feeds all the time only while attach predicts
// (outerterm.Term.Track): without prediction the model costs nothing.
// The predictor and what is drawn of it are guarded by wmu, as every
// write to the terminal is.

// predicts says whether this attach may predict at all: not read-only,
// and either always or, on auto, over a link that is pinged (a local
// socket's round trip is far below any threshold).
func predicts(cfg Config) bool {
	return !cfg.ReadOnly && (cfg.Predict == predict.Always || cfg.Predict == predict.Auto && cfg.Keepalive.Interval > 0)
}

// predicted returns what fn returns, with the prediction drawn over the
// terminal erased before it and drawn again after it; output says fn drew
// the session's output, which the predictor then checks. wmu is held.
func (c *attacher) predicted(fn func() []byte, output bool) []byte {
	if c.pred == nil {
		return fn()
	}
	b := c.ot.ErasePrediction()
	b = append(b, fn()...)
	c.predictModes()
	now := time.Now()
	if output && c.ot.Predictable() {
		c.pred.Screen(now, c.ot.PredictScreen())
	}
	b = append(b, c.ot.DrawPrediction(c.pred.View())...)
	c.armPredict()
	return b
}

// predictModes hands the predictor the modes as the session's frames and
// screen say them (wmu held). A terminal drawn from the model (another
// size than the session's) is predicted on as on an unknown pty mode:
// not at all.
func (c *attacher) predictModes() {
	alt, mouse := c.ot.PredictModes()
	m := predict.Modes{AltScreen: alt, Mouse: mouse, TermMode: c.termMode, Shell: c.shell}
	if !c.ot.Predictable() {
		m.TermMode = nil
	}
	c.pred.SetModes(m)
}

// scanMarks follows the shell's integration marks (OSC 133) in output
// about to be drawn (wmu held), as the page does: A and B its prompt (B:
// what is typed now goes to its line editor), C a command's output, D its
// end.
func (c *attacher) scanMarks(p []byte) {
	if c.pred == nil {
		return
	}
	if c.marks.Emit == nil {
		c.marks.Emit = func(m shellmark.Mark) {
			switch m.Kind {
			case shellmark.Prompt, shellmark.Input:
				c.shell = predict.ShellPrompt
			case shellmark.Exec, shellmark.Done:
				c.shell = predict.ShellRunning
			}
			if m.Kind == shellmark.Input {
				c.pred.Prompt()
			}
			c.predictModes()
		}
	}
	c.marks.Write(0, time.Time{}, p)
}

// keyTyped takes a chunk typed on the terminal, before it is sent
// (paint draws the prediction).
func (c *attacher) keyTyped(data []byte) {
	c.paint(func() []byte {
		if c.ot.Predictable() {
			c.pred.Key(string(data), time.Now(), c.ot.PredictScreen())
		}
		return nil
	})
}

// termModeFrame takes a term-mode frame: the pty's echo and line editing.
func (c *attacher) termModeFrame(p []byte) {
	m, err := wire.ParseTermMode(p)
	if err != nil || c.pred == nil {
		return
	}
	c.paint(func() []byte {
		c.termMode = &predict.TermMode{Echo: m.Echo, Canonical: m.Canonical}
		return nil
	})
}

// pinged and ponged measure the round trip for the predictor.
func (c *attacher) pinged(n uint64) {
	if c.pred != nil {
		c.wmu.Lock()
		c.pingN, c.pingAt = n, time.Now()
		c.wmu.Unlock()
	}
}

func (c *attacher) ponged(p []byte) {
	n, err := wire.ParseUint64(wire.TypePong, p)
	if err != nil || c.pred == nil {
		return
	}
	c.wmu.Lock()
	if n == c.pingN && !c.pingAt.IsZero() {
		c.pred.SetRTT(time.Since(c.pingAt))
		c.pingAt = time.Time{}
	}
	c.wmu.Unlock()
}

// armPredict sets the timer for the predictor's next deadline (wmu held).
func (c *attacher) armPredict() {
	at, ok := c.pred.Deadline()
	if !ok {
		if c.predTimer != nil {
			c.predTimer.Stop()
		}
		return
	}
	d := time.Until(at)
	if c.predTimer == nil {
		c.predTimer = time.AfterFunc(d, c.predictTick)
	} else {
		c.predTimer.Reset(d)
	}
}

// predictTick rolls back what is overdue.
func (c *attacher) predictTick() {
	c.paint(func() []byte {
		c.pred.Tick(time.Now())
		return nil
	})
}

// stopPredicting erases what is drawn and predicts no more (wmu held):
// attach is ending.
func (c *attacher) stopPredicting() []byte {
	if c.pred == nil {
		return nil
	}
	if c.predTimer != nil {
		c.predTimer.Stop()
	}
	c.pred.SetSetting(predict.Never)
	return c.ot.ErasePrediction()
}
