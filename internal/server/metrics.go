package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"termkeep/internal/session"
	"termkeep/internal/sessiondir"
	"termkeep/internal/store"
	"termkeep/internal/wire"
)

// The server's metrics, served as Prometheus text at /metrics.
//
// Almost everything is read when the scraper asks, from state the server
// keeps anyway: sessions by state from the registry, viewers from the
// hosts, bytes, resyncs and holder reconnects from the session.Meter every
// host adds to (one atomic add where a byte or an event passes; no lock
// and no allocation on the output path), log disk use from the file
// system (cached, walked at most every diskEvery). What is counted as it
// happens is rare: lifecycle events (counted where they are emitted,
// events.go) and registry writes (timed where the server makes them).
//
// The server itself never fsyncs: the holders fsync their output logs and
// meta.json, and the registry runs in WAL mode with synchronous=NORMAL,
// where a commit is a write to the WAL and SQLite fsyncs only when it
// checkpoints (inside whichever commit crosses the WAL's size limit). So
// the latency measured is the registry writes' own,
// termkeep_registry_write_duration_seconds, whose tail holds those
// checkpoints' fsyncs; there is no termkeep fsync histogram to fake.

const metricsPrefix = "termkeep_"

// diskEvery bounds how often the log disk use is recomputed.
const diskEvery = 10 * time.Second

// metrics is the server's registry of metrics and the few counts it keeps
// itself. Its methods may be called on a nil *metrics (they do nothing),
// so code that runs before New made it needs no check.
type metrics struct {
	s       *Server
	reg     *prometheus.Registry
	handler http.Handler

	// meter is shared by every host (newHost): bytes, resyncs, reconnects.
	meter session.Meter

	created  prometheus.Counter
	restored prometheus.Counter
	ended    *prometheus.CounterVec // by state
	regWrite *prometheus.HistogramVec
	// dropped counts browser connections closed by the listener's gate
	// (gatelistener.go): evicted (unauthenticated, for a newer one) or
	// refused (no descriptor to spare).
	dropped *prometheus.CounterVec

	disk diskUsage

	// wmu guards the registry's write health, which readiness reads.
	wmu         sync.Mutex
	lastWriteOK time.Time
	writeErr    error // the last failed write's error, until one succeeds
	writeErrAt  time.Time
	probeAt     time.Time // when readiness last checked the registry
	probeErr    error
}

func newMetrics(s *Server) *metrics {
	m := &metrics{s: s, reg: prometheus.NewRegistry()}
	m.disk = diskUsage{dir: s.cfg.StateDir.SessionsDir(), now: s.cfg.Now}
	m.created = prometheus.NewCounter(prometheus.CounterOpts{
		Name: metricsPrefix + "sessions_created_total",
		Help: "Sessions created since the server started.",
	})
	m.restored = prometheus.NewCounter(prometheus.CounterOpts{
		Name: metricsPrefix + "sessions_restored_total",
		Help: "Ended or paused sessions given a new process (restore, resume, auto-restore) since the server started.",
	})
	m.ended = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricsPrefix + "sessions_ended_total",
		Help: "Sessions that ended since the server started, by the state they ended in.",
	}, []string{"state"})
	for _, st := range []store.State{store.StateExited, store.StateClosed, store.StateInterrupted, store.StatePaused} {
		m.ended.WithLabelValues(string(st))
	}
	m.regWrite = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: metricsPrefix + "registry_write_duration_seconds",
		Help: "Time of the server's writes to its SQLite registry, by operation. The server does not fsync itself " +
			"(WAL, synchronous=NORMAL): the tail holds SQLite's checkpoints, which do.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	}, []string{"op"})
	for _, op := range []string{"event", "end", "cwd", "pids"} {
		m.regWrite.WithLabelValues(op)
	}
	m.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricsPrefix + "browser_connections_dropped_total",
		Help: "Browser connections the listener closed before a request on them passed the guard: evicted (the oldest " +
			"unauthenticated, at a cap, for a newer one) or refused (no file descriptor to spare beyond the reserve).",
	}, []string{"reason"})
	for _, r := range []string{"evicted", "refused"} {
		m.dropped.WithLabelValues(r)
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        metricsPrefix + "build_info",
		Help:        "Always 1; the version is a label.",
		ConstLabels: prometheus.Labels{"version": s.cfg.Version},
	})
	build.Set(1)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.created, m.restored, m.ended, m.regWrite, m.dropped, build,
		&hostCollector{m: m},
	)
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
	return m
}

// hostMeter is the meter every host adds to (nil before New made m).
func (m *metrics) hostMeter() *session.Meter {
	if m == nil {
		return nil
	}
	return &m.meter
}

// countEvent counts a lifecycle event as it is emitted (events.go).
func (m *metrics) countEvent(kind string) {
	if m == nil {
		return
	}
	switch kind {
	case store.EventSessionCreated:
		m.created.Inc()
	case store.EventSessionRestored:
		m.restored.Inc()
	case store.EventProcessExited:
		m.ended.WithLabelValues(string(store.StateExited)).Inc()
	case store.EventSessionClosed:
		m.ended.WithLabelValues(string(store.StateClosed)).Inc()
	case store.EventSessionInterrupted:
		m.ended.WithLabelValues(string(store.StateInterrupted)).Inc()
	case store.EventSessionPaused:
		m.ended.WithLabelValues(string(store.StatePaused)).Inc()
	}
}

// observeWrite records one registry write of kind op that began at start
// and returned err: its time, and for readiness whether it worked. A write
// abandoned because its caller went away, or refused because its session
// was removed meanwhile, says nothing about the registry.
// droppedConns counts n browser connections closed for reason.
func (m *metrics) droppedConns(reason string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.dropped.WithLabelValues(reason).Add(float64(n))
}

func (m *metrics) observeWrite(op string, start time.Time, err error) {
	if m == nil {
		return
	}
	m.regWrite.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		err = nil
	}
	now := time.Now()
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if err == nil {
		m.lastWriteOK, m.writeErr = now, nil
		return
	}
	m.writeErr, m.writeErrAt = err, now
}

// writeFailFor is how long a failed registry write makes the server not
// ready, unless a write works meanwhile.
const writeFailFor = 30 * time.Second

// writeProblem says why the registry cannot be written, or "": a write the
// server made failed in the last writeFailFor and none has worked since,
// or a check (at most once a second, so an unauthenticated prober cannot
// keep the registry's one connection busy) cannot take its write lock.
func (m *metrics) writeProblem(ctx context.Context) string {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	if m.writeErr != nil && time.Since(m.writeErrAt) < writeFailFor {
		return "the registry cannot be written: " + m.writeErr.Error()
	}
	if now := time.Now(); now.Sub(m.probeAt) >= time.Second {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		m.probeAt, m.probeErr = now, m.s.store.Writable(ctx)
	}
	if m.probeErr != nil {
		return "the registry cannot be written: " + m.probeErr.Error()
	}
	return ""
}

// hostCollector reads the sessions' figures at scrape time.
type hostCollector struct{ m *metrics }

var (
	descSessions = prometheus.NewDesc(metricsPrefix+"sessions",
		"Sessions in the registry, by state.", []string{"state"}, nil)
	descViewers = prometheus.NewDesc(metricsPrefix+"viewers",
		"Viewers attached now, by kind (cli: termkeep attach and wire clients; web: browsers).", []string{"kind"}, nil)
	descInput = prometheus.NewDesc(metricsPrefix+"input_bytes_total",
		"Input written to sessions (keystrokes, send, answers) since the server started.", nil, nil)
	descOutput = prometheus.NewDesc(metricsPrefix+"output_bytes_total",
		"Output received from holders since the server started.", nil, nil)
	descResyncs = prometheus.NewDesc(metricsPrefix+"viewer_resyncs_total",
		"Viewers that fell more than their queue behind and were skipped to the present with a snapshot.", nil, nil)
	descReconnects = prometheus.NewDesc(metricsPrefix+"holder_reconnects_total",
		"Connections to a live holder made again after one dropped.", nil, nil)
	descLanes = prometheus.NewDesc(metricsPrefix+"lanes_total",
		"Output lanes to an attached terminal: opened, and of those ended, that wrote output or that ended at their start (refused).", []string{"result"}, nil)
	descLaneBytes = prometheus.NewDesc(metricsPrefix+"lane_bytes_total",
		"Output that lanes wrote to attached terminals.", nil, nil)
	descLaneTyped = prometheus.NewDesc(metricsPrefix+"lane_typed_bytes_total",
		"Input that holders read from input lanes' terminals and wrote to their ptys themselves (part of input_bytes_total).", nil, nil)
	descLaneHandBacks = prometheus.NewDesc(metricsPrefix+"lane_hand_backs_total",
		"Reads of input lanes' terminals that were not plain typing, handed back to be taken as typed.", nil, nil)
	descLogDisk = prometheus.NewDesc(metricsPrefix+"log_disk_bytes",
		"Output log segments on disk, all sessions (recomputed at most every 10 s).", nil, nil)
)

func (c *hostCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descViewers, descInput, descOutput, descResyncs, descReconnects, descLanes, descLaneBytes, descLaneTyped, descLaneHandBacks, descLogDisk} {
		ch <- d
	}
}

func (c *hostCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if counts, err := m.s.store.StateCounts(ctx); err != nil {
		ch <- prometheus.NewInvalidMetric(descSessions, err)
	} else {
		for _, st := range []store.State{store.StateRunning, store.StatePaused, store.StateExited, store.StateInterrupted, store.StateClosed} {
			if _, ok := counts[st]; !ok {
				counts[st] = 0
			}
		}
		for st, n := range counts {
			ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(n), string(st))
		}
	}
	kinds := map[wire.ViewerKind]int{wire.ViewerCLI: 0, wire.ViewerWeb: 0}
	for _, h := range m.s.allHosts() {
		for _, v := range h.Viewers().Viewers {
			k := v.Kind
			if k == wire.ViewerShare {
				k = wire.ViewerWeb // a share link's page is a browser's
			}
			kinds[k]++
		}
	}
	for k, n := range kinds {
		ch <- prometheus.MustNewConstMetric(descViewers, prometheus.GaugeValue, float64(n), string(k))
	}
	ch <- prometheus.MustNewConstMetric(descInput, prometheus.CounterValue, float64(m.meter.InputBytes.Load()))
	ch <- prometheus.MustNewConstMetric(descOutput, prometheus.CounterValue, float64(m.meter.OutputBytes.Load()))
	ch <- prometheus.MustNewConstMetric(descResyncs, prometheus.CounterValue, float64(m.meter.Resyncs.Load()))
	ch <- prometheus.MustNewConstMetric(descReconnects, prometheus.CounterValue, float64(m.meter.Reconnects.Load()))
	ch <- prometheus.MustNewConstMetric(descLanes, prometheus.CounterValue, float64(m.meter.LanesOpened.Load()), "opened")
	ch <- prometheus.MustNewConstMetric(descLanes, prometheus.CounterValue, float64(m.meter.Lanes.Load()), "wrote")
	ch <- prometheus.MustNewConstMetric(descLanes, prometheus.CounterValue, float64(m.meter.LanesRefused.Load()), "refused")
	ch <- prometheus.MustNewConstMetric(descLaneBytes, prometheus.CounterValue, float64(m.meter.LaneBytes.Load()))
	ch <- prometheus.MustNewConstMetric(descLaneTyped, prometheus.CounterValue, float64(m.meter.LaneTyped.Load()))
	ch <- prometheus.MustNewConstMetric(descLaneHandBacks, prometheus.CounterValue, float64(m.meter.LaneHandBacks.Load()))
	_, total := m.disk.get()
	ch <- prometheus.MustNewConstMetric(descLogDisk, prometheus.GaugeValue, float64(total))
}

// diskUsage is the size of every session's output log segments, walked
// at most every diskEvery: a directory listing and a stat per segment,
// never a read.
type diskUsage struct {
	dir string // the state directory's sessions/
	now func() time.Time

	mu    sync.Mutex // guards the fields below; held across a walk, so callers share one
	at    time.Time
	per   map[string]int64 // by session id; replaced whole, never changed
	total int64
}

// get returns the log bytes by session id (the map must not be changed)
// and their sum.
func (d *diskUsage) get() (map[string]int64, int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if d.per != nil && now.Sub(d.at) < diskEvery && now.Sub(d.at) >= 0 {
		return d.per, d.total
	}
	per := make(map[string]int64)
	var total int64
	sessions, _ := os.ReadDir(d.dir)
	for _, s := range sessions {
		if !s.IsDir() {
			continue
		}
		segs, _ := os.ReadDir(filepath.Join(d.dir, s.Name(), sessiondir.LogDir))
		var n int64
		for _, seg := range segs {
			if !strings.HasSuffix(seg.Name(), ".seg") || !seg.Type().IsRegular() {
				continue
			}
			if fi, err := seg.Info(); err == nil {
				n += fi.Size()
			}
		}
		per[s.Name()] = n
		total += n
	}
	d.at, d.per, d.total = now, per, total
	return per, total
}

// handleMetrics is GET /metrics. On the unix socket it is the owner's; on
// the browser listener it needs a token that sees every session (seesAll):
// the figures are the whole server's.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if !principalOf(r.Context()).seesAll() {
		writeError(w, http.StatusForbidden, "metrics cover every session: use the owner token, or a token of %s made without --session or --workspace (`termkeep token create --read-only --name metrics`)", currentUser())
		return
	}
	s.metrics.handler.ServeHTTP(w, r)
}

// seesAll reports whether p may read figures about the whole server: the
// owner, or a token of the owner's own user that is not narrowed to one
// session or workspace (read-only or not).
func (p principal) seesAll() bool {
	return p.owner || (p.user != "" && p.user == currentUser() && p.session == "" && p.workspace == "")
}
