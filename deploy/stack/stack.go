// Package stack starts the whole svc suite in one process: every service on its own loopback
// listener, then the gateway in front of them. Services still talk to each other over HTTP and
// Kafka exactly as when deployed apart; only where the processes live changes. The all-in-one
// command and the end-to-end tests both use it.
package stack

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"

	claims "github.com/svcdev/svc/claims-svc/app"
	contextsvc "github.com/svcdev/svc/context-svc/app"
	feed "github.com/svcdev/svc/feed-svc/app"
	gateway "github.com/svcdev/svc/gateway/app"
	graph "github.com/svcdev/svc/graph-svc/app"
	identity "github.com/svcdev/svc/identity-svc/app"
	mailbox "github.com/svcdev/svc/mailbox-svc/app"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/service"
	webhook "github.com/svcdev/svc/webhook-svc/app"
	"go.mongodb.org/mongo-driver/v2/event"
)

// Options says where the backends are and how to name things on them.
type Options struct {
	MongoURI string
	Brokers  []string
	RedisURL string
	// DatabasePrefix is prepended to each service's database name (tests give each stack its own).
	DatabasePrefix string
	TopicPrefix    string
	// GatewayJWTKey is the gateway's signing key (GATEWAY_JWT_KEY), ServiceJWTKey the services'
	// (SERVICE_JWT_KEY); each is generated when empty. The services are given the gateway key's
	// public half, never the key.
	GatewayJWTKey string
	ServiceJWTKey string
	BaseURL       string
	// GatewayAddr is where the gateway listens (default 127.0.0.1:0, any free port).
	GatewayAddr string
	// GatewayListener, if set, is the gateway's listener, bound by the caller (GatewayAddr is then
	// not used); Stop closes it.
	GatewayListener net.Listener
	// Env is added to every service's environment (rate limits, secrets, outbound settings).
	Env map[string]string
	// Replicas runs that many instances of a service (default 1), sharing its database, behind
	// one comma-separated upstream list; gateway replicas share Redis and each has its own
	// address (Stack.GatewayURLs).
	Replicas map[string]int
	Log      *slog.Logger
	// CommandMonitor, when set, sees every store command of every service (tests count them).
	CommandMonitor *event.CommandMonitor
}

// runner is a started service.
type runner interface {
	Serve(ctx context.Context, ln net.Listener) error
	Close()
}

// component is one service of the suite: its name, the variable by which others find it, and
// how to build it from an environment.
type component struct {
	name   string
	urlEnv string
	build  func(ctx context.Context, env map[string]string, log *slog.Logger, mon *event.CommandMonitor) (runner, error)
}

// build loads a service's typed configuration from env exactly as its own binary does, then
// attaches the command monitor to the services that have a store.
func build[C any, R runner](newApp func(context.Context, C, *slog.Logger) (R, error)) func(context.Context, map[string]string, *slog.Logger, *event.CommandMonitor) (runner, error) {
	return func(ctx context.Context, env map[string]string, log *slog.Logger, mon *event.CommandMonitor) (runner, error) {
		var cfg C
		if err := config.LoadMap(ctx, &cfg, env); err != nil {
			return nil, err
		}
		if m, ok := any(&cfg).(interface{ SetCommandMonitor(*event.CommandMonitor) }); ok && mon != nil {
			m.SetCommandMonitor(mon)
		}
		r, err := newApp(ctx, cfg, log)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// services are the backend services, in start order.
var services = []component{
	{name: identity.Name, urlEnv: "IDENTITY_URL", build: build(identity.New)},
	{name: contextsvc.Name, urlEnv: "CONTEXT_URL", build: build(contextsvc.New)},
	{name: mailbox.Name, urlEnv: "MAILBOX_URL", build: build(mailbox.New)},
	{name: graph.Name, urlEnv: "GRAPH_URL", build: build(graph.New)},
	{name: claims.Name, urlEnv: "CLAIMS_URL", build: build(claims.New)},
	{name: feed.Name, urlEnv: "FEED_URL", build: build(feed.New)},
	{name: webhook.Name, urlEnv: "WEBHOOK_URL", build: build(webhook.New)},
}

var gatewayComponent = component{name: gateway.Name, build: build(gateway.New)}

// Stack is a running suite.
type Stack struct {
	// GatewayURL is the public entry point, for example http://127.0.0.1:8080.
	GatewayURL string
	// GatewayURLs are the addresses of every gateway replica (Replicas["gateway"]), the first
	// being GatewayURL.
	GatewayURLs []string
	// ServiceURLs are the services' internal addresses, by name (comma-separated for replicas).
	ServiceURLs map[string]string
	// instances are each service's running instances, in start order.
	instances map[string][]*instance
	runCtx    context.Context
	log       *slog.Logger
	monitor   *event.CommandMonitor
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	mu        sync.Mutex
	errs      []error
}

// Start starts every service and the gateway; it returns once all of them accept connections.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	opts.Log, opts.GatewayAddr = cmp.Or(opts.Log, slog.Default()), cmp.Or(opts.GatewayAddr, "127.0.0.1:0")
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Stack{ServiceURLs: map[string]string{}, instances: map[string][]*instance{}, runCtx: runCtx, log: opts.Log, monitor: opts.CommandMonitor, cancel: cancel}
	env := map[string]string{
		"MONGO_URI": opts.MongoURI, "KAFKA_BROKERS": strings.Join(opts.Brokers, ","), "KAFKA_TOPIC_PREFIX": opts.TopicPrefix,
		"REDIS_URL": opts.RedisURL, "BASE_URL": opts.BaseURL,
		"SHUTDOWN_TIMEOUT": "5s",
	}
	maps.Copy(env, opts.Env)
	// fail closes the listeners given and stops what started.
	fail := func(err error, unserved ...net.Listener) (*Stack, error) {
		for _, ln := range unserved {
			_ = ln.Close()
		}
		s.Stop()
		return nil, err
	}
	gatewayEnv, serviceEnv, err := jwtEnv(opts)
	if err != nil {
		return fail(err)
	}
	// The gateway's address is known first: services write public links with it (BASE_URL).
	ln := opts.GatewayListener
	if ln == nil {
		if ln, err = net.Listen("tcp", opts.GatewayAddr); err != nil {
			return fail(fmt.Errorf("listen for the gateway: %w", err))
		}
	}
	s.GatewayURL = "http://" + ln.Addr().String()
	env["BASE_URL"] = cmp.Or(env["BASE_URL"], s.GatewayURL)
	all := []net.Listener{ln} // every listener bound so far
	listeners := map[string][]net.Listener{}
	for _, c := range services {
		var urls []string
		for range max(1, opts.Replicas[c.name]) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return fail(fmt.Errorf("listen for %s: %w", c.name, err), all...)
			}
			all = append(all, ln)
			listeners[c.name] = append(listeners[c.name], ln)
			urls = append(urls, "http://"+ln.Addr().String())
		}
		s.ServiceURLs[c.name] = strings.Join(urls, ",")
		env[c.urlEnv] = s.ServiceURLs[c.name]
	}
	for _, c := range services {
		senv := maps.Clone(env)
		maps.Copy(senv, serviceEnv)
		senv["MONGO_DATABASE"] = opts.DatabasePrefix + strings.ReplaceAll(c.name, "-", "_")
		// Services call each other at the first replica's address.
		for _, other := range services {
			senv[other.urlEnv] = strings.Split(s.ServiceURLs[other.name], ",")[0]
		}
		for _, ln := range listeners[c.name] {
			if err := s.start(ctx, c, senv, ln); err != nil {
				return fail(err, all...)
			}
		}
	}
	genv := maps.Clone(env)
	maps.Copy(genv, gatewayEnv)
	gateways := []net.Listener{ln}
	for range max(1, opts.Replicas[gateway.Name]) - 1 {
		more, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fail(fmt.Errorf("listen for a gateway replica: %w", err), gateways...)
		}
		gateways = append(gateways, more)
	}
	for i, gln := range gateways {
		s.GatewayURLs = append(s.GatewayURLs, "http://"+gln.Addr().String())
		if err := s.start(ctx, gatewayComponent, genv, gln); err != nil {
			return fail(err, gateways[i:]...)
		}
	}
	return s, nil
}

// jwtEnv returns the gateway's and the services' internal-token settings: the gateway alone gets
// its signing key, the services its public key and their own key.
func jwtEnv(opts Options) (gateway, services map[string]string, err error) {
	gatewayKey, serviceKey := opts.GatewayJWTKey, opts.ServiceJWTKey
	if gatewayKey == "" {
		gatewayKey = authn.GenerateSeed()
	}
	if serviceKey == "" {
		serviceKey = authn.GenerateSeed()
	}
	k, err := authn.ParseSigningKey(gatewayKey)
	if err != nil {
		return nil, nil, fmt.Errorf("gateway JWT key: %w", err)
	}
	return map[string]string{"GATEWAY_JWT_KEY": gatewayKey},
		map[string]string{"GATEWAY_JWT_PUBLIC_KEY": base64.StdEncoding.EncodeToString(k.Public()), "SERVICE_JWT_KEY": serviceKey}, nil
}

// instance is one running instance of a service.
type instance struct {
	c      component
	env    map[string]string
	addr   string
	stop   context.CancelFunc
	done   chan struct{}
	runner runner
}

func (s *Stack) start(ctx context.Context, c component, env map[string]string, ln net.Listener) error {
	in, err := s.run(ctx, c, env, ln)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.instances[c.name] = append(s.instances[c.name], in)
	s.mu.Unlock()
	return nil
}

func (s *Stack) run(ctx context.Context, c component, env map[string]string, ln net.Listener) (*instance, error) {
	r, err := c.build(ctx, env, s.log.With("service", c.name), s.monitor)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", c.name, err)
	}
	runCtx, stop := context.WithCancel(s.runCtx)
	in := &instance{c: c, env: env, addr: ln.Addr().String(), stop: stop, done: make(chan struct{}), runner: r}
	s.wg.Go(func() {
		defer close(in.done)
		defer r.Close()
		if err := r.Serve(runCtx, ln); err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("%s: %w", c.name, err))
			s.mu.Unlock()
			s.cancel() // one service failing stops the suite, as a crash-looping pod would show
		}
	})
	return in, nil
}

// StopReplica stops instance i of a service, as a crashed or drained pod leaves the others
// running, and returns at once: what the instance was doing is abandoned mid-flight.
func (s *Stack) StopReplica(service string, i int) error {
	in, err := s.instance(service, i)
	if err != nil {
		return err
	}
	in.stop()
	return nil
}

// RestartReplica stops instance i of a service, waits until it has stopped, and starts it again
// on the same address with the same environment, as a restarted pod would.
func (s *Stack) RestartReplica(ctx context.Context, service string, i int) error {
	return s.RestartReplicaWith(ctx, service, i, nil)
}

// RestartReplicaWith restarts instance i of a service as RestartReplica does, with the settings
// of set on top of its environment (an empty value unsets one), as a pod restarted with a changed
// configuration would be. A start that fails leaves the instance stopped; a later restart may
// start it again.
func (s *Stack) RestartReplicaWith(ctx context.Context, service string, i int, set map[string]string) error {
	in, err := s.instance(service, i)
	if err != nil {
		return err
	}
	in.stop()
	<-in.done
	env := maps.Clone(in.env)
	for k, v := range set {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	ln, err := net.Listen("tcp", in.addr)
	if err != nil {
		return fmt.Errorf("listen again for %s: %w", service, err)
	}
	next, err := s.run(ctx, in.c, env, ln)
	if err != nil {
		_ = ln.Close()
		return err
	}
	s.mu.Lock()
	s.instances[service][i] = next
	s.mu.Unlock()
	return nil
}

// Env returns a copy of the environment instance i of a service runs with.
func (s *Stack) Env(service string, i int) (map[string]string, error) {
	in, err := s.instance(service, i)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(in.env), nil
}

func (s *Stack) instance(service string, i int) (*instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.instances[service]) {
		return nil, fmt.Errorf("%s has no instance %d", service, i)
	}
	return s.instances[service][i], nil
}

// Wiring returns each backend service's runtime edges as its constructor made them (the first
// replica's: replicas are built alike).
func (s *Stack) Wiring() map[string]service.Wiring {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]service.Wiring{}
	for name, ins := range s.instances {
		if w, ok := ins[0].runner.(interface{ Wiring() service.Wiring }); ok {
			out[name] = w.Wiring()
		}
	}
	return out
}

// Wait blocks until the stack has stopped, by Stop or because a service failed, and returns
// what made services fail.
func (s *Stack) Wait() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

// Stop shuts every service down gracefully and waits for them.
func (s *Stack) Stop() error {
	s.cancel()
	return s.Wait()
}
