package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// SyncConfig is the git repository that an object's llm.txt is pulled from.
type SyncConfig struct {
	ObjectID     string     `bson:"_id"`
	RepoURL      string     `bson:"repo_url"`
	Branch       string     `bson:"branch"`
	FilePath     string     `bson:"file_path"`
	LastCommit   string     `bson:"last_commit,omitempty"`
	LastSyncedAt *time.Time `bson:"last_synced_at,omitempty"`
}

// Sync returns an object's sync configuration, or mongox.ErrNotFound.
func (s *Store) Sync(ctx context.Context, objectID string) (*SyncConfig, error) {
	var cfg SyncConfig
	if err := mongox.FindOne(ctx, s.syncs, mongox.ByID(objectID), &cfg); err != nil {
		return nil, fmt.Errorf("store syncs: %w", err)
	}
	return &cfg, nil
}

// SetSync stores an object's sync configuration, replacing any earlier one.
func (s *Store) SetSync(ctx context.Context, cfg *SyncConfig) error {
	if err := mongox.ReplaceUpsert(ctx, s.syncs, cfg.ObjectID, cfg); err != nil {
		return fmt.Errorf("store syncs: %w", err)
	}
	return nil
}

// RecordSync records the commit of the last pull, unless the configuration changed meanwhile.
func (s *Store) RecordSync(ctx context.Context, cfg *SyncConfig, commit string, at time.Time) error {
	filter := bson.D{{Key: "_id", Value: cfg.ObjectID}, {Key: "repo_url", Value: cfg.RepoURL},
		{Key: "branch", Value: cfg.Branch}, {Key: "file_path", Value: cfg.FilePath}}
	_, err := s.syncs.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{
		{Key: "last_commit", Value: commit}, {Key: "last_synced_at", Value: at},
	}}})
	if err != nil {
		return fmt.Errorf("store syncs: %w", err)
	}
	return nil
}
