package runloop

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/registry"
)

// ServeOptions are what Serve needs besides the hub.
type ServeOptions struct {
	// Listen is the HTTP address ("" for none). When it is taken and
	// ListenSet is false (the default address) and a socket serves, the
	// daemon runs on the socket alone.
	Listen    string
	ListenSet bool
	Socket    string // unix socket for shims ("" for none)
	Token     string // bearer token HTTP clients must present

	// ConfigPath, LoadOptions, Config and LoadErr are as in DaemonOptions.
	ConfigPath  string
	LoadOptions *registry.LoadOptions
	Config      *registry.Config
	LoadErr     error

	Gatherer  prometheus.Gatherer
	CachePath string // for the start-up log line
	Version   string
	Logger    *slog.Logger
}

// Serve is the daemon: it opens the socket (held until gw has closed, so
// that a daemon started meanwhile cannot serve it while this one still
// ends its sessions and upstreams) and the HTTP listener, runs the Daemon
// with SIGHUP reloads, sd_notify and config watching until ctx ends, and
// closes gw. It returns after every goroutine it started has exited.
func Serve(ctx context.Context, gw *gateway.Hub, o ServeOptions) error {
	log := o.Logger
	defer gw.Close()
	var sockLn net.Listener
	if o.Socket != "" {
		ln, release, err := deploy.ListenSocket(o.Socket)
		if err != nil {
			return err
		}
		defer func() { gw.Close(); release() }()
		sockLn = ln
	}
	var ln net.Listener
	if o.Listen != "" {
		var err error
		ln, err = net.Listen("tcp", o.Listen)
		switch {
		case err != nil && (o.ListenSet || sockLn == nil):
			return fmt.Errorf("listening on %s: %w", o.Listen, err)
		case err != nil:
			// The default port is taken (another program, or another user's
			// daemon): the socket still serves the shims.
			log.Warn("HTTP listener unavailable; serving the unix socket only", "listen", o.Listen, "err", err)
			ln = nil
			gw.SetHTTP("", o.Listen, err)
		default:
			gw.SetHTTP(ln.Addr().String(), o.Listen, nil)
		}
	}
	reloads, stopHup := deploy.HUPReloads(ctx)
	defer stopHup()
	d := NewDaemon(gw, DaemonOptions{
		ConfigPath:  o.ConfigPath,
		LoadOptions: o.LoadOptions,
		Config:      o.Config,
		LoadErr:     o.LoadErr,
		HTTP:        ln,
		Socket:      sockLn,
		HTTPOptions: gateway.HTTPOptions{
			Token: o.Token, Gatherer: o.Gatherer, SessionTimeout: o.Config.Settings.SessionIdleTimeout, // read at start
		},
		ConnContext: gw.ConnContext,
		Reloads:     reloads,
		Notifier:    deploy.NewNotifier(log),
		Started:     startedMemory,
		TrustFile:   registry.DefaultTrustPath(),
		Logger:      log,
		Watch: func(ctx context.Context, files func() []string, reload func(), resync <-chan struct{}) error {
			return registry.Watch(ctx, files, reload, &registry.WatchOptions{Logger: log, Resync: resync})
		},
	})
	// Once started, the daemon settles on one CPU, unless $GOMAXPROCS says
	// otherwise: its work is relaying small messages, and with more than
	// one P the runtime spends more CPU waking threads to hand them
	// between goroutines than the relaying costs (proxy bench on 2 CPUs:
	// 358 µs per call instead of 382 at concurrency 1, 172 instead of 205
	// at 64 sessions, at the same throughput). Start-up (config, cache,
	// search indexes) runs on every CPU first.
	if os.Getenv("GOMAXPROCS") == "" {
		settle := time.AfterFunc(settleAfter, func() { runtime.GOMAXPROCS(1) })
		defer settle.Stop()
	}
	idleCtx, stopIdle := context.WithCancel(ctx)
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		settleWhenIdle(idleCtx, d.requests, d.freed, settleMemory)
	}()
	defer func() { stopIdle(); <-settled }()
	mcpURL := "(none)"
	if ln != nil {
		mcpURL = "http://" + ln.Addr().String() + "/mcp"
	}
	log.Info("mcpgw serving", "version", o.Version, "mcp", mcpURL,
		"socket", o.Socket, "config", o.ConfigPath, "servers", len(o.Config.Servers), "cache", o.CachePath)
	err := d.Run(ctx)
	log.Info("mcpgw stopping")
	return err
}
