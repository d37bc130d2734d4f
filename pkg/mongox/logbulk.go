package mongox

import "context"

// AppendMany appends vs to list as consecutive entries, in order, in insertMany batches: for
// bulk loads (a benchmark's preload) while nothing else appends to list. It is a LogLoad of one
// list, so the documents are those Append writes.
func AppendMany[T any](ctx context.Context, l Log, list string, vs []T) error {
	if len(vs) == 0 {
		return nil
	}
	b := l.Load()
	for _, v := range vs {
		if _, _, err := LoadAppend(ctx, b, list, "", v); err != nil {
			return err
		}
	}
	return b.Flush(ctx)
}
