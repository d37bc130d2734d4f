package store

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Link is a context link: a public address composing selected sources.
type Link struct {
	ID        string    `bson:"_id"`
	ObjectID  string    `bson:"object_id"`
	Title     string    `bson:"title"`
	Note      string    `bson:"note"`
	SourceIDs []string  `bson:"source_ids"`
	CreatedAt time.Time `bson:"created_at"`
}

// InsertLink stores a link and lists it under its object. The list entry is keyed by the link's
// id, so that the backfill of links stored by an earlier release never lists one twice.
func (s *Store) InsertLink(ctx context.Context, l *Link) error {
	if _, err := s.links.InsertOne(ctx, l); err != nil {
		return fmt.Errorf("store links: %w", err)
	}
	return s.listLink(ctx, l)
}

func (s *Store) listLink(ctx context.Context, l *Link) error {
	if _, _, err := mongox.AppendOnce(ctx, s.objectLists, linkList(l.ObjectID), l.ID, *l); err != nil {
		return fmt.Errorf("store links list: %w", err)
	}
	return nil
}

// Link returns a link by id, or mongox.ErrNotFound.
func (s *Store) Link(ctx context.Context, id string) (*Link, error) {
	var l Link
	if err := mongox.FindOne(ctx, s.links, mongox.ByID(id), &l); err != nil {
		return nil, fmt.Errorf("store links: %w", err)
	}
	return &l, nil
}

// LinkPage pages through an object's links, newest first.
type LinkPage struct {
	ObjectID string
	// Before is the list position of the page's predecessor's last link (0: the newest page).
	Before int64
	Limit  int
}

// ListLinks lists a page of an object's links from its list, one point read each (the entries
// are copies of the links, which never change), and the position of the next page (0: none).
func (s *Store) ListLinks(ctx context.Context, q LinkPage) ([]Link, int64, error) {
	entries, next, err := mongox.Page[Link](ctx, s.objectLists, linkList(q.ObjectID), q.Before, q.Limit)
	if err != nil {
		return nil, 0, fmt.Errorf("store links: %w", err)
	}
	out := make([]Link, len(entries))
	for i, e := range entries {
		out[i] = e.Value
	}
	return out, next, nil
}
