package mcp

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressEvery is how often a long call reports progress to a client
// that asked for it (a progressToken in the request's _meta): a client
// that shows it, or resets its own timeout on it, knows the call lives.
const progressEvery = time.Second

// progressKey carries a call's progress reporter in its context.
type progressKey struct{}

// reporter sends one progress notification: done and total in the same
// unit (total 0: unknown), and a sentence for a person.
type reporter func(done, total float64, msg string)

// withProgress gives ctx the reporter of req, when its client asked for
// progress.
func withProgress(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	if req == nil || req.Params == nil || req.Session == nil {
		return ctx
	}
	tok := req.Params.GetProgressToken()
	if tok == nil {
		return ctx
	}
	ss := req.Session
	return context.WithValue(ctx, progressKey{}, reporter(func(done, total float64, msg string) {
		ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: done, Total: total, Message: msg})
	}))
}

// reportProgress calls status every progressEvery and reports what it
// says, until the returned stop is called or ctx ends; with no reporter
// in ctx it does nothing. Progress is the time waited in milliseconds, of
// the limit's: it only grows, as the protocol wants.
func reportProgress(ctx context.Context, limit time.Duration, status func(waited time.Duration) string) (stop func()) {
	rep, _ := ctx.Value(progressKey{}).(reporter)
	if rep == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				waited := time.Since(start)
				rep(float64(waited.Milliseconds()), float64(limit.Milliseconds()), status(waited))
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// fmtDuration says d to the second, for a person.
func fmtDuration(d time.Duration) string { return d.Round(time.Second).String() }
