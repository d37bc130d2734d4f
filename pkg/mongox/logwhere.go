package mongox

import "context"

// PageWhereBatch is PageWhere for a keep that judges a batch of entries at once (newest first),
// returning one verdict per entry: a keep that reads what each entry names (an object to fold)
// can then read them concurrently instead of one after another. A batch holds at most pageReaders
// entries more than the page still needs, so at most that many are judged and not returned. The
// budget, the short page and next are as PageWhere's.
func PageWhereBatch[T any](ctx context.Context, l Log, list string, before int64, limit, budget int,
	keep func(context.Context, []Entry[T]) ([]bool, error)) (kept []Entry[T], next int64, err error) {
	kept = []Entry[T]{}
	if limit < 1 {
		return kept, before, nil
	}
	budget = max(budget, limit)
	for read := 0; read < budget && len(kept) < limit; {
		batch := min(max(limit-len(kept), pageReaders), budget-read)
		var entries []Entry[T]
		if entries, next, err = Page[T](ctx, l, list, before, batch); err != nil {
			return nil, 0, err
		}
		read += len(entries)
		verdicts, err := keep(ctx, entries)
		if err != nil {
			return nil, 0, err
		}
		for i, e := range entries {
			if verdicts[i] {
				kept = append(kept, e)
			}
			if len(kept) == limit {
				if next = e.Seq; next == 1 {
					next = 0 // that was the first entry
				}
				return kept, next, nil
			}
		}
		if next == 0 {
			return kept, 0, nil
		}
		before = next
	}
	return kept, next, nil
}
