package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"time"

	"termkeep/internal/api"
	"termkeep/internal/keys"
	"termkeep/internal/screen"
	"termkeep/internal/session"
	"termkeep/internal/store"
)

// modesWait bounds how long a send waits for the screen model to read the
// output before it (and so learn the modes in force).
const modesWait = 5 * time.Second

// handleSend types text and named keys into a session, encoded for the
// modes its program has set, as a terminal would send them.
func (s *Server) handleSend(w http.ResponseWriter, r *http.Request, sess store.Session, h *session.Host) {
	var req api.SendRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if e := h.Exit(); e != nil {
		writeError(w, http.StatusConflict, "%s", endedMessage(sess, e))
		return
	}
	// The modes once the model has read everything received so far; a
	// model that cannot tell in a few seconds leaves a terminal's defaults.
	mctx, cancel := context.WithTimeout(r.Context(), modesWait)
	modes, err := h.InputModes(mctx)
	cancel()
	if err != nil {
		s.log.Warn("send: the session's input modes are unknown; keys go in the default modes", "session", sess.ID, "err", err)
	}
	sig, err := signalNumber(req.Signal)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	data, sent, err := encodeSend(req, modes)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if len(data) > 0 {
		err = h.Input(data)
	}
	if err == nil && sig != 0 {
		err = h.SignalCommand(sig)
	}
	if err != nil {
		if errors.Is(err, session.ErrEnded) {
			writeError(w, http.StatusConflict, "%s", endedMessage(sess, h.Exit()))
			return
		}
		writeError(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, sent)
}

// signalNumber is a SendRequest's signal, 0 for none.
func signalNumber(name string) (uint8, error) {
	if name == "" {
		return 0, nil
	}
	switch strings.TrimPrefix(strings.ToUpper(name), "SIG") {
	case "INT":
		return uint8(syscall.SIGINT), nil
	case "TERM":
		return uint8(syscall.SIGTERM), nil
	case "KILL":
		return uint8(syscall.SIGKILL), nil
	case "HUP":
		return uint8(syscall.SIGHUP), nil
	case "QUIT":
		return uint8(syscall.SIGQUIT), nil
	}
	return 0, fmt.Errorf("signal %q is not one of INT, TERM, KILL, HUP, QUIT", name)
}

// encodeSend is the bytes a SendRequest types into a program whose input
// modes are m. Every key is checked before anything is typed.
func encodeSend(req api.SendRequest, m screen.InputModes) ([]byte, api.Sent, error) {
	km := keys.Modes{AppCursor: m.AppCursor, AppKeypad: m.AppKeypad}
	var data []byte
	sent := api.Sent{AppCursor: m.AppCursor}
	if req.Text != "" {
		sent.Pasted = m.BracketedPaste && !req.NoPaste
		if req.NoPaste {
			data = append(data, req.Text...) // typed as keys, as given: the caller's raw choice
		} else {
			data = append(data, keys.Paste([]byte(req.Text), sent.Pasted)...)
		}
	}
	for _, k := range req.Keys {
		b, err := keys.Encode(k, km)
		if err != nil {
			return nil, api.Sent{}, err
		}
		data = append(data, b...)
	}
	if req.Enter {
		data = append(data, '\r')
	}
	if len(data) == 0 && req.Signal == "" {
		return nil, api.Sent{}, errors.New("nothing to send: give text, keys, enter or a signal")
	}
	sent.Bytes = len(data)
	return data, sent, nil
}
