package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// oldEntry is an entry of a list of earlier releases (collection graph_log, "<list>#<n>").
type oldEntry struct {
	ID  string        `bson:"_id"`
	Seq int64         `bson:"seq"`
	At  time.Time     `bson:"at"`
	V   bson.RawValue `bson:"v"`
}

// UpgradeLists carries the lists of earlier releases (graph_log: entry n of list L at "L#n",
// with head hints and key marks beside them) over to the data-keyed lists, once: every entry
// becomes the document its list keeps now, then graph_log is dropped. A run cut short runs again
// from the start: every document is inserted once.
func (s *Store) UpgradeLists(ctx context.Context) error {
	old := s.c(GraphLog)
	r := mongox.Range{Scope: "", Limit: upgradePage}
	err := mongox.Pages(ctx, old, r, func(d oldEntry) string { return d.ID }, func(docs []oldEntry) error {
		var out []listDoc[any]
		for _, d := range docs {
			doc, ok, err := upgradeEntry(d)
			if err != nil {
				return fmt.Errorf("%s: %w", d.ID, err)
			}
			if ok {
				out = append(out, doc)
			}
		}
		_, err := mongox.InsertNew(ctx, s.c(Lists), out)
		return err
	})
	if err != nil {
		return fmt.Errorf("upgrade lists: %w", err)
	}
	if err := old.Drop(ctx); err != nil {
		return fmt.Errorf("upgrade lists: drop graph_log: %w", err)
	}
	return nil
}

// upgradeEntry is the document an entry of an earlier release's list becomes (ok false for
// what is not an entry: head hints and key marks).
func upgradeEntry(d oldEntry) (doc listDoc[any], ok bool, err error) {
	i := strings.LastIndexByte(d.ID, '#')
	if i < 0 {
		return doc, false, nil
	}
	list := d.ID[:i]
	n, err := strconv.ParseInt(d.ID[i+1:], 10, 64)
	if err != nil || n < 1 {
		return doc, false, nil
	}
	kind, name, _ := strings.Cut(list, ":")
	doc.At = d.At
	switch kind {
	case "thread":
		var it GraphItem
		if err := d.V.Unmarshal(&it); err != nil {
			return doc, false, err
		}
		g, err := graphDoc(name, it)
		if err != nil {
			return doc, false, nil // neither a node nor an edge
		}
		doc.ID, doc.At, doc.V = g.ID, g.At, it
	case "msgs":
		return numberedDoc[MessageRef](d, messagesScope(name), n)
	case "quota":
		return numberedDoc[string](d, quotaScope(list), n)
	case "decisions":
		return numberedDoc[DecisionRef](d, decisionsScope(name), n)
	case "guidance":
		thread, owner, _ := strings.Cut(name, "/")
		return numberedDoc[GuidanceVersion](d, guidanceScope(thread, owner), n)
	case "sources":
		var src Source
		if err := d.V.Unmarshal(&src); err != nil {
			return doc, false, err
		}
		doc.ID, doc.At, doc.V = SourcesScope(name)+mongox.Key(mongox.Time(src.CreatedAt), keyText(src.ID)), src.CreatedAt, src
	case "pulls":
		var sum PullSummary
		if err := d.V.Unmarshal(&sum); err != nil || sum.Latest == nil {
			return doc, false, err
		}
		doc.ID, doc.At, doc.V = statesScope(name)+mongox.Key(mongox.Time(sum.Latest.At), keyText(sum.Latest.ID)), sum.Latest.At, sum
	case "due":
		var due Due
		unix, perr := strconv.ParseInt(name, 10, 64)
		if err := d.V.Unmarshal(&due); err != nil || perr != nil {
			return doc, false, err
		}
		doc.ID, doc.V = mongox.Scope("d", mongox.Time(time.Unix(unix, 0)))+mongox.Key(mongox.Time(due.At), keyText(due.SourceID)), due
	case "repulled":
		var at time.Time
		if err := d.V.Unmarshal(&at); err != nil {
			return doc, false, err
		}
		doc.ID, doc.V = repulledScope+mongox.Time(at), at
	case "threads":
		var id string
		if err := d.V.Unmarshal(&id); err != nil {
			return doc, false, err
		}
		doc.ID, doc.V = threadsScope(name)+mongox.Key(mongox.Time(d.At), keyText(id)), id
	default:
		return doc, false, nil
	}
	return doc, true, nil
}

// numberedDoc is an entry of a numbered list at its position.
func numberedDoc[T any](d oldEntry, scope string, n int64) (listDoc[any], bool, error) {
	var v T
	if err := d.V.Unmarshal(&v); err != nil {
		return listDoc[any]{}, false, err
	}
	return listDoc[any]{ID: scope + mongox.Seq(n), At: d.At, V: v}, true, nil
}
