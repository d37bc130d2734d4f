package e2e

import (
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestShapeGuardJudgesFilters: the guard passes what the _id index serves and refuses the rest.
func TestShapeGuardJudgesFilters(t *testing.T) {
	t.Parallel()
	raw := func(d bson.D) bson.Raw {
		if d == nil {
			return nil
		}
		b, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	byID := bson.D{{Key: "_id", Value: 1}}
	in := func(n int) bson.D {
		vals := make(bson.A, n)
		for i := range vals {
			vals[i] = fmt.Sprintf("k%04d", i)
		}
		return bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: vals}}}}
	}
	for _, c := range []struct {
		name         string
		filter, sort bson.D
		served       bool
	}{
		{"_id equality", bson.D{{Key: "_id", Value: "a"}}, nil, true},
		{"_id equality and a condition", bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: bson.D{{Key: "$lt", Value: 3}}}}, nil, true},
		{"_id $in", bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{"a", "b"}}}}}, nil, true},
		{"_id $in of 1,000", in(1000), nil, true},
		{"_id $in of 1,001", in(1001), nil, false},
		{"_id $in of none", in(0), nil, false},
		{"_id $in of integers", bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{1, 2}}}}}, nil, false},
		{"_id $in of a string and an ObjectID", bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{"a", bson.NewObjectID()}}}}}, nil, false},
		{"_id range sorted by _id", bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: "a|"}, {Key: "$lt", Value: "a}"}}}}, byID, true},
		{"_id range unsorted", bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: "a|"}}}}, nil, true},
		{"_id range sorted by another field", bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: "a|"}}}}, bson.D{{Key: "at", Value: 1}}, false},
		{"_id range and another condition", bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: "a|"}}}, {Key: "kind", Value: "x"}}, byID, false},
		{"_id regex", bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^a"}}}}, nil, false},
		{"another field", bson.D{{Key: "status", Value: "pending"}}, nil, false},
		{"everything", bson.D{}, nil, false},
		{"no filter", nil, nil, false},
	} {
		if _, ok := servedByID(raw(c.filter), raw(c.sort)); ok != c.served {
			t.Errorf("%s: served %v, want %v", c.name, ok, c.served)
		}
	}
}

// TestShapeGuardNamesLongIn: the guard's line for an _id $in the index cannot serve says why,
// without the values.
func TestShapeGuardNamesLongIn(t *testing.T) {
	t.Parallel()
	vals := make(bson.A, 1001)
	for i := range vals {
		vals[i] = fmt.Sprintf("secret%04d", i)
	}
	f, err := bson.Marshal(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: vals}}}})
	if err != nil {
		t.Fatal(err)
	}
	shape, ok := servedByID(f, nil)
	if ok || shape != "{_id:$in} (more than 1000 values)" {
		t.Errorf("shape %q, served %v; want the $in named as longer than 1,000, not served", shape, ok)
	}
	if strings.Contains(shape, "secret") {
		t.Errorf("shape %q carries the values", shape)
	}
}
