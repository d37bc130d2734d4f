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

func linkKey(l *Link) string { return mongox.Key(l.ObjectID, linksPart, mongox.IDPart(l.ID)) }

// InsertLink stores a link and lists it under its object, keyed by the link's id.
func (s *Store) InsertLink(ctx context.Context, l *Link) error {
	if _, err := s.links.InsertOne(ctx, l); err != nil {
		return fmt.Errorf("store links: %w", err)
	}
	return s.listLink(ctx, l)
}

func (s *Store) listLink(ctx context.Context, l *Link) error {
	if err := s.insertEntry(ctx, linkKey(l), *l); err != nil {
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
	// Before is the id of the previous page's last link ("": the newest page).
	Before string
	Limit  int
}

// ListLinks lists a page of an object's links, newest first, in one find (the entries are copies
// of the links, which never change), and the id to page on from ("": none left).
func (s *Store) ListLinks(ctx context.Context, q LinkPage) ([]Link, string, error) {
	r := mongox.Range{Scope: mongox.Scope(q.ObjectID, linksPart), Desc: true, Limit: q.Limit + 1}
	if q.Before != "" {
		r.Before = mongox.Key(q.ObjectID, linksPart, mongox.IDPart(q.Before))
	}
	out, err := page[Link](ctx, s, r)
	if err != nil {
		return nil, "", fmt.Errorf("store links: %w", err)
	}
	next := ""
	if len(out) > q.Limit {
		out = out[:q.Limit]
		next = out[q.Limit-1].ID
	}
	return out, next, nil
}
