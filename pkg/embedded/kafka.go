package embedded

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
)

// Kafka is an embedded kfake cluster.
type Kafka struct {
	Brokers []string
	// Recovery is what start-up found in the data directory.
	Recovery KafkaRecovery
	// Detail says, for an unclean or lost start, what was found and done, for the operator.
	Detail  string
	cluster *kfake.Cluster
	running string // the marker file of a running cluster, "" without a data directory
}

// KafkaRecovery is the state in which start-up found a persistent cluster's data directory.
type KafkaRecovery int

const (
	// KafkaFresh: no data directory yet, or an in-memory cluster.
	KafkaFresh KafkaRecovery = iota
	// KafkaClean: the last run stopped in order.
	KafkaClean
	// KafkaUnclean: the last run was killed; kfake rebuilt its log by replaying the segment files,
	// which lose nothing that was acknowledged (a write reaches the files before its ack).
	KafkaUnclean
	// KafkaRepaired: replay found corrupt bytes and cut the log there: acknowledged events may
	// be missing from it.
	KafkaRepaired
	// KafkaLost: the data directory was deleted or replaced since the last run (its cluster id is
	// not the one remembered): every event it held is gone, and the cluster starts empty.
	KafkaLost
)

func (r KafkaRecovery) String() string {
	return [...]string{"fresh", "clean", "unclean", "repaired", "lost"}[r]
}

// LostEvents reports whether the broker may have lost acknowledged events, so that the services
// must publish again what they retained.
func (r KafkaRecovery) LostEvents() bool { return r == KafkaRepaired || r == KafkaLost }

// KafkaOptions configures the embedded cluster.
type KafkaOptions struct {
	Partitions int    // partitions of created topics (default 4)
	DataDir    string // persist topics, offsets and groups across restarts when set
	// Topics are created at start-up, when missing, with Partitions partitions. A cluster with a
	// DataDir never creates a topic on first use: kfake writes an auto-created topic's metadata
	// only at an orderly shutdown, so after a crash it would recreate the topic empty over its
	// old segment files. An in-memory cluster (tests) creates topics on first use.
	Topics []string
	// IDFile remembers, outside DataDir, the id of the cluster that DataDir holds, so that a
	// deleted or replaced DataDir is noticed (KafkaLost). Without it, loss goes unnoticed.
	IDFile string
	// Log receives the cluster's warnings and errors (a repair of its log among them).
	Log *slog.Logger
	// Addr is the address the broker listens on (default: 127.0.0.1 on a free port). A cluster
	// stopped and started again on the same DataDir and Addr is the same broker to the clients
	// that knew it, as a restarted broker is (a test of a broker outage stops and restarts one).
	Addr string
}

// runningMarker is the file that exists in a persistent cluster's data directory while it runs:
// found at start-up, it says the last run did not stop in order.
const runningMarker = "svc-running"

// StartKafka starts a one-broker kfake cluster with short group session timeouts, so that
// rebalances take well under a second. With a DataDir it checks the directory against IDFile,
// sets aside one that is not the cluster's, and creates Topics before any client connects.
func StartKafka(opts KafkaOptions) (*Kafka, error) {
	opts.Partitions = cmp.Or(opts.Partitions, 4)
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	logger := &kfakeLogger{log: opts.Log}
	addr := cmp.Or(opts.Addr, "127.0.0.1:0")
	kopts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(opts.Partitions),
		kfake.GroupMinSessionTimeout(100 * time.Millisecond),
		kfake.WithLogger(logger),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, addr) }),
	}
	k := &Kafka{}
	if opts.DataDir == "" {
		kopts = append(kopts, kfake.AllowAutoTopicCreation())
	} else {
		if err := k.checkDataDir(opts); err != nil {
			return nil, err
		}
		if err := dropSnapshots(opts.DataDir); err != nil {
			return nil, err
		}
		kopts = append(kopts, kfake.DataDir(opts.DataDir))
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("start kfake: %w", err)
	}
	k.cluster = c
	if logger.cut.Load() {
		k.Recovery = KafkaRepaired
		k.Detail = "the broker's log had corrupt bytes, cut at the first of them: events after that point are gone from it"
	}
	for _, t := range opts.Topics {
		if err := c.CreateTopic(t, int32(opts.Partitions), nil); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			c.Close()
			return nil, fmt.Errorf("create topic %s: %w", t, err)
		}
	}
	if opts.DataDir != "" {
		if err := k.markRunning(opts); err != nil {
			c.Close()
			return nil, err
		}
	}
	k.Brokers = c.ListenAddrs()
	return k, nil
}

// checkDataDir sets Recovery from what DataDir holds, and moves a DataDir that is not the
// remembered cluster's aside: kfake would otherwise append to its segment files while indexing
// them from zero.
func (k *Kafka) checkDataDir(opts KafkaOptions) error {
	if err := os.MkdirAll(opts.DataDir, 0o750); err != nil {
		return fmt.Errorf("kafka dir: %w", err)
	}
	metaID, err := clusterID(opts.DataDir)
	if err != nil {
		return err
	}
	var known string
	if opts.IDFile != "" {
		raw, err := os.ReadFile(opts.IDFile)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("kafka id file: %w", err)
		}
		known = strings.TrimSpace(string(raw))
	}
	entries, err := os.ReadDir(opts.DataDir)
	if err != nil {
		return fmt.Errorf("kafka dir: %w", err)
	}
	_, markerErr := os.Stat(filepath.Join(opts.DataDir, runningMarker))
	switch {
	case metaID == "" && len(entries) == 0 && known == "":
		k.Recovery = KafkaFresh
		return nil
	case metaID != "" && (known == "" || known == metaID):
		orphans, err := orphanPartitions(opts.DataDir)
		if err != nil {
			return err
		}
		if orphans != "" {
			k.Detail = "the broker's data directory holds partitions of topics it does not know (" + orphans +
				", created on first use before a crash)"
			return k.setAside(opts)
		}
		k.Recovery = KafkaClean
		if markerErr == nil {
			k.Recovery = KafkaUnclean
			k.Detail = "the broker was not stopped in order; its log was rebuilt from its segment files"
		}
		return nil
	}
	k.Detail = fmt.Sprintf("the broker's data directory is not the one of the last run (cluster %q, found %q)", known, metaID)
	if len(entries) == 0 {
		k.Recovery = KafkaLost
		return nil
	}
	return k.setAside(opts)
}

// setAside moves DataDir aside and starts an empty one: the cluster has lost what it held.
func (k *Kafka) setAside(opts KafkaOptions) error {
	k.Recovery = KafkaLost
	aside := fmt.Sprintf("%s.lost-%s", opts.DataDir, time.Now().UTC().Format("20060102T150405"))
	if err := os.Rename(opts.DataDir, aside); err != nil {
		return fmt.Errorf("set aside kafka dir: %w", err)
	}
	k.Detail += "; what it held was moved to " + aside
	if err := os.MkdirAll(opts.DataDir, 0o750); err != nil {
		return fmt.Errorf("kafka dir: %w", err)
	}
	return nil
}

// markRunning remembers the cluster's id and marks it running until Stop.
func (k *Kafka) markRunning(opts KafkaOptions) error {
	id, err := clusterID(opts.DataDir)
	if err != nil {
		return err
	}
	if opts.IDFile != "" {
		if err := os.WriteFile(opts.IDFile, []byte(id+"\n"), 0o600); err != nil {
			return fmt.Errorf("kafka id file: %w", err)
		}
	}
	k.running = filepath.Join(opts.DataDir, runningMarker)
	if err := os.WriteFile(k.running, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		return fmt.Errorf("kafka running marker: %w", err)
	}
	return nil
}

// orphanPartitions names the partition directories of dir that its topics.json does not list.
func orphanPartitions(dir string) (string, error) {
	known := map[string]bool{}
	raw, err := os.ReadFile(filepath.Join(dir, "topics.json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("kafka topics: %w", err)
	}
	if err == nil {
		var topics struct {
			Topics []struct {
				Name       string `json:"name"`
				Partitions int    `json:"partitions"`
			} `json:"topics"`
		}
		if json.Unmarshal(raw, &topics) != nil {
			return "topics.json unreadable", nil
		}
		for _, t := range topics.Topics {
			for p := range t.Partitions {
				known[fmt.Sprintf("%s-%d", url.PathEscape(t.Name), p)] = true
			}
		}
	}
	parts, err := os.ReadDir(filepath.Join(dir, "partitions"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("kafka partitions: %w", err)
	}
	var orphans []string
	for _, p := range parts {
		if !known[p.Name()] {
			orphans = append(orphans, p.Name())
		}
	}
	return strings.Join(orphans, ", "), nil
}

// dropSnapshots deletes the partitions' snapshot.json files that kfake writes at an orderly
// shutdown, so that every start rebuilds each partition from its segment files. A snapshot whose
// sizes still match segment files that were damaged since makes kfake cut the damaged log but
// keep appending past the cut while indexing from the old size: every later batch unreadable.
// Replaying costs what loading from the snapshot costs (kfake reads every batch either way).
func dropSnapshots(dir string) error {
	snaps, err := filepath.Glob(filepath.Join(dir, "partitions", "*", "snapshot.json"))
	if err != nil {
		return fmt.Errorf("kafka snapshots: %w", err)
	}
	for _, s := range snaps {
		if err := os.Remove(s); err != nil {
			return fmt.Errorf("kafka snapshots: %w", err)
		}
	}
	return nil
}

// clusterID is the id in dir's meta.json (kfake writes it when it first starts there), or "".
func clusterID(dir string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("kafka meta: %w", err)
	}
	var meta struct {
		ClusterID string `json:"cluster_id"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return "", nil //nolint:nilerr // a torn meta.json is a lost directory, not a start-up failure
	}
	return meta.ClusterID, nil
}

// Stop shuts the cluster down in order (kfake writes its state) and clears the running marker.
func (k *Kafka) Stop() {
	k.cluster.Close()
	if k.running != "" {
		_ = os.Remove(k.running)
	}
}

// kfakeLogger hands kfake's warnings and errors to slog, and notes a repair of the log (cut).
type kfakeLogger struct {
	log *slog.Logger
	cut atomic.Bool
}

func (l *kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	if level > kfake.LogLevelWarn || level == kfake.LogLevelNone {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if strings.Contains(msg, "truncating") {
		l.cut.Store(true)
	}
	if level == kfake.LogLevelError {
		l.log.Error("embedded kafka: " + msg)
		return
	}
	l.log.Warn("embedded kafka: " + msg)
}
