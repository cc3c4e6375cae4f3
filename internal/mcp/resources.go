package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"termkeep/internal/wire"
)

// screenEvery is how often at most a subscriber hears that a screen
// changed: a session printing all the time costs it two notifications a
// second, not one per chunk.
const screenEvery = 500 * time.Millisecond

// screenTemplate names a session's screen as a resource.
const screenTemplate = "termkeep://sessions/{session}/screen"

// throttle decides when a subscriber hears of a change: at once when it
// heard of none for every, else once at the end of that interval, the
// changes in between folded into that one. A plain value; time passed in.
type throttle struct {
	every   time.Duration
	last    time.Time // when it was last told
	told    bool      // it was told once
	pending bool      // a change it has not been told of
}

// change records a change at now: send says tell it now; else it is to
// be told at wake (then call due).
func (th *throttle) change(now time.Time) (send bool, wake time.Time) {
	if !th.told || (!now.Before(th.last) && now.Sub(th.last) >= th.every) {
		th.last, th.told, th.pending = now, true, false
		return true, time.Time{}
	}
	th.pending = true
	return false, th.last.Add(th.every)
}

// due reports whether a pending change is to be told at now (and takes it
// as told).
func (th *throttle) due(now time.Time) bool {
	if !th.pending || now.Before(th.last.Add(th.every)) {
		return false
	}
	th.last, th.pending = now, false
	return true
}

// screenRef is the session a screen resource's URI names ("" if none).
func screenRef(uri string) string {
	rest, ok := strings.CutPrefix(uri, "termkeep://sessions/")
	if !ok {
		return ""
	}
	ref, ok := strings.CutSuffix(rest, "/screen")
	if !ok || ref == "" || strings.Contains(ref, "/") {
		return ""
	}
	return ref
}

// resources serves sessions' screens as resources, and tells subscribers
// when one changes.
type resources struct {
	t   *tools
	srv *sdk.Server
	ctx context.Context // ends when the server does

	mu       sync.Mutex
	watching map[string]context.CancelFunc // by URI
}

func (r *resources) template() *sdk.ResourceTemplate {
	return &sdk.ResourceTemplate{Name: "session-screen", Title: "A session's screen", URITemplate: screenTemplate, MIMEType: "text/plain",
		Description: "The screen of a termkeep session as text, as a person sees it now (as read_screen returns it); {session} is its id or name. Subscribe to hear when it changes (at most twice a second)."}
}

// read answers resources/read of a screen.
func (r *resources) read(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	ref := screenRef(uri)
	if ref == "" {
		return nil, sdk.ResourceNotFoundError(uri)
	}
	rctx, cancel := context.WithTimeout(ctx, defaultTimeout)
	defer cancel()
	var text string
	err := r.t.again(rctx, func(b Backend) error {
		id, err := r.t.inScope(rctx, b, ref)
		if err != nil {
			return err
		}
		text, err = b.Screen(rctx, id, false, 0)
		return err
	})
	if err != nil {
		// Unknown, beyond the scope, or no server: the model reads why.
		return nil, &resourceError{uri: uri, err: err}
	}
	text = strings.TrimRight(text, " \n")
	if text == "" {
		// A blank screen is one empty line: contents without text (the
		// SDK leaves an empty one out) are no text resource to a client.
		text = "\n"
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
}

// resourceError is a screen that cannot be read, as the SDK answers a
// resource not found, with the reason in its message.
type resourceError struct {
	uri string
	err error
}

func (e *resourceError) Error() string { return errorResult(e.err).Content[0].(*sdk.TextContent).Text }

// Unwrap makes it the SDK's resource-not-found JSON-RPC error (-32602,
// invalid params, as the current MCP specification has it), with the
// reason as its message: a plain error is answered with code 0.
func (e *resourceError) Unwrap() error {
	return &jsonrpc.Error{Code: sdk.CodeResourceNotFound, Message: e.Error(), Data: json.RawMessage(fmt.Sprintf(`{"uri":%q}`, e.uri))}
}

// subscribe starts watching a screen's session for changes.
func (r *resources) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	ref := screenRef(uri)
	if ref == "" {
		return sdk.ResourceNotFoundError(uri)
	}
	b, err := r.t.backend(ctx)
	if err != nil {
		return &resourceError{uri: uri, err: err}
	}
	id, err := r.t.inScope(ctx, b, ref)
	if err == nil {
		_, err = b.Get(ctx, id)
	}
	if err != nil {
		return &resourceError{uri: uri, err: err}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watching == nil {
		r.watching = map[string]context.CancelFunc{}
	}
	if r.watching[uri] != nil {
		return nil
	}
	wctx, cancel := context.WithCancel(r.ctx)
	r.watching[uri] = cancel
	go r.watch(wctx, uri, ref)
	return nil
}

func (r *resources) unsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cancel := r.watching[req.Params.URI]; cancel != nil {
		cancel()
		delete(r.watching, req.Params.URI)
	}
	return nil
}

// watch follows ref's output until ctx ends or the session does, telling
// the subscribers of uri when its screen changed (throttled), over
// restarts of the termkeep server too.
func (r *resources) watch(ctx context.Context, uri, ref string) {
	defer func() {
		r.mu.Lock()
		if ctx.Err() == nil { // not ended by unsubscribe: a later subscribe starts anew
			r.watching[uri]()
			delete(r.watching, uri)
		}
		r.mu.Unlock()
	}()
	th := &throttle{every: screenEvery}
	tell := func() { r.srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri}) }
	var timer <-chan time.Time
	for ctx.Err() == nil {
		b, err := r.t.backend(ctx)
		var events <-chan event
		if err == nil {
			var id string
			if id, err = r.t.inScope(ctx, b, ref); err == nil {
				var st Stream
				if st, err = b.Follow(ctx, id, wire.FromEnd); err == nil {
					events = follow(ctx, st)
				}
			}
		}
		for events != nil {
			select {
			case <-ctx.Done():
				return
			case <-timer:
				timer = nil
				if th.due(time.Now()) {
					tell()
				}
			case e, ok := <-events:
				switch {
				case !ok || e.err != nil:
					events = nil
				case e.typ == wire.TypeOutput || e.typ == wire.TypeGap || e.typ == wire.TypeExit:
					if send, wake := th.change(time.Now()); send {
						tell()
					} else if timer == nil {
						timer = time.After(time.Until(wake))
					}
					if e.typ == wire.TypeExit {
						return // its screen changes no more
					}
				}
			}
		}
		if err != nil && !transient(err) {
			r.t.opts.Log.Info("mcp: stop watching a screen", "uri", uri, "err", err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryPause):
		}
	}
}

// listScreens answers resources/list with the screen of each running
// session the scope shows, where the SDK would list only the resources
// added to it (none: the screens come and go with the sessions). A
// client that lists resources, rather than reading the template, sees
// them so.
func (r *resources) listScreens(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		out := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}}
		b, err := r.t.backend(ctx)
		if err != nil {
			return out, nil // no server: no sessions, not a broken list
		}
		list, err := b.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			if s.State != "running" || !r.t.opts.Scope.Visible(s) {
				continue
			}
			name := s.Name
			if name == "" {
				name = s.ID
			}
			out.Resources = append(out.Resources, &sdk.Resource{URI: "termkeep://sessions/" + s.ID + "/screen", Name: name + "-screen",
				Title: "Screen of session " + name, MIMEType: "text/plain",
				Description: "what the terminal of session " + name + " (" + strings.Join(s.Command, " ") + ") shows now"})
		}
		return out, nil
	}
}
