package store

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/pkg/mongox"
)

// TookPart is the collection of participation marks: "<thread>/<object>" exists once the object
// wrote into the thread (a message, a node, an edge or a decision). A decision of the other side
// counts for an object's decision memory only when the object took part before it (its
// relationship, not a stranger's monologue).
const TookPart = "took_part"

type tookPart struct {
	ID string `bson:"_id"`
}

func tookPartID(threadID, objectID string) string { return threadID + "/" + objectID }

// MarkTookPart records that objects wrote into threads (pairs of thread and object), in one
// unordered insert; marks already there are left as they are.
func (s *Store) MarkTookPart(ctx context.Context, pairs [][2]string) error {
	docs := make([]tookPart, len(pairs))
	for i, p := range pairs {
		docs[i] = tookPart{ID: tookPartID(p[0], p[1])}
	}
	if _, err := mongox.InsertNew(ctx, s.c(TookPart), docs); err != nil {
		return fmt.Errorf("store participation: %w", err)
	}
	return nil
}

// TookPartIn reports whether an object wrote into a thread: a point read.
func (s *Store) TookPartIn(ctx context.Context, threadID, objectID string) (bool, error) {
	took, err := s.find(ctx, TookPart, tookPartID(threadID, objectID), &tookPart{})
	if err != nil {
		return false, fmt.Errorf("store participation: %w", err)
	}
	return took, nil
}

// UpgradeTookPart marks, once, the authors of the nodes stored by earlier releases (messages,
// nodes, decisions, ingested texts) as having taken part in their threads: it reads the nodes
// collection in pages of _id and inserts the marks of each page in one command. A run cut short
// runs again from the start; marks are inserted once.
func (s *Store) UpgradeTookPart(ctx context.Context) error {
	type authored struct {
		ID       string `bson:"_id"`
		ThreadID string `bson:"thread_id"`
		AuthorID string `bson:"author_id"`
	}
	id := func(n authored) string { return n.ID }
	err := mongox.Pages(ctx, s.c(Nodes), mongox.Range{Limit: upgradePage}, id, func(ns []authored) error {
		seen := map[[2]string]bool{}
		var pairs [][2]string
		for _, n := range ns {
			p := [2]string{n.ThreadID, n.AuthorID}
			if n.ThreadID != "" && n.AuthorID != "" && !seen[p] {
				seen[p] = true
				pairs = append(pairs, p)
			}
		}
		return s.MarkTookPart(ctx, pairs)
	})
	if err != nil {
		return fmt.Errorf("upgrade participation: %w", err)
	}
	return nil
}
