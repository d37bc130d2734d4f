package store

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Quota lanes of a feed: the box's owner publishing to its own feed never competes with others.
const (
	LaneOwner  = "owner"
	LaneOthers = "others"
)

// QuotaList is the list of publishing slots of a feed's lane on one UTC day: its entries are
// slot documents with natural ids (<list>#<n>), so concurrent publishers each take a distinct
// slot and no count-then-insert race can let more than the cap through.
func QuotaList(boxID, lane string, day time.Time) string {
	return "quota:" + boxID + ":" + lane + ":" + day.UTC().Format(time.DateOnly)
}

// TakeSlot takes the next slot of a quota list and reports whether it is within limit. A list
// already full is refused without a write, so refused callers add nothing; publishers racing
// past the cap at once each add one slot, which is refused too.
func (s *Store) TakeSlot(ctx context.Context, list string, limit int) (bool, error) {
	n, err := s.Len(ctx, list)
	if err != nil {
		return false, err
	}
	if n >= int64(limit) {
		return false, nil
	}
	seq, err := mongox.Append(ctx, s.lists, list, Mark{})
	if err != nil {
		return false, fmt.Errorf("store list %s: %w", list, err)
	}
	return seq <= int64(limit), nil
}
