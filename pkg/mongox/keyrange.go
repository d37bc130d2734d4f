package mongox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A read model keys its documents by the data it is read in: _id = <scope>|<sort key>|<id>, each
// part in an order-preserving, fixed-width encoding, so that a list is the documents whose _id
// starts with its scope, a page is one find with an _id range, an _id sort and a limit, and an
// append is a blind insert. MongoDB serves that from its _id index; the embedded FerretDB pushes
// the same range down to SQL over the index pkg/embedded creates.
//
// Key parts use the characters [0-9A-Za-z_~.-] (Sep joins them): those sort alike as BSON strings,
// as SQLite text and inside JSON quotes, whatever store serves the range.

// Sep separates the parts of a data key.
const Sep = "|"

// ErrBadKeyPart says that a part of a data key holds a character outside the key alphabet.
var ErrBadKeyPart = errors.New("mongox: a key part holds a character outside [0-9A-Za-z_~.-]")

// Key joins parts into a data key. A part with a character outside the key alphabet (Sep among
// them) panics: keys are built from ids, hashes and encodings the service made, never from raw
// input, and a bad one is a bug that would break the order of a whole list.
func Key(parts ...string) string {
	for _, p := range parts {
		if !KeyPart(p) {
			panic(fmt.Sprintf("%v: %q", ErrBadKeyPart, p))
		}
	}
	return strings.Join(parts, Sep)
}

// KeyPart reports whether s may be a part of a data key.
func KeyPart(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_', c == '~', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// Scope is the prefix shared by every key of one list: its parts and a trailing Sep.
func Scope(parts ...string) string { return Key(parts...) + Sep }

// Time encodes t (to the microsecond) as a fixed-width part that sorts as time does; times
// before 1970 are encoded as 1970.
func Time(t time.Time) string { return Seq(t.UnixMicro()) }

// ParseTime is the inverse of Time.
func ParseTime(s string) (time.Time, error) {
	us, err := strconv.ParseInt(s, 16, 64)
	if err != nil || len(s) != 16 {
		return time.Time{}, fmt.Errorf("mongox: %q is not a time part", s)
	}
	return time.UnixMicro(us).UTC(), nil
}

// Seq encodes a non-negative counter as a fixed-width part that sorts as the number does.
func Seq(n int64) string {
	if n < 0 {
		n = 0
	}
	return fmt.Sprintf("%016x", n)
}

// ParseSeq is the inverse of Seq.
func ParseSeq(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 16, 64)
	if err != nil || len(s) != 16 {
		return 0, fmt.Errorf("mongox: %q is not a sequence part", s)
	}
	return n, nil
}

// Range selects the documents of one list: those whose _id starts with Scope, strictly after
// After and strictly before Before when these are set (full _ids, such as a page's last), in
// ascending _id order or descending with Desc, at most Limit of them (0: no limit; a caller
// that serves a request always sets one).
type Range struct {
	Scope  string
	After  string
	Before string
	Desc   bool
	Limit  int
}

// Filter is the _id range of r, the only filter a list read sends.
func (r Range) Filter() bson.D {
	lo := bson.E{Key: "$gte", Value: r.Scope}
	if r.After != "" && r.After >= r.Scope {
		lo = bson.E{Key: "$gt", Value: r.After}
	}
	hi := bson.E{Key: "$lt", Value: ScopeEnd(r.Scope)}
	if r.Before != "" && r.Before < ScopeEnd(r.Scope) {
		hi = bson.E{Key: "$lt", Value: r.Before}
	}
	return bson.D{{Key: "_id", Value: bson.D{lo, hi}}}
}

// Options are the sort and limit of r.
func (r Range) Options() *options.FindOptionsBuilder {
	dir := 1
	if r.Desc {
		dir = -1
	}
	o := options.Find().SetSort(bson.D{{Key: "_id", Value: dir}})
	if r.Limit > 0 {
		o.SetLimit(int64(r.Limit))
	}
	return o
}

// ScopeEnd is the least string greater than every string that starts with scope: scope with its
// last byte raised by one (scopes end in Sep, whose successor '}' is still plain ASCII).
func ScopeEnd(scope string) string {
	if scope == "" {
		return "\x7f"
	}
	return scope[:len(scope)-1] + string(rune(scope[len(scope)-1]+1))
}

// Find reads the documents of r in one command.
func Find[T any](ctx context.Context, coll *mongo.Collection, r Range) ([]T, error) {
	return FindAll[T](ctx, coll, r.Filter(), r.Options())
}

// DeleteRange deletes the documents of r's scope (After and Before bound it as in Find) in one
// command; Desc and Limit do not apply.
func DeleteRange(ctx context.Context, coll *mongo.Collection, r Range) (int64, error) {
	res, err := coll.DeleteMany(ctx, r.Filter())
	if err != nil {
		return 0, fmt.Errorf("delete a range of %s: %w", coll.Name(), err)
	}
	return res.DeletedCount, nil
}

// Pages reads the documents of r in ascending _id order (Desc is ignored) a page (r.Limit) at a
// time and hands each page to fn, until a page comes back empty: one command per page, however
// many the range holds. id is a document's _id, where the next page starts after.
func Pages[T any](ctx context.Context, coll *mongo.Collection, r Range, id func(T) string, fn func([]T) error) error {
	r.Desc = false
	for {
		docs, err := Find[T](ctx, coll, r)
		if err != nil || len(docs) == 0 {
			return err
		}
		if err := fn(docs); err != nil {
			return err
		}
		r.After = id(docs[len(docs)-1])
	}
}
